"""The engine's drawing part: which candidate comes next (steering, coverage neighbours, no
duplicates, a family that keeps failing to generate set aside), which lanes check it (the
reference plus a rotating share of the others, a lane that cannot take it swapped for one that
can), and the large rounds for compile-only lanes.
A mixin of `Engine`: the state it reads is the engine's (seed, groups, steering, coverage, tried,
in_flight, lanes, the target)."""

from __future__ import annotations

import hashlib
import random
from dataclasses import replace
from typing import Any

from shapefuzz.campaign.lanecost import substitute
from shapefuzz.campaign.store import CandidateRow
from shapefuzz.campaign.values import Candidate, coverage_target, lane_rules, one_line


def derive_seed(*parts: Any) -> int:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(digest[:6], "big")


class Drawing:
    """Picks the next candidate and its lanes; see the module docstring for the state it reads."""

    def _revive(self, row: CandidateRow) -> Candidate | None:
        try:
            candidate = self._generate(row.family, row.seed, row.idx)
            reviver = coverage_target(self.target)
            if candidate.key != row.key and reviver is not None:  # a drawn neighbour
                candidate = reviver.from_payload(row.family, row.seed, row.payload)
        except Exception as error:  # the family changed or is gone
            self._say(f"cannot regenerate candidate {row.key} ({row.family}): {error}")
            return None
        return replace(candidate, index=row.idx)

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
                        self._say(f"family {group} failed to generate seed {seed}: {one_line(error)}")
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

    def _lanes_swapped(self, candidate: Candidate) -> tuple[tuple[str, ...], set[str]]:
        """(the candidate's lanes from `lanes_for`, each lane that cannot take it (a known limit, or a
        variant that changes nothing for it) swapped for the next that can, in every campaign, and
        lanes slow for its kind mostly swapped too; the lanes that gave up their slot, which
        coverage's lane choice must not take either). See campaign/lanecost.py."""
        rotation = self.lanes_for(candidate.index)
        rng = random.Random(derive_seed(self.seed, "slow", candidate.index))
        rules = lane_rules(self.target)
        barred = self.lane_cost.barred(candidate.group, candidate.features, self.lanes, rng)
        if rules is not None:
            barred |= set(rules.ineligible(candidate, self.lanes))
        barred -= {self.reference}  # never barred: the other lanes are judged against it
        if not barred.intersection(rotation):
            return rotation, barred
        kind = tuple(lane for lane in self.lanes if lane in self.compile_only) if self.large_round(candidate.index) \
            else self.lanes
        return substitute(rotation, kind, barred, self.reference), barred


__all__ = ["Drawing", "derive_seed"]
