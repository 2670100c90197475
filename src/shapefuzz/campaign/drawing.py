"""The engine's drawing part: which candidate comes next (steering, coverage neighbours, no
duplicates, a family that keeps failing to generate set aside), which lanes check it (the lane
plan's rotation, a lane that cannot take it swapped for one that can), and the large rounds for
compile-only lanes; a stored candidate regenerated on resume."""

from __future__ import annotations

import collections
import hashlib
import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from shapefuzz.campaign.lanecost import LaneCost, substitute
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.steering import Steering
from shapefuzz.campaign.database import CandidateRow
from shapefuzz.campaign.outcomes import Candidate, Stats, Target, coverage_target, lane_rules, one_line

if TYPE_CHECKING:
    from shapefuzz.campaign.coverage_steering import CoverageSteering


def derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:6], "big")


class Drawing:
    """Draws candidates of `groups` from `target`, `draws` at a time (the rarest kept), with
    indices from `next_index` on. `known(key)`: tried already or in flight (a duplicate); `say`:
    a line for the user; `stats`: where duplicates and steered-away draws are counted."""

    def __init__(self, target: Target, groups: tuple[str, ...], seed: int, draws: int, plan: LanePlan,
                 steering: Steering, lane_cost: LaneCost, stats: Stats, known: Callable[[str], bool],
                 say: Callable[[str], None], next_index: int) -> None:
        self.target, self.groups, self.seed, self.draws = target, groups, seed, max(1, draws)
        self.plan, self.steering, self.lane_cost, self.stats = plan, steering, lane_cost, stats
        self._known, self._say = known, say
        self.next_index = next_index
        self.failed_groups: collections.Counter[str] = collections.Counter()
        self.dead_groups: set[str] = set()

    def say(self, text: str) -> None:
        self._say(text)

    def known(self, key: str) -> bool:
        return self._known(key)

    def revive(self, row: CandidateRow) -> Candidate | None:
        """The stored candidate `row` again (None, said, when its family cannot make it any more)."""
        try:
            candidate = self.generate(row.family, row.seed, row.idx)
            reviver = coverage_target(self.target)
            if candidate.key != row.key and reviver is not None:  # a drawn neighbour
                candidate = reviver.from_payload(row.family, row.seed, row.payload)
        except Exception as error:  # the family changed or is gone
            self._say(f"cannot regenerate candidate {row.key} ({row.family}): {error}")
            return None
        return replace(candidate, index=row.idx)

    def next_candidate(self, coverage: CoverageSteering) -> Candidate | None:
        """The next candidate (`coverage`: a neighbour of its frontier, or its family and scores),
        or None when nothing new could be drawn."""
        live = tuple(g for g in self.groups if g not in self.dead_groups)
        if not live:
            return None
        for _ in range(8):
            index = self.next_index
            self.next_index += 1
            rng = random.Random(derive_seed(self.seed, "group", index))
            self.steering.groups = live
            neighbour = coverage.neighbour(index)
            if neighbour is not None:
                return neighbour
            group = coverage.pick_group(rng) if coverage.steers else self.steering.pick_group(rng)
            best: Candidate | None = None
            best_score = -1.0
            attempt, drawn = 0, 0
            while drawn < self.draws and attempt < self.draws + 16:
                seed = derive_seed(self.seed, index, attempt)
                attempt += 1
                try:
                    candidate = self.generate(group, seed, index)
                except Exception as error:  # a family's bug: count it, drop the family if it persists
                    self.failed_groups[group] += 1
                    if self.failed_groups[group] == 1 or self.failed_groups[group] >= 5:
                        self._say(f"family {group} failed to generate seed {seed}: {one_line(error)}")
                    if self.failed_groups[group] >= 5:
                        self.dead_groups.add(group)
                        self._say(f"family {group} set aside after 5 generation failures")
                        break
                    continue
                if self._known(candidate.key):
                    self.stats.duplicates += 1
                    continue
                keep = self.steering.keep_chance(group, candidate.features)
                if keep < 1.0 and random.Random(derive_seed(self.seed, "keep", index, attempt)).random() >= keep:
                    self.stats.steered_away += 1
                    continue
                drawn += 1
                score = coverage.score(self.steering.rarity(group, candidate.features), group, candidate.features)
                if score > best_score:
                    best, best_score = candidate, score
            if best is not None:
                return replace(best, index=index)
        return None

    def generate(self, group: str, seed: int, index: int) -> Candidate:
        if self.plan.large_round(index):
            return self.target.generate(group, seed, large=True)
        return self.target.generate(group, seed)

    def lanes_swapped(self, candidate: Candidate) -> tuple[tuple[str, ...], set[str]]:
        """(the candidate's lanes from the plan's rotation, each lane that cannot take it (a known
        limit, or a variant that changes nothing for it) swapped for the next that can, in every
        campaign, and lanes slow for its kind mostly swapped too; the lanes that gave up their slot,
        which coverage's lane choice must not take either). See campaign/lanecost.py."""
        plan = self.plan
        rotation = plan.lanes_for(candidate.index)
        rng = random.Random(derive_seed(self.seed, "slow", candidate.index))
        rules = lane_rules(self.target)
        barred = self.lane_cost.barred(candidate.group, candidate.features, plan.now, rng)
        if rules is not None:
            barred |= set(rules.ineligible(candidate, plan.now))
        barred -= {plan.reference}  # never barred: the other lanes are judged against it
        if not barred.intersection(rotation):
            return rotation, barred
        return substitute(rotation, plan.kind(candidate.index), barred, plan.reference), barred


__all__ = ["Drawing", "derive_seed"]
