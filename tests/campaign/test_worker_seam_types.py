"""The worker seam is typed by what it carries (no IREE): a task's candidate is a `Candidate`, a
worker returns a `TaskValue` (a check's or confirm's `Outcome`, a shrink's `ShrinkOutcome` or
None), read back as `Done.outcome` or `Done.shrunk`, which refuse a value of the other kind; and
mypy holds code to it (a shrink's value is no `Outcome`)."""

from __future__ import annotations

import json
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

import shapefuzz
from shapefuzz.campaign.inflight import InFlight
from shapefuzz.campaign.outcomes import Candidate, Outcome, ShrinkJob, ShrinkOutcome, TaskKind, Verdict
from shapefuzz.campaign.worker_pool import Done, WorkerPool
from shapefuzz.model import Signature, Stage, Status

from support.engine_fakes import InertTargetParts

JOB = ShrinkJob("a", Signature("a", Stage.COMPILE, Status.ERROR, "boom"), 5.0, 1)


@dataclass(frozen=True)
class Echo(InertTargetParts):
    """Checks pass on every lane; a shrink hands back a shorter text."""

    corpus: str

    def generate(self, group, seed, large=False):
        return Candidate(f"k{seed}", group, seed, (), json.dumps({"n": seed}), "x" * 20)

    def check(self, candidate, lanes):
        return Outcome(Verdict.PASS, {lane: (Status.OK, 0.0) for lane in lanes})

    confirm = check

    def shrink(self, candidate, job):
        return ShrinkOutcome(text=candidate.text[:5], entry="e")


def test_a_worker_returns_a_check_as_an_outcome_and_a_shrink_as_a_shrink_outcome(tmp_path):
    target = Echo(str(tmp_path))
    inflight = InFlight(target.deadline)
    candidate = target.generate("g", 3)
    pool = WorkerPool(target, 1, "fork")
    try:
        done: list[Done] = []
        for task in (inflight.make(TaskKind.CHECK, candidate, ("a", "b")),
                     inflight.make(TaskKind.SHRINK, candidate, ("a",), JOB)):
            pool.submit(task)
            while not (finished := pool.wait(5.0)):
                pass
            done += finished
    finally:
        pool.close()
    check, shrink = done
    assert check.outcome is not None and check.outcome.lanes == {"a": (Status.OK, 0.0), "b": (Status.OK, 0.0)}
    assert shrink.shrunk == ShrinkOutcome(text="x" * 5, entry="e")


def test_a_finished_task_refuses_a_value_of_the_other_kind():
    candidate = Candidate("k", "g", 1, (), "{}", "text")
    inflight = InFlight(lambda lanes: 1.0)
    check = inflight.make(TaskKind.CHECK, candidate, ("a",))
    shrink = inflight.make(TaskKind.SHRINK, candidate, ("a",), JOB)
    with pytest.raises(TypeError, match="check task returned a ShrinkOutcome"):
        Done(check, ShrinkOutcome(), 0.1).outcome
    with pytest.raises(TypeError, match="shrink task returned a Outcome, not a ShrinkOutcome"):
        Done(shrink, Outcome(Verdict.PASS, {}), 0.1).shrunk
    assert Done(check, None, 0.1, lost=True).outcome is None and Done(shrink, None, 0.1).shrunk is None


def test_mypy_holds_code_to_what_a_worker_returns(tmp_path):
    api = pytest.importorskip("mypy.api")
    snippet = tmp_path / "seam.py"
    snippet.write_text(textwrap.dedent("""\
        from shapefuzz.campaign.outcomes import Candidate, Outcome, ShrinkJob, Target, perform
        from shapefuzz.campaign.worker_pool import Done, Task

        def use(target: Target, candidate: Candidate, job: ShrinkJob, done: Done, task: Task) -> None:
            checked: Outcome = perform(target, "check", candidate, ("a",))
            shrunk: Outcome = perform(target, "shrink", candidate, job)
            read: Outcome = done.value
            fine: Outcome | None = done.outcome
            key: int = task.candidate.key
        """))
    src = Path(shapefuzz.__file__).resolve().parents[1]
    os.environ["MYPYPATH"], old = str(src), os.environ.get("MYPYPATH")
    try:
        out, _, status = api.run([str(snippet), "--python-version", "3.11", "--no-error-summary",
                                  "--cache-dir", str(tmp_path / "cache")])
    finally:
        os.environ.pop("MYPYPATH") if old is None else os.environ.update(MYPYPATH=old)
    errors = [line for line in out.splitlines() if ": error:" in line]
    assert status == 1 and [int(line.split(":")[1]) for line in errors] == [6, 7, 9], out
    assert '"ShrinkOutcome | None", variable has type "Outcome"' in errors[0]
    assert '"Outcome | ShrinkOutcome | None", variable has type "Outcome"' in errors[1]
    assert '"str", variable has type "int"' in errors[2]
