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
