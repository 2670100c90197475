"""Drawing cases outside a test run (what campaigns and `shapefuzz gen` do) works for every family."""

import inspect
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.invoke.execute import verify_many
from shapefuzz.families import FAMILY_MODULES, render_case
from shapefuzz.families.generate import draw_case


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
    from shapefuzz.families.generate import draw_params

    for kwargs in ({"swarm": True}, {"regime": "large"}, {"regime": "large", "swarm": True}):
        assert [draw_params(family, s, **kwargs) for s in range(5)] == [draw_params(family, s, **kwargs) for s in range(5)]


def test_coverage_counts_features_and_pairs():
    from shapefuzz.families.generate import coverage

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


# In a fresh process, after importing the modules named on its command line: 30 conv cases (the
# family whose draws the constants changed), and integers from a range that holds many constants.
_DRAW_AFTER_IMPORTS = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
from hypothesis import strategies as st
from shapefuzz.families.generate import draw, draw_params
for seed in range(30):
    print("conv", seed, repr(draw_params("conv", seed)))
print([draw(st.integers(100, 1099), seed) for seed in range(300)])
"""


def _draws_in_fresh_process(tmp_path: Path, *imports: str) -> list[str]:
    import shapefuzz

    path = os.pathsep.join([str(Path(shapefuzz.__file__).parents[1]), str(tmp_path)])
    out = subprocess.run([sys.executable, "-c", _DRAW_AFTER_IMPORTS, *imports], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": path}, check=True).stdout
    return out.splitlines()


def test_a_seed_draws_the_same_cases_whatever_the_process_imported_first(tmp_path):
    # Hypothesis would also pick integers and floats from the constants of the "local" modules
    # loaded at draw time (integers from 100 up): a module full of them, and one of ours that
    # drawing does not import, must change nothing.
    (tmp_path / "many_constants.py").write_text(
        "INTEGERS = (" + ", ".join(str(i) for i in range(100, 1100)) + ")\n"
        "FLOATS = (1e-05, 0.001, 0.3, 2.5, 1e+30)\n")
    fresh = _draws_in_fresh_process(tmp_path)
    assert len(fresh) == 31
    assert _draws_in_fresh_process(tmp_path, "many_constants", "shapefuzz.campaign.report.summary") == fresh


def test_seed_provider_still_overrides_hypothesis_constants():
    # SeedProvider replaces a private method of Hypothesis's provider: an upgrade that renames it
    # or changes its parameters would quietly bring the local constants back.
    from hypothesis.internal.conjecture.providers import HypothesisProvider

    from shapefuzz.families.generate import SeedProvider

    ours = inspect.signature(SeedProvider._maybe_draw_constant)
    theirs = inspect.signature(HypothesisProvider._maybe_draw_constant)
    assert list(ours.parameters) == list(theirs.parameters)
    assert ours.parameters["p"].default == theirs.parameters["p"].default
    assert "_maybe_draw_constant" in inspect.getsource(HypothesisProvider.draw_integer)
