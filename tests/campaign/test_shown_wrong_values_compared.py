"""A shown reproducer's wrong values on another lane are "the same failure" only where they are the entry's
own lane's (issue #43 item 5, hand audit of a fresh campaign: "vulkan-spirv fails the same way" under a
ui8 widening dot whose vulkan-spirv result was all zeros, the i8 emulation's bug, while llvm-cpu computed
other wrong values). Fake checks: the step's own logic, no compiler."""

from __future__ import annotations

import time

from shapefuzz.campaign.outcomes import Candidate, Failure, Outcome, Verdict
from shapefuzz.campaign.shown_runs import _run
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.shown import OTHER, SAME

MESSAGE = "wrong values in matmul via stablehlo"
OWN = "llvm-cpu"


def _check(values: dict[str, str]):
    def check(candidate, lane):
        if lane not in values:
            return Outcome(Verdict.PASS, {lane: (Status.OK, 0.1)})
        detail = f"result 0: 3 of 4 elements differ; first at [0]: got 1, expected 4; actual output: {values[lane]}"
        failure = Failure(Signature(lane, Stage.COMPARE, Status.MISMATCH, MESSAGE), detail)
        return Outcome(Verdict.FAIL, {lane: (Status.MISMATCH, 0.1)}, (failure,))

    return check


class _Probe:  # (every lane here fails: nothing asks whether it executes)
    pass


def _verdicts(values: dict[str, str]) -> dict[str, tuple[str, str]]:
    candidate = Candidate("k", "matmul", 0, (), "{}", "x")
    signature = Signature(OWN, Stage.COMPARE, Status.MISMATCH, MESSAGE)
    record, _ = _run(candidate, list(values), signature, "", time.monotonic() + 60, _check(values),
                     _Probe(), compile_only=True)
    return {r.lane: (r.verdict, r.what) for r in record.runs}


def test_other_wrong_values_are_said_as_such():
    got = _verdicts({OWN: "int32[4] [1 2 3 4]", "vulkan-spirv": "int32[4] [0 0 0 0]", "vmvx": "int32[4] [1 2 3 4]"})
    assert got[OWN][0] == SAME and got["vmvx"][0] == SAME
    assert got["vulkan-spirv"][0] == OTHER and got["vulkan-spirv"][1].startswith(
        "computes other wrong values than llvm-cpu (int32[4] [0 0 0 0]"), got


def test_the_same_wrong_values_are_the_same_failure():
    got = _verdicts({OWN: "f32[2] [0.5 0.5]", "vulkan-spirv": "f32[2] [0.5 0.5]"})
    assert got[OWN][0] == SAME and got["vulkan-spirv"][0] == SAME
