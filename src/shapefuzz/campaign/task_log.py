"""Where confirm-seconds and shrink-seconds go: one row per confirming re-run and per shrink in the
store's `tasks` table (campaign/store_tables.py) (the worker time shares in `meta` say how much, these rows say on what). A
confirm row names the buckets it re-ran for, their kind (stage/status), each lane it ran with its
role (the bucket's own lane, a sibling, a variant's plain lane, a driver twin) and seconds, and
what came of it; a shrink row the bucket, its kind, what came of it and the shrinker's own figures
(trials, steps, where its seconds went). Nothing in a campaign reads them back: they are for
`bench/bench_campaign.py` and anyone asking where the time went."""

from __future__ import annotations

import collections
import json
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import ShrinkOutcome, ShrinkState
from shapefuzz.iree.backends import BACKENDS



def kind_of(bucket: BucketRow) -> str:
    """A bucket's kind of failure, as the breakdowns group it: compile/timeout, run/crash..."""
    return f"{bucket.stage.value}/{bucket.status.value}"


def record(store: CampaignStore, kind: str, candidate: str, family: str, buckets: Iterable[BucketRow],
           lanes: Mapping[str, tuple[str, float]], seconds: float, result: str, finished: float,
           facts: Mapping[str, Any] | None = None) -> None:
    """One finished confirm or shrink task."""
    rows = list(buckets)
    with store.transaction() as db:
        db.execute("INSERT INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (kind, candidate, family, json.dumps([b.sig for b in rows]),
                    ",".join(dict.fromkeys(kind_of(b) for b in rows)),
                    json.dumps({lane: [role, round(s, 3)] for lane, (role, s) in lanes.items()}),
                    round(seconds, 3), result, json.dumps(dict(facts or {})), round(finished, 3)))


def confirm_lanes(lanes: Iterable[str], pending: Iterable[BucketRow], probed: Iterable[str],
                  seconds: Mapping[str, tuple[Any, float]]) -> dict[str, tuple[str, float]]:
    """Each lane a confirm ran, with its role and its seconds in the re-run: "own" (a pending
    bucket's lane), "base" (a variant's plain lane, probed), "twin" (a Vulkan lane's twin on the
    same driver), else "sibling" (a known bucket's lane with the same message, to tie causes)."""
    own = {b.backend for b in pending}
    twins = {BACKENDS[lane].driver_twin for lane in own if lane in BACKENDS}
    base = set(probed)
    return {lane: ("own" if lane in own else "base" if lane in base else "twin" if lane in twins else "sibling",
                   float(seconds.get(lane, (None, 0.0))[1])) for lane in lanes}


def confirm_result(buckets: Mapping[str, BucketRow], pending: Iterable[BucketRow]) -> str:
    """What a confirm made of its buckets: their states after it (pending: re-run again)."""
    states = [buckets[b.sig].state.value if b.sig in buckets else "gone" for b in pending]
    return ",".join(sorted(set(states))) or "nothing pending"


def shrink_result(state: ShrinkState, bucket: BucketRow, outcome: ShrinkOutcome | None) -> str:
    """What came of a shrink: smaller (its entry now holds a smaller file), not smaller, or failed."""
    if state != ShrinkState.DONE:
        return state.value
    return "smaller" if outcome is not None and outcome.text is not None and bucket.shrunk_size else "not smaller"


@dataclass(frozen=True)
class TaskRow:
    kind: str
    candidate: str
    family: str
    buckets: list[str]
    what: str
    lanes: dict[str, list]
    seconds: float
    result: str
    facts: dict[str, Any] = field(default_factory=dict)
    finished: float = 0.0


def task_rows(store: CampaignStore) -> list[TaskRow]:
    """Every task row in the order they finished; none for a store from before the table."""
    rows = store.db.execute("SELECT kind, candidate, family, buckets, what, lanes, seconds, result, facts, finished "
                            "FROM tasks ORDER BY finished, rowid").fetchall()
    return [TaskRow(k, c, f, json.loads(b), w, json.loads(l), s, r, json.loads(x), t)
            for k, c, f, b, w, l, s, r, x, t in rows]


def breakdown(rows: Iterable[TaskRow]) -> dict[str, dict[str, dict[str, float]]]:
    """Seconds and tasks per kind of task, per kind of failure ("what") and, for confirms, per lane
    role; for shrinks also per result."""
    out: dict[str, dict[str, dict[str, float]]] = collections.defaultdict(lambda: collections.defaultdict(
        lambda: collections.defaultdict(float)))
    for row in rows:
        what = row.what or "?"
        out[row.kind]["by what"][what] += row.seconds
        out[row.kind]["tasks by what"][what] += 1
        out[row.kind]["by result"][row.result] += row.seconds
        for role, seconds in (tuple(v) for v in row.lanes.values()):
            out[row.kind]["by lane role"][role] += seconds
        for part, seconds in row.facts.get("seconds", {}).items():
            out[row.kind]["by part"][part] += seconds
    return {k: {g: dict(v) for g, v in groups.items()} for k, groups in out.items()}


__all__ = ["confirm_lanes", "confirm_result", "shrink_result", "TaskRow", "breakdown", "kind_of", "record", "task_rows"]
