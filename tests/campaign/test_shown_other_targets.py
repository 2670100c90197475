"""A compile failure of the default pipeline is also compiled, as its issue text shows it, on each default
target it was not run on, once every cause had its own lanes (issue #43 item 5, hand audit of a fresh
campaign: "Reproduces on: cuda-sm80" over a dispatch-creation crash llvm-cpu and rocm-gfx942 share, its
range even taken on llvm-cpu; "llvm-cpu" over a unit-dim folding bug every backend shares). The runs join
the reproducer's record, so "Reproduces on" names every target that fails the same way."""

from __future__ import annotations

import dataclasses

import pytest

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Outcome, Triage, Verdict
from shapefuzz.campaign.shown_runs import OTHER_TARGETS, other_targets, recheck_shown
from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.campaign.outcomes import Failure
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.severity import Severity
from shapefuzz.triage.shown import COMPILES, SAME, LaneRun, ShownRuns, reproducer_digest, reproduces_on, shown_runs_of
from support.reversed_dot import ERROR, REVERSED_DOT

MESSAGE = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be greater than or equal to N, but found N"


def _cause(entry: str, lane: str, scope: str = "default pipeline") -> Cause:
    return Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="i", failing_pass="",
                 component="codegen for llvm-cpu", scope=scope, lanes=(lane,), severity=Severity.COMPILE_ERROR,
                 localized=None, reported="", known=False, regression=None, backends=(lane,), stage="compile",
                 status="error", message=MESSAGE, buckets=(), count=1, first_seen=0.0, new=True, rehits=0,
                 rehit_seconds=0.0, corpus_entries=(entry,), symptoms=(), merged=(), shrunk=True)


def _entry(tmp_path, toolchain, lane: str):
    sig = Signature(lane, Stage.COMPILE, Status.ERROR, MESSAGE)
    path, _ = save_finding(tmp_path / "corpus", make_finding(sig, REVERSED_DOT, toolchain, detail=f"error: {ERROR}"))
    return path, sig


def _failing_on(failing: set[str], sig: Signature):
    """A fake compile: the same failure on `failing`, a clean compile elsewhere; the lanes it was asked for."""
    asked: list[str] = []

    def check(candidate, lane):
        asked.append(lane)
        if lane in failing:
            return Outcome(Verdict.FAIL, {lane: (Status.ERROR, 0.1)},
                           (Failure(dataclasses.replace(sig, backend=lane), f"error: {ERROR}"),))
        return Outcome(Verdict.PASS, {lane: (Status.OK, 0.1)})

    return check, asked


@pytest.mark.iree
def test_the_other_targets_join_the_record_and_reproduces_on_names_each_that_fails(tmp_path, toolchain):
    path, sig = _entry(tmp_path, toolchain, "cuda-sm80")
    cause = _cause(str(path), "cuda-sm80")
    # its own lanes' record, as recheck_shown leaves it
    update_meta(path, shown=ShownRuns(reproducer_digest(REVERSED_DOT), (LaneRun("cuda-sm80", SAME, "fails the same way"),))
                .to_json())
    check, asked = _failing_on({"llvm-cpu", "rocm-gfx942"}, sig)
    said: list[str] = []
    assert other_targets([cause], toolchain, 60.0, said.append, check=check) == 1, said
    expected = [lane for lane in OTHER_TARGETS if lane != "cuda-sm80" and BACKENDS[lane].compiles(toolchain.probe)]
    assert asked == expected  # each once, the cheapest first, never its own lane again
    entry = load_entry(path)
    shown = shown_runs_of(entry.meta, entry.mlir)
    assert shown is not None and not shown.left
    verdicts = {run.lane: run.verdict for run in shown.runs}
    assert verdicts["cuda-sm80"] == SAME and verdicts["llvm-cpu"] == SAME and verdicts["rocm-gfx942"] == SAME
    assert all(verdicts[lane] == COMPILES for lane in expected if lane not in ("llvm-cpu", "rocm-gfx942"))
    holds, _ = reproduces_on(entry.meta, "cuda-sm80", shown)
    assert holds == ["cuda-sm80", "llvm-cpu", "rocm-gfx942"]
    # a second sweep has nothing left to run
    check, asked = _failing_on(set(), sig)
    assert other_targets([cause], toolchain, 60.0, check=check) == 0 and asked == []


@pytest.mark.iree
def test_a_cause_that_needs_flags_or_has_no_whole_record_is_left_alone(tmp_path, toolchain):
    path, sig = _entry(tmp_path, toolchain, "llvm-cpu")
    check, asked = _failing_on({"llvm-cpu"}, sig)
    # no record of its own lanes yet: nothing to add to
    assert other_targets([_cause(str(path), "llvm-cpu")], toolchain, 60.0, check=check) == 0 and asked == []
    assert recheck_shown([_cause(str(path), "llvm-cpu")], toolchain, 60.0) == 1
    flagged = _cause(str(path), "llvm-cpu", scope="only with --iree-preprocessing-pass-pipeline=x")
    assert other_targets([flagged], toolchain, 60.0, check=check) == 0 and asked == []


@pytest.mark.iree
def test_real_compiles_of_a_reduction_read_reversed(tmp_path, toolchain):
    path, _ = _entry(tmp_path, toolchain, "llvm-cpu")
    cause = _cause(str(path), "llvm-cpu")
    assert recheck_shown([cause], toolchain, 120.0) == 1
    assert other_targets([cause], toolchain, 120.0) == 1
    entry = load_entry(path)
    shown = shown_runs_of(entry.meta, entry.mlir)
    assert shown is not None
    ran = {run.lane for run in shown.runs}
    assert {lane for lane in OTHER_TARGETS if BACKENDS[lane].compiles(toolchain.probe)} <= ran
    holds, _ = reproduces_on(entry.meta, "llvm-cpu", shown)
    assert holds[0] == "llvm-cpu" and set(holds) == {run.lane for run in shown.runs if run.verdict == SAME}


@pytest.mark.iree
def test_a_bug_that_needs_a_variants_flags_is_compiled_with_that_variant_of_each_other_target(tmp_path, toolchain):
    # hand audit: "ROCm" over single-dispatch bugs cuda-sm80 with the same flag fails too
    lane = "rocm-gfx942-single-dispatch"
    path, sig = _entry(tmp_path, toolchain, lane)
    cause = dataclasses.replace(_cause(str(path), lane), scope="only with --iree-preprocessing-pass-pipeline=x")
    update_meta(path, shown=ShownRuns(reproducer_digest(REVERSED_DOT), (LaneRun(lane, SAME, "fails the same way"),
                                                                        LaneRun("rocm-gfx942", COMPILES, "compiles")))
                .to_json())
    check, asked = _failing_on({"cuda-sm80-single-dispatch"}, sig)
    assert other_targets([cause], toolchain, 60.0, check=check) == 1
    assert set(asked) <= {"llvm-cpu-single-dispatch", "cuda-sm80-single-dispatch"} and "cuda-sm80-single-dispatch" in asked
    entry = load_entry(path)
    holds, _ = reproduces_on(entry.meta, lane, shown_runs_of(entry.meta, entry.mlir))
    assert holds == [lane, "cuda-sm80-single-dispatch"]
