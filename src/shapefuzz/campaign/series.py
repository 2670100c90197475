"""What the dashboard plots, read from the campaign store as plain numbers (no plotting here):
causes found over time by triage verdict (and severity, where causes carry one), candidates per
minute over time, where worker time went, each lane x family's outcomes, and compiler coverage
over time where the store keeps a coverage map. Times are campaign-active seconds, so a resumed
campaign's plots run on without gaps."""

from __future__ import annotations

import collections
import sqlite3
from dataclasses import dataclass, field

from shapefuzz.campaign.report import Summary
from shapefuzz.campaign.store import CampaignStore
from shapefuzz.campaign.values import Triage

OUTCOMES = ("pass", "bug", "unsupported", "driver-suspected", "other")  # a lane x family cell's columns
_FAILED_TRIAGE = {Triage.COMPILER_BUG.value: "bug", Triage.SUSPECTED_DRIVER.value: "driver-suspected",
                  Triage.TARGET_LIMIT.value: "unsupported"}


@dataclass(frozen=True)
class Step:
    """A cumulative count: one point per event, at campaign-active seconds."""

    times: tuple[float, ...]

    def __len__(self) -> int:
        return len(self.times)


@dataclass
class Series:
    total_seconds: float
    candidates: int
    causes_by_triage: dict[str, Step] = field(default_factory=dict)
    causes_by_severity: dict[str, Step] = field(default_factory=dict)  # empty: causes carry no severity
    rate: tuple[tuple[float, float], ...] = ()  # (bin middle in seconds, candidates per minute)
    worker: dict[str, float] = field(default_factory=dict)  # seconds: check, re-hits, confirm, shrink
    lanes: tuple[str, ...] = ()
    families: tuple[str, ...] = ()
    matrix: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)  # (lane, family) -> outcome counts
    coverage: tuple[tuple[float, int], ...] | None = None  # (seconds, distinct items reached); None: no map


def build(store: CampaignStore, summary: Summary) -> Series:
    rows = list(store.candidates())
    total = max([summary.active_seconds, *(c.finished for c in rows)], default=0.0)
    series = Series(total, len(rows))
    by_triage: dict[str, list[float]] = collections.defaultdict(list)
    by_severity: dict[str, list[float]] = collections.defaultdict(list)
    for cause in summary.causes:
        by_triage[cause["triage"]].append(cause["first_seen"])
        if cause.get("severity"):
            by_severity[str(cause["severity"])].append(cause["first_seen"])
    order = [t.value for t in Triage]
    series.causes_by_triage = {k: Step(tuple(sorted(by_triage[k]))) for k in sorted(by_triage, key=order.index)}
    series.causes_by_severity = {k: Step(tuple(sorted(v))) for k, v in by_severity.items()}
    series.rate = _rate([c.finished for c in rows], total)
    check = summary.worker_seconds.get("check", 0.0)
    series.worker = {"check": max(0.0, check - summary.rehit_seconds), "re-hits": summary.rehit_seconds,
                     "confirm": summary.worker_seconds.get("confirm", 0.0),
                     "shrink": summary.worker_seconds.get("shrink", 0.0)}
    series.lanes, series.families, series.matrix = _matrix(store, rows, summary)
    series.coverage = coverage_over_time(store)
    return series


def _rate(finished: list[float], total: float, bins: int = 30) -> tuple[tuple[float, float], ...]:
    """Candidates per minute in equal slices of active time (at least a minute each)."""
    if not finished or total <= 0:
        return ()
    width = max(60.0, total / bins) if total >= 120 else total / max(1, min(bins, len(finished)))
    n = max(1, int(total / width + 0.999))
    counts = [0] * n
    for t in finished:
        counts[min(n - 1, int(t / width))] += 1
    out = []
    for i, count in enumerate(counts):
        span = min(width, total - i * width) or width  # the last slice may be shorter
        out.append((i * width + span / 2, count / span * 60))
    return tuple(out)


def _matrix(store: CampaignStore, rows: list, summary: Summary):
    """Each candidate's outcome on each lane it was checked on, per family: pass, bug (a bucket
    judged a compiler bug), unsupported (a target limit), driver-suspected, or other (ours, flaky,
    a timeout that made no bucket)."""
    triage_of = {b["signature"]: b["triage"] for b in summary.buckets}
    hit: dict[tuple[str, str], str] = {}
    for candidate, bucket, backend in store.hits():
        hit[(candidate, backend)] = triage_of.get(bucket, "")
    cells: dict[tuple[str, str], collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for c in rows:
        for lane, (status, _seconds) in c.outcome.items():
            if status in ("ok", "skipped"):
                kind = "pass"
            elif status == "unsupported":
                kind = "unsupported"
            else:
                kind = _FAILED_TRIAGE.get(hit.get((c.key, lane), ""), "other")
            cells[(lane, c.family)][kind] += 1
    lanes = tuple(sorted({lane for lane, _ in cells}))
    families = tuple(sorted({family for _, family in cells}))
    return lanes, families, {k: dict(v) for k, v in cells.items()}


def coverage_over_time(store: CampaignStore) -> tuple[tuple[float, int], ...] | None:
    """Distinct coverage items (lane, pass, pattern) reached by each moment, from the store's
    coverage map where this store has one (None where it has none)."""
    try:
        names = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        table = next((n for n in ("coverage", "coverage_map") if n in names), None)
        if table is None:
            return None
        columns = [r[1] for r in store.db.execute(f"PRAGMA table_info({table})")]
        since = next((c for c in ("first_seen", "since", "first_active", "first") if c in columns), None)
        if since is None:
            return None
        times = sorted(float(r[0]) for r in store.db.execute(f"SELECT {since} FROM {table}") if r[0] is not None)
    except (sqlite3.Error, TypeError, ValueError):
        return None
    return tuple((t, i) for i, t in enumerate(times, 1))

