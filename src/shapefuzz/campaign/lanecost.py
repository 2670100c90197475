"""Lanes that are slow for a family get that family's candidates less often (no IREE).

A lane's compile time varies by family far more than by candidate: measured on 3.13, attention
with a dynamic sequence length compiles in about 1 s on llvm-cpu and 35-80 s on rocm-gfx942 (its
`SerializeTargetExecutablesPass`), while every other (family, lane) pair stays near 1-2 s. Left
alone, the one pair took about half of a ten-family campaign's worker time. So a (family, lane)
pair whose checks keep running past `SLOW_SECONDS` is slow: it keeps a candidate's slot with
chance `KEEP`, and the slot otherwise goes to the next lane that is not slow for the family. The
pair is still checked (its bugs are still found), at a fraction of its cost. "Slow" is a count of
checks past a fixed line, not a running mean, so a fixed-seed campaign of ordinary compiles draws
the same lanes on any machine.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Iterable, Mapping

SLOW_SECONDS = 20.0  # a check of one lane past this is a slow one
SLOW_AFTER = 2  # slow checks before the pair counts as slow ...
SLOW_SHARE = 0.5  # ... and at least this share of its checks slow
KEEP = 0.2  # chance a slow pair keeps a slot it was given


class LaneCost:
    def __init__(self) -> None:
        self.checks: collections.Counter[tuple[str, str]] = collections.Counter()
        self.slow_checks: collections.Counter[tuple[str, str]] = collections.Counter()
        self.seconds: collections.Counter[tuple[str, str]] = collections.Counter()
        self.skipped: collections.Counter[tuple[str, str]] = collections.Counter()

    def record(self, group: str, lanes: Mapping[str, tuple[object, float]]) -> list[str]:
        """A check of `group` finished with {lane: (status, seconds)}; returns the lanes that became
        slow for the group with it (to say so once)."""
        became = []
        for lane, (status, seconds) in lanes.items():
            if str(getattr(status, "value", status)) in ("unsupported", "skipped"):
                continue  # nothing was compiled
            key = (group, lane)
            was = self.slow(group, lane)
            self.checks[key] += 1
            self.seconds[key] += float(seconds)
            if float(seconds) >= SLOW_SECONDS:
                self.slow_checks[key] += 1
            if not was and self.slow(group, lane):
                became.append(lane)
        return became

    def slow(self, group: str, lane: str) -> bool:
        key = (group, lane)
        return self.slow_checks[key] >= SLOW_AFTER and self.slow_checks[key] >= SLOW_SHARE * self.checks[key]

    def mean(self, group: str, lane: str) -> float:
        key = (group, lane)
        return self.seconds[key] / self.checks[key] if self.checks[key] else 0.0

    def barred(self, group: str, lanes: Iterable[str], rng: random.Random) -> set[str]:
        """Of `lanes`, the slow ones barred from this candidate (each stays eligible with chance KEEP)."""
        return {lane for lane in lanes if self.slow(group, lane) and rng.random() >= KEEP}

    def slow_pairs(self) -> list[tuple[str, str, float, int, int]]:
        """(group, lane, mean seconds, checks, slots given up) of every slow pair, slowest first."""
        rows = [(g, lane, self.mean(g, lane), self.checks[(g, lane)], self.skipped[(g, lane)])
                for (g, lane) in self.checks if self.slow(g, lane)]
        return sorted(rows, key=lambda row: -row[2])


def lane_seconds(outcome: Mapping[str, object]) -> dict[str, tuple[object, float]]:
    """A stored candidate's {lane: [status, seconds]} as record() takes it (an entry without
    seconds counts 0)."""
    out: dict[str, tuple[object, float]] = {}
    for lane, value in outcome.items():
        if isinstance(value, (list, tuple)) and len(value) == 2:
            out[lane] = (value[0], float(value[1] or 0.0))
        else:
            out[lane] = (value, 0.0)
    return out


def substitute(rotation: tuple[str, ...], lanes: tuple[str, ...], barred: set[str],
               reference: str | None) -> tuple[str, ...]:
    """`rotation` with each barred lane replaced by the next lane after it (in `lanes` order) that is
    neither barred nor already chosen; a barred lane with no such replacement is dropped, and the
    reference lane is never barred. Order follows `lanes`."""
    chosen = [lane for lane in rotation if lane not in barred or lane == reference]
    for lane in rotation:
        if lane in chosen:
            continue
        start = lanes.index(lane) if lane in lanes else 0
        for step in range(1, len(lanes)):
            other = lanes[(start + step) % len(lanes)]
            if other not in barred and other not in chosen and other != reference:
                chosen.append(other)
                break
    return tuple(lane for lane in lanes if lane in chosen) or rotation


__all__ = ["LaneCost", "lane_seconds", "substitute", "SLOW_SECONDS", "KEEP"]
