"""What keeps a long campaign's head fast (bench/bench_soak.py measures it): the steering's keep
chance read from tables per trigger gives what the loop over every saturated bucket gives, and stays
right as buckets saturate, re-hit and turn flaky; a trigger's family gates it instead of counting as
one of its features, so hundreds of saturated buckets leave a candidate that carries none of their
features alone; the lane-cost book's fast path learns what the full one did."""

from __future__ import annotations

import random

import pytest

from shapefuzz.campaign.lanecost import SLOW_SECONDS, LaneCost
from shapefuzz.campaign.steering import Steering, SteeringKnobs, match
from shapefuzz.model import Status


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
