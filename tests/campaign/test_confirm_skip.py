"""A new compile-error bucket is confirmed by its check (issue 33): its confirming re-run runs the
other lanes (siblings, bases, twins) but not its own, and with nothing else to run no confirm task
is queued: the bucket is confirmed, saved and its shrink planned at once. A compile crash, a wrong
value, an `ours` verdict and an error whose output could be our environment's still get their own
lane re-run. The book is driven task by task (no workers, no compiler)."""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, field
from pathlib import Path

from shapefuzz.campaign.bucket_book import settled_by_check
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, TaskKind, Triage, Verdict
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.model import Signature, Stage, Status, reruns_for

from support.engine_fakes import InertTargetParts  # noqa: E402

LANES = ("ref", "x", "y")


@dataclass(frozen=True)
class Book(InertTargetParts):
    """Triage by message: "ours" for a message that starts with "ours", else a compiler bug."""

    corpus: str
    saved: list = field(default_factory=list)

    def generate(self, group: str, seed: int) -> Candidate:
        return _candidate(seed)

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        self.saved.append((failure.key, flaky))
        return super().save(candidate, failure, flaky, cause, triage, evidence)

    def triage(self, candidate, failure, outcome):
        return (Triage.OURS if failure.signature.message.startswith("ours") else Triage.COMPILER_BUG), "fake"


def _engine(tmp_path: Path) -> tuple[Engine, Book]:
    target = Book(str(tmp_path / "corpus"))
    engine = Engine(target, CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), LANES, 1, 1, Limits(count=10), start_method="fork", reference="ref",
                                 lanes_per_candidate=2, shrink=True))
    return engine, target


def _candidate(n: int) -> Candidate:
    return Candidate(hashlib.sha256(str(n).encode()).hexdigest()[:16], "g", n, (), "{}", "x" * (20 + n), n)


def _outcome(lanes: tuple[str, ...], failing: dict[str, tuple[Stage, Status, str]], detail: str = "") -> Outcome:
    failures = tuple(Failure(Signature(lane, *failing[lane]), detail) for lane in lanes if lane in failing)
    return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                   {lane: (failing[lane][1] if lane in failing else Status.OK, 0.5) for lane in lanes}, failures)


def _finish(engine: Engine, kind: TaskKind, candidate: Candidate, lanes: tuple[str, ...], outcome: Outcome) -> None:
    engine.book.finish(Done(engine.inflight.make(kind, candidate, lanes), outcome, 0.5))


ERROR = (Stage.COMPILE, Status.ERROR, "'tensor.expand_shape' op expected N dims")


def test_a_compile_error_alone_is_confirmed_without_a_confirm_task(tmp_path):
    engine, target = _engine(tmp_path)
    c = _candidate(1)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}))
    assert engine.book.next_confirm() is None and not engine.book.pending_confirm
    (bucket,) = engine.store.buckets()
    assert bucket.state == BucketState.CONFIRMED and bucket.triage == Triage.COMPILER_BUG
    assert bucket.corpus_entry and target.saved == [(bucket.sig, False)]
    assert bucket.shrink == ShrinkState.PENDING and engine.shrinks.queue[bucket.sig] == c


def test_a_compile_error_with_a_sibling_lane_re_runs_the_sibling_only_and_is_not_flaky(tmp_path):
    engine, _ = _engine(tmp_path)
    _finish(engine, TaskKind.CHECK, _candidate(1), ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}))
    c = _candidate(2)  # the same message on y: its confirm runs x (a known bucket's lane), not y
    _finish(engine, TaskKind.CHECK, c, ("ref", "y"), _outcome(("ref", "y"), {"y": ERROR}))
    assert engine.book.next_confirm() == (c, ("x",))
    assert {b.backend: b.state for b in engine.store.buckets()}["y"] == BucketState.PENDING
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {}))  # x passes it
    y = next(b for b in engine.store.buckets() if b.backend == "y")
    assert y.state == BucketState.CONFIRMED and y.triage == Triage.COMPILER_BUG and y.corpus_entry
    assert y.shrink == ShrinkState.PENDING
    assert len({b.cause for b in engine.store.buckets()}) == 2  # x passed: nothing tied them


def test_a_sibling_that_fails_the_same_way_still_ties_the_cause(tmp_path):
    engine, _ = _engine(tmp_path)
    _finish(engine, TaskKind.CHECK, _candidate(1), ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}))
    c = _candidate(2)
    _finish(engine, TaskKind.CHECK, c, ("ref", "y"), _outcome(("ref", "y"), {"y": ERROR}))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {"x": ERROR}))
    buckets = engine.store.buckets()
    assert all(b.state == BucketState.CONFIRMED for b in buckets) and len({b.cause for b in buckets}) == 1


def _own_lane_is_re_run(tmp_path: Path, failing: tuple[Stage, Status, str], detail: str = "") -> None:
    engine, _ = _engine(tmp_path)
    c = _candidate(1)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": failing}, detail))
    (bucket,) = engine.store.buckets()
    assert bucket.state == BucketState.PENDING and not bucket.corpus_entry
    for _ in range(reruns_for(failing[1])):  # passes on every re-run it gets (a crash: three): flaky
        (bucket,) = engine.store.buckets()
        assert bucket.state == BucketState.PENDING and engine.book.next_confirm() == (c, ("x",))
        _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {}))
    (bucket,) = engine.store.buckets()
    assert bucket.state == BucketState.FLAKY and engine.book.next_confirm() is None


def test_a_compile_crash_still_gets_its_own_lane_re_run(tmp_path):
    _own_lane_is_re_run(tmp_path, (Stage.COMPILE, Status.CRASH, "Assertion failed in FoldUnitExtentDims"))


def test_a_wrong_value_still_gets_its_own_lane_re_run(tmp_path):
    _own_lane_is_re_run(tmp_path, (Stage.COMPARE, Status.MISMATCH, "wrong values"))


def test_an_ours_compile_error_still_gets_its_own_lane_re_run_to_be_judged_again(tmp_path):
    _own_lane_is_re_run(tmp_path, (Stage.COMPILE, Status.ERROR, "ours: types contradict"))


def test_a_compile_error_that_could_be_our_environment_is_re_run(tmp_path):
    _own_lane_is_re_run(tmp_path, ERROR, "error: could not open output file: No such file or directory")


def test_only_a_compiler_bug_compile_error_is_settled_by_its_check():
    error = Failure(Signature("x", *ERROR), "module.mlir:3:5: error: 'tensor.expand_shape' op expected 2 dims")
    assert settled_by_check(error, Triage.COMPILER_BUG)
    assert not settled_by_check(error, Triage.OURS) and not settled_by_check(error, Triage.SUSPECTED_DRIVER)
    for stage, status in ((Stage.COMPILE, Status.CRASH), (Stage.COMPILE, Status.OOM), (Stage.COMPILE, Status.TIMEOUT),
                          (Stage.RUN, Status.ERROR), (Stage.COMPARE, Status.MISMATCH)):
        assert not settled_by_check(Failure(Signature("x", stage, status, "m")), Triage.COMPILER_BUG)
    for detail in ("error: No space left on device", "error: could not write file /tmp/a.vmfb: Permission denied"):
        assert not settled_by_check(Failure(Signature("x", *ERROR), detail), Triage.COMPILER_BUG)


def test_a_resumed_pending_compile_error_is_re_run_and_confirmed(tmp_path):
    # a session stopped while its bucket waited for a sibling's re-run: the resume re-runs its own lane
    engine, _ = _engine(tmp_path)
    _finish(engine, TaskKind.CHECK, _candidate(1), ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}))
    c = _candidate(2)
    _finish(engine, TaskKind.CHECK, c, ("ref", "y"), _outcome(("ref", "y"), {"y": ERROR}))
    engine.store.close()
    again, _ = _engine(tmp_path)
    lanes = again.book.next_confirm()
    assert lanes is not None and lanes[0].key == c.key and lanes[1] == ("y",)
    _finish(again, TaskKind.CONFIRM, lanes[0], ("y",), _outcome(("y",), {"y": ERROR}))
    assert all(b.state == BucketState.CONFIRMED for b in again.store.buckets())
