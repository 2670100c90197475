"""What the dashboard plots, read from the campaign store as plain numbers (no plotting here):
causes found over time by triage verdict (and severity, where causes carry one), candidates per
minute over time, where worker time went, each lane x family's outcomes, and compiler coverage
over time where the store keeps a coverage map. Times are campaign-active seconds, so a resumed
campaign's plots run on without gaps."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from shapefuzz.campaign.report.coverage_summary import coverage_rows
from shapefuzz.campaign.report.summary import Summary
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Triage

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
    coverage: dict[str, dict[str, Step]] | None = None  # items reached over time per lane / family; None: none


def build(store: CampaignStore, summary: Summary) -> Series:
    rows = list(store.candidates())
    total = max([summary.active_seconds, *(c.finished for c in rows)], default=0.0)
    series = Series(total, len(rows))
    by_triage: dict[str, list[float]] = collections.defaultdict(list)
    by_severity: dict[str, list[float]] = collections.defaultdict(list)
    rank: dict[str, float] = {}
    for cause in summary.causes:
        by_triage[cause.triage.value].append(cause.first_seen)
        if cause.is_finding:
            by_severity[cause.severity.label].append(cause.first_seen)
            rank[cause.severity.label] = float(cause.severity_rank)
    order = [t.value for t in Triage]
    series.causes_by_triage = {k: Step(tuple(sorted(by_triage[k]))) for k in sorted(by_triage, key=order.index)}
    series.causes_by_severity = {k: Step(tuple(sorted(by_severity[k]))) for k in sorted(by_severity, key=rank.__getitem__)}
    series.rate = _rate([c.finished for c in rows], total)
    check = summary.worker_seconds.get("check", 0.0)
    series.worker = {"check": max(0.0, check - summary.rehit_seconds), "re-hits": summary.rehit_seconds,
                     "confirm": summary.worker_seconds.get("confirm", 0.0),
                     "shrink": summary.worker_seconds.get("shrink", 0.0)}
    series.lanes, series.families, series.matrix = _matrix(store, rows, summary)
    series.coverage = coverage_over_time(store)
    return series


def _rate(finished: list[float], total: float, bins: int = 30) -> tuple[tuple[float, float], ...]:
    """Candidates per minute in equal slices of active time (at least a minute each, once the
    campaign is two minutes long); the remainder joins the last slice, so no short slice at the
    end shows a spike."""
    if not finished or total <= 0:
        return ()
    width = max(60.0, total / bins) if total >= 120 else total / max(1, min(bins, len(finished)))
    n = max(1, int(total / width + 1e-9))
    counts = [0] * n
    for t in finished:
        counts[min(n - 1, int(t / width))] += 1
    out = []
    for i, count in enumerate(counts):
        start, end = i * width, total if i == n - 1 else (i + 1) * width
        out.append(((start + end) / 2, count / (end - start) * 60))
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


def coverage_over_time(store: CampaignStore) -> dict[str, dict[str, Step]] | None:
    """Distinct coverage items (passes run, patterns applied) reached by each moment, per lane and
    per family, from the store's coverage map (campaign/report/coverage_summary.py); None when nothing was
    instrumented."""
    rows = coverage_rows(store)
    if not rows:
        return None
    out: dict[str, dict[str, Step]] = {}
    for what, key in (("lane", lambda r: r.lane), ("family", lambda r: r.family or "?")):
        groups: dict[str, list[float]] = collections.defaultdict(list)
        for r in rows:
            groups[key(r)].append(r.first_seen)
        out[what] = {"all": Step(tuple(r.first_seen for r in rows))}
        out[what].update({k: Step(tuple(sorted(v))) for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))})
    return out
