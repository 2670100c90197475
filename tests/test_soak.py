"""What keeps a long campaign's head fast (bench/bench_soak.py measures it): the steering's keep
chance read from tables per trigger gives what the sum over every saturated bucket gave, and stays
right as buckets saturate, re-hit and turn flaky; the lane-cost book's fast path learns the same."""

from __future__ import annotations

import random

import pytest

from shapefuzz.campaign.lanecost import SLOW_SECONDS, LaneCost
from shapefuzz.campaign.steering import Steering, SteeringKnobs
from shapefuzz.model import Status


def _keep_by_every_bucket(s: Steering, group: str, features: tuple[str, ...], mean: float) -> float:
    """The keep chance as a loop over every saturated bucket (what the tables stand for)."""
    carried = frozenset((f"group:{group}", *features))
    keep = 1.0
    for bucket, trigger in s.trigger.items():
        if trigger and s.saturated(bucket):
            keep *= 1.0 - s.weight(bucket, mean) * (len(trigger & carried) / len(trigger)) ** 3
    return max(s.knobs.explore, keep)


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
