"""Whether ONNX types a failing candidate's model two ways (`onnx_judge.shape_contradiction`), as the
campaign's triage asks it in its own (head) process: a model ONNX contradicts itself on gives the
importer self-contradictory types, so what the compiler makes of them is no compiler bug. The check
of onnx.reference's output shapes needs the case's inputs, its NumPy reference and onnx.reference's
run, which for a large candidate cost seconds and GBs in the head; above `ONNX_CHECK_ELEMENTS`
declared tensor elements only ONNX's shape inference against the model's declared outputs is asked
(ONNX 1.23.2's ceil-mode pooling contradiction shows there already), and the evidence says so."""

from __future__ import annotations

from typing import Any, Callable

from shapefuzz.campaign.outcomes import Candidate
from shapefuzz.case import Case

# Measured (bench/studies/bench_onnx_contradiction.py --draw 800 --seed 2, 116 ONNX-spelled candidates, two
# runs on a loaded 2-core machine): up to 300,000 declared elements the check took at most 1.2 s (a
# pool: its time is onnx.reference's); above it ONNX pools took 7-27 s (2.1-2.7 M elements) and norms
# 1.1-2.4 s (4-17 M, 16-65 MB of arrays), a pool whose '?' sizes are unknown 3-3.7 s; ONNX's shape
# inference alone took at most 0.011 s. 33 of the 116 are above it (or of unknown size).
ONNX_CHECK_ELEMENTS = 300_000


def declared_elements(candidate: Candidate) -> int | None:
    """Elements of each tensor type the candidate's module declares, its `?` dims at the sizes its inputs
    get (`Family.sized_tensor_types`); None where those sizes are unknown (a chain whose static form
    the family cannot render: 2 of 116 ONNX-spelled candidates)."""
    from shapefuzz.families import get_family
    from shapefuzz.iree.mlirinfo import declared_tensor_types
    from shapefuzz.size import measure

    try:
        types = get_family(candidate.group).sized_tensor_types(Case(candidate.group, candidate.payload).params)
    except Exception:  # noqa: BLE001 - a payload its family cannot render static: the text's, if it has no `?`
        if measure(candidate.text).dynamic_dims:
            return None
        types = declared_tensor_types(candidate.text)
    total = 0
    for shape, _ in types:
        count = 1
        for dim in shape:
            count *= int(dim)
        total += count
    return total


def onnx_contradiction(candidate: Candidate, expectation: Callable[[Candidate], Any],
                       limit: int = ONNX_CHECK_ELEMENTS) -> tuple[str, str]:
    """(what ONNX contradicts itself on, "" for none or a case not spelled as ONNX; what was not
    checked, "" when all was). `expectation(candidate)`: the case's inputs and references."""
    from shapefuzz.judge.onnx_judge import case_contradiction

    try:
        case = Case(candidate.group, candidate.payload)
        if case.params.get("frontend") != "onnx":
            return "", ""
        elements = declared_elements(candidate)
        if elements is None or elements > limit:
            size = "its '?' sizes unknown" if elements is None else f"{elements:,} declared tensor elements"
            return case_contradiction(case, None), \
                f"onnx.reference's output shapes not checked: too large for the head ({size})"
        made = expectation(candidate)
        second = made.second if made is not None else None
        return case_contradiction(case, second.results if second is not None else None), ""
    except Exception:  # noqa: BLE001 - a candidate that is not a case (a shrink's text) is judged as before
        return "", ""


__all__ = ["ONNX_CHECK_ELEMENTS", "declared_elements", "onnx_contradiction"]
