"""A distribution verifier's refusal ("'vector.store' op write affecting operations on global resources
are restricted to workgroup distributed contexts") is placed at the pass that left the writing op
beside the workgroup loop (`triage.culprit.UNDISTRIBUTED`), not at the verifier that noticed: the #43
audit of a fresh 3.13 campaign found two such causes named after the verifier, where workgroup tiling
made the IR it refuses."""

from __future__ import annotations

import pytest

from shapefuzz.judge.localize_probe import place_checked_failure
from shapefuzz.triage.culprit import UNDISTRIBUTED, is_checker, offence_of

# a gather whose consumer reads it through `tensor.extract` (the campaign's cause-63d2bbc931, shrunk)
GATHER_CONSUMER = """func.func @main(%arg0: tensor<1x1x2xf32>, %arg1: tensor<3x1x1xi32>) -> tensor<3x1x1x2xf32> {
  %c2 = arith.constant 2 : index
  %c1 = arith.constant 1 : index
  %init = tensor.empty() : tensor<3x1x1x2xf32>
  %g = iree_linalg_ext.gather dimension_map = [0]
    ins(%arg0, %arg1 : tensor<1x1x2xf32>, tensor<3x1x1xi32>) outs(%init : tensor<3x1x1x2xf32>) -> tensor<3x1x1x2xf32>
  %last = arith.subi %c2, %c1 : index
  %e = tensor.empty() : tensor<3x1x1x2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>, affine_map<(d0, d1, d2, d3) -> (d0, d1, d2, d3)>], iterator_types = ["parallel", "parallel", "parallel", "parallel"]} ins(%g : tensor<3x1x1x2xf32>) outs(%e : tensor<3x1x1x2xf32>) {
  ^bb0(%a: f32, %o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %i2 = linalg.index 2 : index
    %i3 = linalg.index 3 : index
    %j = arith.subi %last, %i3 : index
    %v = tensor.extract %g[%i0, %i1, %i2, %j] : tensor<3x1x1x2xf32>
    %s = arith.addf %a, %v : f32
    linalg.yield %s : f32
  } -> tensor<3x1x1x2xf32>
  return %r : tensor<3x1x1x2xf32>
}"""
VERIFIER = "iree-codegen-verify-workgroup-distribution"
REFUSAL = ("<work>/m.mlir:22:10: error: 'vector.store' op write affecting operations on global resources are "
           "restricted to workgroup distributed contexts.\n")

TILED = """func.func @d() {
  %5 = tensor.empty() : tensor<3x2xf32>
  %6 = scf.forall (%arg0, %arg1) in (3, 2) shared_outs(%arg2 = %5) -> (tensor<3x2xf32>) {
    %8 = iree_linalg_ext.gather dimension_map = [0] ins(%a, %b : tensor<1x1xf32>, tensor<1x1xi32>) outs(%s : tensor<1x1xf32>) -> tensor<1x1xf32>
    scf.forall.in_parallel {
      tensor.parallel_insert_slice %8 into %arg2[%arg0, %arg1] [1, 1] [1, 1] : tensor<1x1xf32> into tensor<3x2xf32>
    }
  } {mapping = [#iree_codegen.workgroup_mapping<y>, #iree_codegen.workgroup_mapping<x>]}
{beside}  iree_codegen.store_to_buffer %6, %2 : tensor<3x2xf32> into memref<3x2xf32>
  return
}"""


def test_a_compute_op_beside_the_workgroup_loop_is_the_offence():
    assert is_checker(VERIFIER) and is_checker("iree-codegen-gpu-verify-distribution")
    assert offence_of(REFUSAL) is UNDISTRIBUTED
    assert offence_of(REFUSAL.replace("global resources are restricted to workgroup", "shared resources are "
                                      "restricted to lane or thread")) is UNDISTRIBUTED
    assert not UNDISTRIBUTED.found(TILED.replace("{beside}", ""))  # everything inside; the store of its result beside
    left = "  %7 = linalg.generic {indexing_maps = []} ins(%6 : tensor<3x2xf32>) outs(%5 : tensor<3x2xf32>) {\n"
    assert UNDISTRIBUTED.found(TILED.replace("{beside}", left))
    assert UNDISTRIBUTED.found(TILED.replace("{beside}", "  %padded = tensor.pad %4 low[0, 0] high[2, 0] {\n"))
    # before tiling (no workgroup loop) nothing is beside one
    assert not UNDISTRIBUTED.found(left + "  iree_codegen.store_to_buffer %7, %2 : tensor<3x2xf32> into memref<3x2xf32>\n")


@pytest.mark.iree
def test_the_verifier_s_refusal_is_placed_at_workgroup_tiling(toolchain):
    loc = place_checked_failure(GATHER_CONSUMER, "llvm-cpu", toolchain, VERIFIER, REFUSAL, 120.0)
    assert loc.certain and loc.pass_name == "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op", loc
    assert f"{VERIFIER} only refuses it" in loc.evidence and UNDISTRIBUTED.what in loc.evidence
