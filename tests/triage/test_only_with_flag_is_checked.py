"""An issue text says a bug needs a variant lane's flags ("only with --iree-opt-level=O3") only where the
plain lane ran the shown reproducer and passed or failed another way (issue #43, audit C: cause
e857e3b1b1's slow compile was "only with --iree-opt-level=O3" while plain rocm-gfx942 takes the same
time, inferred from the one lane the campaign ran; audit B: 2c1205cadd fails on the plain lane too).
Where the plain lane was never run on it, the text says so instead of claiming; and the campaign's
re-check of a shown reproducer, and the export's, run the plain lane of each variant lane."""

from __future__ import annotations

import pytest

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.campaign.report.issue_texts import IssueTexts
from shapefuzz.campaign.shown_runs import lanes_to_check
from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.component import plain_lanes
from shapefuzz.triage.severity import Severity
from shapefuzz.triage.shown import COMPILES, OTHER, PASSES, SAME, LaneRun, ShownRuns, reproducer_digest, scope_said

O3 = "--iree-opt-level=O3"
# the audited entry's record (rocm-gfx942-o3-compile-timeout-4c68c0b040bb's meta.json, the fields read)
HANG = {"stage": "compile", "bug": {"lanes": ["rocm-gfx942-o3"], "scope": f"only with {O3}",
                                    "component": "IREE compiler, in SerializeTargetExecutablesPass (ROCm (rocm-gfx942))"}}


def _runs(*runs: LaneRun) -> ShownRuns:
    return ShownRuns("0" * 16, runs)


def test_only_with_is_said_only_where_the_plain_lane_ran_this_reproducer_and_did_not_fail_this_way():
    assert plain_lanes(["rocm-gfx942-o3", "rocm-gfx942", "llvm-cpu-single-dispatch"]) == ["rocm-gfx942", "llvm-cpu"]
    # never run on rocm-gfx942 (a timeout's shown reproducer is not re-run): no claim
    assert scope_said(HANG, "rocm-gfx942-o3", None) == \
        f"seen with {O3}; not tried on the plain lane (rocm-gfx942)"
    own = LaneRun("rocm-gfx942-o3", SAME, "fails the same way")
    assert scope_said(HANG, "rocm-gfx942-o3", _runs(own)).startswith("seen with")
    # the plain lane compiled it (a compile failure: that is the evidence) or failed another way: the claim holds
    assert scope_said(HANG, "rocm-gfx942-o3", _runs(own, LaneRun("rocm-gfx942", COMPILES, "compiles (not executed here)"))) \
        == f"only with {O3}: rocm-gfx942 without them compiles (not executed here)"
    other = LaneRun("rocm-gfx942", OTHER, "fails differently (rocm-gfx942/compile/error: x)")
    assert scope_said(HANG, "rocm-gfx942-o3", _runs(own, other)).endswith("without them fails differently "
                                                                           "(rocm-gfx942/compile/error: x)")
    # the plain lane fails the same way: the default pipeline
    assert scope_said(HANG, "rocm-gfx942-o3", _runs(own, LaneRun("rocm-gfx942", SAME))) == "default pipeline"
    # a wrong value: compiling on the plain lane says nothing of its values, passing does
    wrong = {"stage": "compare", "bug": {"lanes": ["llvm-cpu-single-dispatch"], "component": "codegen for llvm-cpu"}}
    assert scope_said(wrong, "llvm-cpu-single-dispatch", _runs(LaneRun("llvm-cpu", COMPILES))).startswith("seen with")
    assert scope_said(wrong, "llvm-cpu-single-dispatch", _runs(LaneRun("llvm-cpu", PASSES, "passes"))).startswith(
        "only with --iree-preprocessing-pass-pipeline=")
    # seen on two targets' single-dispatch lanes, one plain lane run: "only with", and the other said untried
    # (an audit read "not tried on the plain lane (cuda-sm80)" under a llvm-cpu lead whose plain lane had passed)
    two = {"stage": "compare", "bug": {"lanes": ["llvm-cpu-single-dispatch", "cuda-sm80-single-dispatch"],
                                       "component": "codegen for llvm-cpu, CUDA (cuda-sm80)"}}
    said = scope_said(two, "llvm-cpu-single-dispatch", _runs(LaneRun("cuda-sm80-single-dispatch", SAME),
                                                             LaneRun("llvm-cpu", PASSES, "passes")))
    assert said.startswith("only with --iree-preprocessing-pass-pipeline=") and \
        said.endswith(": llvm-cpu without them passes; not tried without them on cuda-sm80"), said


@pytest.mark.iree
def test_the_shown_reproducer_is_rechecked_on_the_plain_lane_of_its_variant_lane(toolchain):
    lanes = lanes_to_check({"bug": {"lanes": ["llvm-cpu-single-dispatch"]}}, "llvm-cpu-single-dispatch", (),
                           "compile", toolchain.probe)
    assert lanes[:2] == ["llvm-cpu-single-dispatch", "llvm-cpu"], lanes


SINGLE = Signature("llvm-cpu-single-dispatch", Stage.COMPILE, Status.ERROR, "'tensor.expand_shape' op invalid")
DETAIL = ("m.mlir:2:8: error: 'tensor.expand_shape' op invalid\n"
          "// -----// IR Dump After FoldUnitExtentDimsPass Failed: iree-dispatch-creation-fold-unit-extent-dims //----- //\n")
MODULE = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n"


def _cause(entry: str) -> Cause:
    return Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="i",
                 failing_pass="iree-dispatch-creation-fold-unit-extent-dims", component="IREE dispatch creation",
                 scope="only with x", lanes=("llvm-cpu-single-dispatch",), severity=Severity.COMPILE_ERROR,
                 localized=None, reported="", known=False, regression=None, backends=("llvm-cpu-single-dispatch",),
                 stage="compile", status="error", message=SINGLE.message, buckets=(), count=1, first_seen=0.0, new=True,
                 rehits=0, rehit_seconds=0.0, corpus_entries=(entry,), symptoms=(), merged=(), shrunk=True)


@pytest.mark.iree
def test_the_issue_texts_where_line_says_only_with_only_on_the_plain_lanes_run(tmp_path, toolchain):
    path, _ = save_finding(tmp_path / "corpus", make_finding(SINGLE, MODULE, toolchain, detail=DETAIL))
    entry = load_entry(path)
    assert entry.meta["bug"]["scope"].startswith("only with")  # the record: the lanes it was seen on

    def where() -> str:
        buckets = [{"backend": SINGLE.backend, "signature": str(SINGLE), "count": 1, "state": "confirmed"}]
        out = IssueTexts(tmp_path / "camp", toolchain).write(_cause(str(path)), buckets)
        assert out is not None
        return next(line for line in out.read_text().splitlines() if line.startswith("Where: "))

    assert where().endswith("; not tried on the plain lane (llvm-cpu)).") and "(seen with " in where(), where()
    digest = reproducer_digest(entry.mlir)
    runs = (LaneRun(SINGLE.backend, SAME, "fails the same way"), LaneRun("llvm-cpu", COMPILES, "compiles"))
    update_meta(path, shown=ShownRuns(digest, runs).to_json())
    assert "(only with " in where() and where().endswith(": llvm-cpu without them compiles)."), where()
    runs = (LaneRun(SINGLE.backend, SAME, "fails the same way"), LaneRun("llvm-cpu", SAME, "fails the same way"))
    update_meta(path, shown=ShownRuns(digest, runs).to_json())
    assert where().endswith("(default pipeline).") and "only with" not in where(), where()
