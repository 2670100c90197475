"""The campaign loop. Takes a `Target` (plain callables: generate, check, confirm, save, shrink,
triage) and knows nothing of IREE: it draws candidates, skips what was tried, steers toward rare
features and away from saturated buckets, checks each candidate on the reference lane plus a
rotating share of the others, buckets failures by signature and ties buckets into causes,
confirms each new bucket by a re-run and has it saved at once, shrinks one bucket per cause
within a bounded share of worker time, sets aside a lane (backend) that keeps timing out, and
keeps everything in the campaign store so a kill at any instant loses at most the tasks in flight.

The loop is here, and the wiring: the engine is configured by one frozen `EngineConfig`
(`engine_config.py`), keeps what its parts share in one `CampaignState` (`state.py`: buckets,
causes, candidates tried, sightings, stats, the clock) and owns its parts, each built from that
state and what else it uses, by name — the lane plan (`lanes.py`), the drawing part (`drawing.py`:
candidates and their lanes), saturation steering (`steering.py`) and coverage steering
(`coverage_steering.py`, which calls back only through its `CoverageHost`), the tasks in flight
(`inflight.py`) and their retries (`retries.py`), the shrink plan (`shrinkorder.py`), and the bucket
book (`bucket_book.py`: finished tasks into buckets, causes, saves and shrinks). The triage rules over buckets are in `triage_rules.py`, and the values they speak in
`values.py` (re-exported here)."""

from __future__ import annotations

import collections
import contextlib
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Protocol

from shapefuzz.process import interrupts
from shapefuzz.campaign.allocation import Allocation, resume_allocation
from shapefuzz.campaign.bucket_book import MAX_SIBLING_LANES, BucketBook
from shapefuzz.campaign.causes.cause_ties import Causes, faces
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.discovery import Discovery, SaturationWatch, Sightings, replay
from shapefuzz.campaign.drawing import Drawing, derive_seed
from shapefuzz.campaign.engine_config import MIN_SHRINK_SECONDS, EngineConfig, Limits
from shapefuzz.campaign.inflight import InFlight
from shapefuzz.campaign.lanecost import LaneCost, lane_kin
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.worker_pool import Done, Task, WorkerPool
from shapefuzz.campaign.resume_state import Folded, TriedRow, replay_rows, tried_rows
from shapefuzz.campaign.retries import Retries
from shapefuzz.campaign.shrinkorder import ShrinkPlan
from shapefuzz.campaign.state import CampaignState, Guides
from shapefuzz.campaign.steering import Steering, SteeringKnobs
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.causes.verdicts import bucket_triage, cause_triage
from shapefuzz.campaign.outcomes import (
    BucketState, Candidate, Failure, Outcome, ShrinkJob, ShrinkState, Stats, Target, TaskKind, Triage, shaped_target,
)

CORPUS_FULL = "corpus disk full"  # the reason run() gives when a save failed for a full disk
CONFIRM_OVERTIME = 600.0  # the most wall seconds past the budget (and its grace) confirming re-runs may take


class Observer(Protocol):
    """What a benchmark sees of the loop (bench/bench_soak.py: does the head stay fast as a
    campaign grows?): the CPU seconds of each step of the head's own work (filling the pool,
    taking a finished task in, the tick) and each finished task, once it is taken in."""

    def head_work(self, seconds: float) -> None: ...

    def finished(self, done: Done) -> None: ...


@dataclass
class Snapshot:
    """What the progress display shows."""

    done: int
    session_done: int
    rate_per_min: float
    buckets: int
    causes: int  # confirmed or pending causes, every triage verdict
    findings: int  # causes judged compiler bugs
    flaky: int
    newest: str
    active: float
    left: float | None  # seconds (time budget) or None
    count_left: int | None
    in_flight: int
    lanes: tuple[str, ...]
    pool: str = ""  # what a cluster pool says of its nodes (empty for the local pool)
    jobs: int = 0  # worker processes (in_flight of them busy)
    count_limit: int | None = None  # the budget: candidates in the whole campaign
    seconds_limit: float | None = None  # the budget: active seconds in the whole campaign
    by_triage: dict[str, int] = field(default_factory=dict)  # causes per triage verdict
    newest_causes: tuple[str, ...] = ()  # the latest causes found, newest first, one line each
    discovery: Discovery | None = None  # the species-discovery estimates (campaign/discovery.py)
    allocation: str = ""  # the cells drawn most now, with their time and finds (campaign/allocation.py)


# Worker time a cause with no shrunk example may take after the budget, past the share: 60 s paid a
# check of the file and two runs of the re-check besides the trials; those are the campaign's own now
# (shrink/trials.py), and at 30 s a 3-minute final phase on 2 jobs reaches 12 causes, not 6.
UNSHRUNK_CAUSE_SECONDS = 30.0


# --- the loop -----------------------------------------------------------------------------------
class Engine:
    """The campaign loop: fill the pool (confirming re-runs first, then shrinks within their
    share, then new candidates from the drawing part), hand each finished task to the bucket
    book, keep the clock and the progress. Stops when the budget is spent, on Ctrl-C or SIGTERM,
    or when nothing is left to draw. On start it reads the store back into its parts (a resume)."""

    def __init__(self, target: Target, store: CampaignStore, config: EngineConfig, *,
                 progress: Callable[[str, Any], None] = lambda kind, value: None,
                 pool_factory: Callable[[Any, int], Any] | None = None,  # another pool with WorkerPool's interface
                 observer: Observer | None = None,  # a benchmark's view of the head's work (none in a campaign)
                 ) -> None:
        self.target, self.store, self.config = target, store, config
        self.progress, self.observer, self.pool_factory = progress, observer, pool_factory
        self.pool: WorkerPool | None = None  # or the factory's pool, with WorkerPool's interface
        # the one owner of what the parts share (its stats' clock starts here)
        self.state = state = CampaignState(tell=lambda text: self.progress("message", text))
        groups, lanes, allocate = config.groups, config.lanes, config.allocate
        aside = store.set_aside_backends()
        self.plan = LanePlan(tuple(lane for lane in lanes if lane not in aside),
                             config.reference if config.reference in lanes else (lanes[0] if lanes else None),
                             config.lanes_per_candidate, config.compile_only, config.large_every)
        for lane in lanes:
            if lane in aside:
                self._say(f"backend {lane} stays set aside: {aside[lane]}")
        state.session = store.start_session(list(config.argv))
        state.active_before = store.active_before(state.session)
        self.steering = Steering(groups, config.knobs)
        self.lane_cost = LaneCost(lane_kin(store))
        self.folded = Folded(store, groups, self.lane_cost.kin)  # the replay of the rows, kept at checkpoints
        self.folded.resume()
        if self.folded.note:
            self._say(self.folded.note)
        self.folded.copy_into(self.steering, self.lane_cost)
        state.buckets = {b.sig: b for b in store.buckets()}
        rows, hits = self._resume(store, state.buckets)
        state.tried = set(rows)
        state.sightings = Sightings(rows.values(), ((key, sig) for key, sigs in hits.items() for sig in sigs))
        self.saturation = None if config.until_saturated is None else SaturationWatch(
            config.until_saturated, replay(rows.values(), hits, state.buckets.values(), config.until_saturated))
        self.inflight = InFlight(target.deadline)
        self.retries = Retries(state)
        shaped = shaped_target(target)
        self.allocation = Allocation(groups, config.seed, on=allocate,
                                     large=allocate and self.plan.large_every > 0
                                     and config.lanes_per_candidate is not None,
                                     chain_ops=shaped.chain_ops() if shaped is not None and allocate else None)
        if allocate:
            self.plan.allocate_large()
        resume_allocation(store, self.allocation, bucket_triage)
        store.set_meta("allocation", self.allocation.settings())  # for the report's weights
        guides = Guides(self.plan, self.steering, self.lane_cost, self.allocation)
        self.drawing = Drawing(target, state, guides, groups=groups, seed=config.seed, draws=config.draws,
                               known=self._known, next_index=store.next_index())
        self.coverage = CoverageSteering(config.coverage, target, config.seed, groups, self.plan, self.steering,
                                         self.drawing)
        self.coverage.resume(store, {r.key: r for r in store.candidates()} if self.coverage.on else {})
        self.shrinks = ShrinkPlan(store, state, running=self.inflight.shrinks, revive=self.drawing.revive,
                                  enabled=config.shrink, size=target.size)
        self.book = BucketBook(target, store, state, guides, coverage=self.coverage, shrinks=self.shrinks,
                               retries=self.retries, revive=self.drawing.revive, confirm=config.confirm,
                               set_aside_after=config.set_aside_after)
        self._last_tick = self._last_store_tick = 0.0
        self.book.requeue_pending()

    # what the parts share, the campaign state's (read here by the run, the reports and the tests)
    @property
    def stats(self) -> Stats:
        return self.state.stats

    @property
    def causes(self) -> Causes:
        return self.state.causes

    @property
    def tried(self) -> set[str]:
        return self.state.tried

    @property
    def sightings(self) -> Sightings:
        return self.state.sightings

    @property
    def session(self) -> int:
        return self.state.session

    @property
    def active_before(self) -> float:
        return self.state.active_before

    def _resume(self, store: CampaignStore, buckets: dict[str, BucketRow]
                ) -> tuple[dict[str, TriedRow], dict[str, list[str]]]:
        """What the store holds, read back into the causes and the steering's buckets (in the order it
        happened; the steering's counts and the lane costs are `self.folded`'s). Returns every
        candidate's key, index, verdict and finishing time by key, and the buckets each candidate hit."""
        for b in sorted(buckets.values(), key=lambda b: (b.first_seen, b.sig)):
            self.causes.add(b.sig, b.sig_json, b.evidence)
            if b.state == BucketState.FLAKY:
                self.steering.ignored.add(b.sig)
        rows = {row.key: row for row in tried_rows(store)}
        hit_rows = {row.key: row for row in replay_rows(store, hit=True)}
        by_candidate: dict[str, list[str]] = collections.defaultdict(list)
        hits = store.hits()
        for key, sig, _ in hits:
            by_candidate[key].append(sig)
        for key in sorted(by_candidate, key=lambda k: rows[k].idx if k in rows else -1):
            row = hit_rows.get(key)
            if row is not None:
                for sig in by_candidate[key]:
                    self.steering.hit(sig, row.family, row.features, row.task_seconds / len(by_candidate[key]))
            self.causes.tie(by_candidate[key])
        for group in faces(hits):  # one input failing two ways on one lane: one bug (BucketBook._file_faces)
            self.causes.join(group)
        return rows, by_candidate

    @property
    def lanes(self) -> tuple[str, ...]:
        """The lanes in use now (a lane that kept timing out is set aside)."""
        return self.plan.now

    @property
    def buckets(self) -> dict[str, BucketRow]:
        return self.book.buckets

    def _known(self, key: str) -> bool:
        """Was the candidate `key` tried already, or is it in flight (a duplicate either way)?"""
        return key in self.tried or self.inflight.checking(key)

    # --- clock and budget -----------------------------------------------------------------
    def active(self) -> float:
        """Seconds of fuzzing in the whole campaign (`CampaignState.active`: the clock stops when
        the fuzzing does)."""
        return self.state.active()

    def _stop_clock(self) -> None:
        self.state.stop_clock()

    def _count_left(self) -> int | None:
        if self.config.limits.count is None:
            return None
        return self.config.limits.count - len(self.tried) - self.inflight.checks()

    def _time_left(self) -> float | None:
        return None if self.config.limits.seconds is None else self.config.limits.seconds - self.active()

    def budget_spent(self) -> bool:
        left = self._count_left()
        if left is not None and left <= 0:
            return True
        t = self._time_left()
        return t is not None and t <= 0

    def _shrink_allowance(self) -> float:
        """Seconds of worker time a new shrink may take now: its share of all worker time so
        far, less what shrinks took and what the running ones may take."""
        used = self.store.worker_time(TaskKind.SHRINK.value) + self.inflight.shrink_seconds()
        return self.config.shrink_share * self.config.jobs * self.active() - used

    def _shrink_limit(self) -> float:
        """How long a shrink started now may run: its share, and no later than the time budget
        (one cut off at the end would lose its work; it stays pending for the next session)."""
        left = self._time_left()
        limit = min(self.config.shrink_seconds, self._shrink_allowance())
        return limit if left is None else min(limit, left)

    def _next_shrink(self, limit: float) -> Task | None:
        if (taken := self.shrinks.pop()) is None:
            return None
        candidate, bucket = taken
        job = ShrinkJob(bucket.backend, bucket.failure.signature, float(f"{limit:.3f}"), candidate.input_seed,
                        self.book.trials.on(bucket.backend),  # what its lane already ran: not run again
                        references=self.lanes)
        return self.inflight.make(TaskKind.SHRINK, candidate, (bucket.backend,), job)

    @contextlib.contextmanager
    def _head_work(self) -> Iterator[None]:
        """A step of the head's own work, its CPU time (the thread's: on a shared machine wall time
        mostly measures the neighbours) told to the observer where there is one."""
        if self.observer is None:
            yield
            return
        start = time.thread_time()
        try:
            yield
        finally:
            self.observer.head_work(time.thread_time() - start)

    def _fill(self, pool: WorkerPool, stopping: bool) -> None:
        with self._head_work():
            self._fill_pool(pool, stopping)

    def _fill_pool(self, pool: WorkerPool, stopping: bool) -> None:
        task: Task | None
        while pool.idle:
            if (again := self.retries.due()) is not None:
                task = self.inflight.make(again.kind, again.candidate, again.lanes, again.job)
            elif (confirm := self.book.next_confirm()) is not None:
                task = self.inflight.make(TaskKind.CONFIRM, *confirm)
            elif (self.shrinks.queue and not stopping and self._shrink_limit() >= self.config.min_shrink_seconds
                  and (task := self._next_shrink(self._shrink_limit()))):
                pass
            elif not stopping and not self.budget_spent() and self.lanes and not self.retries.waiting:
                # (while our environment fails tasks, nothing new is drawn: the retries come first)
                candidate = self.drawing.next_candidate(self.coverage)
                if candidate is None:
                    return
                candidate, lanes = self.coverage.plan(candidate, *self.drawing.lanes_swapped(candidate))
                task = self.inflight.make(TaskKind.CHECK, candidate, lanes)
            else:
                return
            self.inflight.submit(pool, task)

    def _finish(self, done: Done) -> None:
        with self._head_work():
            self.inflight.finished(done.task)
            self.book.finish(done)
        if self.observer is not None:
            self.observer.finished(done)

    def run(self) -> str:
        """Until the budget is spent, Ctrl-C, a full corpus disk, or nothing is left to try.
        Returns why it stopped."""
        if self.book.corpus_full:  # the saves a resume retried failed already
            return CORPUS_FULL
        if not self.lanes:
            return "every backend is set aside"
        final = self.config.final_shrink_seconds > 0 and self.config.shrink and bool(self.shrinks.queue)
        if self.budget_spent() and not self.book.confirm_queue and not final:
            return "budget already spent"
        if (why := self._saturated()) is not None and not self.book.confirm_queue and not final:
            return why  # saturated when it last stopped, by the store's counts: no pool is started
        if self.pool_factory is not None:
            pool = self.pool = self.pool_factory(self.target, self.config.jobs)
        else:
            pool = self.pool = WorkerPool(self.target, self.config.jobs, self.config.start_method)
        previous = signal.signal(signal.SIGTERM, interrupts.handler)  # unwinds like Ctrl-C; the exit code says which
        reason = "budget spent"
        overtime_end: float | None = None  # past the budget: when the confirms' overtime ends
        try:
            while True:
                interrupts.check()  # a stop Python swallowed (a gc callback took the signal): stop here
                saturated = self._saturated()
                stopping = self.budget_spent() or not self.lanes or saturated is not None
                self._fill(pool, stopping)
                if not self.inflight and self.retries.waiting and not stopping:
                    time.sleep(0.25)  # tasks our environment failed wait for their retry
                    self._tick()
                    continue
                if not self.inflight:
                    if not self.lanes:
                        reason = "every backend is set aside"
                    elif saturated is not None:
                        reason = saturated
                    elif not stopping:
                        reason = "no new candidates could be drawn"
                    break
                for done in pool.wait(0.25):
                    self._finish(done)
                self._tick()
                if self.book.corpus_full:  # nothing more can be saved: what is in flight is dropped
                    self.inflight.abandon(pool)
                    reason = CORPUS_FULL
                    break
                if (left := self._time_left()) is not None and left < -self._grace():
                    # time is up: in-flight candidates are dropped, but the confirming re-runs of buckets
                    # found in time may finish, within CONFIRM_OVERTIME of wall time, off the clock (a
                    # compile timeout's re-run costs the full limit per lane; one dropped here left a
                    # cause with no reproducer saved, and so no issue text, even on a resume)
                    if overtime_end is None:
                        overtime_end = time.monotonic() + CONFIRM_OVERTIME
                        self._stop_clock()
                        if self._confirming():
                            self._say(f"time is up; letting the confirming re-run(s) of buckets found in time "
                                      f"finish (at most {CONFIRM_OVERTIME:.0f}s more)")
                    if not self._confirming() or time.monotonic() > overtime_end:
                        self.inflight.abandon(pool)
                        break
            self._stop_clock()
            if (reason == "budget spent" or reason.startswith("saturated")) and self.config.final_shrink_seconds > 0 \
                    and self.config.shrink:
                self._final_shrinks(pool)
        except KeyboardInterrupt:
            reason = "interrupted"
            pool.abandon()
        finally:
            signal.signal(signal.SIGTERM, previous)
            pool.close()
            self._stop_clock()
            self.store.tick(self.session, self.active())
            self.folded.advance(self._settled())
            self.discovery(fresh=True)  # the last frame and the summary agree
        return reason

    def _final_shrinks(self, pool: WorkerPool, seconds: float | None = None, share: float | None = None) -> None:
        """What is still pending once the budget is spent, shrunk within its own budget (`seconds`
        of wall time, the final phase's by default; `share`: also at most that many seconds of
        worker time in all). What this phase does not reach stays pending in the store, for the
        next session."""
        seconds = self.config.final_shrink_seconds if seconds is None else seconds
        end = time.monotonic() + seconds
        spent = self.store.worker_time(TaskKind.SHRINK.value)
        if self.shrinks.queue:
            self._say(f"shrinking {len(self.shrinks.queue)} pending bucket(s) for up to {seconds:.0f}s")

        def left() -> float:
            wall = end - time.monotonic()
            if share is None:
                return wall  # else also what is left of the worker time it may take, less the running shrinks'
            return min(wall, share - (self.store.worker_time(TaskKind.SHRINK.value) - spent)
                       - self.inflight.shrink_seconds())

        while True:
            interrupts.check()
            while pool.idle and self.shrinks.queue and (now := left()) >= self.config.min_shrink_seconds:
                # within a share, each pending shrink gets its part of it (never less than the least one
                # may take): the first does not take it all while others wait with none
                each = now if share is None else max(self.config.min_shrink_seconds, now / len(self.shrinks.queue))
                task = self._next_shrink(min(self.config.shrink_seconds, now, each))
                if task is None:
                    break
                self.inflight.submit(pool, task)
            if not self.inflight:
                return
            for done in pool.wait(0.25):
                self._finish(done)
            self._tick()
            if time.monotonic() > end + 60.0:
                self.inflight.abandon(pool)
                return

    def shrink_causes(self, causes: list[list[str]], located: dict, seconds: float) -> int:
        """After the campaign (its pool closed), once localization split causes as the report will:
        each of these causes (the report's, most severe first) with no shrunk example gets a shrink of
        its own bucket, within what is left of the shrink share (of the worker time the budget gave)
        and `seconds` of wall time. What is not reached stays pending (the report says why). Returns
        how many of them ran."""
        wanted = self.shrinks.want(causes, located)
        budget = self.config.limits.seconds if self.config.limits.seconds is not None else self.active()
        share = self.config.shrink_share * self.config.jobs * min(self.active(), budget) \
            - self.store.worker_time(TaskKind.SHRINK.value)
        # a cause with no shrunk example at all is worth more than the share's bound: each gets at
        # least UNSHRUNK_CAUSE_SECONDS of worker time here, still within `seconds` of wall time
        if self.config.shrink_share > 0:
            share = max(share, UNSHRUNK_CAUSE_SECONDS * len(wanted))
        if not wanted or min(share, seconds) < self.config.min_shrink_seconds:
            return 0
        self._say(f"{len(wanted)} cause(s) the report shows have no shrunk example: shrinking them")
        pool = self.pool_factory(self.target, self.config.jobs) if self.pool_factory is not None \
            else WorkerPool(self.target, self.config.jobs, self.config.start_method)
        try:
            self._final_shrinks(pool, seconds, share)
        except KeyboardInterrupt:
            pool.abandon()
            raise
        finally:
            pool.close()  # no tick: the session's active time ended with the budget (run's last tick)
            self.folded.advance(self._settled())
        return sum(1 for sig in wanted if self.buckets[sig].shrink != ShrinkState.PENDING)

    def _grace(self) -> float:
        return 30.0

    def _confirming(self) -> bool:
        """A confirming re-run in flight or queued."""
        return bool(self.book.confirm_queue) or any(t.kind == TaskKind.CONFIRM for t in self.inflight.tasks.values())

    # --- progress -------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        self.state.say(text)

    def _rate(self) -> float:
        session_seconds = time.monotonic() - self.stats.session_start
        return self.stats.session_done / session_seconds * 60 if session_seconds > 0 else 0.0

    def discovery(self, fresh: bool = False) -> Discovery:
        """The estimates now, at this session's candidate rate (`fresh`: every sighting so far counted)."""
        return self.sightings.estimate(self.buckets.values(), self._rate(), fresh)

    def _saturated(self) -> str | None:
        """Why `--until-saturated` ends the campaign now, or None."""
        if self.saturation is None:
            return None
        d, active = self.discovery(), self.active()
        self.saturation.observe(d, active)
        return self.saturation.saturated(d, active)

    def snapshot(self) -> Snapshot:
        rate = self._rate()
        real = [b for b in self.buckets.values() if b.state != BucketState.FLAKY]
        named = {name: [self.buckets[s] for s in members if s in self.buckets]
                 for name, members in self.causes.members().items()}
        named = {name: c for name, c in named.items() if any(b.state != BucketState.FLAKY for b in c)}
        verdicts = {name: cause_triage(c) for name, c in named.items()}
        findings = sum(v == Triage.COMPILER_BUG for v in verdicts.values())
        newest = sorted(named, key=lambda n: -min(b.first_seen for b in named[n]))[:3]
        pool_status = getattr(self.pool, "status", None)  # a cluster pool's word on its nodes
        return Snapshot(
            done=len(self.tried), session_done=self.stats.session_done, rate_per_min=rate, buckets=len(real),
            causes=len(named), findings=findings, flaky=len(self.buckets) - len(real), newest=self.stats.newest, active=self.active(),
            left=self._time_left(), count_left=self._count_left(), in_flight=len(self.inflight), lanes=self.lanes,
            jobs=self.config.jobs, count_limit=self.config.limits.count, seconds_limit=self.config.limits.seconds, by_triage=dict(collections.Counter(v.value for v in verdicts.values())),
            newest_causes=tuple(f"{n} ({verdicts[n].value}) {named[n][0].sig}" for n in newest),
            pool=pool_status() if pool_status is not None else "", discovery=self.discovery(),
            allocation=self.allocation.top_line(large_now=self.plan.large_possible()))

    def _tick(self) -> None:
        with self._head_work():
            now = time.monotonic()
            if now - self._last_tick >= 0.5:
                self._last_tick = now
                self.progress("tick", self.snapshot())
            # the session clock is written with every candidate; idle stretches are written here
            if now - self._last_store_tick >= 10.0:
                self._last_store_tick = now
                self.store.tick(self.session, self.active())
                self.folded.advance(self._settled())

    def _settled(self) -> int:
        """The index below which every candidate row there will be is in the store: below what is in
        flight or waiting for a retry, and below the store's next index (a later session draws from
        there)."""
        waiting = (*self.inflight.tasks.values(), *(task for _, task in self.retries.queue))
        return min([self.store.next_index()] + [t.candidate.index for t in waiting if t.kind == TaskKind.CHECK])


__all__ = ["Candidate", "Failure", "Outcome", "Target", "Engine", "EngineConfig", "Limits", "MIN_SHRINK_SECONDS", "Observer", "Snapshot", "Steering",
           "SteeringKnobs", "bucket_triage", "cause_triage", "derive_seed", "MAX_SIBLING_LANES"]
