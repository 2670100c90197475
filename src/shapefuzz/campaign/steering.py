"""Which candidates a campaign draws next (no IREE): groups tried least are picked more often, of
several draws the one whose features and feature pairs are rarest is kept (swarm-style: pairs,
not single features), and candidates carrying the triggering features of a saturated bucket
(one hit often enough already) are drawn less, in proportion to how often and how expensively
they re-hit it. A small exploration share stays, so a fixed bug is still noticed.

A trigger's family is a gate, not one of its features: a candidate of another family carries none
of it, one of the family carries the share of the trigger's other features it carries (all of it
when the trigger is the family alone). Counting the family as a feature made every candidate of a
family carry part of every trigger there, so a long campaign's hundreds of saturated buckets drove
the keep chance of all its candidates to the exploration floor, and the head drew twenty candidates
for each it kept (bench/bench_soak.py).

The keep chance is asked several times per candidate; it is read from tables kept per distinct
trigger (one factor per number of its features a candidate carries), which change only when a
bucket of that trigger does, or when the mean cost of a candidate has moved by 1% since they were
made: a long campaign's thousands of buckets cost a draw no more than its first few did."""

from __future__ import annotations

import collections
import itertools
import math
import random
from dataclasses import dataclass


@dataclass(frozen=True)
class SteeringKnobs:
    saturate_after: int = 3  # hits before a bucket is saturated
    explore: float = 0.05  # least chance a candidate carrying a saturated bucket's features is kept

    def __post_init__(self) -> None:
        if self.saturate_after < 1:
            raise ValueError("saturate_after must be at least 1")
        if not 0.0 < self.explore <= 1.0:
            raise ValueError("explore must be in (0, 1]")


def pairs(features: tuple[str, ...]) -> list[str]:
    """The feature pairs of a candidate, each once, in a fixed order."""
    return [f"{a}&{b}" for a, b in itertools.combinations(sorted(set(features)), 2)]


class Steering:
    def __init__(self, groups: tuple[str, ...], knobs: SteeringKnobs = SteeringKnobs()) -> None:
        self.groups = groups
        self.knobs = knobs
        self.features: collections.Counter[tuple[str, str]] = collections.Counter()
        self.per_group: collections.Counter[str] = collections.Counter()
        self.group_seconds: collections.Counter[str] = collections.Counter()
        self.seconds = 0.0  # worker seconds over the candidates counted (for the cost of a re-hit)
        self.checked = 0
        # bucket -> the features every candidate that hit it carried (its trigger), and its hits
        self.trigger: dict[str, frozenset[str]] = {}
        self.hits: collections.Counter[str] = collections.Counter()
        self.rehits: collections.Counter[str] = collections.Counter()
        self.rehit_seconds: collections.Counter[str] = collections.Counter()
        self.ignored: set[str] = _Watched(self._refile)  # flaky buckets: nothing to steer away from
        # keep_chance's tables: saturated buckets by trigger, and per trigger the factor for each
        # number of its features a candidate carries (see the module docstring)
        self._members: dict[frozenset[str], set[str]] = {}
        self._filed: dict[str, frozenset[str]] = {}
        self._tables: dict[frozenset[str], tuple[str | None, frozenset[str], list[float]]] = {}
        self._dirty: set[frozenset[str]] = set()
        self._mean_at: float | None = None

    # --- learning -------------------------------------------------------------------------
    def add(self, group: str, features: tuple[str, ...], seconds: float = 0.0) -> None:
        self.per_group[group] += 1
        self.group_seconds[group] += seconds  # type: ignore[assignment]  # float in a Counter (typeshed: int)
        self.checked += 1
        self.seconds += seconds
        for f in (*features, *pairs(features)):
            self.features[(group, f)] += 1

    def hit(self, bucket: str, group: str, features: tuple[str, ...], seconds: float) -> bool:
        """A candidate hit `bucket`; True when the bucket was saturated already (a re-hit)."""
        carried = frozenset((f"group:{group}", *features))
        rehit = self.saturated(bucket)
        self.trigger[bucket] = self.trigger[bucket] & carried if bucket in self.trigger else carried
        self.hits[bucket] += 1
        if rehit:
            self.rehits[bucket] += 1
            self.rehit_seconds[bucket] += seconds  # type: ignore[assignment]  # float in a Counter (typeshed: int)
        self._refile(bucket)
        return rehit

    def _refile(self, bucket: str) -> None:
        """A bucket's place in keep_chance's tables, after its hits, trigger or flakiness changed."""
        old = self._filed.pop(bucket, None)
        if old is not None:
            self._members[old].discard(bucket)
            self._dirty.add(old)
        trigger = self.trigger.get(bucket)
        if trigger and self.saturated(bucket):
            self._filed[bucket] = trigger
            self._members.setdefault(trigger, set()).add(bucket)
            self._dirty.add(trigger)

    def saturated(self, bucket: str) -> bool:
        return bucket not in self.ignored and self.hits[bucket] >= self.knobs.saturate_after

    # --- drawing --------------------------------------------------------------------------
    def pick_group(self, rng: random.Random) -> str:
        weights = [1.0 / math.sqrt(1 + self.per_group[g]) for g in self.groups]
        return rng.choices(self.groups, weights)[0]

    def group_cost(self, group: str) -> float:
        """Worker seconds of a `group` candidate against those of the mean candidate (1.0 while
        either is unknown)."""
        n, seconds, mean = self.per_group[group], self.group_seconds[group], self._mean_seconds()
        if not n or seconds <= 0 or mean is None:
            return 1.0
        return (seconds / n) / mean

    def _mean_seconds(self) -> float | None:
        """Worker seconds of the mean candidate counted (None while unknown)."""
        return self.seconds / self.checked if self.checked and self.seconds > 0 else None

    def rarity(self, group: str, features: tuple[str, ...]) -> float:
        return sum(1.0 / (1 + self.features[(group, f)]) for f in (*features, *pairs(features)))

    def weight(self, bucket: str, mean: float | None = None) -> float:
        """How hard to steer away from a saturated bucket, in [0, 1): grows with its re-hits and
        with what they cost relative to an ordinary candidate (`mean`: its seconds; default now)."""
        mean = mean or self._mean_seconds() or 1.0
        rehits = self.rehits[bucket] + 1  # saturation itself counts as one
        cost = (self.rehit_seconds[bucket] / self.rehits[bucket]) / mean if self.rehits[bucket] else 1.0
        return 1.0 - 1.0 / (1.0 + rehits * max(cost, 0.1))

    def keep_chance(self, group: str, features: tuple[str, ...]) -> float:
        """The chance a drawn candidate is kept: lower the more of a saturated bucket's trigger
        it carries (`match`)."""
        self._refresh()
        own, carried = f"group:{group}", frozenset(features)
        keep = 1.0
        for family, rest, table in self._tables.values():
            if family is None or family == own:
                keep *= table[len(rest & carried)]
        return max(self.knobs.explore, keep)

    def _refresh(self) -> None:
        """Remake the tables that changed: each trigger's factor for a candidate carrying k of its
        n features, the product over its saturated buckets of 1 - weight * (k/n)^3."""
        mean = self._mean_seconds() or 1.0
        if self._mean_at is None or abs(mean - self._mean_at) > 0.01 * self._mean_at:
            self._mean_at = mean
            self._dirty.update(self._members)
        for trigger in self._dirty:
            members = self._members.get(trigger)
            if not members:
                self._members.pop(trigger, None)
                self._tables.pop(trigger, None)
                continue
            weights = [self.weight(b, self._mean_at) for b in sorted(members)]
            family, rest = split_trigger(trigger)
            n = len(rest)
            self._tables[trigger] = (family, rest, [math.prod(1.0 - w * (k / n if n else 1.0) ** 3 for w in weights)
                                                    for k in range(n + 1)])
        self._dirty.clear()


def split_trigger(trigger: frozenset[str]) -> tuple[str | None, frozenset[str]]:
    """(the trigger's family element, or None when buckets of several families share it; its other
    features). A trigger is an intersection of sets carrying one family each: one family at most."""
    family = next((f for f in trigger if f.startswith("group:")), None)
    return family, trigger - {family} if family else trigger


def match(trigger: frozenset[str], group: str, features: tuple[str, ...]) -> float:
    """How much of a saturated bucket's trigger a `group` candidate with `features` carries: none
    when the trigger is another family's; else the share of its other features carried, all of it
    when the trigger is the family alone."""
    family, rest = split_trigger(trigger)
    if family is not None and family != f"group:{group}":
        return 0.0
    return len(rest & frozenset(features)) / len(rest) if rest else 1.0


class _Watched(set):
    """The flaky buckets: a bucket added leaves keep_chance's tables."""

    def __init__(self, changed) -> None:
        super().__init__()
        self._changed = changed

    def add(self, bucket: str) -> None:
        super().add(bucket)
        self._changed(bucket)


__all__ = ["Steering", "SteeringKnobs", "match", "pairs"]
