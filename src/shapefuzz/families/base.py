"""What one op family provides. Everything about a family lives in its own module:
its template, its Hypothesis strategy, its input generator, its NumPy reference and its
comparison rule (NNSmith's "one op = one place")."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np
from hypothesis import strategies as st

Params = dict[str, Any]  # JSON-serializable; saved with every finding so it can be re-rendered


@dataclass(frozen=True)
class Family:
    name: str
    # Draws one valid parameter set. Must only draw cases whose MLIR verifies.
    strategy: Callable[[], st.SearchStrategy[Params]]
    # Params -> MLIR text (without the case header; `render_case` adds it). Deterministic.
    render: Callable[[Params], str]
    # (params, seed) -> the function's arguments, in order, with concrete sizes for `?` dims.
    make_inputs: Callable[[Params, int], list[np.ndarray]]
    # (params, inputs) -> the expected results, computed from the op's definition in NumPy.
    reference: Callable[[Params, list[np.ndarray]], list[np.ndarray]]
    # (params, inputs, expected, actual) -> None when `actual` is right, else a short description.
    # Must not raise false alarms: ties in topk, duplicate scatter indices, float rounding.
    compare: Callable[[Params, list[np.ndarray], list[np.ndarray], list[np.ndarray]], str | None]
    # Params of other formulations of the same computation (metamorphic oracle); may be empty.
    equivalent_forms: Callable[[Params], list[Params]]
    # Params -> a list of "features" (e.g. "dyn:mixed", "groups>1", "form:generic") for
    # coverage bookkeeping and Hypothesis event(); the campaign steers toward rare ones.
    features: Callable[[Params], list[str]]
    # Params -> a smaller/simpler list of candidate params for the parameter shrinker
    # (each must still be valid). Ordered most aggressive first.
    shrink_candidates: Callable[[Params], list[Params]]


def distinct_valid(candidates: Iterable[Params], original: Params, is_valid: Callable[[Params], bool]) -> list[Params]:
    """The candidates, in order, that are valid, differ from `original` and are not repeated:
    what every family's shrink_candidates returns after proposing."""
    out: list[Params] = []
    for candidate in candidates:
        if candidate != original and candidate not in out and is_valid(candidate):
            out.append(candidate)
    return out
