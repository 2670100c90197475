"""The engine's bucket book: what a finished task does to the buckets. A check's failures become
buckets (new ones triaged and queued for their confirming re-run, which a compile error's own
lane skips: `settled_by_check`) or hits; buckets are tied into causes; a confirmed bucket is saved
to the corpus at once, a flaky one marked; one shrink is planned per cause (`shrinkorder.ShrinkPlan`)
and its result recorded; a lane that keeps timing out is set aside; and on resume, what was pending
is queued again."""

from __future__ import annotations

import collections
import errno
import time
from dataclasses import replace
from typing import Callable

from shapefuzz.campaign import task_log
from shapefuzz.campaign.allocation import new_causes
from shapefuzz.campaign.causes.cause_ties import Causes
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.lanecost import KEEP, SLOW_SECONDS
from shapefuzz.campaign.state import CampaignState, Guides
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.campaign.retries import Retries
from shapefuzz.campaign.shrinkorder import ShrinkPlan
from shapefuzz.campaign.trial_book import TrialBook
from shapefuzz.campaign.database import BucketRow, CampaignStore, CandidateRow
from shapefuzz.campaign.causes.verdicts import bucket_triage
from shapefuzz.campaign.outcomes import (
    NOT_FOR_RELEASE, UNDEFINED_REFERENCE, BucketState, Candidate, Failure, Outcome, ShrinkOutcome, ShrinkState,
    Target, TaskKind, Triage, Verdict, one_line,
)
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.files import disk_full
from shapefuzz.model import Stage, Status, reruns_for
from shapefuzz.triage.environment import may_be_environment

MAX_SIBLING_LANES = 3  # extra lanes a confirming re-run may run to tie a new bucket to a known cause
BLOW_UPS = (Status.OOM, Status.TIMEOUT)  # no sibling lanes for these (see _sibling_lanes)
# Corpus entries the buckets of one cause write (one bug seen on many lanes, or in many words);
# a later bucket of the cause points at the cause's first entry, its reproducer kept in the store.
MAX_ENTRIES_PER_CAUSE = 4


def settled_by_check(failure: Failure, triage: Triage) -> bool:
    """A new bucket its check alone confirms: its confirming re-run does not re-run its lane (the
    other lanes a confirm runs, siblings, bases and twins, still run). A compile error (a pass's
    diagnostic: not a crash, out of memory or timeout) is deterministic: over every campaign store
    of the context bench and before it, 0 of 1,026 compile/error buckets were flaky on their re-run
    (compile crashes 8 of 91, timeouts 6 of 27; wrong values can be races and are re-run), so its
    re-run buys nothing; in the context bench's context arm it was 36 of the 122 confirm tasks and
    112 of their 249 lanes (bench/studies/confirm_needs.py). Only a compiler-bug verdict: ours and suspected
    driver are judged again with their re-run. Never where the output could be our environment's (a
    full disk, a file gone), which the re-run is there to tell apart."""
    signature = failure.signature
    return (signature.stage == Stage.COMPILE and signature.status == Status.ERROR
            and triage == Triage.COMPILER_BUG and not may_be_environment(failure.detail))


def new_bucket(failure: Failure, candidate: Candidate, now: float, wall: float, state: BucketState, triage: Triage,
               evidence: str, shrink: ShrinkState = ShrinkState.NONE) -> BucketRow:
    """A bucket's first row: the failure, with the candidate as its reproducer."""
    signature = failure.signature
    return BucketRow(sig=failure.key, sig_json=failure.fields(), backend=failure.lane, stage=signature.stage,
                     status=signature.status, family=candidate.group, count=1, first_seen=now, last_seen=now,
                     first_wall=wall, last_wall=wall, state=state, repro_key=candidate.key,
                     repro_size=candidate.length, repro_text=candidate.text, detail=failure.detail[:8000],
                     corpus_entry="", shrunk_size=None, triage=Triage(triage), evidence=evidence, shrink=shrink)


class BucketBook:
    """Turns finished tasks into buckets, causes, saves and shrinks; see the module docstring.

    Its inputs: the `target` (triage, save, size, rename_cause), the `store`, the campaign's `state`
    (what it adds to, its session, clock and `say`); the `guides` and `coverage`, which learn from
    each check (a lane that keeps timing out, `set_aside_after` candidates in a row, is set aside in
    the lane plan); `shrinks`, the shrink plan it feeds; `retries` for tasks our machine failed;
    `revive`, a stored candidate again; `confirm`: whether a new bucket gets its confirming re-run."""

    def __init__(self, target: Target, store: CampaignStore, state: CampaignState, guides: Guides, *,
                 coverage: CoverageSteering, shrinks: ShrinkPlan, retries: Retries,
                 revive: Callable[[CandidateRow], Candidate | None], confirm: bool = True,
                 set_aside_after: int = 3) -> None:
        self.target, self.store, self.state = target, store, state
        self.allocation = guides.allocation  # what each check spent and found, per cell (written with it)
        self.plan, self.steering, self.lane_cost = guides.plan, guides.steering, guides.lane_cost
        self.coverage = coverage
        self.shrinks, self.retries = shrinks, retries
        self._active, self._revive, self._say = state.active, revive, state.say
        self.confirm_enabled, self.set_aside_after = confirm, set_aside_after
        self.confirm_queue: collections.deque[tuple[Candidate, tuple[str, ...]]] = collections.deque()
        self.pending_confirm: dict[str, list[str]] = collections.defaultdict(list)  # candidate key -> sigs
        self.base_probes: dict[str, tuple[str, ...]] = {}  # candidate key -> base lanes its confirm runs
        self.driver_checks: dict[str, dict] = {}  # candidate key -> its check's lanes, when its confirm runs a twin
        self.timeouts: collections.Counter[str] = collections.Counter()
        # a pending bucket's confirming re-runs of its lane so far, and how many of them passed
        self.reruns: collections.Counter[str] = collections.Counter()
        self.passed: collections.Counter[str] = collections.Counter()
        self.corpus_full = ""  # why a save failed for a full disk: the campaign stops (engine.CORPUS_FULL)
        self._sizes: dict[str, tuple[int, ...]] = {}

    @property
    def buckets(self) -> dict[str, BucketRow]:
        return self.state.buckets

    @property
    def causes(self) -> Causes:
        return self.state.causes

    @property
    def trials(self) -> TrialBook:  # runs a shrink need not repeat
        return self.state.trials

    def next_confirm(self) -> tuple[Candidate, tuple[str, ...]] | None:
        """The next confirming re-run (candidate, lanes), or None; the candidate asks for the
        equivalent forms (`Candidate.forms`) only where a bucket it confirms is `ours`."""
        if not self.confirm_queue:
            return None
        candidate, lanes = self.confirm_queue.popleft()
        doubt = any(self.buckets[s].triage == Triage.OURS for s in self.pending_confirm.get(candidate.key, ())
                    if s in self.buckets)
        return replace(candidate, forms=doubt), lanes

    def requeue_pending(self) -> None:
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
            if bucket.shrink == ShrinkState.PENDING and self.shrinks.enabled:
                row = self.store.candidate(bucket.repro_key)
                candidate = self._revive(row) if row is not None else None
                if candidate is not None:
                    self.shrinks.queue[bucket.sig] = candidate

    def _size(self, text: str) -> tuple[int, ...]:
        if text not in self._sizes:
            if len(self._sizes) > 256:
                self._sizes.clear()
            self._sizes[text] = tuple(self.target.size(text))
        return self._sizes[text]

    def _smaller(self, text: str, than: str) -> bool:
        """Smaller in the target's order and no more bytes: a reproducer is never replaced by a
        larger file."""
        return self._size(text) < self._size(than) and len(text.encode()) <= len(than.encode())

    def _kept_smaller(self, bucket: BucketRow, candidate: Candidate) -> BucketRow:
        """The bucket with `candidate`, which hit it, as its reproducer where it is smaller: a bucket
        holds the smallest candidate it has seen, and its shrink starts from that one
        (`ShrinkPlan.shrink_input`)."""
        if candidate.key == bucket.repro_key or not self._smaller(candidate.text, bucket.repro_text):
            return bucket
        return replace(bucket, repro_key=candidate.key, repro_size=candidate.length, repro_text=candidate.text)

    def finish(self, done: Done) -> None:
        """A finished task (taken out of those in flight already)."""
        task = done.task
        if task.kind == TaskKind.CHECK:
            self._finish_check(task, done)
        elif task.kind == TaskKind.CONFIRM:
            self._finish_confirm(task, done)
        elif task.kind == TaskKind.SHRINK:
            self._finish_shrink(task, done)

    def _finish_check(self, task: Task, done: Done) -> None:
        candidate = task.candidate
        outcome = done.outcome
        if self.retries.fault(task, done):
            return
        if outcome is None:
            verdict = Verdict.LOST if done.lost else Verdict.ERROR
            outcome = Outcome(verdict, {}, (), 0.0, done.error)
            if done.lost:
                self.state.stats.lost += 1
            else:
                self.state.stats.errors += 1
            self._say(f"candidate {candidate.key} ({candidate.group}): {verdict.value}: {one_line(done.error)}")
        elif outcome.verdict == Verdict.INVALID:
            self.state.stats.errors += 1
            # a generator bug only where the release should parse it (families/gates.py)
            why = "its form is one this release cannot parse" if outcome.error.startswith(NOT_FOR_RELEASE) \
                else "a generator bug"
            what = "is not judged" if outcome.error.startswith(UNDEFINED_REFERENCE) else "does not verify"
            self._say(f"candidate {candidate.key} ({candidate.group}) {what} ({why}): {one_line(outcome.error)}")
        now, wall = self._active(), time.time()
        updates: dict[str, BucketRow] = {}
        new_lanes: list[str] = []
        settled: list[str] = []  # of those, the lanes whose check confirms their bucket (settled_by_check)
        hits = []
        rehit = [f.key for f in outcome.failures if self.steering.saturated(f.key)]
        created: list[tuple[str, str, bool]] = []  # (bucket, lane, a compiler bug?) of the buckets it made
        for failure in outcome.failures:
            hits.append((failure.key, failure.lane))
            bucket = self.buckets.get(failure.key)
            if bucket is None:
                triage, evidence = self.target.triage(candidate, failure, outcome)
                self.causes.add(failure.key, failure.fields(), evidence)  # a mechanism it names ties families
                created.append((failure.key, failure.lane, Triage(triage) == Triage.COMPILER_BUG))
                state = BucketState.PENDING if self.confirm_enabled else BucketState.UNCONFIRMED
                bucket = new_bucket(failure, candidate, now, wall, state, triage, evidence)
                new_lanes.append(failure.lane)
                if settled_by_check(failure, triage):
                    settled.append(failure.lane)
                self.pending_confirm[candidate.key].append(failure.key)
                self.state.stats.newest = failure.key
            else:
                bucket = self._kept_smaller(replace(bucket, count=bucket.count + 1, last_seen=now, last_wall=wall),
                                            candidate)
            self.steering.hit(failure.key, candidate.group, candidate.features,
                              done.seconds / max(1, len(rehit)))
            if failure.key in rehit:  # its cost is shared by the saturated buckets it re-hit
                bucket = replace(bucket, rehits=bucket.rehits + 1,
                                 rehit_seconds=bucket.rehit_seconds + done.seconds / len(rehit))
            self.buckets[failure.key] = bucket
            updates[failure.key] = bucket
        if self.causes.tie([f.key for f in outcome.failures]) or new_lanes:
            updates.update(self._renamed_causes())
        # a shrink starts from a bucket's reproducer: the check of those it now is, not of every re-hit
        kept = {f.lane for f in outcome.failures if self.buckets[f.key].repro_key == candidate.key}
        self.trials.add(t for t in outcome.trials if t.lane in kept)
        cells = []
        if self.allocation is not None:
            found = new_causes(created, self.causes.members(), self.causes.name_of()) if created else {}
            cells = self.allocation.record(candidate.key, candidate.group, candidate.features, outcome.lanes,
                                           done.seconds, found)
        row = CandidateRow(
            key=candidate.key, idx=candidate.index, seed=candidate.seed, family=candidate.group,
            features=candidate.features, backends=task.lanes, verdict=outcome.verdict,
            outcome={lane: [Status(status).value, seconds] for lane, (status, seconds) in outcome.lanes.items()},
            payload=candidate.payload, size=candidate.length, tool_seconds=outcome.tool_seconds,
            task_seconds=done.seconds, finished=now, error=outcome.error[:2000])
        self.store.record(row, hits, self.state.session, now, list(updates.values()),
                          coverage=self.coverage.finished(candidate, outcome, now, wall, new_lanes),
                          split=outcome.split, cells=cells)
        self.state.sightings.checked(candidate.key, outcome.verdict, [sig for sig, _ in hits])
        self.state.tried.add(candidate.key)
        self.steering.add(candidate.group, candidate.features, done.seconds)
        for slow in self.lane_cost.record(candidate.group, candidate.features, outcome.lanes):
            self._say(f"{candidate.group} is slow on {slow}: most of its checks there ran past {SLOW_SECONDS:.0f} s; "
                      f"such candidates now take 1 in {round(1 / KEEP)} of the slots they are given there")
        self.state.stats.session_done += 1
        for failure in outcome.failures:
            if failure.lane in new_lanes and self.buckets[failure.key].count == 1:
                self._say(f"new bucket: {failure.key}  ({candidate.group}, candidate {candidate.key}; "
                          f"{self.buckets[failure.key].cause})")
        if new_lanes:
            if self.confirm_enabled:
                bases = self._base_lanes(outcome, task.lanes)
                if bases:
                    self.base_probes[candidate.key] = bases
                twins = self._twin_lanes(outcome, task.lanes)
                if twins or any(self.buckets[f.key].triage == Triage.SUSPECTED_DRIVER
                                for f in outcome.failures if f.lane in new_lanes):
                    self.driver_checks[candidate.key] = dict(outcome.lanes)
                lanes = [*(lane for lane in new_lanes if lane not in settled),
                         *self._sibling_lanes(outcome, task.lanes), *bases, *twins]
                if lanes:
                    self.confirm_queue.append((candidate, tuple(dict.fromkeys(lanes))))
                else:  # nothing to re-run: confirmed by the check itself
                    self._settle(candidate, outcome, ())
            else:
                saved = []
                for sig in self.pending_confirm.pop(candidate.key, []):
                    failure = next(f for f in outcome.failures if f.key == sig)
                    self._save_bucket(self.buckets[sig], candidate, False, failure)
                    saved.append(sig)
                self.shrinks.plan(saved, candidate, outcome)
        self._watch_timeouts(outcome)

    def _sibling_lanes(self, outcome: Outcome, checked: tuple[str, ...]) -> list[str]:
        """Lanes this candidate was not checked on that already hold a bucket with the same stage,
        status and message as one of its new buckets. Under lane rotation two lanes rarely see one
        candidate, so the confirming re-run runs these too: if the candidate fails them the same
        way, the buckets are tied into one cause instead of staying apart ("-2"). Not for a blow-up
        (out of memory, timeout): its re-run under the full caps costs a blow-up per lane (a reduce
        OOM on a ROCm lane: about a minute each), and lanes that blow up on one candidate share
        little more than that. Nor a known bucket already in the new one's cause (equal identities
        that say where the compiler failed are one cause at once): its re-run could tie nothing."""
        names = self.causes.name_of()
        keys = {self.causes.key[f.key]: names.get(f.key) for f in outcome.failures
                if f.key in self.causes.key and self.buckets[f.key].count == 1
                and f.signature.status not in BLOW_UPS}
        siblings = [b.backend for sig, b in self.buckets.items()
                    if self.causes.key.get(sig) in keys and names.get(sig) != keys[self.causes.key[sig]]
                    and b.backend not in checked and b.backend in self.plan.now]
        return list(dict.fromkeys(siblings))[:MAX_SIBLING_LANES]

    def _base_lanes(self, outcome: Outcome, checked: tuple[str, ...]) -> tuple[str, ...]:
        """The plain lanes of the variants where this candidate made a new bucket, when the
        candidate was not checked there. Without them "needs a non-default flag" is a guess: a
        lane sees one candidate in ten, so a bug of the default pipeline met first on a variant
        lane was filed as needing the variant's flags. Not for a blow-up (see _sibling_lanes)."""
        bases = []
        for failure in outcome.failures:
            backend = BACKENDS.get(failure.lane)
            base = backend.variant_of if backend is not None else ""
            if (base and base in self.plan.now and base not in checked and failure.signature.status not in BLOW_UPS
                    and failure.key in self.buckets and self.buckets[failure.key].count == 1):
                bases.append(base)
        return tuple(dict.fromkeys(bases))

    def _twin_lanes(self, outcome: Outcome, checked: tuple[str, ...]) -> tuple[str, ...]:
        """For a new bucket suspected of the driver (wrong only on one Vulkan lane), that lane's
        twin on the same driver when the candidate was not checked there: the confirming re-run
        runs it, and the bucket is judged again with both (a difference between the two targets
        is the compiler's; see IreeTarget.triage)."""
        twins = []
        for failure in outcome.failures:
            bucket = self.buckets.get(failure.key)
            backend = BACKENDS.get(failure.lane)
            twin = backend.driver_twin if backend is not None else None
            if (twin and twin in self.plan.now and twin not in checked and bucket is not None and bucket.count == 1
                    and bucket.triage == Triage.SUSPECTED_DRIVER):
                twins.append(twin)
        return tuple(dict.fromkeys(twins))

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
                        self._say(f"could not name cause {name} in {bucket.corpus_entry}: {one_line(error)}")
                bucket = replace(bucket, cause=name)
                self.buckets[sig] = bucket
                changed[sig] = bucket
        return changed

    def _finish_confirm(self, task: Task, done: Done) -> None:
        candidate = task.candidate
        outcome = done.outcome
        if self.retries.fault(task, done):
            return  # its buckets stay pending: not flaky for a full disk
        self.store.add_extra_time(outcome.tool_seconds if outcome else 0.0, done.seconds,
                                  outcome.split if outcome else None)
        self.store.add_time(TaskKind.CONFIRM.value, done.seconds, task.candidate.group)
        self.trials.add(outcome.trials if outcome is not None else ())
        probed = self.base_probes.pop(candidate.key, ())
        checked = self.driver_checks.pop(candidate.key, None)  # the check's lanes, for a driver suspicion
        if outcome is not None and probed:  # a failure new to a probed base lane: the variant's flags are not needed
            self._file_found(candidate, [f for f in outcome.failures if f.lane in probed and f.key not in self.buckets
                                         and f.signature.status not in BLOW_UPS],
                             "found on its variant's plain lane by the confirming re-run")
        known = [f for f in (outcome.failures if outcome is not None else ()) if f.key in self.buckets]
        for f in known:  # a known bucket its re-run hit on another lane has seen this candidate too
            if (smaller := self._kept_smaller(self.buckets[f.key], candidate)) is not self.buckets[f.key]:
                self.buckets[f.key] = smaller
                self.store.put_bucket(smaller)
        # its buckets whose lane was not re-run (settled_by_check) failed on its check: the candidate hit them too
        unrun = [sig for sig in self.pending_confirm.get(candidate.key, [])
                 if self.buckets[sig].backend not in task.lanes]
        if self.causes.tie([*(f.key for f in known), *unrun]):  # a sibling lane failed the same way
            renamed = self._renamed_causes()
            self._add_hits(candidate.key, [(f.key, f.lane) for f in known], list(renamed.values()))
        pending = [self.buckets[sig] for sig in self.pending_confirm.get(candidate.key, [])]
        self._settle(candidate, outcome, task.lanes, checked)
        task_log.record(self.store, TaskKind.CONFIRM.value, candidate.key, candidate.group, pending,
                        task_log.confirm_lanes(task.lanes, pending, probed, outcome.lanes if outcome else {}),
                        done.seconds, task_log.confirm_result(self.buckets, pending), self._active())

    def _settle(self, candidate: Candidate, outcome: Outcome | None, rerun: tuple[str, ...],
                checked: dict | None = None) -> None:
        """The candidate's pending buckets after a confirming re-run of the lanes `rerun` (`outcome`:
        None when the re-run was lost), or after its check alone (`rerun` empty, `outcome` the
        check's): each confirmed, re-run again or flaky, saved, its cause's shrink planned. Flaky
        means it passed: only a bucket whose lane passed on a re-run and failed on none of them
        (`model.reruns_for`: a crash is re-run up to three times) is flaky. A re-run that fails
        another way is the same bug's other face: the bucket is confirmed and tied to that failure's
        bucket (filed when new). One whose lane was not re-run is a compile error: settled_by_check."""
        again = {f.key for f in outcome.failures} if outcome is not None else set()
        on_lane = {f.lane: f for f in outcome.failures} if outcome is not None else {}
        # a compile that hangs again hangs: its second stop may land outside the pass its bucket names
        # (the same failure, not another face)
        hung = {f.lane for f in outcome.failures if f.signature.status == Status.TIMEOUT
                and f.signature.stage.value == "compile"} if outcome is not None else set()
        saved, again_lanes = [], []
        pending = self.pending_confirm.pop(candidate.key, [])
        self._file_faces(candidate, [(sig, on_lane[self.buckets[sig].backend]) for sig in pending
                                     if self.buckets[sig].backend in rerun and sig not in again
                                     and self.buckets[sig].backend in on_lane
                                     and not (self._compile_timeout(self.buckets[sig])
                                              and self.buckets[sig].backend in hung)])
        for sig in pending:
            bucket = self.buckets[sig]
            state = BucketState.CONFIRMED
            if bucket.backend in rerun:
                self.reruns[sig] += 1
                lane = outcome.lanes.get(bucket.backend) if outcome is not None else None
                if lane is not None and lane[0] == Status.OK:
                    self.passed[sig] += 1
                failed = sig in again or bucket.backend in on_lane
                if not failed and self.reruns[sig] < reruns_for(bucket.status):
                    self.pending_confirm[candidate.key].append(sig)  # it may still fail: re-run it again
                    again_lanes.append(bucket.backend)
                    continue
                if not failed and self.passed[sig]:
                    state = BucketState.FLAKY
            runs, passes = self.reruns.pop(sig, 0), self.passed.pop(sig, 0)
            flaky = state == BucketState.FLAKY
            failure = bucket.failure
            rejudge = bucket.triage == Triage.OURS or (
                bucket.triage == Triage.SUSPECTED_DRIVER and checked is not None)
            if not flaky and rejudge and sig in again:
                # the re-run may show the reference is right after all (an equivalent form agrees with
                # it), or that the Vulkan lane's twin on the same driver gets it right
                assert outcome is not None  # `again` holds its failures
                again_failure = next(f for f in outcome.failures if f.key == sig)
                if bucket.triage == Triage.OURS:
                    judged = outcome
                else:
                    assert checked is not None  # a driver suspicion is re-judged with the check's lanes (rejudge)
                    judged = replace(outcome, lanes={**checked, **outcome.lanes}, earlier={bucket.backend: bucket.detail})
                triage, evidence = self.target.triage(candidate, again_failure, judged)
                bucket = replace(bucket, triage=Triage(triage), evidence=evidence)
            if flaky:
                why = (f"passed on {passes} of its {runs} re-run{'s' if runs > 1 else ''} and failed on none"
                       if bucket.status != Status.OOM else
                       "ran out of memory under the campaign's cap but not under the full cap on its re-run "
                       "(it needs more memory than the campaign allows, not without bound)")
                bucket = replace(bucket, triage=Triage.FLAKY, evidence=why)
                self.steering.ignored.add(sig)
            self._save_bucket(replace(bucket, state=state), candidate, flaky, failure)
            if flaky:
                self._say(f"bucket passed on its re-runs (flaky): {sig}")
            else:
                saved.append(sig)
        if again_lanes:
            self.confirm_queue.append((candidate, tuple(dict.fromkeys(again_lanes))))
        self.shrinks.plan(saved, candidate, outcome or Outcome(Verdict.LOST, {}))

    @staticmethod
    def _compile_timeout(bucket: BucketRow) -> bool:
        return bucket.stage == Stage.COMPILE and bucket.status == Status.TIMEOUT

    def _file_faces(self, candidate: Candidate, faces: list[tuple[str, Failure]]) -> None:
        """Pending buckets whose lane failed another way on the confirming re-run: the same input on
        the same lane, so one bug's two faces (a crash with an absurd size read from the stack and
        the verifier error its re-runs give). The other failure is filed (a bucket of its own, when
        new) with its hit, which ties the two on resume (cause_ties.faces), and the causes are joined."""
        for sig, face in faces:
            if face.key not in self.buckets:
                self._file_found(candidate, [face], f"the other face of {sig} on its confirming re-run")
            else:
                self._add_hits(candidate.key, [(face.key, face.lane)], [])
            self._say(f"{sig} failed another way on its re-run ({face.key}): one bug, not flaky")
            if self.causes.join([sig, face.key]):
                self.store.add_hits(candidate.key, [], list(self._renamed_causes().values()))

    def _save_bucket(self, bucket: BucketRow, candidate: Candidate, flaky: bool,
                     failure: Failure | None = None) -> None:
        failure = failure or bucket.failure
        shared = [] if flaky or bucket.saving is not None else self._cause_entries(bucket)
        if len(shared) >= MAX_ENTRIES_PER_CAUSE:
            entry = shared[0]  # its cause has examples enough in the corpus
        else:
            try:
                # `saving`: a save is under way and the entry had been saved N times before it. A session
                # killed between the corpus write and the row below finds N+1 and does not save twice.
                if self.corpus_full:
                    raise OSError(errno.ENOSPC, self.corpus_full)  # saved on resume, once there is room
                where, before = self.target.corpus_count(failure)
                if bucket.saving is not None and before > bucket.saving:
                    entry = where
                else:
                    self.store.put_bucket(replace(bucket, corpus_entry="", saving=before))
                    entry = self.target.save(candidate, failure, flaky, bucket.cause,
                                             triage=bucket_triage(bucket), evidence=bucket.evidence)
            except Exception as error:  # a corpus problem must not end the campaign; retried on resume
                if not disk_full(error):
                    self._say(f"could not save bucket {bucket.sig} to the corpus: {one_line(error)}")
                elif not self.corpus_full:  # every later save would fail too: the campaign stops (Engine.run)
                    self.corpus_full = one_line(error)
                    self._say(f"the corpus disk is full ({self.corpus_full}); stopping the campaign")
                entry = ""
        if bucket.state == BucketState.PENDING:
            bucket = replace(bucket, state=BucketState.FLAKY if flaky else BucketState.CONFIRMED)
        bucket = replace(bucket, corpus_entry=entry, saving=None)
        self.buckets[bucket.sig] = bucket
        self.store.put_bucket(bucket)

    def _cause_entries(self, bucket: BucketRow) -> list[str]:
        """The corpus entries the other buckets of `bucket`'s cause point at (flaky ones aside), the
        first seen first."""
        if not bucket.cause:
            return []
        others = sorted((b.first_seen, b.sig, b.corpus_entry) for b in self.buckets.values()
                        if b.cause == bucket.cause and b.sig != bucket.sig and b.corpus_entry
                        and b.state != BucketState.FLAKY)
        return list(dict.fromkeys(entry for _, _, entry in others))

    def _finish_shrink(self, task: Task, done: Done) -> None:
        assert task.job is not None  # a shrink task carries its job
        sig = task.job.key
        result = done.shrunk
        self.store.add_time(TaskKind.SHRINK.value, done.seconds, task.candidate.group)
        bucket = self.buckets.get(sig)
        if bucket is None:
            return
        state = ShrinkState.DONE
        if self.retries.fault(task, done):
            return  # stays pending, retried
        if done.error or done.lost:
            self._say(f"shrinking {sig} stopped: {one_line(done.error)}")
            state = ShrinkState.FAILED
        elif result is not None:
            text = result.text
            # one shrink per bucket, from its reproducer: smaller than that is smaller than all so far
            if text is not None and self._smaller(text, bucket.repro_text):
                bucket = replace(bucket, shrunk_size=len(text), corpus_entry=result.entry or bucket.corpus_entry)
                self._say(f"shrunk {sig}: {bucket.repro_size} -> {len(text)} bytes")
        bucket = replace(bucket, shrink=state)
        self.buckets[sig] = bucket
        self.store.put_bucket(bucket)
        task_log.record(self.store, TaskKind.SHRINK.value, task.candidate.key, task.candidate.group, [bucket],
                        {bucket.backend: ("own", done.seconds)}, done.seconds,
                        task_log.shrink_result(state, bucket, result), self._active(), result.facts if result else {})
        if result is not None and not (done.error or done.lost):
            self.trials.add(result.trials)
            self._shrink_findings(list(result.found))

    def _shrink_findings(self, found: list[tuple[Candidate, Failure]]) -> None:
        """New failures met while shrinking (confirmed by the shrinker's re-checks) go through the
        buckets like any other: a bucket with a triage verdict and a cause, then the corpus."""
        for candidate, failure in found:
            self._file_found(candidate, [failure], "found while shrinking")

    def _file_found(self, candidate: Candidate, failures: list[Failure], how: str) -> None:
        """Failures met outside a candidate's check (a shrink's re-checks, a confirm's probe of a
        plain lane), each already seen twice or checked under the full limits: a bucket with a
        triage verdict, tied to the candidate's other buckets that share its key, then saved, and
        its shrink planned as any new bucket's (one met in the final phase was never shrunk: five
        causes of one 6-minute campaign said "not shrunk" for it)."""
        now, wall = self._active(), time.time()
        for failure in failures:
            bucket = self.buckets.get(failure.key)
            if bucket is not None:  # known already: one more hit
                bucket = replace(bucket, count=bucket.count + 1, last_seen=now, last_wall=wall)
                self.buckets[failure.key] = bucket
                self._add_hits(candidate.key, [(failure.key, failure.lane)], [bucket])
                continue
            outcome = Outcome(Verdict.FAIL, {failure.lane: (failure.signature.status, 0.0)}, (failure,))
            triage, evidence = self.target.triage(candidate, failure, outcome)
            self.causes.add(failure.key, failure.fields(), evidence)
            bucket = new_bucket(failure, candidate, now, wall, BucketState.CONFIRMED, triage,
                                f"{how}; {evidence}", ShrinkState.SKIPPED)
            self.buckets[failure.key] = bucket
            self._add_hits(candidate.key, [(failure.key, failure.lane)], [bucket])
            self.state.stats.newest = failure.key
            self._say(f"new bucket ({how}): {failure.key}  ({candidate.group})")
            self.causes.tie([failure.key, *self.pending_confirm.get(candidate.key, [])])
            renamed = self._renamed_causes()
            self.store.add_hits(candidate.key, [], list(renamed.values()))
            self._save_bucket(self.buckets[failure.key], candidate, False, failure)
            # (no lane seconds known here: the cause's other buckets, whose check cost is known, go first)
            self.shrinks.plan([failure.key], candidate, Outcome(Verdict.FAIL, {}))

    def _add_hits(self, candidate: str, hits: list[tuple[str, str]], updates: list[BucketRow]) -> None:
        """Hits outside a candidate's check, in the store and in the discovery counts (a sighting
        only when the candidate is one of the campaign's checked candidates)."""
        self.store.add_hits(candidate, hits, updates)
        self.state.sightings.hit(candidate, [sig for sig, _ in hits])

    def _watch_timeouts(self, outcome: Outcome) -> None:
        for lane, (status, _) in outcome.lanes.items():
            if status == Status.TIMEOUT:
                self.timeouts[lane] += 1
            else:
                self.timeouts[lane] = 0
            if self.timeouts[lane] >= self.set_aside_after and lane in self.plan.now:
                reason = f"timed out on {self.timeouts[lane]} candidates in a row"
                self.plan.set_aside(lane)
                self.store.set_aside(lane, reason)
                self._say(f"backend {lane} set aside: {reason}")


__all__ = ["BucketBook", "MAX_SIBLING_LANES"]
