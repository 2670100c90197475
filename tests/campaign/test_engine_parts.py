"""The engine's parts on their own, built from their explicit inputs (no engine): the lane plan,
coverage steering over its small `CoverageHost` protocol, and the checked configuration that is
the campaign's one source after parsing."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from shapefuzz.campaign.coverage_map import CoverageKnobs
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.run import FuzzRequest, build_config, run_campaign
from shapefuzz.campaign.steering import Steering
from shapefuzz.errors import UsageError

from support.coverage_target import CoveredTarget  # noqa: F401


class Host:
    """What coverage steering may call back, and nothing else."""

    def __init__(self, known: set[str] = frozenset()) -> None:
        self.lines: list[str] = []
        self.keys = set(known)

    def say(self, text: str) -> None:
        self.lines.append(text)

    def revive(self, row):
        return None

    def known(self, key: str) -> bool:
        return key in self.keys


class Unsupported(CoveredTarget):
    def coverage_support(self) -> str:
        return "no action log here"


def _steering(target, host: Host, plan: LanePlan | None = None) -> CoverageSteering:
    plan = plan or LanePlan(("ref", "wide", "other"), "ref", 2)
    return CoverageSteering(CoverageKnobs(share=1.0, neighbours=0.99), target, 3, ("g",), plan, Steering(("g",)), host)


def test_the_lane_plan_rotates_sets_aside_and_sends_large_rounds_to_compile_only_lanes():
    plan = LanePlan(("ref", "a", "b", "gpu"), "ref", 2, compile_only=("gpu",), large_every=4)
    assert [plan.lanes_for(i) for i in range(3)] == [("ref", "a"), ("ref", "b"), ("ref", "gpu")]
    assert plan.large_round(3) and plan.lanes_for(3) == ("gpu",) and plan.kind(3) == ("gpu",)
    plan.set_aside("gpu")
    assert plan.now == ("ref", "a", "b") and not plan.large_round(3)  # no compile-only lane left
    assert plan.lanes_for(1) == ("ref", "b")


def test_coverage_steering_speaks_to_its_host_only(tmp_path):
    host = Host()
    off = _steering(Unsupported(str(tmp_path)), host)
    assert not off.on and host.lines == ["coverage feedback off: no action log here"]

    target = CoveredTarget(str(tmp_path))
    parent = target.generate("g", 10)
    near = {target._make("g", 0, 10 + d).key for d in (1, 2, 3)}  # every neighbour of n=10
    known = _steering(target, Host(near))
    known.book.add_frontier(parent, 5, ("wide",))
    assert all(known.neighbour(i) is None for i in range(20))  # the host knew them all: duplicates

    fresh = _steering(target, Host())
    fresh.book.add_frontier(parent, 5, ("wide",))
    drawn = next(c for c in map(fresh.neighbour, range(20)) if c is not None)
    assert drawn.key in near and fresh.neighbours_drawn == 1
    _, lanes = fresh.plan(drawn, ("ref", "other"))
    assert lanes == ("ref", "wide")  # checked where its parent reached something new
    assert json.loads(drawn.payload)["n"] in (11, 12, 13)


def test_the_checked_config_carries_what_the_campaign_reads_after_parsing(tmp_path):
    config = build_config(FuzzRequest(campaign=str(tmp_path / "c"), localize_time="90s", bisect_time=0.0,
                                      compile_timeout=5.0, coverage_steer=True, argv=("fuzz", "--steer"),
                                      fetch_releases=0, cluster="auto", iree_version="3.12.0"), None)
    assert (config.localize_seconds, config.bisect_seconds, config.compile_timeout) == (90.0, 0.0, 5.0)
    assert config.coverage_steer and config.argv == ("fuzz", "--steer") and config.fetch.releases == 0
    assert (config.cluster, config.iree_version, config.jobs_given) == ("auto", "3.12.0", False)


def test_a_bad_localize_time_is_refused_before_the_campaign_folder_is_touched(tmp_path):
    with pytest.raises(UsageError, match="--localize-time"):
        run_campaign(FuzzRequest(campaign=str(tmp_path / "c"), localize_time="soon"), toolchain=None)
    assert not (tmp_path / "c").exists()
