"""An issue text's component names only the targets the shown reproducer bears out (issue #43 item 5,
audit C of the fresh campaign: e8f53be160's title read "codegen for CUDA (cuda-sm80), llvm-cpu, ROCm
(rocm-gfx942), vmvx, ..." over a reproducer vmvx compiles and runs right). Only the lanes the shown
reproducer was seen failing on this way stay: one it passed or failed another way on leaves, and so
does one it was never run on (audit D of the next campaign: "llvm-cpu" from an O3 lane the cause's
other candidates failed on, where llvm-cpu compiles the shown reproducer); the text's "Not
re-checked" line names those."""

from __future__ import annotations

from shapefuzz.triage.component import component_of
from shapefuzz.triage.shown import OTHER, PASSES, SAME, LaneRun, ShownRuns, component_said

LANES = ["llvm-cpu", "vmvx", "rocm-gfx942", "cuda-sm80"]
BUFFERIZE = "iree-codegen-iree-comprehensive-bufferize"


def _meta() -> dict:
    component = component_of("compile", "error", BUFFERIZE, (), LANES)
    return {"stage": "compile", "bug": {"lanes": LANES, "component": component, "failing_pass": BUFFERIZE}}


def test_a_lane_that_ran_the_shown_reproducer_and_did_not_fail_this_way_leaves_the_component():
    meta = _meta()
    assert "vmvx" in meta["bug"]["component"]
    shown = ShownRuns("0" * 16, (LaneRun("llvm-cpu", SAME), LaneRun("vmvx", PASSES, "passes"),
                                 LaneRun("cuda-sm80", OTHER, "fails differently")))
    said = component_said(meta, "llvm-cpu", shown)
    assert said == component_of("compile", "error", BUFFERIZE, (), ["llvm-cpu"]), said
    assert "vmvx" not in said and "CUDA" not in said and "ROCm" not in said  # never run there: not claimed


def test_without_runs_the_component_stands():
    meta = _meta()
    assert component_said(meta, "llvm-cpu", None) == meta["bug"]["component"]
    every = ShownRuns("0" * 16, tuple(LaneRun(lane, SAME) for lane in LANES))
    assert component_said(meta, "llvm-cpu", every) == meta["bug"]["component"]
