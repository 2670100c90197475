"""The part of a resume that grows with every candidate, kept in the store so a resume need not
replay it all (no IREE).

A resume replays every candidate row, in index order, into the steering's counts (groups, their
seconds, features and feature pairs) and the lane costs (engine.py). A 100,000-candidate
campaign's replay took most of its resume (bench/bench_soak.py). `Folded` holds that replay over
the rows below an index, `upto`, and writes it into the store's meta (`resume_snapshot`, one
transaction) at checkpoints. A resume loads it and replays only the rows from `upto` on: the same
additions in the same order, so the same counts and the same float sums as a replay of every row.

`upto` only passes rows that are settled: below every candidate still in flight or waiting for a
retry, and below the store's next index (a later session draws from there). A snapshot that does
not fit the store (another index count below `upto`, other groups or lane kin, another version) or
does not read back is ignored, and every row is replayed: never a traceback, nothing lost."""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, NamedTuple

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.lanecost import LaneCost, lane_seconds
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.campaign.rows import RowReader
from shapefuzz.campaign.steering import Steering
from shapefuzz.schema import SchemaError, load_json

SNAPSHOT_KEY = "resume_snapshot"
VERSION = 1


class TriedRow(NamedTuple):  # what a resume reads of every candidate
    key: str
    idx: int
    verdict: Verdict
    finished: float


class ReplayRow(NamedTuple):  # what a resume replays into the steering and the lane costs
    key: str
    idx: int
    family: str
    features: tuple[str, ...]
    outcome: dict[str, list]
    task_seconds: float


def tried_rows(store: CampaignStore) -> Iterator[TriedRow]:
    """Every candidate's key, index, verdict and finishing time (what a resume counts), checked
    as `CampaignStore.candidates` checks them."""
    for k, idx, verdict, finished in store.db.execute("SELECT key, idx, verdict, finished FROM candidates"):
        c = RowReader(store.path, "candidates", k)
        yield TriedRow(c.text("key", k, max_len=200), c.integer("idx", idx), c.choice("verdict", verdict, Verdict),
                       c.seconds("finished", finished))


def replay_rows(store: CampaignStore, start: int = 0, end: int | None = None, *, hit: bool = False
                ) -> Iterator[ReplayRow]:
    """What a resume replays of each candidate with `start` <= idx < `end` (`hit`: of those that
    hit a bucket), in index order, checked as `CampaignStore.candidates` checks it."""
    sql = "SELECT key, idx, family, features, outcome, task_seconds FROM candidates WHERE idx >= ?"
    sql += (" AND idx < ?" if end is not None else "") + (" AND key IN (SELECT candidate FROM hits)" if hit else "")
    for r in store.db.execute(sql + " ORDER BY idx", (start,) if end is None else (start, end)):
        c = RowReader(store.path, "candidates", r[0])
        yield ReplayRow(c.text("key", r[0], max_len=200), c.integer("idx", r[1]), c.text("family", r[2]),
                        c.text_list("features", r[3]), c.outcome("outcome", r[4]), c.seconds("task_seconds", r[5]))


def fold(steering: Steering, lane_cost: LaneCost, rows: Iterable[ReplayRow], groups: tuple[str, ...]) -> int:
    """The replay's step: each row of `groups` into the steering's counts and the lane costs.
    Returns the rows read."""
    n = 0
    for row in rows:
        n += 1
        if row.family in groups:
            steering.add(row.family, row.features, row.task_seconds)
            lane_cost.record(row.family, row.features, lane_seconds(row.outcome))
    return n


class Folded:
    """The replay of the store's rows below `upto` (`rows` of them), in a steering and lane costs
    of its own (the engine's go on learning from the live results, in another order)."""

    def __init__(self, store: CampaignStore, groups: tuple[str, ...], kin: Mapping[str, str]) -> None:
        self.store, self.groups, self.kin = store, tuple(groups), dict(kin)
        self.steering, self.lane_cost = Steering(self.groups), LaneCost(self.kin)
        self.upto = self.rows = 0
        self.note = ""  # why a stored snapshot could not be read (one line), if it could not

    def resume(self) -> bool:
        """Load the stored snapshot if it fits, then replay the rows after it and store the result.
        Returns whether the snapshot was used."""
        used = self._load()
        if not used:
            self.steering, self.lane_cost = Steering(self.groups), LaneCost(self.kin)
            self.upto = self.rows = 0
        self.advance(self.store.next_index())
        return used

    def advance(self, upto: int) -> None:
        """Replay the rows from `self.upto` to below `upto` (settled ones: see the module) and store
        the snapshot when that moved it."""
        if upto <= self.upto:
            return
        self.rows += fold(self.steering, self.lane_cost, replay_rows(self.store, self.upto, upto), self.groups)
        self.upto = upto
        self.store.set_meta(SNAPSHOT_KEY, json.dumps(self._dump(), separators=(",", ":")))

    def copy_into(self, steering: Steering, lane_cost: LaneCost) -> None:
        """The replayed counts into the engine's (fresh) steering and lane costs."""
        s = self.steering
        steering.per_group.update(s.per_group)
        steering.group_seconds.update(s.group_seconds)
        steering.features.update(s.features)
        steering.checked, steering.seconds = s.checked, s.seconds
        for mine, theirs in ((self.lane_cost.checks, lane_cost.checks), (self.lane_cost.slow_checks, lane_cost.slow_checks),
                             (self.lane_cost.seconds, lane_cost.seconds)):
            theirs.update(mine)

    # --- the stored form --------------------------------------------------------------------
    def _dump(self) -> dict[str, Any]:
        s, c = self.steering, self.lane_cost
        return {
            "version": VERSION, "groups": list(self.groups), "kin": self.kin, "upto": self.upto, "rows": self.rows,
            "checked": s.checked, "seconds": s.seconds,
            "per_group": [[g, n, s.group_seconds[g]] for g, n in s.per_group.items()],
            "features": [[g, f, n] for (g, f), n in s.features.items()],
            "lanes": [[*key, n, c.slow_checks[key], c.seconds[key]] for key, n in c.checks.items()],
        }

    def _load(self) -> bool:
        text = self.store.get_meta(SNAPSHOT_KEY)
        if text is None:
            return False
        try:  # (bounded size and depth: a snapshot nested 200,000 deep was a RecursionError, exit 70)
            d = load_json(text, "the resume snapshot")
            if not (isinstance(d, dict) and d.get("version") == VERSION and d.get("groups") == list(self.groups)
                    and d.get("kin") == self.kin):
                return False
            upto, rows = _count(d["upto"]), _count(d["rows"])
            steering, lane_cost = Steering(self.groups), LaneCost(self.kin)
            steering.checked, steering.seconds = _count(d["checked"]), _seconds(d["seconds"])
            for g, n, seconds in d["per_group"]:
                steering.per_group[_name(g)] = _count(n)
                steering.group_seconds[_name(g)] = _seconds(seconds)  # type: ignore[assignment]  # float in a Counter
            for g, f, n in d["features"]:
                steering.features[(_name(g), _name(f))] = _count(n)
            for g, kind, lane, n, slow, seconds in d["lanes"]:
                key = (_name(g), _name(kind), _name(lane))
                lane_cost.checks[key] = _count(n)
                lane_cost.seconds[key] = _seconds(seconds)  # type: ignore[assignment]  # float in a Counter (typeshed: int)
                if _count(slow):
                    lane_cost.slow_checks[key] = slow
        except SchemaError as error:  # not JSON we could read: said once, and every row is replayed
            self.note = f"{error}; ignored, every candidate row is replayed instead"
            return False
        except (ValueError, TypeError, KeyError):  # not the shape written: replay every row
            return False
        if self.store.candidate_count(below=upto) != rows:  # rows since removed or added below it: stale
            return False
        self.steering, self.lane_cost, self.upto, self.rows = steering, lane_cost, upto, rows
        return True


def _count(value: Any) -> int:
    if type(value) is not int or value < 0:
        raise ValueError(f"not a count: {value!r}")
    return value


def _seconds(value: Any) -> float:
    if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
        raise ValueError(f"not seconds: {value!r}")
    return float(value)


def _name(value: Any) -> str:
    if not isinstance(value, str):
        raise ValueError(f"not a name: {value!r}")
    return value


__all__ = ["Folded", "ReplayRow", "SNAPSHOT_KEY", "TriedRow", "fold", "replay_rows", "tried_rows"]
