"""The brief's bug-class families keep CORE_WEIGHT times another family's base share of check time
(issue 44: twelve families on twenty lanes had thinned the five the tool was built for), and
yield still moves them: a family that finds keeps gaining over a core one that does not."""

from __future__ import annotations

import random

from shapefuzz.campaign.allocation import FLOOR, Allocation, spend
from shapefuzz.families.registry import CORE_FAMILIES, CORE_WEIGHT, DEFAULT_FAMILIES

SMALL = "small"


def test_with_nothing_found_a_core_family_gets_core_weight_times_the_by_rate_part():
    groups = ("conv", "pool", "attention", "topk")
    shares = Allocation(groups, 0).time_shares([(g, SMALL) for g in groups])
    weights = sum(CORE_WEIGHT if g in CORE_FAMILIES else 1.0 for g in groups)
    for g in groups:
        own = CORE_WEIGHT if g in CORE_FAMILIES else 1.0
        assert abs(shares[(g, SMALL)] - (FLOOR / 4 + (1 - FLOOR) * own / weights)) < 1e-9
    assert shares[("conv", SMALL)] > shares[("pool", SMALL)]


def test_the_default_families_give_the_core_ones_more_than_their_head_count():
    shares = Allocation(DEFAULT_FAMILIES, 0).time_shares([(g, SMALL) for g in DEFAULT_FAMILIES])
    core = sum(v for (g, _), v in shares.items() if g in CORE_FAMILIES)
    head_count = sum(g in CORE_FAMILIES for g in DEFAULT_FAMILIES) / len(DEFAULT_FAMILIES)
    assert core > head_count + 0.1  # 6 of 13 families: about 0.59 of the time, not 0.46


def test_yield_still_decides_a_family_that_finds_overtakes_a_core_one_that_does_not():
    allocation = Allocation(("conv", "pool"), 0)
    for _ in range(40):  # pool finds a cause every 20 check-seconds, conv none in as many
        spend(allocation.draws["pool/small"], 10.0, 0.5)
        spend(allocation.draws["conv/small"], 10.0, 0.0)
    shares = allocation.time_shares([("conv", SMALL), ("pool", SMALL)])
    assert shares[("pool", SMALL)] > 2 * shares[("conv", SMALL)]
    assert shares[("conv", SMALL)] >= FLOOR / 2  # the floor still holds


def test_draws_follow_the_weights():
    groups = ("conv", "gather")
    allocation = Allocation(groups, 0)
    rng = random.Random(7)
    picks = [allocation.pick(rng, groups, i, large_now=False).group for i in range(4000)]
    ratio = picks.count("conv") / picks.count("gather")
    expected = (FLOOR / 2 + (1 - FLOOR) * CORE_WEIGHT / (CORE_WEIGHT + 1)) / (FLOOR / 2 + (1 - FLOOR) / (CORE_WEIGHT + 1))
    assert abs(ratio - expected) < 0.15 * expected
