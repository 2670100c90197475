"""A compile error placed at the pass that made the IR it fails on (issue #43, audits D and E): an op a
conversion finds unlowered at the pass that lowered its siblings and left it (cause-faa3c1dfb8:
FlattenMemRefSubspan on a softmax tail GenericVectorization skipped), and a `linalg.generic` whose
operands give one loop two extents at the pass that made it (cause-61e1005f0d: FoldUnitExtentDims,
refused only later inside a canonicalizer)."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.judge.localize_probe import place_latent_failure
from shapefuzz.triage.culprit import Dump, is_folding_pass, skipping_lowerer, unlowered_op_of
from shapefuzz.triage.extents import conflicting_extent

FOLDED = """#map = affine_map<(d0, d1) -> (d0, d1)>
#map1 = affine_map<(d0, d1) -> ()>
func.func @f(%a: tensor<?x3xf32>, %w: f32, %o: tensor<?x2xf32>) -> tensor<?x2xf32> {
  %0 = linalg.generic {indexing_maps = [#map, #map1, #map], iterator_types = ["parallel", "parallel"]} ins(%a, %w : tensor<?x3xf32>, f32) outs(%o : tensor<?x2xf32>) {
  ^bb0(%x: f32, %y: f32, %z: f32):
    linalg.yield %x : f32
  } -> tensor<?x2xf32>
  return %0 : tensor<?x2xf32>
}
"""

SOFTMAX_AXIS_0 = """module {
  func.func @main(%arg0: !torch.vtensor<[?,?,7,?],f32>) -> !torch.vtensor<[?,?,7,?],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "shapefuzz", torch.onnx_meta.producer_version = ""} {
    %0 = torch.operator "onnx.Softmax"(%arg0) {torch.onnx.axis = 0 : si64} : (!torch.vtensor<[?,?,7,?],f32>) -> !torch.vtensor<[?,?,7,?],f32>
    return %0 : !torch.vtensor<[?,?,7,?],f32>
  }
}
"""
LIVE_USER = """reproducer.mlir:5:10: error: failed to legalize unresolved source materialization from ('memref<?xf32>') to ('memref<?x1xf32>') that remained live after conversion (no matching callback)
reproducer.mlir:5:10: note: see current operation: %59 = "builtin.unrealized_conversion_cast"(%58) : (memref<?xf32>) -> memref<?x1xf32>
reproducer.mlir:5:10: note: see existing live user here:
"linalg.generic"(%59, %67, %66) <{indexing_maps = []}> ({
"""
MAX_POOL_CEIL = """module {
  func.func @main(%arg0: !torch.vtensor<[?,?,?,?,2],f32>) -> !torch.vtensor<[?,?,?,?,2],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "shapefuzz", torch.onnx_meta.producer_version = ""} {
    %0 = torch.operator "onnx.MaxPool"(%arg0) {torch.onnx.ceil_mode = 1 : si64, torch.onnx.dilations = [1 : si64, 1 : si64, 1 : si64], torch.onnx.kernel_shape = [1 : si64, 2 : si64, 1 : si64], torch.onnx.pads = [0 : si64, 1 : si64, 0 : si64, 0 : si64, 1 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64, 1 : si64]} : (!torch.vtensor<[?,?,?,?,2],f32>) -> !torch.vtensor<[?,?,?,?,2],f32>
    return %0 : !torch.vtensor<[?,?,?,?,2],f32>
  }
}
"""


def test_a_loop_given_two_extents_is_found_through_map_aliases():
    said = conflicting_extent(FOLDED)
    assert said == "loop d1 is 3 for operand 0 (tensor<?x3xf32>) and 2 for operand 2 (tensor<?x2xf32>)"
    assert conflicting_extent(FOLDED.replace("?x3xf32", "?x2xf32")) == ""
    windowed = FOLDED.replace("#map = affine_map<(d0, d1) -> (d0, d1)>\n",
                              "#map = affine_map<(d0, d1) -> (d0, d1)>\n#map2 = affine_map<(d0, d1) -> (d0, d1 + 1)>\n")
    assert conflicting_extent(windowed.replace("[#map, #map1, #map]", "[#map2, #map1, #map]")) == ""  # not a bare dK


def test_an_unlowered_live_user_and_the_folding_passes_are_read():
    assert unlowered_op_of(LIVE_USER) == "linalg.generic"
    assert unlowered_op_of("error: failed to legalize operation 'arith.addf'") == ""
    assert is_folding_pass("iree-codegen-config-tracking-canonicalize") and is_folding_pass("cse")
    assert not is_folding_pass("iree-codegen-flatten-memref-subspan")


def test_the_last_pass_that_lowered_some_and_left_others_is_named(tmp_path: Path):
    folder = tmp_path / "hal_executable_x" / "func_func_main$dispatch_0"
    folder.mkdir(parents=True)
    dumps = []
    for order, (name, count) in enumerate([("a-tile", 2), ("b-vectorize", 1), ("c-cse", 1)]):
        path = folder / f"{order}_{name}.mlir"
        path.write_text("linalg.generic {}\n" * count + "iree_linalg_ext.generic_like\n")
        dumps.append(Dump((order,), name, path))
    skip = skipping_lowerer(dumps, "linalg.generic")
    assert skip is not None and skip.dump.pass_name == "b-vectorize" and (skip.before, skip.after) == (2, 1)
    assert skip.function == "main$dispatch_0"
    assert skipping_lowerer(dumps[:1], "linalg.generic") is None  # never lowered: no one pass to name


@pytest.mark.iree
def test_flatten_memref_subspan_s_failure_is_placed_at_the_vectorizer_that_skipped_the_op(toolchain):
    loc = place_latent_failure(SOFTMAX_AXIS_0, "vulkan-llvmpipe", toolchain, "iree-codegen-flatten-memref-subspan",
                               LIVE_USER, 120.0)
    assert loc.pass_name == "iree-codegen-generic-vectorization", loc.evidence
    assert "lowered 1 of the 2 linalg.generic ops" in loc.evidence and loc.certain


@pytest.mark.iree
def test_a_canonicalizer_s_verifier_error_is_placed_at_the_unit_dim_fold(toolchain):
    loc = place_latent_failure(MAX_POOL_CEIL, "cuda-sm80", toolchain, "iree-codegen-config-tracking-canonicalize",
                               "error: expected type to be 'tensor<1x1x1x1x?xf32>' or a rank-reduced version.", 120.0)
    assert (loc.phase, loc.pass_name) == ("dispatch-creation", "iree-dispatch-creation-fold-unit-extent-dims"), loc.evidence
    assert "loop d4 is 3" in loc.evidence


ONE_ROW_GATHER = """func.func @main(%source: tensor<1x1xf32>, %indices_arg: tensor<3x1xi32>) -> tensor<3x1xf32> {
  %out_init = tensor.empty() : tensor<3x1xf32>
  %gathered = iree_linalg_ext.gather dimension_map = [0]
    ins(%source, %indices_arg : tensor<1x1xf32>, tensor<3x1xi32>) outs(%out_init : tensor<3x1xf32>) -> tensor<3x1xf32>
  return %gathered : tensor<3x1xf32>
}
"""


@pytest.mark.iree
def test_a_missing_lowering_configuration_is_placed_at_the_pass_that_dropped_it(toolchain):
    """cause-ab1aa7cfd1 (audit D): SPIR-V's tile-and-distribute finds no configuration on a one-row gather;
    the canonicalizer that should keep configurations folded the gather away with it."""
    loc = place_latent_failure(ONE_ROW_GATHER, "vulkan-llvmpipe", toolchain, "iree-spirv-tile-and-distribute",
                               "error: 'func.func' op failed to get lowering configuration", 120.0)
    assert loc.pass_name == "iree-codegen-config-tracking-canonicalize", loc.evidence
    assert "holds a lowering_config before" in loc.evidence


RESHAPE_INSTANCE_NORM = """module {
  func.func @main(%arg0: !torch.vtensor<[?,1,?,?],f32>, %2: !torch.vtensor<[3],si64>, %0: !torch.vtensor<[1],f32>, %1: !torch.vtensor<[1],f32>) -> !torch.vtensor<[?,1,?],f32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "shapefuzz", torch.onnx_meta.producer_version = ""} {
    %3 = torch.operator "onnx.Reshape"(%arg0, %2) : (!torch.vtensor<[?,1,?,?],f32>, !torch.vtensor<[3],si64>) -> !torch.vtensor<[?,1,?],f32>
    %4 = torch.operator "onnx.InstanceNormalization"(%3, %0, %1) {torch.onnx.epsilon = 9.99999974E-6 : f32} : (!torch.vtensor<[?,1,?],f32>, !torch.vtensor<[1],f32>, !torch.vtensor<[1],f32>) -> !torch.vtensor<[?,1,?],f32>
    return %4 : !torch.vtensor<[?,1,?],f32>
  }
}
"""
NOT_HOISTED_ERROR = ("error: 'memref.alloca' op all stack allocations need to be hoisted to the entry block of the "
                     "function")


def test_an_alloca_off_the_entry_block_is_told_by_its_nesting():
    from shapefuzz.triage.culprit import NOT_HOISTED, offence_of

    assert offence_of(NOT_HOISTED_ERROR) is NOT_HOISTED
    entry = "func.func @f() {\n  %a = memref.alloca() : memref<8xf32>\n  scf.forall (%i) in (4) {\n  }\n}\n"
    nested = "func.func @f() {\n  scf.forall (%i) in (4) {\n    %a = memref.alloca(%n) : memref<?xf32>\n  }\n}\n"
    assert not NOT_HOISTED.found(entry) and NOT_HOISTED.found(nested)


@pytest.mark.iree
def test_an_unhoisted_stack_buffer_is_placed_at_bufferization(toolchain):
    """cause-b91123ee6c (llvm-cpu at O3): the check before LLVM conversion refuses a dynamic-size alloca
    inside the workgroup loop; it is there first after bufferization."""
    from shapefuzz.judge.localize_probe import place_checked_failure

    loc = place_checked_failure(RESHAPE_INSTANCE_NORM, "llvm-cpu-o3", toolchain,
                                "iree-llvmcpu-check-ir-before-llvm-conversion", NOT_HOISTED_ERROR, 120.0)
    assert loc.pass_name == "iree-codegen-iree-comprehensive-bufferize", loc.evidence
