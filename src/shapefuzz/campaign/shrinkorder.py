"""Which pending shrink runs next, and which bucket of a cause is the one shrunk. Within the shrink
share every compiler-bug cause gets one shrink before any cause gets a second; causes go in the
report's order (compiler bugs, then by severity: wrong values first; new before known; the first
found first). A cause's bucket to shrink is one spelled in linalg where it has one (a torch or
ONNX spelling only when it has none), on its cheapest lane. A cause here is what the report will
show: the engine's cause split as the report splits it (`localizing.split_as_reported`: by
localized place once known, real limits apart from the dynamic-dim bound, dispatch kind), so a
shrink of one part never stands for another. The rules are plain functions; `ShrinkPlan` applies
them to the campaign's buckets (the engine owns one, the bucket book feeds it); a bucket's shrink
starts from the smallest candidate it has seen (`ShrinkPlan.shrink_input`), never from the one
queued when it was planned if a smaller one hit the bucket since; `not_shrunk_why` says why a cause
the report shows has no shrunk example."""

from __future__ import annotations

import json
from dataclasses import astuple, replace
from pathlib import Path
from typing import Callable, Iterable

from shapefuzz.campaign.causes.cause_ties import Causes
from shapefuzz.campaign.database import BucketRow, CampaignStore, CandidateRow
from shapefuzz.campaign.localizing import split_as_reported
from shapefuzz.campaign.causes.verdicts import cause_triage
from shapefuzz.campaign.outcomes import BucketState, Candidate, Outcome, ShrinkState, Triage
from shapefuzz.campaign.state import CampaignState
from shapefuzz.case import case_from_mlir
from shapefuzz.errors import InvalidInputError
from shapefuzz.iree.input_dialect import is_frontend
from shapefuzz.size import measure, size_of
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.severity import severity_of


def frontend_spelled(bucket: BucketRow) -> bool:
    """Whether the bucket's reproducer is a torch, ONNX or StableHLO spelling rather than linalg."""
    return is_frontend(bucket.repro_text)


def severity_rank(bucket: BucketRow) -> int:
    """The bucket's severity as an order (0: wrong values), as `campaign.causes.cause_facts` ranks its cause."""
    elements = measure(bucket.repro_text).elements if bucket.repro_text else None
    return int(severity_of(bucket.stage, bucket.status, bucket.message, bucket.detail, elements))


def choose(members: Iterable[BucketRow], lane_seconds: Callable[[BucketRow], float]) -> BucketRow | None:
    """The bucket of a cause to shrink: linalg-spelled first, then the cheapest lane (the seconds
    its reproducer's check took there), then the first found."""
    return min(members, key=lambda b: (frontend_spelled(b), lane_seconds(b), b.first_seen, b.sig), default=None)


def cause_order(members: list[BucketRow], started: bool, known_before: float,
                rank: Callable[[BucketRow], int] = severity_rank) -> tuple:
    """A cause's place in the shrink order: causes with no shrink yet (`started`: one done or
    running) before any second; compiler bugs first; the most severe first; new (first seen in
    this session, at or after `known_before`) before known; the first found first."""
    first = min(b.first_seen for b in members)
    return (started, cause_triage(members) != Triage.COMPILER_BUG, min(rank(b) for b in members),
            first < known_before, first)


def shrink_started(members: Iterable[BucketRow], running: set[str]) -> bool:
    """Whether a cause already has its shrink: one done, or one running now."""
    return any(b.shrink == ShrinkState.DONE or b.sig in running for b in members)


def not_shrunk_why(members: Iterable[BucketRow]) -> str:
    """Why a cause has no example that went through the shrinker, from its buckets' shrink states
    ("" when one did)."""
    members = [b for b in members if b.state != BucketState.FLAKY] or list(members)
    states = {ShrinkState(b.shrink) for b in members}
    if ShrinkState.DONE in states:
        return ""
    if ShrinkState.PENDING in states:
        return "its shrink was still waiting when the shrink share (--shrink-share) was spent; " \
               "a resume or --shrink-time shrinks it"
    if ShrinkState.FAILED in states:
        return "its shrink stopped (it did not fail the same way in isolation, or ran out of time)"
    if not any(b.corpus_entry for b in members):
        if members and all(b.state == BucketState.PENDING for b in members):
            return "it awaits its confirming re-run (the campaign stopped first); running the same command " \
                   "again resumes the campaign, which confirms, saves and shrinks it"
        return "no reproducer of it was saved"
    if states <= {ShrinkState.NONE}:
        return "shrinking was off (--no-shrink)"
    return "the shrink went to a bucket of another cause, and the campaign stopped before its own"


class ShrinkPlan:
    """Which buckets wait for their shrink, and which runs next. The buckets and causes are the
    campaign's `state`'s (the bucket book files into them); `store` keeps the plan, so a pending
    shrink survives a kill; `running()`: the buckets being shrunk now; `revive`: a stored candidate
    again; `enabled`: shrinking is on; `size`: the target's order of reproducers (the bucket book's;
    `size.size_of` for IREE). Buckets first seen before this session (`state.active_before`) are
    known ones (`known_before`)."""

    def __init__(self, store: CampaignStore, state: CampaignState, *, running: Callable[[], set[str]],
                 revive: Callable[[CandidateRow], Candidate | None], enabled: bool,
                 size: Callable[[str], tuple] = lambda text: astuple(size_of(text))) -> None:
        self.store, self.state = store, state
        self._running, self._revive, self._size = running, revive, size
        self.known_before, self.enabled = state.active_before, enabled
        # bucket -> the candidate to shrink (None: revived from the store); run in `pop`'s order
        self.queue: dict[str, Candidate | None] = {}
        self.costs: dict[str, float] = {}  # bucket -> seconds its reproducer's check took on its lane
        self._severities: dict[str, int] = {}  # bucket -> its severity rank
        # bucket -> where it was localized: known after the budget (`want`), splits causes as the report does
        self.located: dict[str, Localization] = {}

    @property
    def buckets(self) -> dict[str, BucketRow]:
        return self.state.buckets

    @property
    def causes(self) -> Causes:
        return self.state.causes

    def units(self, cause: str, members: dict[str, list[str]]) -> list[list[BucketRow]]:
        """A cause's buckets as the causes the report will show (`split_as_reported`), each of
        which gets its own shrink."""
        buckets = [self.buckets[b] for b in members.get(cause, []) if b in self.buckets]
        return list(split_as_reported({cause: buckets}, self.located).values()) if buckets else []

    def _unit_of(self, bucket: BucketRow, members: dict[str, list[str]], names: dict[str, str],
                 cache: dict[str, list[list[BucketRow]]]) -> list[BucketRow]:
        """The cause (as the report shows it) a bucket belongs to; `cache`: one split per engine cause."""
        cause = names.get(bucket.sig, "")
        if cause not in cache:
            cache[cause] = self.units(cause, members)
        return next((unit for unit in cache[cause] if any(b.sig == bucket.sig for b in unit)), [bucket])

    def plan(self, sigs: list[str], candidate: Candidate, outcome: Outcome) -> None:
        """One shrink per cause: of its saved buckets (`sigs` just saved from `candidate`), the
        linalg-spelled one on the cheapest lane (`choose`), chosen again when a better bucket of
        the cause is saved before its shrink started; the order they run in is `pop`'s."""
        if not self.enabled or not sigs:
            return
        for sig in sigs:  # what the check took on the bucket's lane: the cost of shrinking there
            self.costs[sig] = outcome.lanes.get(self.buckets[sig].backend, ("", 1e9))[1]
        names = self.causes.name_of()
        members = self.causes.members()
        running = self._running()
        for cause in dict.fromkeys(names[s] for s in sigs):
            for unit in self.units(cause, members):
                self._plan_unit(unit, sigs, candidate, running)

    def _plan_unit(self, buckets: list[BucketRow], sigs: list[str], candidate: Candidate | None,
                   running: set[str]) -> BucketRow | None:
        """One cause (as the report shows it): its bucket to shrink made pending (unless one is
        done or running), its other open buckets skipped. Returns the pending one."""
        open_ = [b for b in buckets if b.sig not in running and (
            b.shrink in (ShrinkState.PENDING, ShrinkState.SKIPPED)
            or (b.shrink == ShrinkState.NONE and b.sig in sigs))]
        chosen = None if shrink_started(buckets, running) else choose(
            [b for b in open_ if b.corpus_entry and b.state != BucketState.FLAKY
             and (b.sig in sigs or b.sig in self.queue or self.store.candidate(b.repro_key) is not None
                  or met_while_shrinking(b) is not None)],
            self.lane_seconds)
        for b in open_:
            state = ShrinkState.PENDING if chosen is not None and b.sig == chosen.sig else ShrinkState.SKIPPED
            if b.shrink == state:
                continue
            b = replace(b, shrink=state)
            self.buckets[b.sig] = b
            self.store.put_bucket(b)
            if state == ShrinkState.PENDING:
                self.queue[b.sig] = candidate if b.sig in sigs else None  # None: revived from the store
            else:
                self.queue.pop(b.sig, None)
        return chosen

    def want(self, causes: Iterable[Iterable[str]], located: dict[str, Localization]) -> list[str]:
        """After the budget, once localization split causes as the report will: each of these
        causes (its buckets' signatures) with no shrunk example gets a pending shrink of its
        own bucket, revived from the store. Returns the buckets made pending."""
        self.located = dict(located)
        running = self._running()
        pending = []
        for sigs in causes:
            unit = [self.buckets[s] for s in sigs if s in self.buckets]
            if unit and self.enabled and (chosen := self._plan_unit(unit, [], None, running)) is not None:
                pending.append(chosen.sig)
        return pending

    def lane_seconds(self, bucket: BucketRow) -> float:
        """What the check of the bucket's reproducer took on its lane (from the store on resume)."""
        if bucket.sig not in self.costs:
            row = self.store.candidate(bucket.repro_key)
            seconds = row.outcome.get(bucket.backend) if row is not None else None
            self.costs[bucket.sig] = float(seconds[1]) if isinstance(seconds, list) and len(seconds) > 1 else 1e9
        return self.costs[bucket.sig]

    def _order(self, bucket: BucketRow, members: dict[str, list[str]], names: dict[str, str],
               running: set[str], cache: dict[str, list[list[BucketRow]]]) -> tuple:
        """Where a pending bucket's shrink stands in line (`cause_order`, then the bucket's own
        rank inside its cause)."""
        cause = self._unit_of(bucket, members, names, cache)
        for b in cause:
            if b.sig not in self._severities:
                self._severities[b.sig] = severity_rank(b)
        rank = cause_order(cause, shrink_started(cause, running), self.known_before, lambda b: self._severities[b.sig])
        return (*rank, frontend_spelled(bucket), self.lane_seconds(bucket), bucket.first_seen, bucket.sig)

    def pop(self) -> tuple[Candidate, BucketRow] | None:
        """The next pending shrink, taken out of the queue, with the candidate to shrink."""
        for sig in [s for s in self.queue
                    if s not in self.buckets or self.buckets[s].shrink != ShrinkState.PENDING]:
            del self.queue[sig]
        members, names, running = self.causes.members(), self.causes.name_of(), self._running()
        cache: dict[str, list[list[BucketRow]]] = {}
        for bucket in sorted((self.buckets[s] for s in self.queue),
                             key=lambda b: self._order(b, members, names, running, cache)):
            candidate = self.shrink_input(bucket, self.queue.pop(bucket.sig))
            if candidate is not None:
                return candidate, bucket
        return None

    def shrink_input(self, bucket: BucketRow, queued: Candidate | None) -> Candidate | None:
        """The candidate a bucket's shrink starts from: the smallest it has seen. That is its
        reproducer (the bucket book keeps the smallest candidate that hit it, in the target's order),
        made again from the store; `queued` (the candidate that made the bucket, queued when its
        shrink was planned; None: revived from the store) only where it is that reproducer, or
        smaller than what can be made again. An audit found five shrinks that had started from the
        queued candidate while the bucket held one up to 2.6x smaller, and saved a larger file."""
        if queued is not None and (queued.key == bucket.repro_key or queued.text == bucket.repro_text):
            return queued
        row = self.store.candidate(bucket.repro_key)
        revived = self._revive(row) if row is not None else met_while_shrinking(bucket)
        options = [c for c in (revived, queued) if c is not None]
        return min(options, key=lambda c: (self._size(c.text), len(c.text.encode())), default=None)


def met_while_shrinking(bucket: BucketRow) -> Candidate | None:
    """A bucket first met while shrinking another one (its reproducer, keyed 'shrunk-…', is in no
    candidate row) as a candidate to shrink again: its text, the family and parameters of its
    case header, and the input seed its corpus entry was saved with. None when any is missing."""
    if not bucket.repro_key.startswith("shrunk-") or not bucket.repro_text or not bucket.corpus_entry \
            or bucket.corpus_entry.startswith("?"):
        return None
    try:
        case = case_from_mlir(bucket.repro_text)
    except (ValueError, InvalidInputError):  # a malformed header
        return None
    try:
        seed = json.loads((Path(bucket.corpus_entry) / "meta.json").read_text())["seed"]
    except (OSError, ValueError, KeyError, TypeError, RecursionError):  # (a meta.json nested too deep)
        return None
    if case is None or not isinstance(seed, int):
        return None
    return Candidate(bucket.repro_key, case.family, seed, (), case.params_json, bucket.repro_text)


__all__ = ["ShrinkPlan", "met_while_shrinking", "cause_order", "choose", "frontend_spelled", "not_shrunk_why", "severity_rank",
           "shrink_started"]
