"""Draws cases from the families' Hypothesis strategies outside of a test run: one case per
(family, seed), deterministic, so a campaign can generate for hours and any case can be
re-drawn from its seed alone."""

from __future__ import annotations

import random

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.data import ConjectureData

from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.families import get_family

_ATTEMPTS = 50  # strategies may filter; a seed whose draw is rejected moves on to the next sub-seed


def draw(strategy: st.SearchStrategy, seed: int):
    """One value of `strategy`, the same for the same seed."""
    for attempt in range(_ATTEMPTS):
        data = ConjectureData(random=random.Random(f"{seed}:{attempt}"))
        try:
            # A build context, as inside @given: strategies built with .map()/.flatmap() need one.
            with BuildContext(data, wrapped_test=draw):
                return data.draw(strategy)
        except (StopTest, UnsatisfiedAssumption):
            continue
    raise ShapefuzzError(f"the strategy rejected {_ATTEMPTS} draws in a row for seed {seed}")


def draw_case(family: str, seed: int) -> Case:
    return Case.make(family, draw(get_family(family).strategy(), seed))
