"""Reading the coverage map back from a campaign store, for the report, the series and the
dashboard: the items reached, instrumented compiles per lane, failing passes, and the summary
the report shows. Reads the store alone."""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any, Callable

from shapefuzz.campaign.database import CampaignStore


@dataclass(frozen=True)
class CoverageRow:
    lane: str
    pass_name: str
    pattern: str  # "" for the pass itself
    count: int
    first_seen: float  # campaign-active seconds
    first_wall: float
    first_candidate: str
    family: str  # of the first candidate ("" when unknown)


def coverage_rows(store: CampaignStore) -> list[CoverageRow]:
    """Every (lane, pass, pattern) reached, in the order first reached: what a plot reads."""
    return [CoverageRow(*row) for row in store.coverage_items()]


def instrumented_count(store: CampaignStore) -> dict[str, int]:
    """Instrumented compiles per lane."""
    return dict(collections.Counter(lane for _, lane, _, _ in store.covered()))


def failing_passes(store: CampaignStore) -> dict[str, str]:
    """Bucket -> the pass its compile failed in (where an instrumented compile found it)."""
    return store.failing_passes()


def over_time(rows: list[CoverageRow], key: Callable[[CoverageRow], str], points: int = 6) -> dict[str, list[tuple[float, int]]]:
    """Cumulative distinct items per key (lane, family) at `points` evenly spaced active times."""
    if not rows:
        return {}
    end = max(r.first_seen for r in rows)
    marks = [end * (i + 1) / points for i in range(points)]
    series: dict[str, list[tuple[float, int]]] = {}
    for name in sorted({key(r) for r in rows}):
        times = sorted(r.first_seen for r in rows if key(r) == name)
        series[name] = [(t, sum(1 for x in times if x <= t)) for t in marks]
    return series


def coverage_summary(store: CampaignStore, interest: dict[str, tuple[str, ...]] | None = None) -> dict[str, Any]:
    """What the report shows: instrumented compiles, distinct passes and (pass, pattern) pairs
    per lane, both over time per lane and per family, and which passes of interest no compile
    reached. Empty when nothing was instrumented."""
    rows = coverage_rows(store)
    if not rows:
        return {}
    if interest is None:
        from shapefuzz.coverage.actionlog import PASSES_OF_INTEREST

        interest = PASSES_OF_INTEREST
    ran: dict[str, set[str]] = collections.defaultdict(set)  # pass -> lanes it ran on
    acted: dict[str, set[str]] = collections.defaultdict(set)  # pass -> patterns that fired inside it
    for r in rows:
        if r.pattern:
            acted[r.pass_name].add(r.pattern)
        else:
            ran[r.pass_name].add(r.lane)
    patterns = {(r.pass_name, r.pattern) for r in rows if r.pattern}
    lanes = sorted({r.lane for r in rows})
    return {
        "instrumented": instrumented_count(store),
        "passes": len(ran),
        "pass_patterns": len(patterns),
        "patterns": len({p for _, p in patterns}),
        "per_lane": {lane: {"passes": sum(1 for r in rows if r.lane == lane and not r.pattern),
                            "pass_patterns": sum(1 for r in rows if r.lane == lane and r.pattern)} for lane in lanes},
        "over_time": {"lane": over_time(rows, lambda r: r.lane), "family": over_time(rows, lambda r: r.family or "?")},
        # per lowering of interest: pass -> (lanes it ran on, patterns that fired inside it)
        "of_interest": {what: {p: [sorted(ran[p]), len(acted[p])] for p in names if p in ran}
                        for what, names in interest.items()},
        "never_reached": {what: list(names) for what, names in interest.items() if not any(acted[p] for p in names)},
    }


__all__ = ["CoverageRow", "coverage_rows", "coverage_summary", "failing_passes", "instrumented_count", "over_time"]
