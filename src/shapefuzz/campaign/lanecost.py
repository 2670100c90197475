"""Lanes that are slow for a kind of candidate get such candidates less often (no IREE).

A lane's compile time varies with what is compiled far more than from one candidate to the next:
measured on 3.13, attention with a dynamic sequence length compiles in about 1 s on llvm-cpu and
20-80 s on rocm-gfx942 (in its `SerializeTargetExecutablesPass`), while every other (family, lane)
pair stays near 1-2 s. Left alone, those compiles took a large share of a ten-family campaign's
worker time. So where a family, or one feature of it, keeps running past `SLOW_SECONDS` on a lane,
a candidate of that kind keeps its slot on the lane with chance `KEEP`; otherwise the slot goes to
the next lane that is not slow for it. The lane still sees such candidates (their bugs are still
found), at a fraction of the cost. "Slow" is a count of checks past a fixed line, not a running
mean, so a fixed-seed campaign of ordinary compiles draws the same lanes on any machine.
"""

from __future__ import annotations

import collections
import random
from collections.abc import Iterable, Mapping
from typing import Any

SLOW_SECONDS = 15.0  # a check of one lane past this is a slow one (ordinary checks take 1-2 s)
SLOW_AFTER = 1  # slow checks before a kind of candidate counts as slow on a lane ...
SLOW_SHARE = 0.5  # ... and at least this share of its checks there slow
KEEP = 0.2  # chance a slow kind keeps a slot it was given

Key = tuple[str, str, str]  # (family, kind: "" for the whole family or one of its features, lane)


class LaneCost:
    """Slowness is learnt per (family, lane) and per (family, feature, lane): the cost is often in a
    conjunction (attention is slow on rocm-gfx942 only with `seq:dynamic`), and barring the whole
    family would take the lane's fast candidates of it too. Lanes that are variants of one target
    (`kin`: lane -> the lane it is a variant of) learn it together: measured on 3.13, what is slow on
    rocm-gfx942 is slow on rocm-gfx942-no-igemm too."""

    def __init__(self, kin: Mapping[str, str] | None = None) -> None:
        self.kin = dict(kin or {})
        self.checks: collections.Counter[Key] = collections.Counter()
        self.slow_checks: collections.Counter[Key] = collections.Counter()
        self.seconds: collections.Counter[Key] = collections.Counter()

    def record(self, group: str, features: tuple[str, ...], lanes: Mapping[str, tuple[object, float]]) -> list[str]:
        """A check of a `group` candidate with `features` finished with {lane: (status, seconds)};
        returns "lane (kind)" for each kind that became slow on a lane with it (to say so once)."""
        became = []
        for lane, (status, seconds) in lanes.items():
            if not compiled(status):
                continue
            slow, base = float(seconds) >= SLOW_SECONDS, self.kin.get(lane, lane)
            for kind in ("", *features):
                key = (group, kind, base)
                was = slow and self._slow(key)  # a fast check never makes a kind slow: no need to ask
                self.checks[key] += 1
                self.seconds[key] += float(seconds)  # type: ignore[assignment]  # float in a Counter (typeshed: int)
                if slow:
                    self.slow_checks[key] += 1
                    if not was and self._slow(key):
                        became.append(f"{key[2]} ({kind or 'every candidate'})")
        return became

    def _slow(self, key: Key) -> bool:
        return self.slow_checks[key] >= SLOW_AFTER and self.slow_checks[key] >= SLOW_SHARE * self.checks[key]

    def slow(self, group: str, features: tuple[str, ...], lane: str) -> bool:
        base = self.kin.get(lane, lane)
        return any(self._slow((group, kind, base)) for kind in ("", *features))

    def mean(self, group: str, kind: str, lane: str) -> float:
        key = (group, kind, lane)
        return self.seconds[key] / self.checks[key] if self.checks[key] else 0.0

    def barred(self, group: str, features: tuple[str, ...], lanes: Iterable[str], rng: random.Random) -> set[str]:
        """Of `lanes`, those slow for this candidate, barred from it (each stays eligible with chance KEEP)."""
        return {lane for lane in lanes if self.slow(group, features, lane) and rng.random() >= KEEP}

    def slow_kinds(self) -> list[tuple[str, str, str, float, int]]:
        """(family, kind, lane, mean seconds, checks) of every slow kind, slowest first (the lane: the
        one its variants are of); a feature is left out where the whole family is slow on that lane."""
        rows = [(g, kind, lane, self.mean(g, kind, lane), self.checks[(g, kind, lane)])
                for (g, kind, lane) in self.checks
                if self._slow((g, kind, lane)) and (kind == "" or not self._slow((g, "", lane)))]
        return sorted(rows, key=lambda row: -row[3])


def lane_kin(store: Any) -> dict[str, str]:
    """The campaign's lane -> the lane it is a variant of, as its run wrote it in the store's meta."""
    return {str(k): str(v) for k, v in (store.meta_object("lane_kin") or {}).items()}


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


def compiled(status: object) -> bool:
    """Did a lane check with this status (a `Status` or its text) compile anything? Not when the
    lane was unsupported (a known limit) or skipped (no tool here)."""
    return str(getattr(status, "value", status)) not in ("unsupported", "skipped")


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


__all__ = ["LaneCost", "compiled", "lane_kin", "lane_seconds", "substitute", "SLOW_SECONDS", "KEEP"]
