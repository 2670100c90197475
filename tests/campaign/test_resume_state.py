"""A resume's replay kept in the store (campaign/resume_state.py, issue 35: "a resume in under 5 s"):
the snapshot plus the rows after it give exactly the steering, lane costs, sightings and buckets a
replay of every row gives; a stale, corrupt or foreign snapshot is ignored (every row replayed, never
a traceback, nothing lost); a checkpoint passes no candidate still in flight."""

from __future__ import annotations

import collections
import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.discovery import Sightings
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.lanecost import SLOW_SECONDS, LaneCost, lane_seconds
from shapefuzz.campaign.outcomes import BucketState, TaskKind, Verdict
from shapefuzz.campaign.resume_state import SNAPSHOT_KEY, Folded
from shapefuzz.campaign.steering import Steering, SteeringKnobs
from shapefuzz.model import Signature, Stage, Status

from support.engine_fakes import InertTargetParts  # noqa: E402

GROUPS, LANES = ("g", "h"), ("a", "b", "c")


@dataclass(frozen=True)
class Mixed(InertTargetParts):
    """Candidates with features, uneven seconds (some past SLOW_SECONDS on lane c), and failures of
    a few causes on some lanes; cause 3 does not come back on its re-run (a flaky bucket)."""

    corpus: str

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % 100_000
        rng = random.Random(n)
        features = tuple(sorted({f"f{rng.randrange(6)}" for _ in range(3)}))
        return Candidate(hashlib.sha256(f"{group}{n}".encode()).hexdigest()[:16], group, seed, features,
                         json.dumps({"n": n}), "x" * (1 + n % 30))

    def _outcome(self, candidate: Candidate, lanes, again: bool) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        cause = n % 5 if n % 3 == 0 else None
        if again and cause == 3:
            cause = None
        # cause 3 a crash: a compile error is never re-run on its own lane (bucket_book.settled_by_check)
        status = Status.CRASH if n % 5 == 3 else Status.ERROR
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, status, f"bug {cause}"))
                         for lane in lanes if cause is not None and (lane == "a" or cause % 2))
        failing = {f.lane for f in failures}
        seconds = {lane: (SLOW_SECONDS + 1.0 if lane == "c" and n % 2 else 0.1 + (n % 7) / 3) for lane in lanes}
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (status if lane in failing else Status.OK, seconds[lane]) for lane in lanes},
                       failures, 0.01)

    def check(self, candidate, lanes) -> Outcome:
        return self._outcome(candidate, lanes, False)

    def confirm(self, candidate, lanes) -> Outcome:
        return self._outcome(candidate, lanes, True)


def _engine(tmp_path: Path, count: int) -> Engine:
    return Engine(Mixed(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                  EngineConfig(GROUPS, LANES, 3, 2, Limits(count=count), start_method="fork", reference="a",
                               lanes_per_candidate=2, knobs=SteeringKnobs(saturate_after=2)))


def _replay_every_row(store: CampaignStore) -> tuple[Steering, LaneCost]:
    """The resume as it was before the snapshot: every row read in full, in index order."""
    steering, lane_cost = Steering(GROUPS, SteeringKnobs(saturate_after=2)), LaneCost()
    for b in sorted(store.buckets(), key=lambda b: (b.first_seen, b.sig)):
        if b.state == BucketState.FLAKY:
            steering.ignored.add(b.sig)
    rows = {row.key: row for row in store.candidates()}
    for row in rows.values():
        if row.family in GROUPS:
            steering.add(row.family, row.features, row.task_seconds)
            lane_cost.record(row.family, row.features, lane_seconds(row.outcome))
    by_candidate = collections.defaultdict(list)
    for key, sig, _ in store.hits():
        by_candidate[key].append(sig)
    for key in sorted(by_candidate, key=lambda k: rows[k].idx if k in rows else -1):
        row = rows[key]
        for sig in by_candidate[key]:
            steering.hit(sig, row.family, row.features, row.task_seconds / len(by_candidate[key]))
    return steering, lane_cost


def _state(steering: Steering, lane_cost: LaneCost) -> tuple:
    s = steering
    return (s.per_group, s.group_seconds, s.checked, s.seconds, s.features, s.trigger, s.hits, s.rehits,
            s.rehit_seconds, set(s.ignored), lane_cost.checks, lane_cost.slow_checks, lane_cost.seconds)


def _assert_resumes_as_the_full_replay(tmp_path: Path, count: int) -> Engine:
    engine = _engine(tmp_path, count)
    store = engine.store
    want = _state(*_replay_every_row(store))
    assert _state(engine.steering, engine.lane_cost) == want  # floats too: the same sums in the same order
    rows = list(store.candidates())
    assert engine.tried == {r.key for r in rows}
    sightings = Sightings(rows, ((k, sig) for k, sig, _ in store.hits()))
    assert (engine.sightings.sample, engine.sightings.seen_by) == (sightings.sample, sightings.seen_by)
    assert engine.buckets == {b.sig: b for b in store.buckets()}
    return engine


@pytest.fixture(scope="module")
def campaign(tmp_path_factory) -> Path:
    """Two sessions (2 jobs: rows finish out of index order) with slow lanes, hits, re-hits and a flaky bucket."""
    tmp = tmp_path_factory.mktemp("resume")
    for count in (40, 70):
        engine = _engine(tmp, count)
        engine.run()
        engine.store.close()
    store = CampaignStore(tmp / "camp")
    buckets = store.buckets()
    assert any(b.state == BucketState.FLAKY for b in buckets) and any(b.rehits for b in buckets)
    assert store.candidate_count() == 70 and any(LaneCost.slow_kinds(_replay_every_row(store)[1]))
    store.close()
    return tmp


def _copy(campaign: Path, tmp_path: Path) -> Path:
    import shutil

    shutil.copytree(campaign / "camp", tmp_path / "camp")
    (tmp_path / "corpus").mkdir()
    return tmp_path


def _snapshot(tmp_path: Path) -> dict | None:
    store = CampaignStore(tmp_path / "camp")
    try:
        text = store.get_meta(SNAPSHOT_KEY)
        return None if text is None else json.loads(text)
    finally:
        store.close()


def test_a_resume_from_the_snapshot_gives_what_a_replay_of_every_row_gives(campaign, tmp_path):
    tmp = _copy(campaign, tmp_path)
    assert _snapshot(tmp)["upto"] == 70 and _snapshot(tmp)["rows"] == 70  # the last session's end stored it
    _assert_resumes_as_the_full_replay(tmp, 70).store.close()
    # a snapshot from a checkpoint in the middle: the rows after it are replayed onto it
    store = CampaignStore(tmp / "camp")
    store.db.execute("DELETE FROM meta WHERE key=?", (SNAPSHOT_KEY,))
    Folded(store, GROUPS, {}).advance(23)
    store.close()
    assert _snapshot(tmp)["upto"] == 23
    _assert_resumes_as_the_full_replay(tmp, 70).store.close()
    assert _snapshot(tmp)["upto"] == 70  # and the resume stored the replay up to its end
    engine = _assert_resumes_as_the_full_replay(tmp, 90)
    engine.run()  # the campaign goes on from the resumed state
    engine.store.close()
    assert _snapshot(tmp)["upto"] == 90
    _assert_resumes_as_the_full_replay(tmp, 90).store.close()


def _tamper(d: dict, how: str) -> str:
    if how == "not json":
        return "{"
    if how == "a name that is a number":
        d["features"][0][1] = 7
    elif how == "negative seconds":
        d["per_group"][0][2] = -1.0
    elif how == "a row short":
        d["rows"] -= 1
    elif how == "past the store":
        d["upto"], d["rows"] = d["upto"] + 5, d["rows"] + 5
    elif how == "other groups":
        d["groups"] = ["g"]
    elif how == "another version":
        d["version"] = 99
    elif how == "a field missing":
        del d["lanes"]
    elif how == "not an object":
        return "[1, 2]"
    return json.dumps(d)


@pytest.mark.parametrize("how", ["not json", "a name that is a number", "negative seconds", "a row short",
                                 "past the store", "other groups", "another version", "a field missing",
                                 "not an object"])
def test_a_stale_or_corrupt_snapshot_is_ignored_and_every_row_replayed(campaign, tmp_path, how):
    tmp = _copy(campaign, tmp_path)
    store = CampaignStore(tmp / "camp")
    store.set_meta(SNAPSHOT_KEY, _tamper(json.loads(store.get_meta(SNAPSHOT_KEY)), how))
    store.close()
    _assert_resumes_as_the_full_replay(tmp, 70).store.close()
    assert _snapshot(tmp)["upto"] == 70 and _snapshot(tmp)["rows"] == 70  # stored afresh
    store = CampaignStore(tmp / "camp")
    assert Folded(store, GROUPS, {}).resume() and store.candidate_count() == 70  # it fits now; nothing lost
    store.close()


def test_a_checkpoint_passes_no_candidate_still_in_flight_or_waiting_for_its_retry(campaign, tmp_path):
    tmp = _copy(campaign, tmp_path)
    engine = _engine(tmp, 90)
    assert engine._settled() == 70  # the store's next index
    candidate = engine.drawing.next_candidate(engine.coverage)
    late = engine.inflight.make(TaskKind.CHECK, candidate, ("a",))
    engine.inflight.tasks["check:late"] = late
    assert candidate.index == 70 and engine._settled() == 70
    engine.inflight.tasks["check:old"] = engine.inflight.make(TaskKind.CHECK, Candidate("k", "g", 1, (), "{}", "x", 12),
                                                               ("a",))
    engine.retries.queue.append((0.0, engine.inflight.make(TaskKind.CHECK, Candidate("r", "g", 1, (), "{}", "x", 9),
                                                           ("a",))))
    assert engine._settled() == 9
    engine.inflight.tasks["confirm:x"] = engine.inflight.make(TaskKind.CONFIRM, Candidate("c", "g", 1, (), "{}", "x", 2),
                                                               ("a",))
    assert engine._settled() == 9  # a confirming re-run writes no candidate row
    engine.store.close()
