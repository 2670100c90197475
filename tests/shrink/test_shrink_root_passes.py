"""The passes that shrink the computation around the failing op (shrink/replace_ops.py, issue #43
"minimal means minimal"): a producer cut to a new argument, a consumer cut by an early return, an op
replaced by the smallest op of its type; each candidate exactly as expected, and every candidate of
the corpus-like inputs verifies with the real iree-opt (one batched call per test)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.invoke.execute import verify_many
from shapefuzz.shrink import replace_ops as R
from shapefuzz.shrink.iree import Target
from shapefuzz.shrink.run import tiers_for

DATA = Path(__file__).resolve().parents[1] / "data"

# The stride-3 conv that 3.13 rejects, fed by a reshape and read by one, neither of which an operand
# of the same type could replace (bypass_ops cannot drop them).
WRAPPED = """\
func.func @main(%flat: tensor<3xf32>, %filter: tensor<2x1x1xf32>) -> tensor<1xf32> {
  %input = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
  %empty = tensor.empty() : tensor<1x1x1xf32>
  %conv = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<3> : tensor<1xi64>}
      ins(%input, %filter : tensor<1x3x1xf32>, tensor<2x1x1xf32>)
      outs(%empty : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %out = tensor.collapse_shape %conv [[0, 1, 2]] : tensor<1x1x1xf32> into tensor<1xf32>
  return %out : tensor<1xf32>
}
"""

# The audit's i8 case: a matmul whose i8 result an elementwise op of one argument replaces.
I8_MATMUL = """\
func.func @main(%a: tensor<1x4xi8>, %b: tensor<4x1xi8>) -> tensor<1xi8> {
  %c0 = arith.constant 0 : i8
  %e = tensor.empty() : tensor<1x1xi8>
  %z = linalg.fill ins(%c0 : i8) outs(%e : tensor<1x1xi8>) -> tensor<1x1xi8>
  %m = linalg.matmul ins(%a, %b : tensor<1x4xi8>, tensor<4x1xi8>) outs(%z : tensor<1x1xi8>) -> tensor<1x1xi8>
  %r = tensor.collapse_shape %m [[0, 1]] : tensor<1x1xi8> into tensor<1xi8>
  return %r : tensor<1xi8>
}
"""

DYNAMIC = """\
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %0 = math.exp %x : tensor<?x4xf32>
  %1 = math.sqrt %0 : tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
"""

CALLED = """\
func.func private @root(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = math.exp %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = call @root(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_a_producer_is_cut_to_a_new_argument_and_what_fed_it_goes():
    bare = WRAPPED.replace("%flat: tensor<3xf32>, %filter: tensor<2x1x1xf32>",
                           "%filter: tensor<2x1x1xf32>, %input: tensor<1x3x1xf32>")
    bare = bare.replace("  %input = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 3, 1] : "
                        "tensor<3xf32> into tensor<1x3x1xf32>\n", "")
    assert bare in list(R.cut_producers(WRAPPED))


def test_a_value_only_returned_is_never_cut_to_an_argument():
    # (the function would return its argument: no computation left to fail)
    assert not any("%out: tensor<1xf32>" in c for c in R.cut_producers(WRAPPED))


def test_a_consumer_goes_when_the_value_before_it_is_returned():
    early = WRAPPED.replace(") -> tensor<1xf32> {", ") -> tensor<1x1x1xf32> {")
    early = early.replace("  %out = tensor.collapse_shape %conv [[0, 1, 2]] : tensor<1x1x1xf32> into tensor<1xf32>\n"
                          "  return %out : tensor<1xf32>\n", "  return %conv : tensor<1x1x1xf32>\n")
    candidates = list(R.return_early(WRAPPED))
    assert early in candidates
    # returning a constant or an empty tensor keeps nothing of a failure: never proposed
    assert not any("return %empty" in c for c in candidates)


def test_an_op_is_replaced_by_an_elementwise_op_of_a_new_argument_and_its_inputs_go():
    expected = """\
func.func @main(%rep0_arg: tensor<1x1xi8>) -> tensor<1xi8> {
  %m = arith.addi %rep0_arg, %rep0_arg : tensor<1x1xi8>
  %r = tensor.collapse_shape %m [[0, 1]] : tensor<1x1xi8> into tensor<1xi8>
  return %r : tensor<1xi8>
}
"""
    candidates = list(R.replace_ops(I8_MATMUL))
    assert expected in candidates
    assert "  %m = arith.constant dense<1> : tensor<1x1xi8>\n" in "".join(candidates)
    # the collapse replaced too: the bare elementwise op on the result type
    assert any(c.startswith("func.func @main(%rep0_arg: tensor<1xi8>) -> tensor<1xi8> {\n"
                            "  %r = arith.addi %rep0_arg, %rep0_arg : tensor<1xi8>\n") for c in candidates)


def test_a_dynamic_result_is_filled_with_sizes_read_from_an_argument_with_that_dim():
    fill = """\
func.func @main(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {
  %rep0_c = arith.constant 1.0 : f32
  %rep0_i0 = arith.constant 0 : index
  %rep0_d0 = tensor.dim %x, %rep0_i0 : tensor<?x4xf32>
  %rep0_e = tensor.empty(%rep0_d0) : tensor<?x4xf32>
  %1 = linalg.fill ins(%rep0_c : f32) outs(%rep0_e : tensor<?x4xf32>) -> tensor<?x4xf32>
  return %1 : tensor<?x4xf32>
}
"""
    candidates = list(R.replace_ops(DYNAMIC))
    # the sqrt's fill reads its size from the argument, so the exp that fed the sqrt goes too
    assert fill in candidates
    # a dynamic type never becomes a dense constant (it has no static shape)
    assert not any("dense<" in c for c in candidates)


def test_a_called_functions_signature_stays():
    for proposer in (R.cut_producers, R.return_early, R.replace_ops):
        for candidate in proposer(CALLED):
            assert "func.func private @root(%x: tensor<4xf32>) -> tensor<4xf32> {" in candidate


def test_an_op_dead_before_the_step_is_kept():
    text = WRAPPED.replace("  %empty =", "  %kept = math.exp %flat : tensor<3xf32>\n  %empty =")
    cut = next(c for c in R.cut_producers(text) if "%input: tensor<1x3x1xf32>" in c)
    assert "%kept = math.exp %flat" in cut and "%flat: tensor<3xf32>" in cut


# What the fmaxf reproducer (audit batch C, c0f288bd70) came to: a private function left empty
# and the maps only its removed ops named.
LEFTOVERS = """\
#map = affine_map<(d0) -> (d0)>
#map1 = affine_map<(d0) -> ()>
module {
  func.func private @root() {
    return
  }
  func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
    %0 = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]} ins(%x : tensor<4xf16>) outs(%x : tensor<4xf16>) {
    ^bb0(%in: f16, %out: f16):
      linalg.yield %in : f16
    } -> tensor<4xf16>
    return %0 : tensor<4xf16>
  }
}
"""


def test_an_uncalled_private_function_and_an_unnamed_alias_go():
    candidates = list(R.drop_unused_symbols(LEFTOVERS))
    both = LEFTOVERS.replace("#map1 = affine_map<(d0) -> ()>\n", "").replace(
        "  func.func private @root() {\n    return\n  }\n", "")
    assert candidates[0] == both and len(candidates) == 3
    # a called one stays, and so does every alias in use
    assert not any("@root" not in c for c in R.drop_unused_symbols(CALLED))
    assert all("#map = " in c for c in candidates)


MULTI = """\
func.func private @pair(%a: tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>) {
  %b = arith.addi %a, %a : tensor<2xi32>
  return %b, %a : tensor<2xi32>, tensor<2xi32>
}
func.func @main(%x: tensor<2xi32>) -> tensor<2xi32> {
  %p:2 = call @pair(%x) : (tensor<2xi32>) -> (tensor<2xi32>, tensor<2xi32>)
  %s = arith.subi %p#0, %p#1 : tensor<2xi32>
  return %s : tensor<2xi32>
}
"""


def test_a_private_function_called_once_is_inlined_and_goes_with_it():
    """The chain cases' `@root` wrapper stayed in 6 of a fresh campaign's 66 texts (one an identity
    around a softmax's operand): its body in place of the call, its values renamed."""
    (inlined,) = R.inline_calls(CALLED)
    assert inlined.endswith("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
                            "  %root_0 = math.exp %x : tensor<4xf32>\n  return %root_0 : tensor<4xf32>\n}\n")
    # the callee goes in the same step: a step that kept it beside its inlined body was larger, so never
    # taken (a fresh audit still found `call @root` in 6 shrunk texts)
    assert "func.func private @root" not in inlined and "%0 = math.exp %x" not in inlined
    after = CALLED.replace("func.func private @root", "func.func private @later")  # (the same name, placed last)
    callee = after[:after.index("func.func @main")]
    last = after[after.index("func.func @main"):].replace("call @later", "call @root") + callee.replace("@later", "@root")
    (inlined,) = R.inline_calls(last)
    assert "func.func private @root" not in inlined and inlined.startswith("func.func @main")
    two = CALLED.replace("  %0 = call @root(%x)", "  %y = call @root(%x) : (tensor<4xf32>) -> tensor<4xf32>\n"
                         "  %0 = call @root(%y)")
    assert list(R.inline_calls(two)) == []  # called twice: kept
    assert list(R.inline_calls(CALLED.replace("func.func private @root", "func.func @root"))) == []
    (inlined,) = R.inline_calls(MULTI)
    assert "%pair_b = arith.addi %x, %x" in inlined and "%s = arith.subi %pair_b, %x" in inlined


def test_result_types_read_from_printed_forms():
    assert R.result_type("%0 = arith.addi %a, %b : tensor<2xi8>") == "tensor<2xi8>"
    assert R.result_type("%0 = tensor.extract_slice %s[0] [2] [1] : tensor<4xf32> to tensor<2xf32>") == "tensor<2xf32>"
    assert R.result_type("%0 = tensor.extract %t[] : tensor<i32>") == "i32"
    assert R.result_type("%0 = arith.cmpi slt, %a, %b : tensor<3xi32>") == "tensor<3xi1>"
    assert R.result_type("%0 = tensor.dim %t, %c0 : tensor<?xf32>") == "index"
    assert R.result_type("%0 = linalg.transpose ins(%a : tensor<4x8xf32>) outs(%e : tensor<8x4xf32>) "
                         "permutation = [1, 0]") == "tensor<8x4xf32>"
    generic = ("%0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = [\"parallel\"]} "
               "outs(%e : tensor<4xf32>) {\n^bb0(%o: f32):\n  linalg.yield %o : f32\n} -> tensor<4xf32>")
    assert R.result_type(generic) == "tensor<4xf32>"
    assert R.result_type("%0 = torch.aten.neg %a : !torch.vtensor<[2],f32> -> !torch.vtensor<[2],f32>") \
        == "!torch.vtensor<[2],f32>"


def test_the_root_passes_run_after_structure_and_before_shapes():
    target = Target({}, ("llvm-cpu",), 5.0)
    names = [[p.name for p in tier] for tier in tiers_for(WRAPPED, target, None)]
    assert names[1] == ["inline_calls", "unroll_loops", "drop_unused_symbols", "cut_producers", "return_early", "replace_ops"]
    assert "drop_unused_ops" in names[0] and "shrink_dims" in names[2]
    # a generated file still shrinks only through its parameters
    case = (DATA / "shrink_topk_sort_case.mlir").read_text()
    assert not any(p.name in ("cut_producers", "replace_ops") for tier in tiers_for(case, target, None) for p in tier)


@pytest.mark.iree
def test_every_candidate_verifies(toolchain):
    texts = [WRAPPED, I8_MATMUL, DYNAMIC, CALLED, LEFTOVERS, MULTI] + [(DATA / name).read_text() for name in (
        "shrink_conv1d_big.mlir", "shrink_conv1d_dynbatch.mlir", "shrink_topk_sort_plain.mlir",
        "crash_torch_to_linalg.mlir", "convt_flip_map.mlir")]
    candidates = list(dict.fromkeys(c for t in texts for _, proposer in R.ROOT_PASSES for c in proposer(t)))
    assert len(candidates) > 80
    errors = [(c, e) for c, e in zip(candidates, verify_many(candidates, toolchain)) if e is not None]
    assert errors == []
