"""A cross-trigger tie needs the other cause's own failure, not the pass alone (issue #43's audit:
cause b97e42ec0f absorbed two scatter causes because its reproducer, on the scatter's lane, failed
in GPUApplyTilingLevel with its *own* message, and the target's message named no op, so "a compute
op both hold" came down to `linalg.generic`, which nearly every program has)."""

from __future__ import annotations

import dataclasses

from shapefuzz.campaign.causes.crossings import NO, SAME_PASS_AND_OP
from shapefuzz.campaign.causes.crosstrigger import compute_ops, judge
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.outcomes import BucketState
from shapefuzz.model import BackendResult, Signature, Stage, Status

LANE = "rocm-gfx942-single-dispatch"
TILING = ("// -----// IR Dump After GPUApplyTilingLevelPass Failed: iree-codegen-gpu-apply-tiling-level "
          "//----- //\n")
WHERE = frozenset({"iree-codegen-gpu-apply-tiling-level"})
DOMINATE = "operand #N does not dominate this use"
INFERRED = ("'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be greater than or "
            "equal to N, but found N")
FLIP = "%r = linalg.generic {indexing_maps = [...]} ins(%w : tensor<3xf16>) outs(%e : tensor<3xf16>)\nlinalg.fill"
SCATTER = "%s = iree_linalg_ext.scatter dimension_map = [0] ins(...)\n%r = linalg.generic {...}\ntorch.aten.view"


def _target(message: str, stage: str = "compile", status: str = "error", detail: str = TILING) -> BucketRow:
    return BucketRow(sig=f"{LANE}/{stage}/{status}: {message}", sig_json={"backend": LANE, "stage": stage,
                                                                           "status": status, "message": message},
                     backend=LANE, stage=Stage(stage), status=Status(status), family="scatter", count=1,
                     first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED,
                     repro_key="k", repro_size=1, repro_text="x", detail=detail, corpus_entry="", shrunk_size=None)


def _failed(message: str, detail: str = TILING) -> BackendResult:
    sig = Signature.from_json({"backend": LANE, "stage": "compile", "status": "error", "message": message})
    return BackendResult(LANE, Stage.COMPILE, Status.ERROR, detail, sig)


def test_failing_in_the_targets_pass_with_the_sources_own_message_is_no_tie():
    verdict, said = judge(_failed(INFERRED), _target(DOMINATE), WHERE, FLIP, SCATTER)
    assert verdict == NO and "not with its message" in said


def test_the_targets_own_message_in_its_pass_is_a_tie_on_the_same_op_only():
    # the target was placed at the pass by localization (its output names none): the run's pass and words tie it
    target = _target(DOMINATE, detail="")
    assert judge(_failed(DOMINATE), target, WHERE, FLIP, SCATTER)[0] == SAME_PASS_AND_OP
    on_op = _target("'tensor.extract_slice' op " + DOMINATE, detail="")
    assert judge(_failed("'linalg.generic' op " + DOMINATE), on_op, WHERE, FLIP, SCATTER)[0] == NO
    assert judge(_failed("'tensor.extract_slice' op " + DOMINATE), on_op, WHERE, FLIP, SCATTER)[0] == SAME_PASS_AND_OP


def test_plumbing_ops_are_never_the_shared_op_against_a_wrong_value():
    wrong = dataclasses.replace(_target("wrong values in scatter", "compare", "mismatch", ""))
    assert judge(_failed(INFERRED), wrong, WHERE, FLIP, SCATTER)[0] == NO
    assert judge(_failed(INFERRED), wrong, WHERE, FLIP + "\niree_linalg_ext.scatter", SCATTER)[0] == SAME_PASS_AND_OP


def test_compute_ops_leave_out_generic_fills_empties_reshapes_and_casts():
    text = ("linalg.generic linalg.fill torch.aten.empty.memory_format torch.aten.view torch.aten.to.dtype "
            "torch.aten._to_copy onnx.Reshape onnx.Cast linalg.conv_2d_nchw_fchw torch.aten.index_put onnx.Conv")
    assert compute_ops(text) == {"linalg.conv_2d_nchw_fchw", "torch.aten.index_put", "onnx.Conv"}
