"""Lanes slow for a kind of candidate are given such candidates less often (campaign/lanecost.py):
the rule on its own, then in a campaign of a fake target whose lane "slow" takes 25 s (reported, not
slept) for every "heavy" candidate and for "light" ones with feature mod3:0, with and without
coverage steering, and across a resume."""

from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.coverage_map import CoverageKnobs
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Limits, Outcome
from shapefuzz.campaign.lanecost import KEEP, SLOW_SECONDS, LaneCost, lane_seconds, substitute
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict

from support.engine_fakes import InertTargetParts  # noqa: E402

LANES = ("ref", "fast", "slow", "other")


def test_a_kind_is_slow_while_at_least_half_of_its_checks_are():
    cost = LaneCost()
    assert cost.record("g", (), {"a": ("ok", 1.0)}) == []
    assert cost.record("g", (), {"a": ("ok", SLOW_SECONDS + 5), "b": ("ok", 1.0)}) == ["a (every candidate)"]
    assert cost.slow("g", (), "a") and not cost.slow("g", (), "b") and not cost.slow("other", (), "a")
    cost.record("g", (), {"a": ("ok", 1.0)})
    assert not cost.slow("g", (), "a")  # 1 slow of 3: no longer mostly slow
    cost.record("g", (), {"c": ("unsupported", 99.0), "d": ("skipped", 99.0)})
    assert cost.checks[("g", "", "c")] == 0 and not cost.slow("g", (), "d")  # nothing compiled there


def test_variants_of_one_target_learn_slowness_together():
    cost = LaneCost({"rocm-no-igemm": "rocm", "rocm-single": "rocm"})
    assert cost.record("attn", ("seq:dynamic",), {"rocm-no-igemm": ("ok", 60.0)}) == [
        "rocm (every candidate)", "rocm (seq:dynamic)"]
    assert cost.slow("attn", ("seq:dynamic",), "rocm") and cost.slow("attn", ("seq:dynamic",), "rocm-single")
    assert not cost.slow("attn", ("seq:dynamic",), "cuda")
    assert [(g, kind, lane) for g, kind, lane, _, _ in cost.slow_kinds()] == [("attn", "", "rocm")]


def test_a_feature_slow_on_a_lane_bars_only_candidates_that_carry_it():
    cost = LaneCost()
    for _ in range(4):
        cost.record("attn", ("seq:static",), {"rocm": ("ok", 1.0)})
    became = [cost.record("attn", ("seq:dynamic",), {"rocm": ("ok", 60.0)}) for _ in range(2)]
    assert became == [["rocm (seq:dynamic)"], []]  # the family as a whole is not slow there: 2 of 6
    assert cost.slow("attn", ("seq:dynamic",), "rocm") and not cost.slow("attn", ("seq:static",), "rocm")
    assert [(g, kind, lane) for g, kind, lane, _, _ in cost.slow_kinds()] == [("attn", "seq:dynamic", "rocm")]


def test_a_slow_kind_keeps_about_keep_of_its_slots():
    cost = LaneCost()
    cost.record("g", (), {"a": ("ok", 60.0)})
    rng = random.Random(5)
    kept = sum("a" not in cost.barred("g", (), ("a", "b"), rng) for _ in range(2000))
    assert abs(kept / 2000 - KEEP) < 0.04
    assert cost.barred("h", (), ("a", "b"), rng) == set()


def test_substitute_gives_a_barred_slot_to_the_next_free_lane_never_the_reference():
    assert substitute(("ref", "slow"), LANES, {"slow"}, "ref") == ("ref", "other")
    assert substitute(("ref", "other"), LANES, {"other"}, "ref") == ("ref", "fast")  # wraps, skips ref
    assert substitute(("ref", "fast"), LANES, {"ref"}, "ref") == ("ref", "fast")
    assert substitute(("fast", "slow"), ("fast", "slow"), {"slow"}, None) == ("fast",)  # nothing else free
    assert substitute(("slow",), ("slow",), {"slow"}, None) == ("slow",)  # never left with no lane


def test_stored_outcomes_with_and_without_seconds_read_back():
    assert lane_seconds({"a": ["ok", 2.5], "b": "error"}) == {"a": ("ok", 2.5), "b": ("error", 0.0)}


@dataclass(frozen=True)
class SlowLaneTarget(InertTargetParts):
    corpus: str

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        n = seed % 100_000
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"mod3:{n % 3}",), json.dumps({"n": n}), "x" * (10 + n % 40))

    def check(self, candidate: Candidate, lanes) -> Outcome:
        slow = candidate.group == "heavy" or (candidate.group == "light" and "mod3:0" in candidate.features)
        return Outcome(Verdict.PASS, {lane: ("ok", 25.0 if slow and lane == "slow" else 0.5) for lane in lanes})

    confirm = check


def _engine(folder: Path, count: int, share: float) -> Engine:
    return Engine(SlowLaneTarget(str(folder / "corpus")), CampaignStore(folder / "camp"),
                  EngineConfig(("heavy", "light"), LANES, 7, 1, Limits(count=count), start_method="fork",
                               reference="ref", lanes_per_candidate=2, coverage=CoverageKnobs(share=share),
                               confirm=False))


def _slow_share(rows, group: str) -> float:
    mine = [r for r in rows if r.family == group]
    return sum("slow" in r.backends for r in mine) / len(mine)


@pytest.mark.parametrize("share", [0.0, 0.5], ids=["rotation", "coverage-steered"])
def test_a_slow_lane_gets_slow_kinds_less_and_the_others_as_before(tmp_path, share):
    engine = _engine(tmp_path, 300, share)
    engine.run()
    rows = sorted(engine.store.candidates(), key=lambda r: r.idx)
    assert all(r.backends[0] == "ref" and len(r.backends) == 2 for r in rows)
    # a third of the others' slots is slow's when it is not slow; a fifth of that when it is
    fast_light = [r for r in rows if r.family == "light" and "mod3:0" not in r.features]
    slow_light = [r for r in rows if r.family == "light" and "mod3:0" in r.features]
    assert _slow_share(fast_light, "light") > 0.2
    assert _slow_share(slow_light, "light") < 0.15
    assert _slow_share(rows, "heavy") < 0.15
    assert any("slow" in r.backends for r in rows if r.family == "heavy")  # still checked now and then
    assert any("heavy is slow on slow (every candidate)" in m for m in engine.stats.messages)
    summary = summarize(engine.store)
    assert [(r["family"], r["feature"], r["lane"]) for r in summary.slow_lanes] == [
        ("heavy", "", "slow"), ("light", "mod3:0", "slow")]
    assert summary.slow_lanes[0]["mean_seconds"] == 25.0


def test_slowness_survives_resume(tmp_path):
    _engine(tmp_path, 60, 0.0).run()
    engine = _engine(tmp_path, 200, 0.0)
    assert engine.lane_cost.slow("heavy", (), "slow") and not engine.lane_cost.slow("light", ("mod3:1",), "slow")
    engine.run()
    later = [r for r in engine.store.candidates() if r.idx >= 60]
    assert _slow_share(later, "heavy") < 0.15


def test_a_reference_lane_slow_for_a_family_keeps_every_slot(tmp_path):
    engine = _engine(tmp_path, 1, 0.0)
    for _ in range(2):
        engine.lane_cost.record("heavy", (), {"ref": ("ok", 60.0), "slow": ("ok", 60.0)})
    for index in range(40):
        candidate = engine.target.generate("heavy", index)
        lanes, barred = engine.drawing.lanes_swapped(Candidate(candidate.key, "heavy", index, (), "{}", "", index))
        assert lanes[0] == "ref" and "ref" not in barred
