"""What keeps a long campaign's head fast (bench/bench_soak.py measures it): the steering's keep
chance read from tables per trigger gives what the loop over every saturated bucket gives, and stays
right as buckets saturate, re-hit and turn flaky; a trigger's family gates it instead of counting as
one of its features, so hundreds of saturated buckets leave a candidate that carries none of their
features alone; the lane-cost book's fast path learns what the full one did; a cause met on many
lanes writes a bounded number of corpus entries."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.bucket_book import MAX_ENTRIES_PER_CAUSE
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.campaign.lanecost import SLOW_SECONDS, LaneCost
from shapefuzz.campaign.steering import Steering, SteeringKnobs, match
from shapefuzz.model import Signature, Stage, Status

from support.engine_fakes import InertTargetParts  # noqa: E402


def _keep_by_every_bucket(s: Steering, group: str, features: tuple[str, ...], mean: float) -> float:
    """The keep chance as a loop over every saturated bucket (what the tables stand for)."""
    keep = 1.0
    for bucket, trigger in s.trigger.items():
        if trigger and s.saturated(bucket):
            keep *= 1.0 - s.weight(bucket, mean) * match(trigger, group, features) ** 3
    return max(s.knobs.explore, keep)


def test_a_triggers_family_is_a_gate_not_a_feature():
    trigger = frozenset({"group:conv", "groups:2", "pad:asym"})
    assert match(trigger, "topk", ("groups:2", "pad:asym")) == 0.0  # another family's bucket
    assert match(trigger, "conv", ("stride:2",)) == 0.0  # the family alone is no part of the trigger
    assert match(trigger, "conv", ("groups:2", "stride:2")) == 0.5
    assert match(frozenset({"group:conv"}), "conv", ()) == 1.0  # the whole family re-hits it
    assert match(frozenset({"pad:asym"}), "pool", ("pad:asym",)) == 1.0  # buckets of several families


def test_hundreds_of_saturated_buckets_leave_a_candidate_carrying_none_of_their_features_alone():
    s = Steering(("g",), SteeringKnobs(saturate_after=1, explore=0.05))
    for i in range(300):
        s.add("g", (f"t{i}", f"u{i}"), 1.0)
        for _ in range(3):
            s.hit(f"b{i}", "g", (f"t{i}", f"u{i}"), 1.0)
    assert s.keep_chance("g", ("fresh",)) == 1.0
    assert s.keep_chance("g", ("t7", "u7")) < 0.5 and s.keep_chance("g", ("t7",)) > s.keep_chance("g", ("t7", "u7"))


def test_keep_chance_from_the_tables_equals_the_loop_over_every_bucket():
    rng = random.Random(3)
    s = Steering(("g", "h"), SteeringKnobs(saturate_after=2, explore=0.01))
    features = [f"f{i}" for i in range(12)]
    for step in range(600):
        group = rng.choice(("g", "h"))
        carried = tuple(rng.sample(features, 4))
        s.add(group, carried, rng.uniform(0.5, 2.0))
        if rng.random() < 0.4:
            s.hit(f"b{rng.randrange(40)}", group, carried, rng.uniform(0.1, 30.0))
        if rng.random() < 0.02:
            s.ignored.add(f"b{rng.randrange(40)}")  # turned flaky: nothing to steer away from
        if step % 20 == 0:
            probe = tuple(rng.sample(features, 3))
            got = s.keep_chance(group, probe)
            assert got == pytest.approx(_keep_by_every_bucket(s, group, probe, s._mean_at), rel=1e-9)
            # the tables' mean cost is never more than 1% off the current one
            assert s._mean_at == pytest.approx(s._mean_seconds(), rel=0.0101)
    assert any(s.saturated(b) for b in s.trigger) and s.ignored


def _record_asking_every_time(book: LaneCost, group, features, lanes) -> list[str]:
    """LaneCost.record as it was: whether a kind was slow asked before and after every check."""
    became = []
    for lane, (status, seconds) in lanes.items():
        for kind in ("", *features):
            key = (group, kind, book.kin.get(lane, lane))
            was = book._slow(key)
            book.checks[key] += 1
            book.seconds[key] += float(seconds)
            if float(seconds) >= SLOW_SECONDS:
                book.slow_checks[key] += 1
            if not was and book._slow(key):
                became.append(f"{key[2]} ({kind or 'every candidate'})")
    return became


def _checks(seed: int):
    rng = random.Random(seed)
    for _ in range(400):
        features = tuple(rng.sample(("big", "small", "dyn", "odd"), 2))
        lanes = {lane: (Status.OK, rng.choice((1.0, 2.0, SLOW_SECONDS + 5)))
                 for lane in rng.sample(("cpu", "cpu-v", "vk"), 2)}
        yield rng.choice("gh"), features, lanes


def test_the_lane_cost_fast_path_learns_what_the_full_one_did():
    fast, full = LaneCost({"cpu-v": "cpu"}), LaneCost({"cpu-v": "cpu"})
    said_fast = [line for check in _checks(5) for line in fast.record(*check)]
    said_full = [line for check in _checks(5) for line in _record_asking_every_time(full, *check)]
    assert said_fast == said_full and said_fast
    assert (fast.checks, fast.slow_checks, fast.seconds) == (full.checks, full.slow_checks, full.seconds)


# --- the corpus: a bounded number of example entries per cause ----------------------------------------
@dataclass(frozen=True)
class EveryLane(InertTargetParts):
    """Every third candidate fails on every lane with one message: one cause, a bucket per lane."""

    corpus: str

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % 10_000
        return Candidate(hashlib.sha256(f"{n}".encode()).hexdigest()[:16], group, seed, (), json.dumps({"n": n}), "x")

    def check(self, candidate: Candidate, lanes) -> Outcome:
        fails = json.loads(candidate.payload)["n"] % 3 == 0
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, "same bug")) for lane in lanes if fails)
        return Outcome(Verdict.FAIL if fails else Verdict.PASS,
                       {lane: (Status.ERROR if fails else Status.OK, 0.001) for lane in lanes}, failures, 0.0)

    confirm = check

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        path = Path(self.corpus) / hashlib.sha256(failure.key.encode()).hexdigest()[:12]
        path.parent.mkdir(exist_ok=True)
        path.write_text(failure.key)
        return str(path)


def test_a_cause_on_many_lanes_writes_a_bounded_number_of_corpus_entries(tmp_path):
    lanes = tuple(f"lane{i}" for i in range(7))
    engine = Engine(EveryLane(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), lanes, 1, 1, Limits(count=30), start_method="fork"))
    engine.run()
    buckets = engine.store.buckets()
    assert len(buckets) == 7 and len({b.cause for b in buckets}) == 1 and all(b.state == "confirmed" for b in buckets)
    entries = sorted((tmp_path / "corpus").iterdir())
    assert len(entries) == MAX_ENTRIES_PER_CAUSE < len(buckets)  # re-hits and the later lanes add none
    assert {b.corpus_entry for b in buckets} == {str(e) for e in entries}  # the others point at the first
    first = min(buckets, key=lambda b: (b.first_seen, b.sig))
    assert sum(b.corpus_entry == first.corpus_entry for b in buckets) == 1 + len(buckets) - MAX_ENTRIES_PER_CAUSE
    cause = summarize(engine.store).causes[0]
    assert len(cause.corpus_entries) == MAX_ENTRIES_PER_CAUSE and cause.count > len(buckets)
    engine.store.close()
    again = Engine(EveryLane(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                   EngineConfig(("g",), lanes, 1, 1, Limits(count=45), start_method="fork"))
    again.run()  # resumed: nothing is saved again
    assert len(list((tmp_path / "corpus").iterdir())) == MAX_ENTRIES_PER_CAUSE
    again.store.close()
