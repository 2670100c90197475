"""A compile failure whose reproducer was cut down as plain text (no case header: shrink.case_stage) is
re-checked on its lanes too, by compiling it on each (issue #43 item 5, audit of the fresh campaign: 33 of
144 entries were such cuts, skipped by the shown re-check, and their texts said "not tried on the plain
lane" where one compile answers it; a 60 s step reached 27 of 66 causes). Real IREE 3.13."""

from __future__ import annotations

import pytest

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.campaign.shown_runs import recheck_shown
from shapefuzz.corpus import load_entry, make_finding, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.severity import Severity
from shapefuzz.triage.shown import COMPILES, SAME, scope_said, shown_runs_of
from support.reversed_dot import ERROR, REVERSED_DOT

pytestmark = pytest.mark.iree

MESSAGE = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be greater than or equal to N, but found N"
# the same module computing a plain sum instead: no lane fails on it
PLAIN_SUM = REVERSED_DOT.replace("(1 - d0)", "(d0)")


def _cause(entry: str, lane: str) -> Cause:
    return Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="i", failing_pass="",
                 component="codegen for llvm-cpu", scope="", lanes=(lane,), severity=Severity.COMPILE_ERROR,
                 localized=None, reported="", known=False, regression=None, backends=(lane,), stage="compile",
                 status="error", message=MESSAGE, buckets=(), count=1, first_seen=0.0, new=True, rehits=0,
                 rehit_seconds=0.0, corpus_entries=(entry,), symptoms=(), merged=(), shrunk=True)


def _shown(tmp_path, toolchain, lane: str, mlir: str):
    sig = Signature(lane, Stage.COMPILE, Status.ERROR, MESSAGE)
    path, _ = save_finding(tmp_path / "corpus", make_finding(sig, mlir, toolchain, detail=f"error: {ERROR}"))
    assert load_entry(path).case is None  # plain text: no case header
    said: list[str] = []
    assert recheck_shown([_cause(str(path), lane)], toolchain, 120.0, said.append) == 1, said
    entry = load_entry(path)
    return entry, shown_runs_of(entry.meta, entry.mlir)


def test_a_cut_reproducer_on_a_variant_lane_is_compiled_on_its_plain_lane(tmp_path, toolchain):
    entry, shown = _shown(tmp_path, toolchain, "llvm-cpu-o3", REVERSED_DOT)
    assert shown is not None and not shown.left
    verdicts = {run.lane: run.verdict for run in shown.runs}
    assert verdicts["llvm-cpu-o3"] == SAME and verdicts["llvm-cpu"] == SAME, shown
    assert scope_said(entry.meta, "llvm-cpu-o3", shown) == "default pipeline"
    # its verdict taken again on this reproducer, as the campaign would give it
    assert shown.triage == "compiler bug" and "for input that verifies" in shown.evidence, shown


def test_a_lane_that_compiles_a_cut_reproducer_says_it_compiles(tmp_path, toolchain):
    _, shown = _shown(tmp_path, toolchain, "llvm-cpu-o3", PLAIN_SUM)
    assert shown is not None
    assert {run.lane: (run.verdict, run.what) for run in shown.runs}["llvm-cpu"] == (COMPILES, "compiles"), shown
