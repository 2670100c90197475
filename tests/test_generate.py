"""Drawing cases outside a test run (what campaigns and `shapefuzz gen` do) works for every family."""

import pytest

from shapefuzz.execute import verify_many
from shapefuzz.families import FAMILY_MODULES, render_case
from shapefuzz.generate import draw_case


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_every_family_draws_deterministic_distinct_cases(family):
    cases = [draw_case(family, seed) for seed in range(12)]
    assert [c.case_id for c in cases] == [draw_case(family, seed).case_id for seed in range(12)]
    assert len({c.case_id for c in cases}) >= 10


@pytest.mark.iree
def test_drawn_cases_of_every_family_verify():
    texts = [render_case(draw_case(family, seed)) for family in FAMILY_MODULES for seed in range(8)]
    assert verify_many(texts) == [None] * len(texts)


@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_swarm_and_large_draws_are_deterministic(family):
    from shapefuzz.generate import draw_params

    for kwargs in ({"swarm": True}, {"regime": "large"}, {"regime": "large", "swarm": True}):
        assert [draw_params(family, s, **kwargs) for s in range(5)] == [draw_params(family, s, **kwargs) for s in range(5)]


def test_coverage_counts_features_and_pairs():
    from shapefuzz.generate import coverage

    cov = coverage("topk", 40, swarm=True)
    assert cov.draws == 40 and all(0 < n <= 40 for n in cov.features.values())
    assert all("&" in pair and 0 < n <= 40 for pair, n in cov.pairs.items())
    # Each pair is counted at most as often as the rarer of its two features.
    for pair, n in cov.pairs.items():
        a, b = pair.split("&")
        assert n <= min(cov.features[a], cov.features[b])
    text = cov.report(top=3)
    assert text.startswith("topk: 40 draws") and "rarest 3 pairs" in text


def test_gen_stats_prints_feature_and_pair_coverage():
    from click.testing import CliRunner

    from shapefuzz.cli import cli as main

    result = CliRunner().invoke(main, ["gen", "--stats", "30", "--op", "topk", "--swarm", "--pairs", "2"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith("topk: 30 draws") and "k>40" in result.output and "&" in result.output
    result = CliRunner().invoke(main, ["gen", "--stats", "0"])
    assert result.exit_code == 2
    result = CliRunner().invoke(main, ["gen", "--op", "conv", "--regime", "large", "--seed", "4"])
    assert result.exit_code == 0 and result.output.startswith("// shapefuzz-case: ")
