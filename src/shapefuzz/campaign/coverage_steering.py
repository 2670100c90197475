"""Coverage steering, the engine's side of the coverage map (`coverage_map.CoverageBook`): what
to draw (neighbours of frontier candidates, families by what they taught), which lanes check a
candidate, which compiles are instrumented, and what a finished candidate taught. It calls the
campaign back only through its `CoverageHost` protocol."""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Collection, Protocol

from shapefuzz.campaign.coverage_map import CoverageBook, CoverageKnobs, frontier_counts, frontier_lanes, lesson
from shapefuzz.campaign.lanecost import compiled, substitute
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.steering import Steering
from shapefuzz.campaign.database import CampaignStore, CandidateRow, CoverageRecord
from shapefuzz.campaign.outcomes import coverage_target
from shapefuzz.model import Stage


class CoverageHost(Protocol):
    """What coverage steering may ask of the campaign it steers (the engine's drawing part)."""

    def say(self, text: str) -> None:
        """A line for the user."""

    def revive(self, row: CandidateRow) -> Any | None:
        """The stored candidate again (None when its family cannot make it any more)."""

    def known(self, key: str) -> bool:
        """Was the candidate `key` tried already, or is it in flight?"""


class CoverageSteering:
    """The engine's hooks (thin calls from the engine and its drawing part): what to draw, which
    lanes, what to instrument, and what a finished candidate taught. `on` is False when the knobs
    turn coverage off or the target cannot report it (said once); the engine then behaves as
    without it. Draws are made with `seed`, of `groups`, on `plan`'s lanes; `steering`'s
    saturation still counts; `host` is what it may call back."""

    REFERENCE_SHARE = 0.25  # of instrumented candidates, those whose reference lane is instrumented too

    def __init__(self, knobs: CoverageKnobs, target: Any, seed: int, groups: tuple[str, ...], plan: LanePlan,
                 steering: Steering, host: CoverageHost) -> None:
        self.knobs = knobs
        self.book = CoverageBook(knobs)
        self.neighbours_drawn = 0
        self.aimed: dict[str, tuple[str, ...]] = {}  # a drawn neighbour -> its parent's new-item lanes
        self.target = coverage_target(target)
        self.seed, self.groups, self.lane_plan, self.steering, self.host = seed, groups, plan, steering, host
        self.on = knobs.enabled
        if not self.on:
            return
        why = self.target.coverage_support() if self.target is not None else "this target reports no compiler coverage"
        if why:
            host.say(f"coverage feedback off: {why}")
            self.on = False

    def resume(self, store: CampaignStore, rows: dict[str, CandidateRow]) -> None:
        """The map, the yields and the frontier from the store (`rows`: every candidate tried so far)."""
        if not self.on:
            return
        counts, where = frontier_counts(store), frontier_lanes(store)
        self.book.load(store, rows, counts, where)
        recent = [(key, new) for key, new in counts if new > 0 and where.get(key)][-64:]
        for key, new in recent:  # the frontier survives resume
            row = rows.get(key)
            candidate = self.host.revive(row) if row is not None and row.family in self.groups else None
            if candidate is not None:
                self.book.add_frontier(candidate, int(new), where[key])

    def _rng(self, *parts: Any) -> random.Random:
        return random.Random(":".join(str(p) for p in (self.seed, *parts)))

    @property
    def steers(self) -> bool:
        return self.on and self.knobs.steer

    def neighbour(self, index: int) -> Any | None:
        """A neighbour of a frontier candidate (a small change of its parameters), as the draw
        for `index`, or None (not this time, no frontier, or nothing new nearby)."""
        target = self.target
        if not self.steers or target is None or self.lane_plan.large_round(index):
            return None
        rng = self._rng("neighbour", index)
        if not self.book.wants_neighbour(rng):
            return None
        steering = self.steering
        for attempt in range(4):
            frontier = self.book.pick_frontier(rng, steering.group_cost)
            if frontier is None:
                return None
            try:
                candidate = target.neighbour(frontier.candidate, rng.getrandbits(48))
            except Exception:  # noqa: BLE001 - a family's bug: the plain draw goes on
                candidate = None
            if candidate is None or candidate.group not in steering.groups or self.host.known(candidate.key):
                continue
            keep = steering.keep_chance(candidate.group, candidate.features)  # saturation still counts
            if keep < 1.0 and rng.random() >= keep:
                continue
            self.neighbours_drawn += 1
            self.aimed[candidate.key] = frontier.lanes
            return replace(candidate, index=index)
        return None

    def pick_group(self, rng: random.Random) -> str:
        return self.book.pick_group(rng, self.steering)

    def score(self, rarity: float, group: str, features: tuple[str, ...]) -> float:
        return self.book.score(rarity, group, features) if self.steers else rarity

    def plan(self, candidate: Any, rotation: tuple[str, ...],
             barred: Collection[str] = ()) -> tuple[Any, tuple[str, ...]]:
        """(the candidate, marked with the lanes to instrument, and the lanes to check it on).
        `rotation`: its lanes with those that cannot take it already swapped; `barred`: the lanes
        that cannot take it, or are too slow for its family this time (drawing._lanes_swapped)."""
        if not self.on:
            return candidate, rotation
        plan = self.lane_plan
        barred = set(barred)
        large = plan.large_round(candidate.index)
        aim = [lane for lane in self.aimed.pop(candidate.key, ())
               if lane in plan.now and lane not in barred and lane != plan.reference]
        if not self.knobs.steer:
            lanes = rotation
        elif large:
            lanes = tuple(lane for lane in rotation if lane not in barred)
        elif not self.knobs.lanes:  # rotation's lanes, a lane that cannot take the candidate swapped for the next
            lanes = substitute(rotation, plan.now, barred, plan.reference)
        elif aim:  # a frontier neighbour: where its parent reached something new
            keep = tuple(lane for lane in rotation if lane == plan.reference)
            lanes = keep + tuple(aim)[:max(1, len(rotation) - len(keep))]
        else:
            lanes = self.book.choose_lanes(candidate.group, candidate.features, rotation, plan.now,
                                           plan.reference, lambda lane: lane not in barred,
                                           self._rng("lanes", candidate.index))
        lanes = lanes or rotation
        if large:  # large rounds go to compile-only lanes by their own rule: not thin or thick there
            return candidate, lanes
        self.book.checked(candidate.group, candidate.features, lanes)
        rng = self._rng("instrument", candidate.index)
        if self.book.instrument(rng):
            others = tuple(lane for lane in lanes if lane != plan.reference)
            chosen = others if others and rng.random() >= self.REFERENCE_SHARE else lanes
            candidate = replace(candidate, instrument=chosen)
        return candidate, lanes

    def finished(self, candidate: Any, outcome: Any, active: float, wall: float,
                 new_buckets: Collection[str] = ()) -> CoverageRecord | None:
        """What the candidate's instrumented compiles reached, for the store; learns from it, and
        from `new_buckets` (the lanes where it was the first to hit a bucket), what each lane taught."""
        if not self.on:
            return None
        items, new, total = {}, {}, 0
        failed = {f.lane for f in outcome.failures}
        fresh: list[str] = []  # lanes where it reached something first without failing there
        for lane, (reached, _) in (outcome.coverage or {}).items():
            items[lane] = tuple(reached)
            # a lane's first compile, and a family's first there, find everything of their own new
            warm_up = not self.book.seen.get(lane)
            warm_up = self.book.first_of_kind(candidate.group, lane) or warm_up
            new[lane] = len(self.book.reached(lane, reached))
            total += 0 if warm_up else new[lane]
            if not warm_up and new[lane] and lane not in failed:
                fresh.append(lane)
        for lane, (status, seconds) in outcome.lanes.items():
            if compiled(status):
                self.book.taught(candidate.group, lane, lesson(lane in new_buckets, lane in fresh), seconds)
        self.book.learn(candidate.group, candidate.features, total, len(new_buckets),
                        instrumented=bool(outcome.coverage))
        if not outcome.coverage:
            return None
        # a failing compile's new items are mostly its error path: its neighbours re-hit the bug
        if fresh:
            self.book.add_frontier(candidate, sum(new[lane] for lane in fresh), tuple(fresh))
        failing = {f.key: outcome.coverage[f.lane][1] for f in outcome.failures
                   if f.lane in outcome.coverage and outcome.coverage[f.lane][1]
                   and f.signature.stage == Stage.COMPILE}
        return CoverageRecord(items, new, active, wall, failing)


__all__ = ["CoverageHost", "CoverageSteering"]
