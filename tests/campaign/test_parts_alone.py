"""The engine's parts built alone, each from a `CampaignState` and its own named inputs (no
engine, no IREE, no worker pool): the drawing part, the tasks in flight and their retries, the
shrink plan, the bucket book and the trial book, each checked for one thing it really does."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from types import SimpleNamespace

from shapefuzz.campaign import retries as retries_module
from shapefuzz.campaign.allocation import Allocation
from shapefuzz.campaign.bucket_book import BucketBook, new_bucket
from shapefuzz.campaign.coverage_map import CoverageKnobs
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.drawing import Drawing
from shapefuzz.campaign.inflight import InFlight
from shapefuzz.campaign.lanecost import LaneCost
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.outcomes import (
    BucketState, Candidate, EnvironmentCondition, Failure, Outcome, ShrinkJob, ShrinkState, TaskKind, Triage, Verdict,
)
from shapefuzz.campaign.retries import ENVIRONMENT_RETRY_SECONDS, MAX_ENVIRONMENT_RETRIES, Retries
from shapefuzz.campaign.shrinkorder import ShrinkPlan
from shapefuzz.campaign.state import CampaignState, Guides
from shapefuzz.campaign.steering import Steering
from shapefuzz.campaign.trial_book import TrialBook
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.model import Signature, Stage, Status

from support.engine_fakes import InertTargetParts

LANES = ("a", "b")


@dataclass(frozen=True)
class Numbers(InertTargetParts):
    """Candidates are numbers (the seed modulo 7: few, so draws repeat); nothing is checked here."""

    corpus: str

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        n = seed % 7
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"n:{n}",), json.dumps({"n": n}), "x" * (10 + n))

    def check(self, candidate, lanes):
        raise AssertionError("no part built alone runs a check")

    confirm = check


class Host:
    """What coverage steering calls back (it stays off here)."""

    def say(self, text: str) -> None:
        pass

    def revive(self, row):
        return None

    def known(self, key: str) -> bool:
        return False


class Pool:
    """A worker pool that runs nothing: it keeps what it is handed and gives it back on abandon."""

    def __init__(self) -> None:
        self.tasks: list[Task] = []

    def submit(self, task: Task) -> None:
        self.tasks.append(task)

    def abandon(self) -> list[Task]:
        taken, self.tasks = self.tasks, []
        return taken


def _guides() -> Guides:
    plan = LanePlan(LANES, "a")
    return Guides(plan, Steering(("g",)), LaneCost(), Allocation(("g",), 1, on=False))


def _off(target, guides: Guides) -> CoverageSteering:
    return CoverageSteering(CoverageKnobs(share=0.0), target, 1, ("g",), guides.plan, guides.steering, Host())


def _candidate(n: int, text: str | None = None) -> Candidate:
    return Candidate(f"c{n}", "g", n, (), json.dumps({"n": n}), text or "x" * (10 + n), index=n)


def _failure(lane: str, stage: Stage, status: Status, message: str) -> Failure:
    return Failure(Signature(lane, stage, status, message))


# --- the campaign state -------------------------------------------------------------------------
def test_the_campaign_state_keeps_each_line_it_says_and_its_clock_stops_once():
    told: list[str] = []
    state = CampaignState(active_before=100.0, tell=told.append)
    state.say("hello")
    assert state.stats.messages == ["hello"] and told == ["hello"]
    assert state.active() >= 100.0
    state.stop_clock()
    stopped = state.active()
    state.stop_clock()  # a second stop keeps the first time
    assert state.active() == stopped == state.clock_stopped_at


# --- the drawing part ---------------------------------------------------------------------------
def test_the_drawing_part_skips_a_known_candidate_and_counts_it_a_duplicate(tmp_path):
    target = Numbers(str(tmp_path))
    guides = _guides()
    first = Drawing(target, CampaignState(), guides, groups=("g",), seed=5, draws=1, known=lambda key: False,
                    next_index=10)
    drawn = first.next_candidate(_off(target, guides))
    assert drawn is not None and drawn.index == 10 and first.next_index == 11

    state = CampaignState()  # the same draws again, with the first one known (tried, or in flight)
    again = Drawing(target, state, guides, groups=("g",), seed=5, draws=1, known=lambda key: key == drawn.key,
                    next_index=10)
    other = again.next_candidate(_off(target, guides))
    assert other is not None and other.key != drawn.key
    assert state.stats.duplicates >= 1  # counted in the state it was given, not kept apart


# --- the tasks in flight ------------------------------------------------------------------------
def test_the_tasks_in_flight_give_a_shrink_its_own_deadline_and_forget_what_is_abandoned():
    inflight = InFlight(lambda lanes: 10.0 * len(lanes))
    candidate = _candidate(1)
    check = inflight.make(TaskKind.CHECK, candidate, LANES)
    job = ShrinkJob("a", Signature("a", Stage.COMPILE, Status.ERROR, "boom"), 20.0, candidate.input_seed)
    shrink = inflight.make(TaskKind.SHRINK, candidate, ("a",), job)
    assert (check.tid, check.deadline) == (1, 20.0)
    assert (shrink.tid, shrink.deadline) == (2, 20.0 * 1.5 + 10.0)  # its own limit plus the re-checks around it
    pool = Pool()
    inflight.submit(pool, check)
    inflight.submit(pool, shrink)
    assert inflight.checking(candidate.key) and inflight.checks() == 1 and len(inflight) == 2
    assert inflight.shrinks() == {job.key} and inflight.shrink_seconds() == 20.0
    inflight.finished(check)
    assert inflight.checks() == 0 and inflight.checking(candidate.key)  # its shrink still runs
    inflight.abandon(pool)
    assert len(inflight) == 0 and not inflight.checking(candidate.key) and pool.tasks == []


# --- the retries --------------------------------------------------------------------------------
def test_a_task_our_machine_failed_is_due_for_its_retry_only_after_the_wait_and_said_once(monkeypatch):
    now = [1000.0]
    monkeypatch.setattr(retries_module, "time", SimpleNamespace(monotonic=lambda: now[0]))
    state = CampaignState()
    retries = Retries(state)
    task = InFlight(lambda lanes: 30.0).make(TaskKind.CHECK, _candidate(2), ("a",))
    full = Done(task, None, 0.1, "OSError", environment=EnvironmentCondition("iree-compile: No space left on device"))
    assert not retries.fault(task, Done(task, Outcome(Verdict.PASS, {}), 0.1))  # a real outcome: no retry
    assert retries.fault(task, full) and retries.waiting
    assert retries.due() is None  # not yet
    now[0] += ENVIRONMENT_RETRY_SECONDS
    assert retries.due() is task and not retries.waiting
    assert retries.fault(task, full)  # the same condition again: queued, not said again
    assert state.stats.environment_faults == 2 and len(state.stats.messages) == 1
    for _ in range(MAX_ENVIRONMENT_RETRIES - 1):
        retries.fault(task, full)
    retries.queue.clear()
    assert retries.fault(task, full) and not retries.waiting  # past the most retries: left for the next session
    assert "left for the next session" in state.stats.messages[-1]


# --- the shrink plan ----------------------------------------------------------------------------
def test_the_shrink_plan_runs_the_wrong_values_cause_first_whatever_order_they_were_planned_in(tmp_path):
    store = CampaignStore(tmp_path / "camp")
    state = CampaignState()
    shrinks = ShrinkPlan(store, state, running=set, revive=lambda row: None, enabled=True)
    planned = []
    for n, failure in enumerate([_failure("a", Stage.COMPILE, Status.ERROR, "a pass failed"),
                                 _failure("a", Stage.COMPARE, Status.MISMATCH, "wrong values")]):
        candidate = _candidate(n)
        bucket = new_bucket(failure, candidate, float(n), 0.0, BucketState.CONFIRMED, Triage.COMPILER_BUG, "fake")
        state.buckets[bucket.sig] = replace(bucket, corpus_entry=f"entry{n}")  # saved: shrinkable
        state.causes.add(bucket.sig, failure.fields(), "fake")
        shrinks.plan([bucket.sig], candidate, Outcome(Verdict.FAIL, {"a": (failure.signature.status, 1.0)}))
        planned.append(bucket.sig)
    assert all(state.buckets[sig].shrink == ShrinkState.PENDING for sig in planned)  # one per cause
    assert [b.shrink for b in store.buckets()] == [ShrinkState.PENDING] * 2  # kept in the store: survives a kill
    first = shrinks.pop()
    assert first is not None and first[1].sig == planned[1] and first[0].key == "c1"  # wrong values first
    second = shrinks.pop()
    assert second is not None and second[1].sig == planned[0] and shrinks.pop() is None
    store.close()


# --- the bucket book ----------------------------------------------------------------------------
def _book(tmp_path, state: CampaignState, set_aside_after: int = 3) -> tuple[BucketBook, CampaignStore, Guides]:
    store = CampaignStore(tmp_path / "camp")
    state.session = store.start_session([])
    target = Numbers(str(tmp_path / "corpus"))
    guides = _guides()
    shrinks = ShrinkPlan(store, state, running=set, revive=lambda row: None, enabled=False)
    book = BucketBook(target, store, state, guides, coverage=_off(target, guides), shrinks=shrinks,
                      retries=Retries(state), revive=lambda row: None, set_aside_after=set_aside_after)
    return book, store, guides


def test_the_bucket_book_files_a_new_failure_queues_its_confirm_and_calls_it_flaky_when_it_passes(tmp_path):
    state = CampaignState()
    book, store, guides = _book(tmp_path, state)
    inflight = InFlight(lambda lanes: 30.0)
    candidate = _candidate(3)
    wrong = _failure("b", Stage.COMPARE, Status.MISMATCH, "wrong values")
    check = inflight.make(TaskKind.CHECK, candidate, LANES)
    book.finish(Done(check, Outcome(Verdict.FAIL, {"a": (Status.OK, 0.1), "b": (Status.MISMATCH, 0.2)}, (wrong,)), 0.3))
    assert list(state.buckets) == [wrong.key] and state.buckets[wrong.key].state == BucketState.PENDING
    assert state.tried == {candidate.key} and state.stats.session_done == 1 and state.stats.newest == wrong.key
    assert [b.sig for b in store.buckets()] == [wrong.key] and state.causes.name_of()[wrong.key]
    assert any(line.startswith(f"new bucket: {wrong.key}") for line in state.stats.messages)
    queued = book.next_confirm()
    assert queued is not None and queued[0].key == candidate.key and queued[1] == ("b",)
    assert book.next_confirm() is None

    confirm = inflight.make(TaskKind.CONFIRM, *queued)
    book.finish(Done(confirm, Outcome(Verdict.PASS, {"b": (Status.OK, 0.2)}), 0.2))  # it passed on its re-run
    bucket = state.buckets[wrong.key]
    assert bucket.state == BucketState.FLAKY and bucket.triage == Triage.FLAKY
    assert wrong.key in guides.steering.ignored  # steering no longer counts it
    store.close()


def test_the_bucket_book_sets_aside_a_lane_that_keeps_timing_out(tmp_path):
    state = CampaignState()
    book, store, guides = _book(tmp_path, state, set_aside_after=2)
    inflight = InFlight(lambda lanes: 30.0)
    for n in range(2):
        task = inflight.make(TaskKind.CHECK, _candidate(10 + n), LANES)
        book.finish(Done(task, Outcome(Verdict.PASS, {"a": (Status.OK, 0.1), "b": (Status.TIMEOUT, 9.0)}), 9.1))
        assert guides.plan.now == (LANES if n == 0 else ("a",))  # the second in a row sets it aside
    assert set(store.set_aside_backends()) == {"b"} and len(state.tried) == 2
    store.close()


# --- the trial book -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Trial:
    lane: str
    key: str
    timeout: float
    memory: int = 0

    def covers(self, timeout: float, memory: int) -> bool:
        return self.timeout >= timeout


def test_the_trial_book_keeps_the_run_under_the_larger_limits_and_the_newest_per_lane():
    book = TrialBook(per_lane=2)
    book.add([Trial("a", "t1", 5.0), Trial("b", "t1", 5.0)])
    book.add([Trial("a", "t1", 10.0)])  # the confirm's run at the full limits replaces the check's
    book.add([Trial("a", "t1", 1.0)])  # one the kept run covers changes nothing
    assert book.on("a") == (Trial("a", "t1", 10.0),) and book.on("b") == (Trial("b", "t1", 5.0),)
    book.add([Trial("a", "t2", 1.0), Trial("a", "t3", 1.0)])  # past per_lane: the oldest goes
    assert [t.key for t in book.on("a")] == ["t2", "t3"] and book.on("c") == ()
