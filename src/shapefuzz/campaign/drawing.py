"""The engine's drawing part: which candidate comes next (the allocation's cell, or steering;
coverage neighbours, no duplicates, a family that keeps failing to generate set aside), which
lanes check it (the allocation's lanes or the lane plan's rotation, a lane that cannot take it
swapped for one that can), and the large rounds for compile-only lanes; a stored candidate
regenerated on resume."""

from __future__ import annotations

import collections
import hashlib
import random
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Callable

from shapefuzz.campaign.allocation import LARGE_FEATURE, Request
from shapefuzz.campaign.lanecost import substitute
from shapefuzz.campaign.state import CampaignState, Guides
from shapefuzz.campaign.database import CandidateRow
from shapefuzz.campaign.outcomes import Candidate, Target, coverage_target, lane_rules, one_line, shaped_target

if TYPE_CHECKING:
    from shapefuzz.campaign.coverage_steering import CoverageSteering


def derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:6], "big")


class Drawing:
    """Draws candidates of `groups` from `target`, `draws` at a time (the rarest kept), with
    indices from `next_index` on, as its `guides` (lane plan, steering, lane costs, allocation)
    say. `known(key)`: tried already or in flight (a duplicate); the campaign's `state` counts
    duplicates and steered-away draws, and takes its lines for the user."""

    def __init__(self, target: Target, state: CampaignState, guides: Guides, *, groups: tuple[str, ...], seed: int,
                 draws: int, known: Callable[[str], bool], next_index: int) -> None:
        self.target, self.groups, self.seed, self.draws = target, groups, seed, max(1, draws)
        self.plan, self.steering, self.lane_cost = guides.plan, guides.steering, guides.lane_cost
        self.stats = state.stats
        # the allocation draws by yield when it is on (campaign/allocation.py); else steering does
        allocation = guides.allocation
        self.allocation = allocation if allocation is not None and allocation.on else None
        self._known, self._say = known, state.say
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
            large = LARGE_FEATURE in row.features if self.plan.chosen_large is not None else None
            candidate = self.generate(row.family, row.seed, row.idx, large=large)
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
            request = self._request(coverage, live, index, rng)
            neighbour = coverage.neighbour(index)
            if neighbour is not None:
                return neighbour
            if request is not None:
                group = request.group
            else:
                group = coverage.pick_group(rng) if coverage.steers else self.steering.pick_group(rng)
            best: Candidate | None = None
            best_score = -1.0
            attempt, drawn = 0, 0
            while drawn < self.draws and attempt < self.draws + 16:
                seed = derive_seed(self.seed, index, attempt)
                attempt += 1
                try:
                    candidate = self.generate(group, seed, index, request=request)
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
                if self.allocation is not None:  # features and pairs that found new causes, more
                    score *= self.allocation.feature_ratio(group, candidate.features, self.steering.features,
                                                           self.steering.per_group[group])
                if score > best_score:
                    best, best_score = candidate, score
            if best is not None:
                if request is not None:
                    self.allocation.asked_for(best.key, request.shape)  # type: ignore[union-attr]  # set with request
                return replace(best, index=index)
        return None

    def _request(self, coverage: CoverageSteering, live: tuple[str, ...], index: int,
                 rng: random.Random) -> Request | None:
        """The allocation's cell for draw `index` (None when the allocation is off): its family
        (coverage steering's, when it steers) and shape; a large one is marked in the lane plan."""
        if self.allocation is None:
            return None
        group = coverage.pick_group(rng) if coverage.steers else None
        request = self.allocation.pick(rng, live, index, self.plan.large_possible(), group)
        if request.large and self.plan.chosen_large is not None:
            self.plan.choose_large(index)
        return request

    def generate(self, group: str, seed: int, index: int, large: bool | None = None,
                 request: Request | None = None) -> Candidate:
        """A candidate of `group` from `seed` for draw `index` (`large`: a large round, by default
        as the plan says), of the shape `request` asks for where the target draws shapes; a large
        one carries LARGE_FEATURE."""
        large = self.plan.large_round(index) if large is None else large
        shaped = shaped_target(self.target)
        if shaped is not None and request is not None and request.chain is not None and not large:
            candidate = shaped.generate_shaped(group, seed, False, request.chain, request.left_out)
        elif large:
            candidate = self.target.generate(group, seed, large=True)
        else:
            candidate = self.target.generate(group, seed)
        if large and LARGE_FEATURE not in candidate.features:
            candidate = replace(candidate, features=(*candidate.features, LARGE_FEATURE))
        return candidate

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
        if self.allocation is not None and plan.lanes_per_candidate is not None and len(rotation) < len(plan.now):
            lanes = self._allocated_lanes(candidate, rotation, barred)
            if lanes:
                return lanes, barred
        if not barred.intersection(rotation):
            return rotation, barred
        return substitute(rotation, plan.kind(candidate.index), barred, plan.reference), barred

    def _allocated_lanes(self, candidate: Candidate, rotation: tuple[str, ...], barred: set[str]) -> tuple[str, ...]:
        """The candidate's lanes as the allocation gives them: the reference (where rotation has it)
        and as many others as rotation has, drawn from the lanes of its kind that can take it, by
        what a second of the family's checks found on each lately; () when none can."""
        plan, allocation = self.plan, self.allocation
        assert allocation is not None  # only called with the allocation on
        keep = tuple(lane for lane in rotation if lane == plan.reference)
        choices = [lane for lane in plan.kind(candidate.index) if lane not in barred and lane not in keep]
        if not choices:
            return ()
        rng = random.Random(derive_seed(self.seed, "lanes", candidate.index))
        picked = set(allocation.pick_lanes(rng, candidate.group, choices, len(rotation) - len(keep)))
        return keep + tuple(lane for lane in plan.now if lane in picked)


__all__ = ["Drawing", "derive_seed"]
