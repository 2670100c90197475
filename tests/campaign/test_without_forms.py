"""`shapefuzz fuzz --without GROUP`: a campaign that leaves a group of forms out of its draw (issue #45's
bench compares a default campaign with one that withholds what #45 added). A withheld gate is closed
the way an old release closes it: the same computation in a form still drawn, or nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.campaign.config import CampaignConfig
from shapefuzz.campaign.run import FuzzRequest, build_config
from shapefuzz.campaign.withheld import REACH_LANES, parse_without, withheld_lanes, withhold
from shapefuzz.errors import UsageError
from shapefuzz.families import get_family
from shapefuzz.families.frontends import STABLEHLO
from shapefuzz.families.gates import Closed, Gated
from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS


def test_groups_parse_and_a_bad_group_is_refused():
    assert parse_without("quantized, stablehlo,stablehlo") == ("quantized", "stablehlo")
    assert parse_without(None) == parse_without("") == ()
    with pytest.raises(UsageError, match="choose from stablehlo, operands, quantized, lanes"):
        parse_without("stablehlo,qdq")
    with pytest.raises(UsageError):
        parse_without(",")


def test_every_reach_lane_is_a_default_lane_and_only_they_are_withheld():
    assert set(REACH_LANES) <= set(DEFAULT_BACKENDS) and set(REACH_LANES) <= set(BACKENDS)
    kept = withheld_lanes(("lanes",), DEFAULT_BACKENDS)
    assert set(kept) == set(DEFAULT_BACKENDS) - set(REACH_LANES) and "llvm-cpu" in kept
    assert withheld_lanes(("stablehlo",), DEFAULT_BACKENDS) == tuple(DEFAULT_BACKENDS)


def test_withheld_stablehlo_draws_the_linalg_form_and_no_intloop():
    families = ("conv", "matmul", "intloop")
    before = Gated((Closed("conv", "form x", "old", False),))
    gated = withhold(before, families, ("stablehlo",))
    assert gated.closed[0] == before.closed[0]  # what the release closed stays
    assert gated.family_off("intloop") == "withheld (--without stablehlo)"
    assert "stablehlo spelling" in gated.off("conv") and "stablehlo spelling" in gated.off("matmul")
    conv = get_family("conv")
    p = next(g for g in conv.release_gates if g.what == "stablehlo spelling").example()
    assert p.frontend == STABLEHLO and not gated.accepts("conv", p)
    instead = gated.params("conv", p)
    assert instead is not None and instead.frontend != STABLEHLO
    assert withhold(before, families, ()) is before


def test_withheld_quantized_and_operand_gates_are_the_families_own():
    gated = withhold(Gated(), ("conv", "matmul", "gather"), ("quantized", "operands"))
    conv = gated.off("conv")
    assert {"form named _q", "form qdq", "torch qdq spelling"} <= conv
    assert any(what.startswith("operand ") for what in conv)
    assert all(c.why.startswith("withheld (--without ") for c in gated.closed)
    assert not any("stablehlo" in c.what for c in gated.closed)


def test_the_config_drops_the_lanes_and_a_resume_keeps_the_groups(tmp_path: Path):
    config: CampaignConfig = build_config(FuzzRequest(campaign=str(tmp_path / "c"), without="lanes,operands"), None)
    assert config.without == ("lanes", "operands")
    assert not set(config.backends) & set(REACH_LANES) and "llvm-cpu" in config.backends
    resumed = build_config(FuzzRequest(campaign=str(tmp_path / "c")),
                           {"without": ["lanes", "operands"], "backends": list(config.backends)})
    assert resumed.without == ("lanes", "operands")
    pinned = build_config(FuzzRequest(campaign=str(tmp_path / "d"), without="lanes",
                                      backends=("llvm-cpu-conv-channels-last",)), None)
    assert pinned.backends == ("llvm-cpu-conv-channels-last",)  # --backends pins lanes exactly


def test_a_bad_group_on_the_command_line_is_one_line_and_exit_2(tmp_path: Path):
    result = subprocess.run([sys.executable, "-m", "shapefuzz", "fuzz", "--count", "1", "--without", "bogus",
                             "--campaign", str(tmp_path / "c")], capture_output=True, text=True)
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "--without 'bogus'" in lines[0] and "Traceback" not in result.stderr
