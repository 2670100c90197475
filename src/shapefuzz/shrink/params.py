"""Parameter shrinking for generated files (`// shapefuzz-case:` header): propose the family's own
`shrink_candidates` and re-render each. Only the family knows which parameter sets are sound (a
filter layout must stay a permutation, a slice must stay in bounds): blind field reductions were
tried and produced input that verifies but is not a valid computation, so they are not used."""

from __future__ import annotations

from typing import Iterator

from shapefuzz.case import Case, case_from_mlir


def shrink_params(text: str) -> Iterator[str]:
    """Re-rendered smaller cases; nothing for a file without a case header."""
    case = case_from_mlir(text)
    if case is None:
        return
    from shapefuzz.families import get_family, render_case  # families pull in hypothesis/jinja: lazy

    family = get_family(case.family)
    params = case.params
    try:
        candidates = list(family.shrink_candidates(params))
    except Exception:  # a family's shrinker bug: nothing to propose
        candidates = []
    seen = set()
    for cand in candidates:
        new = Case.make(case.family, cand)
        if new.params_json in seen or new.params_json == case.params_json:
            continue
        seen.add(new.params_json)
        try:
            yield render_case(new)
        except Exception:  # a candidate the template cannot render: the family's bug, skip it
            continue


def has_case(text: str) -> bool:
    return case_from_mlir(text) is not None
