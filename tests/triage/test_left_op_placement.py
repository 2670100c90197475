"""A pass that reports an op left for it ("LLVM Translation failed for operation: X", "'X' op with rank > 1
should be broken down by prior passes") is placed at the pass that made the op (`triage.culprit.left_op_of`):
the #43 audit of a fresh 3.13 campaign found both named after the pass that only noticed (the
serialization step; SPIR-V's load/store vectorization)."""

from __future__ import annotations

import pytest

from shapefuzz.judge.localize_probe import place_checked_failure
from shapefuzz.triage.culprit import left_op_of

# an ONNX TopK on Vulkan's default profile: the copy of the sort's input into workgroup memory is
# read as 2-D vector<1x4xf32> that nothing breaks down (the campaign's cause-b42088391d)
TOPK = """module {
  func.func @main(%arg0: !torch.vtensor<[1,256],f32>, %0: !torch.vtensor<[1],si64>) -> !torch.vtensor<[1,256],si64> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64, torch.onnx_meta.producer_name = "shapefuzz", torch.onnx_meta.producer_version = ""} {
    %1:2 = torch.operator "onnx.TopK"(%arg0, %0) {torch.onnx.axis = 1 : si64, torch.onnx.largest = 1 : si64, torch.onnx.sorted = 1 : si64} : (!torch.vtensor<[1,256],f32>, !torch.vtensor<[1],si64>) -> (!torch.vtensor<[1,256],f32>, !torch.vtensor<[1,256],si64>) 
    return %1#1 : !torch.vtensor<[1,256],si64>
  }
}"""
# a flip of a stride-2 slice: a strided `vector.gather` is not lowered, and iree-convert-to-llvm leaves
# an i64 -> index cast it needed (cause-8151d06726)
STRIDED_FLIP = """func.func @main(%arg0: !torch.vtensor<[?,2,10,?],f16>, %arg1: !torch.vtensor<[1],si64>, %arg2: !torch.vtensor<[?,1],f16>) -> !torch.vtensor<[?,9,?],f16> {
  %int0 = torch.constant.int 0
  %int2 = torch.constant.int 2
  %int9223372036854775807 = torch.constant.int 9223372036854775807
  %int3 = torch.constant.int 3
  %int1 = torch.constant.int 1
  %int_m1 = torch.constant.int -1
  %slice2 = torch.aten.slice.Tensor %arg0, %int1, %int0, %int_m1, %int1 : !torch.vtensor<[?,2,10,?],f16>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,1,10,?],f16>
  %slice3 = torch.aten.slice.Tensor %slice2, %int2, %int1, %int9223372036854775807, %int1 : !torch.vtensor<[?,1,10,?],f16>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,1,9,?],f16>
  %slice4 = torch.aten.slice.Tensor %slice3, %int3, %int2, %int_m1, %int2 : !torch.vtensor<[?,1,9,?],f16>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[?,1,9,?],f16>
  %list6 = torch.prim.ListConstruct %int3 : (!torch.int) -> !torch.list<int>
  %flip7 = torch.aten.flip %slice4, %list6 : !torch.vtensor<[?,1,9,?],f16>, !torch.list<int> -> !torch.vtensor<[?,1,9,?],f16>
  %sq9 = torch.aten.squeeze.dim %flip7, %int1 : !torch.vtensor<[?,1,9,?],f16>, !torch.int -> !torch.vtensor<[?,9,?],f16>
  %r_int0 = torch.constant.int 0
  %r_int_m1 = torch.constant.int -1
  %r_int1 = torch.constant.int 1
  %r_false = torch.constant.bool false
  %r_src1 = torch.aten.unsqueeze %arg2, %r_int0 : !torch.vtensor<[?,1],f16>, !torch.int -> !torch.vtensor<[1,?,1],f16>
  %r_list5 = torch.prim.ListConstruct %r_int_m1, %r_int1, %r_int1 : (!torch.int, !torch.int, !torch.int) -> !torch.list<int>
  return %sq9 : !torch.vtensor<[?,9,?],f16>
}"""
VULKAN_NOTE = ('<work>/m.mlir:3:12: error: \'vector.transfer_read\' op with rank > 1 should be broken down by prior '
               'passes\n<work>/m.mlir:3:12: note: see current operation: %12 = "vector.transfer_read"(%8, %4, %11, %3) '
               '<{in_bounds = [true, true]}> : (memref<1x256xf32>, index, index, f32) -> vector<1x4xf32>\n')
LLVM_NOTE = ('<unknown>:0: error: LLVM Translation failed for operation: builtin.unrealized_conversion_cast\n'
             '<unknown>:0: note: see current operation: %24 = "builtin.unrealized_conversion_cast"(%23) : (i64) -> index\n')


def test_the_left_op_is_read_from_the_note_by_its_name_and_result_types():
    read = left_op_of(VULKAN_NOTE)
    assert read is not None and read.what == "a vector.transfer_read giving vector<1x4xf32>"
    assert read.found('%1 = "vector.transfer_read"(%a, %b) : (memref<2x4xf32, strided<[4, 1]>>, index) -> vector<1x4xf32>')
    assert not read.found('%1 = "vector.transfer_read"(%a, %b) : (memref<4xf32>, index) -> vector<4xf32>')
    assert left_op_of("error: \'tensor.pad\' op expected 3 dims") is None  # not an op left for the pass
    assert left_op_of(LLVM_NOTE.replace(" : (i64) -> index", "")) is None  # no types to find it by


@pytest.mark.iree
@pytest.mark.parametrize("text, lane, failing, note, maker", [
    (TOPK, "vulkan-spirv", "iree-spirv-vectorize-load-store", VULKAN_NOTE,
     "iree-codegen-gpu-distribute-shared-memory-copy"),
    (STRIDED_FLIP, "llvm-cpu", "iree-hal-serialize-target-executables", LLVM_NOTE, "iree-convert-to-llvm"),
], ids=["vulkan-2d-read", "llvm-cast"])
def test_an_op_left_for_a_pass_is_placed_where_it_was_made(toolchain, text, lane, failing, note, maker):
    loc = place_checked_failure(text, lane, toolchain, failing, note, 120.0)
    assert loc.certain and loc.pass_name == maker, loc
    assert f"{failing} only refuses it" in loc.evidence
