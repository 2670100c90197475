"""The campaign loop. Takes a `Target` (plain callables: generate, check, confirm, save, shrink,
triage) and knows nothing of IREE: it draws candidates, skips what was tried, steers toward rare
features and away from saturated buckets, checks each candidate on the reference lane plus a
rotating share of the others, buckets failures by signature and ties buckets into causes,
confirms each new bucket by a re-run and has it saved at once, shrinks one bucket per cause
within a bounded share of worker time, sets aside a lane (backend) that keeps timing out, and
keeps everything in the campaign store so a kill at any instant loses at most the tasks in flight."""

from __future__ import annotations

import collections
import hashlib
import math
import random
import signal
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Protocol

from shapefuzz.campaign.pool import Done, Task, WorkerPool
from shapefuzz.campaign.causes import Causes
from shapefuzz.campaign.coverage import CoverageKnobs, CoverageSteering
from shapefuzz.campaign.steering import Steering, SteeringKnobs
from shapefuzz.campaign.store import BucketRow, CampaignStore, CandidateRow
from shapefuzz.campaign.values import BucketState, ShrinkState, TaskKind, Triage, Verdict


# --- the values the engine speaks -------------------------------------------------------------
@dataclass(frozen=True)
class Candidate:
    key: str  # content hash: equal candidates have equal keys
    group: str  # the op family
    seed: int  # the draw seed that regenerates it
    features: tuple[str, ...]
    payload: str  # what regenerates it without the seed (parameters as JSON)
    text: str  # the reproducer (MLIR)
    index: int = -1
    instrument: tuple[str, ...] = ()  # lanes to compile with the action log (coverage feedback)

    @property
    def length(self) -> int:
        """Characters, for display; which of two is smaller is the target's `size` order."""
        return len(self.text)


@dataclass(frozen=True)
class Failure:
    lane: str  # backend
    signature: str  # the bucket key, str(Signature)
    fields: dict[str, str]  # the structured signature
    detail: str = ""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    lanes: dict[str, tuple[str, float]]  # lane -> (status, seconds)
    failures: tuple[Failure, ...] = ()
    tool_seconds: float = 0.0  # time spent inside compiler and runtime processes
    error: str = ""
    # set by a confirming re-run whose every backend disagreed with the reference: an equivalent
    # form that matches the reference ("form [...] matches ... on llvm-cpu"), so the reference is right
    reference_form: str = ""
    # lane -> (the (pass, pattern) items its instrumented compile reached, the pass a failed compile failed in)
    coverage: dict[str, tuple[tuple[tuple[str, str], ...], str]] = field(default_factory=dict)


class Target(Protocol):
    """What the engine needs from a domain. check/confirm/shrink run in worker processes (the
    target must pickle); generate/save run in the campaign process."""

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate: ...  # large: for compile-only lanes
    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str,
             triage: str = "", evidence: str = "") -> str: ...
    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]: ...
    def rename_cause(self, entry: str, cause: str) -> None: ...  # a saved entry's cause was merged
    def deadline(self, lanes: tuple[str, ...]) -> float: ...
    def corpus_count(self, failure: Failure) -> tuple[str, int]: ...
    def size(self, text: str) -> tuple[int, ...]: ...  # the one "smaller" order (shrinker, corpus, campaign)
    # lanes = (backend, signature, seconds allowed); returns (smaller text, corpus entry) or None
    def shrink(self, candidate: Candidate, lanes: tuple[str, ...]) -> Any: ...


@dataclass
class Limits:
    count: int | None = None  # candidates in the whole campaign
    seconds: float | None = None  # active seconds in the whole campaign


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


MIN_SHRINK_SECONDS = 20.0  # a shrink is not started with less time than this
MAX_SIBLING_LANES = 3  # extra lanes a confirming re-run may run to tie a new bucket to a known cause


def derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:6], "big")


# --- the loop -----------------------------------------------------------------------------------
@dataclass
class Stats:
    session_done: int = 0
    session_start: float = field(default_factory=time.monotonic)
    newest: str = ""
    lost: int = 0
    errors: int = 0
    duplicates: int = 0
    steered_away: int = 0  # draws dropped for carrying a saturated bucket's trigger
    messages: list[str] = field(default_factory=list)


class Engine:
    def __init__(
        self,
        target: Target,
        store: CampaignStore,
        groups: tuple[str, ...],
        lanes: tuple[str, ...],
        seed: int,
        jobs: int,
        limits: Limits,
        *,
        confirm: bool = True,
        shrink: bool = False,
        draws: int = 2,
        set_aside_after: int = 3,
        reference: str | None = None,
        lanes_per_candidate: int | None = None,  # None: every lane checks every candidate
        knobs: SteeringKnobs = SteeringKnobs(),
        coverage: CoverageKnobs = CoverageKnobs(share=0.0),  # coverage feedback (off unless asked for)
        shrink_share: float = 0.25,  # most of the worker time background shrinking may take
        shrink_seconds: float = 300.0,  # most one shrink may take
        final_shrink_seconds: float = 0.0,  # a phase after the budget for what is still pending
        min_shrink_seconds: float = MIN_SHRINK_SECONDS,
        compile_only: tuple[str, ...] = (),  # lanes that only compile here (large rounds go to them)
        large_every: int = 0,  # every n-th candidate is a large round (0: none)
        progress: Callable[[str, Any], None] = lambda kind, value: None,
        argv: list[str] | None = None,
        start_method: str = "spawn",
        pool_factory: Callable[[Any, int], Any] | None = None,  # another pool with WorkerPool's interface
    ) -> None:
        self.target, self.store = target, store
        self.groups, self.seed, self.jobs, self.limits = groups, seed, jobs, limits
        self.confirm_enabled, self.shrink_enabled, self.draws = confirm, shrink, max(1, draws)
        self.set_aside_after, self.progress = set_aside_after, progress
        self.start_method = start_method
        self.pool_factory, self.pool = pool_factory, None
        self.reference = reference if reference in lanes else (lanes[0] if lanes else None)
        self.lanes_per_candidate = lanes_per_candidate
        self.shrink_share, self.shrink_seconds = shrink_share, shrink_seconds
        self.final_shrink_seconds = final_shrink_seconds
        self.min_shrink_seconds = min_shrink_seconds
        self.compile_only, self.large_every = compile_only, large_every
        aside = store.set_aside_backends()
        self.lanes = tuple(lane for lane in lanes if lane not in aside)
        for lane in lanes:
            if lane in aside:
                self._say(f"backend {lane} stays set aside: {aside[lane]}")
        self.session = store.start_session(argv or [])
        self.active_before = store.active_before(self.session)
        self.stats = Stats()
        self.tried = store.candidate_keys()
        self.next_index = store.next_index()
        self.steering = Steering(groups, knobs)
        self.causes = Causes()
        self.buckets = {b.sig: b for b in store.buckets()}
        for b in sorted(self.buckets.values(), key=lambda b: (b.first_seen, b.sig)):
            self.causes.add(b.sig, b.sig_json)
            if b.state == BucketState.FLAKY:
                self.steering.ignored.add(b.sig)
        rows = {}
        for row in store.candidates():
            rows[row.key] = row
            if row.family in groups:
                self.steering.add(row.family, row.features, row.task_seconds)
        by_candidate: dict[str, list[str]] = collections.defaultdict(list)
        for key, sig, _ in store.hits():
            by_candidate[key].append(sig)
        for key in sorted(by_candidate, key=lambda k: rows[k].idx if k in rows else -1):
            row = rows.get(key)
            if row is not None:
                for sig in by_candidate[key]:
                    self.steering.hit(sig, row.family, row.features, row.task_seconds / len(by_candidate[key]))
            self.causes.tie(by_candidate[key])
        self.timeouts: collections.Counter[str] = collections.Counter()
        self.in_flight: dict[str, Task] = {}
        self.confirm_queue: collections.deque[tuple[Candidate, tuple[str, ...]]] = collections.deque()
        self.shrink_queue: collections.deque[tuple[Candidate, str]] = collections.deque()  # (candidate, bucket)
        self.pending_confirm: dict[str, list[str]] = collections.defaultdict(list)  # candidate key -> sigs
        self.failed_groups: collections.Counter[str] = collections.Counter()
        self.dead_groups: set[str] = set()
        self._tid = 0
        self._sizes: dict[str, tuple[int, ...]] = {}
        self._last_tick = 0.0
        self.coverage = CoverageSteering(self, coverage, rows)
        self._requeue_pending()

    # --- clock and budget -----------------------------------------------------------------
    def active(self) -> float:
        return self.active_before + (time.monotonic() - self.stats.session_start)

    def _count_left(self) -> int | None:
        if self.limits.count is None:
            return None
        return self.limits.count - len(self.tried) - sum(t.kind == TaskKind.CHECK for t in self.in_flight.values())

    def _time_left(self) -> float | None:
        return None if self.limits.seconds is None else self.limits.seconds - self.active()

    def budget_spent(self) -> bool:
        left = self._count_left()
        if left is not None and left <= 0:
            return True
        t = self._time_left()
        return t is not None and t <= 0

    # --- resume -----------------------------------------------------------------------------
    def _requeue_pending(self) -> None:
        """Buckets whose re-run was in flight when the last session stopped: confirm them now.
        Confirmed buckets whose corpus entry was not recorded: save again (the corpus merges)."""
        for bucket in self.buckets.values():
            unsaved = not bucket.corpus_entry or bucket.saving is not None
            if bucket.state == BucketState.PENDING or unsaved:
                row = self.store.candidate(bucket.repro_key)
                if row is None:
                    continue
                candidate = self._revive(row)
                if candidate is None:
                    continue
                if bucket.state == BucketState.PENDING:
                    if bucket.sig not in self.pending_confirm[candidate.key]:
                        self.pending_confirm[candidate.key].append(bucket.sig)
                    if all(c.key != candidate.key for c, _ in self.confirm_queue):
                        self.confirm_queue.append((candidate, (bucket.backend,)))
                    else:
                        self.confirm_queue = collections.deque(
                            (c, tuple(dict.fromkeys(l + (bucket.backend,))) if c.key == candidate.key else l)
                            for c, l in self.confirm_queue)
                else:
                    self._save_bucket(bucket, candidate, bucket.state == BucketState.FLAKY)
        for bucket in self.buckets.values():  # shrinks wanted when the last session stopped
            if bucket.shrink == ShrinkState.PENDING and self.shrink_enabled:
                row = self.store.candidate(bucket.repro_key)
                candidate = self._revive(row) if row is not None else None
                if candidate is not None:
                    self.shrink_queue.append((candidate, bucket.sig))

    def _revive(self, row: CandidateRow) -> Candidate | None:
        try:
            candidate = self._generate(row.family, row.seed, row.idx)
            if candidate.key != row.key and hasattr(self.target, "from_payload"):  # a drawn neighbour
                candidate = self.target.from_payload(row.family, row.seed, row.payload)
        except Exception as error:  # the family changed or is gone
            self._say(f"cannot regenerate candidate {row.key} ({row.family}): {error}")
            return None
        return replace(candidate, index=row.idx)

    # --- generation -------------------------------------------------------------------------
    def _next_candidate(self) -> Candidate | None:
        live = tuple(g for g in self.groups if g not in self.dead_groups)
        if not live:
            return None
        for _ in range(8):
            index = self.next_index
            self.next_index += 1
            rng = random.Random(derive_seed(self.seed, "group", index))
            self.steering.groups = live
            neighbour = self.coverage.neighbour(index)
            if neighbour is not None:
                return neighbour
            group = self.coverage.pick_group(rng) if self.coverage.steers else self.steering.pick_group(rng)
            best: Candidate | None = None
            best_score = -1.0
            attempt, drawn = 0, 0
            while drawn < self.draws and attempt < self.draws + 16:
                seed = derive_seed(self.seed, index, attempt)
                attempt += 1
                try:
                    candidate = self._generate(group, seed, index)
                except Exception as error:  # a family's bug: count it, drop the family if it persists
                    self.failed_groups[group] += 1
                    if self.failed_groups[group] == 1 or self.failed_groups[group] >= 5:
                        self._say(f"family {group} failed to generate seed {seed}: {_one_line(error)}")
                    if self.failed_groups[group] >= 5:
                        self.dead_groups.add(group)
                        self._say(f"family {group} set aside after 5 generation failures")
                        break
                    continue
                # in_flight is keyed by task; a candidate drawn again while its first check runs is a duplicate too
                if candidate.key in self.tried or any(t.candidate.key == candidate.key for t in self.in_flight.values()):
                    self.stats.duplicates += 1
                    continue
                keep = self.steering.keep_chance(group, candidate.features)
                if keep < 1.0 and random.Random(derive_seed(self.seed, "keep", index, attempt)).random() >= keep:
                    self.stats.steered_away += 1
                    continue
                drawn += 1
                score = self.coverage.score(self.steering.rarity(group, candidate.features), group, candidate.features)
                if score > best_score:
                    best, best_score = candidate, score
            if best is not None:
                return replace(best, index=index)
        return None

    # --- scheduling ------------------------------------------------------------------------
    def large_round(self, index: int) -> bool:
        """Every `large_every`-th candidate is drawn with large shapes and checked only on the
        compile-only lanes (too slow to execute here; shared-memory and tiling bugs need them)."""
        return (self.lanes_per_candidate is not None and self.large_every > 0
                and any(lane in self.lanes for lane in self.compile_only)
                and index % self.large_every == self.large_every - 1)

    def _generate(self, group: str, seed: int, index: int) -> Candidate:
        if self.large_round(index):
            return self.target.generate(group, seed, large=True)
        return self.target.generate(group, seed)

    def lanes_for(self, index: int) -> tuple[str, ...]:
        """The reference lane plus a rotating share of the others: candidate i gets the next
        `lanes_per_candidate - 1` of them in turn, so every lane gets its turn. A large round
        goes to the compile-only lanes alone, in turn too."""
        k = self.lanes_per_candidate
        if k is not None and self.large_round(index):
            only = [lane for lane in self.lanes if lane in self.compile_only]
            start = index // self.large_every
            picked = {only[(start * k + j) % len(only)] for j in range(min(k, len(only)))}
            return tuple(lane for lane in only if lane in picked)
        if k is None or self.reference not in self.lanes or k >= len(self.lanes):
            return self.lanes
        others = [lane for lane in self.lanes if lane != self.reference]
        share = max(0, k - 1)
        picked = {others[(index * share + j) % len(others)] for j in range(share)}
        return (self.reference, *[lane for lane in others if lane in picked])

    def _task(self, kind: TaskKind, candidate: Candidate, lanes: tuple[str, ...]) -> Task:
        self._tid += 1
        if kind == TaskKind.SHRINK:  # its own time limit, plus the re-checks around it
            deadline = float(lanes[2]) * 1.5 + self.target.deadline(lanes[:1])
        else:
            deadline = self.target.deadline(lanes)
        return Task(self._tid, kind, candidate, lanes, deadline)

    def _shrink_allowance(self) -> float:
        """Seconds of worker time a new shrink may take now: its share of all worker time so
        far, less what shrinks took and what the running ones may take."""
        used = self.store.worker_time(TaskKind.SHRINK.value) + sum(
            float(t.lanes[2]) for t in self.in_flight.values() if t.kind == TaskKind.SHRINK)
        return self.shrink_share * self.jobs * self.active() - used

    def _shrink_limit(self) -> float:
        """How long a shrink started now may run: its share, and no later than the time budget
        (one cut off at the end would lose its work; it stays pending for the next session)."""
        left = self._time_left()
        limit = min(self.shrink_seconds, self._shrink_allowance())
        return limit if left is None else min(limit, left)

    def _next_shrink(self, limit: float) -> Task | None:
        while self.shrink_queue:
            candidate, sig = self.shrink_queue.popleft()
            bucket = self.buckets.get(sig)
            if bucket is None or bucket.shrink != ShrinkState.PENDING:
                continue
            return self._task(TaskKind.SHRINK, candidate, (bucket.backend, sig, f"{limit:.3f}"))
        return None

    def _fill(self, pool: WorkerPool, stopping: bool) -> None:
        while pool.idle:
            if self.confirm_queue:
                candidate, lanes = self.confirm_queue.popleft()
                task = self._task(TaskKind.CONFIRM, candidate, lanes)
            elif (self.shrink_queue and not stopping and self._shrink_limit() >= self.min_shrink_seconds
                  and (task := self._next_shrink(self._shrink_limit()))):
                pass
            elif not stopping and not self.budget_spent() and self.lanes:
                candidate = self._next_candidate()
                if candidate is None:
                    return
                candidate, lanes = self.coverage.plan(candidate, self.lanes_for(candidate.index))
                task = self._task(TaskKind.CHECK, candidate, lanes)
            else:
                return
            self.in_flight[f"{task.kind.value}:{task.tid}"] = task
            pool.submit(task)

    def run(self) -> str:
        """Until the budget is spent, Ctrl-C, or nothing is left to try. Returns why it stopped."""
        if not self.lanes:
            return "every backend is set aside"
        final = self.final_shrink_seconds > 0 and self.shrink_enabled and bool(self.shrink_queue)
        if self.budget_spent() and not self.confirm_queue and not final:
            return "budget already spent"
        if self.pool_factory is not None:
            pool = self.pool = self.pool_factory(self.target, self.jobs)
        else:
            pool = self.pool = WorkerPool(self.target, self.jobs, self.start_method)
        previous = signal.signal(signal.SIGTERM, _raise_interrupt)
        reason = "budget spent"
        try:
            while True:
                stopping = self.budget_spent() or not self.lanes
                self._fill(pool, stopping)
                if not self.in_flight:
                    if not self.lanes:
                        reason = "every backend is set aside"
                    elif not stopping:
                        reason = "no new candidates could be drawn"
                    break
                for done in pool.wait(0.25):
                    self._finish(done)
                self._tick()
                if self._time_left() is not None and self._time_left() < -self._grace():
                    for task in pool.abandon():  # time is up: in-flight candidates are dropped
                        self.in_flight.pop(f"{task.kind.value}:{task.tid}", None)
                    break
            if reason == "budget spent" and self.final_shrink_seconds > 0 and self.shrink_enabled:
                self._final_shrinks(pool)
        except KeyboardInterrupt:
            reason = "interrupted"
            pool.abandon()
        finally:
            signal.signal(signal.SIGTERM, previous)
            pool.close()
            self.store.tick(self.session, self.active())
        return reason

    def _size(self, text: str) -> tuple[int, ...]:
        if text not in self._sizes:
            if len(self._sizes) > 256:
                self._sizes.clear()
            self._sizes[text] = tuple(self.target.size(text))
        return self._sizes[text]

    def _final_shrinks(self, pool: WorkerPool) -> None:
        """What is still pending once the budget is spent, shrunk within its own budget. What
        this phase does not reach stays pending in the store, for the next session."""
        end = time.monotonic() + self.final_shrink_seconds
        if self.shrink_queue:
            self._say(f"shrinking {len(self.shrink_queue)} pending bucket(s) for up to "
                      f"{self.final_shrink_seconds:.0f}s")
        while True:
            left = end - time.monotonic()
            while pool.idle and self.shrink_queue and left >= self.min_shrink_seconds:
                task = self._next_shrink(min(self.shrink_seconds, left))
                if task is None:
                    break
                self.in_flight[f"{task.kind.value}:{task.tid}"] = task
                pool.submit(task)
            if not self.in_flight:
                return
            for done in pool.wait(0.25):
                self._finish(done)
            self._tick()
            if time.monotonic() > end + 60.0:
                for task in pool.abandon():
                    self.in_flight.pop(f"{task.kind.value}:{task.tid}", None)
                return

    def _grace(self) -> float:
        return 30.0

    # --- results -------------------------------------------------------------------------
    def _finish(self, done: Done) -> None:
        task = done.task
        self.in_flight.pop(f"{task.kind.value}:{task.tid}", None)
        if task.kind == TaskKind.CHECK:
            self._finish_check(task, done)
        elif task.kind == TaskKind.CONFIRM:
            self._finish_confirm(task, done)
        elif task.kind == TaskKind.SHRINK:
            self._finish_shrink(task, done)

    def _finish_check(self, task: Task, done: Done) -> None:
        candidate = task.candidate
        outcome: Outcome | None = done.value
        if outcome is None:
            verdict = Verdict.LOST if done.lost else Verdict.ERROR
            outcome = Outcome(verdict, {}, (), 0.0, done.error)
            if done.lost:
                self.stats.lost += 1
            else:
                self.stats.errors += 1
            self._say(f"candidate {candidate.key} ({candidate.group}): {verdict.value}: {_one_line(done.error)}")
        elif outcome.verdict == Verdict.INVALID:
            self.stats.errors += 1
            self._say(f"candidate {candidate.key} ({candidate.group}) does not verify (a generator bug): "
                      f"{_one_line(outcome.error)}")
        now, wall = self.active(), time.time()
        updates: dict[str, BucketRow] = {}
        new_lanes: list[str] = []
        hits = []
        rehit = [f.signature for f in outcome.failures if self.steering.saturated(f.signature)]
        for failure in outcome.failures:
            hits.append((failure.signature, failure.lane))
            bucket = self.buckets.get(failure.signature)
            if bucket is None:
                self.causes.add(failure.signature, failure.fields)
                triage, evidence = self.target.triage(candidate, failure, outcome)
                bucket = BucketRow(
                    failure.signature, failure.fields, failure.lane, failure.fields.get("stage", ""),
                    failure.fields.get("status", ""), candidate.group, 1, now, now, wall, wall,
                    BucketState.PENDING if self.confirm_enabled else BucketState.UNCONFIRMED, candidate.key,
                    candidate.length, candidate.text, failure.detail[-4000:], "", None,
                    triage=Triage(triage).value, evidence=evidence)
                new_lanes.append(failure.lane)
                self.pending_confirm[candidate.key].append(failure.signature)
                self.stats.newest = failure.signature
            else:
                smaller = self._size(candidate.text) < self._size(bucket.repro_text)
                bucket = replace(
                    bucket, count=bucket.count + 1, last_seen=now, last_wall=wall,
                    repro_key=candidate.key if smaller else bucket.repro_key,
                    repro_size=candidate.length if smaller else bucket.repro_size,
                    repro_text=candidate.text if smaller else bucket.repro_text)
            self.steering.hit(failure.signature, candidate.group, candidate.features,
                              done.seconds / max(1, len(rehit)))
            if failure.signature in rehit:  # its cost is shared by the saturated buckets it re-hit
                bucket = replace(bucket, rehits=bucket.rehits + 1,
                                 rehit_seconds=bucket.rehit_seconds + done.seconds / len(rehit))
            self.buckets[failure.signature] = bucket
            updates[failure.signature] = bucket
        if self.causes.tie([f.signature for f in outcome.failures]) or new_lanes:
            updates.update(self._renamed_causes())
        row = CandidateRow(
            candidate.key, candidate.index, candidate.seed, candidate.group, candidate.features, task.lanes,
            outcome.verdict, {k: list(v) for k, v in outcome.lanes.items()}, candidate.payload, candidate.length,
            outcome.tool_seconds, done.seconds, now, outcome.error[:2000])
        self.store.record(row, hits, self.session, now, list(updates.values()),
                          coverage=self.coverage.finished(candidate, outcome, now, wall))
        self.tried.add(candidate.key)
        self.steering.add(candidate.group, candidate.features, done.seconds)
        self.stats.session_done += 1
        for failure in outcome.failures:
            if failure.lane in new_lanes and self.buckets[failure.signature].count == 1:
                self._say(f"new bucket: {failure.signature}  ({candidate.group}, candidate {candidate.key}; "
                          f"{self.buckets[failure.signature].cause})")
        if new_lanes:
            if self.confirm_enabled:
                lanes = [*new_lanes, *self._sibling_lanes(outcome, task.lanes)]
                self.confirm_queue.append((candidate, tuple(dict.fromkeys(lanes))))
            else:
                saved = []
                for sig in self.pending_confirm.pop(candidate.key, []):
                    failure = next(f for f in outcome.failures if f.signature == sig)
                    self._save_bucket(self.buckets[sig], candidate, False, failure)
                    saved.append(sig)
                self._plan_shrinks(saved, candidate, outcome)
        self._watch_timeouts(outcome)

    def _sibling_lanes(self, outcome: Outcome, checked: tuple[str, ...]) -> list[str]:
        """Lanes this candidate was not checked on that already hold a bucket with the same stage,
        status and message as one of its new buckets. Under lane rotation two lanes rarely see one
        candidate, so the confirming re-run runs these too: if the candidate fails them the same
        way, the buckets are tied into one cause instead of staying apart ("-2")."""
        keys = {self.causes.key[f.signature] for f in outcome.failures
                if f.signature in self.causes.key and self.buckets[f.signature].count == 1}
        siblings = [b.backend for sig, b in self.buckets.items()
                    if self.causes.key.get(sig) in keys and b.backend not in checked and b.backend in self.lanes]
        return list(dict.fromkeys(siblings))[:MAX_SIBLING_LANES]

    def _renamed_causes(self) -> dict[str, BucketRow]:
        """Buckets whose cause name changed (new bucket, or two causes tied by a candidate);
        their corpus entries are told too."""
        changed = {}
        for sig, name in self.causes.name_of().items():
            bucket = self.buckets.get(sig)
            if bucket is not None and bucket.cause != name:
                if bucket.corpus_entry and bucket.cause:
                    try:
                        self.target.rename_cause(bucket.corpus_entry, name)
                    except Exception as error:  # noqa: BLE001 - a corpus problem must not end the campaign
                        self._say(f"could not name cause {name} in {bucket.corpus_entry}: {_one_line(error)}")
                bucket = replace(bucket, cause=name)
                self.buckets[sig] = bucket
                changed[sig] = bucket
        return changed

    def _finish_confirm(self, task: Task, done: Done) -> None:
        candidate = task.candidate
        outcome: Outcome | None = done.value
        self.store.add_extra_time(outcome.tool_seconds if outcome else 0.0, done.seconds)
        self.store.add_time(TaskKind.CONFIRM.value, done.seconds)
        again = {f.signature for f in outcome.failures} if outcome is not None else set()
        known = [f for f in (outcome.failures if outcome is not None else ()) if f.signature in self.buckets]
        if self.causes.tie([f.signature for f in known]):  # a sibling lane failed the same way
            renamed = self._renamed_causes()
            self.store.add_hits(candidate.key, [(f.signature, f.lane) for f in known], list(renamed.values()))
        saved = []
        for sig in self.pending_confirm.pop(candidate.key, []):
            bucket = self.buckets[sig]
            flaky = sig not in again
            failure = Failure(bucket.backend, sig, bucket.sig_json, bucket.detail)
            state = BucketState.FLAKY if flaky else BucketState.CONFIRMED
            if not flaky and bucket.triage == Triage.OURS.value and outcome is not None:
                # the re-run may show the reference is right after all (an equivalent form agrees with it)
                again_failure = next(f for f in outcome.failures if f.signature == sig)
                triage, evidence = self.target.triage(candidate, again_failure, outcome)
                bucket = replace(bucket, triage=Triage(triage).value, evidence=evidence)
            if flaky:
                why = ("did not come back on its re-run" if bucket.status != "oom" else
                       "ran out of memory under the campaign's cap but not under the full cap on its re-run "
                       "(it needs more memory than the campaign allows, not without bound)")
                bucket = replace(bucket, triage=Triage.FLAKY.value, evidence=why)
                self.steering.ignored.add(sig)
            self._save_bucket(replace(bucket, state=state), candidate, flaky, failure)
            if flaky:
                self._say(f"bucket did not reproduce on its re-run (flaky): {sig}")
            else:
                saved.append(sig)
        if outcome is not None:
            self._plan_shrinks(saved, candidate, outcome)

    def _plan_shrinks(self, sigs: list[str], candidate: Candidate, outcome: Outcome) -> None:
        """One shrink per cause, on the cheapest backend where the candidate reproduced it; the
        plan is kept in the store, so a pending shrink survives a kill."""
        if not self.shrink_enabled or not sigs:
            return
        names = self.causes.name_of()
        members = self.causes.members()
        for cause in dict.fromkeys(names[s] for s in sigs):
            buckets = [self.buckets[b] for b in members.get(cause, []) if b in self.buckets]
            if any(b.shrink in (ShrinkState.PENDING, ShrinkState.DONE) for b in buckets):
                chosen = None
            else:
                here = [self.buckets[s] for s in sigs if names[s] == cause and self.buckets[s].corpus_entry]
                chosen = min(here, key=lambda b: (outcome.lanes.get(b.backend, ("", 1e9))[1], b.backend),
                             default=None)
            for b in buckets:
                if b.shrink != ShrinkState.NONE or b.sig not in sigs:
                    continue
                state = ShrinkState.PENDING if chosen is not None and b.sig == chosen.sig else ShrinkState.SKIPPED
                b = replace(b, shrink=state.value)
                self.buckets[b.sig] = b
                self.store.put_bucket(b)
                if state == ShrinkState.PENDING:
                    self.shrink_queue.append((candidate, b.sig))

    def _save_bucket(self, bucket: BucketRow, candidate: Candidate, flaky: bool,
                     failure: Failure | None = None) -> None:
        failure = failure or Failure(bucket.backend, bucket.sig, bucket.sig_json, bucket.detail)
        try:
            # `saving`: a save is under way and the entry had been saved N times before it. A session
            # killed between the corpus write and the row below finds N+1 and does not save twice.
            where, before = self.target.corpus_count(failure)
            if bucket.saving is not None and before > bucket.saving:
                entry = where
            else:
                self.store.put_bucket(replace(bucket, corpus_entry="", saving=before))
                entry = self.target.save(candidate, failure, flaky, bucket.cause,
                                         triage=bucket_triage(bucket).value, evidence=bucket.evidence)
        except Exception as error:  # a corpus problem must not end the campaign; retried on resume
            self._say(f"could not save bucket {bucket.sig} to the corpus: {_one_line(error)}")
            entry = ""
        if bucket.state == BucketState.PENDING:
            bucket = replace(bucket, state=BucketState.FLAKY if flaky else BucketState.CONFIRMED)
        bucket = replace(bucket, corpus_entry=entry, saving=None)
        self.buckets[bucket.sig] = bucket
        self.store.put_bucket(bucket)

    def _finish_shrink(self, task: Task, done: Done) -> None:
        sig = task.lanes[1]
        result = done.value
        self.store.add_time(TaskKind.SHRINK.value, done.seconds)
        bucket = self.buckets.get(sig)
        if bucket is None:
            return
        state = ShrinkState.DONE
        if done.error or done.lost:
            self._say(f"shrinking {sig} stopped: {_one_line(done.error)}")
            state = ShrinkState.FAILED
        elif result:
            text, entry = result
            # one shrink per bucket, from its reproducer: smaller than that is smaller than all so far
            if self._size(text) < self._size(bucket.repro_text):
                bucket = replace(bucket, shrunk_size=len(text), corpus_entry=entry or bucket.corpus_entry)
                self._say(f"shrunk {sig}: {bucket.repro_size} -> {len(text)} bytes")
        bucket = replace(bucket, shrink=state.value)
        self.buckets[sig] = bucket
        self.store.put_bucket(bucket)

    def _watch_timeouts(self, outcome: Outcome) -> None:
        for lane, (status, _) in outcome.lanes.items():
            if status == "timeout":
                self.timeouts[lane] += 1
            else:
                self.timeouts[lane] = 0
            if self.timeouts[lane] >= self.set_aside_after and lane in self.lanes:
                reason = f"timed out on {self.timeouts[lane]} candidates in a row"
                self.lanes = tuple(x for x in self.lanes if x != lane)
                self.store.set_aside(lane, reason)
                self._say(f"backend {lane} set aside: {reason}")

    # --- progress -------------------------------------------------------------------------
    def _say(self, text: str) -> None:
        self.stats.messages.append(text)
        self.progress("message", text)

    def snapshot(self) -> Snapshot:
        session_seconds = time.monotonic() - self.stats.session_start
        rate = self.stats.session_done / session_seconds * 60 if session_seconds > 0 else 0.0
        real = [b for b in self.buckets.values() if b.state != BucketState.FLAKY]
        causes = [[self.buckets[s] for s in members if s in self.buckets]
                  for members in self.causes.members().values()]
        causes = [c for c in causes if any(b.state != BucketState.FLAKY for b in c)]
        findings = sum(cause_triage(c) == Triage.COMPILER_BUG for c in causes)
        return Snapshot(
            done=len(self.tried), session_done=self.stats.session_done, rate_per_min=rate, buckets=len(real),
            causes=len(causes), findings=findings, flaky=len(self.buckets) - len(real), newest=self.stats.newest, active=self.active(),
            left=self._time_left(), count_left=self._count_left(), in_flight=len(self.in_flight), lanes=self.lanes,
            pool=self.pool.status() if hasattr(self.pool, "status") else "")

    def _tick(self) -> None:
        now = time.monotonic()
        if now - self._last_tick >= 0.5:
            self._last_tick = now
            self.progress("tick", self.snapshot())
        # the session clock is written with every candidate; idle stretches are written here
        if now - getattr(self, "_last_store_tick", 0.0) >= 10.0:
            self._last_store_tick = now
            self.store.tick(self.session, self.active())


_TRIAGE_ORDER = (Triage.COMPILER_BUG, Triage.TARGET_LIMIT, Triage.SUSPECTED_DRIVER, Triage.OURS, Triage.FLAKY)


def bucket_triage(bucket: BucketRow) -> Triage:
    if bucket.state == BucketState.FLAKY:
        return Triage.FLAKY
    return Triage(bucket.triage) if bucket.triage else Triage.COMPILER_BUG


def cause_triage(buckets: list[BucketRow]) -> Triage:
    """A cause is a compiler bug when any of its buckets is one (the same failure on llvm-cpu
    clears the Vulkan driver); otherwise the most bug-like verdict among them."""
    verdicts = {bucket_triage(b) for b in buckets}
    return next((t for t in _TRIAGE_ORDER if t in verdicts), Triage.FLAKY)


def _raise_interrupt(signum, frame):
    raise KeyboardInterrupt


def _one_line(error: Any) -> str:
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else type(error).__name__)[:300]


__all__ = ["Candidate", "Failure", "Outcome", "Target", "Engine", "Limits", "Snapshot", "Steering", "SteeringKnobs",
           "bucket_triage", "cause_triage", "derive_seed"]
