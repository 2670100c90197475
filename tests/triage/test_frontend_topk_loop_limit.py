"""A torch or ONNX top-k meets Mesa llvmpipe's loop limit as the sort IREE lowers it to.

The real cases (campaign audit, IREE 3.13, both Vulkan targets on llvmpipe): torch's top 1 of 512 and
ONNX's top 1 of 323 came out wrong; IREE lowers each to one `iree_linalg_ext.sort` of the whole dim
(`--compile-to=flow`), about n*(n-1) iterations in one invocation, past the 65,535 limit. Counted as
n*k (512) the verdict said "no known limit explains it"."""

from __future__ import annotations

from shapefuzz.triage.driver import loop_limit_reached

TORCH = """func.func @main(%a: !torch.vtensor<[{n}],f32>) -> !torch.vtensor<[1],f32> {{
  %k = torch.constant.int 1
  %d = torch.constant.int 0
  %t = torch.constant.bool true
  %v, %i = torch.aten.topk %a, %k, %d, %t, %t : !torch.vtensor<[{n}],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1],f32>, !torch.vtensor<[1],si64>
  return %v : !torch.vtensor<[1],f32>
}}
"""
ONNX = """func.func @main(%a: !torch.vtensor<[{n}],f32>, %k: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1],f32> attributes {{torch.onnx_meta.opset_version = 21 : si64}} {{
  %v, %i = torch.operator "onnx.TopK"(%a, %k) {{torch.onnx.largest = 0 : si64}} : (!torch.vtensor<[{n}],f32>, !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1],f32>, !torch.vtensor<[1],si64>)
  return %v : !torch.vtensor<[1],f32>
}}
"""


def test_a_torch_top_1_of_512_is_a_sort_of_512():
    said = loop_limit_reached(TORCH.format(n=512))
    assert "the top 1 of 512 elements, which IREE lowers to a sort of all 512" in said
    assert "261,632 loop iterations" in said  # 512 * 511


def test_an_onnx_top_1_of_323_is_a_sort_of_323():
    assert "a sort of all 323" in loop_limit_reached(ONNX.format(n=323))


def test_a_short_torch_top_k_stays_within_the_limit():
    assert loop_limit_reached(TORCH.format(n=256)) == ""  # 256 * 255 < 65,535: measured right


def test_a_stablehlo_sort_in_generic_form_meets_the_loop_limit_by_its_run_or_static_size():
    """Audit A of a fresh 3.13 campaign: cause-883ea18629, a `"stablehlo.sort"` of 487 f16 run on
    vulkan-llvmpipe, read as a codegen bug; its types follow its comparator region, which the
    reading stopped at. Reverse-sorted input comes out right at 256 elements and wrong at 257."""
    from shapefuzz.triage.driver import loop_limit_reached

    sort = """func.func @main(%input: tensor<?xf16>) -> (tensor<?xf16>) {
  %sort1:1 = "stablehlo.sort"(%input) <{dimension = 0 : i64, is_stable = false}> ({
    ^bb0(%lhs0: tensor<f16>, %rhs0: tensor<f16>):
      %before = stablehlo.compare LT, %lhs0, %rhs0, TOTALORDER : (tensor<f16>, tensor<f16>) -> tensor<i1>
      stablehlo.return %before : tensor<i1>
  }) : (tensor<?xf16>) -> (tensor<?xf16>)
  return %sort1#0 : tensor<?xf16>
}
"""
    assert "sorts along a dim of up to 487 elements" in loop_limit_reached(sort, [[487]])
    assert "up to 487" in loop_limit_reached(sort.replace("?xf16", "487xf16"))
    assert loop_limit_reached(sort.replace("?xf16", "200xf16")) == ""
    assert loop_limit_reached(sort, [[256]]) == ""  # 256 * 255 iterations: within the limit


def test_an_onnx_top_1_of_a_dynamic_input_says_k_from_its_values_result():
    """cause-3b30c6232f of the audited campaign: ONNX's top 1 of a `?` input run on 512 elements was
    said "the top 512 of 512": the `?` of its indices result was read from the input's run."""
    dynamic = """func.func @main(%arg0: !torch.vtensor<[?],si8>) -> !torch.vtensor<[1],si8> attributes {torch.onnx_meta.opset_version = 18 : si64} {
    %0 = torch.operator "onnx.Constant"() {torch.onnx.value = dense<1> : tensor<1xsi64>} : () -> !torch.vtensor<[1],si64>
    %1:2 = torch.operator "onnx.TopK"(%arg0, %0) {torch.onnx.axis = 0 : si64, torch.onnx.largest = 1 : si64, torch.onnx.sorted = 1 : si64} : (!torch.vtensor<[?],si8>, !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1],si8>, !torch.vtensor<[?],si64>)
    return %1#0 : !torch.vtensor<[1],si8>
}
"""
    said = loop_limit_reached(dynamic, [[512]])
    assert said.startswith("it takes the top 1 of 512 elements, which IREE lowers to a sort of all 512")
    assert "stops after" not in said  # the limit itself is the rule's to say, once
    assert loop_limit_reached(dynamic, [[256]]) == ""
