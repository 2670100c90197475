"""Parameter shrinking for generated files (`// shapefuzz-case:` header): propose smaller
parameter sets -- the family's own `shrink_candidates`, then generic reductions (ints toward 1,
bools toward False, lists shorter) -- and re-render each. Invalid renders fail verification."""

from __future__ import annotations

import re
from typing import Any, Iterator

from shapefuzz.case import Case, case_from_mlir


# Fields whose natural floor is 0 (an amount or a position); every other int shrinks toward 1.
_ZERO_OK = re.compile(r"pad|dim$|axis|offset|index|low|high|seed", re.IGNORECASE)


def generic_reductions(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Blind one-field reductions: ints toward 1 (0 for paddings and positions), bools toward
    False, lists shorter. Many will not verify (the verifier filters them)."""
    out: list[dict[str, Any]] = []

    def add(key: str, value: Any) -> None:
        cand = dict(params)
        cand[key] = value
        if cand != params and cand not in out:
            out.append(cand)

    for key, value in params.items():
        if isinstance(value, bool):
            if value:
                add(key, False)
        elif isinstance(value, int):
            floor = 0 if _ZERO_OK.search(key) else 1
            for w in (floor, 1, value // 2, value - 1):
                if floor <= w < value:
                    add(key, w)
        elif isinstance(value, list) and value:
            add(key, value[:-1])
            for i, item in enumerate(value):
                if isinstance(item, bool):
                    if item:
                        add(key, value[:i] + [False] + value[i + 1 :])
                elif isinstance(item, int):
                    floor = 0 if _ZERO_OK.search(key) else 1
                    for w in (floor, item // 2):
                        if floor <= w < item:
                            add(key, value[:i] + [w] + value[i + 1 :])
    return out


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
    except Exception:  # a family's shrinker bug: fall back to the generic reductions
        candidates = []
    seen = set()
    for cand in candidates + generic_reductions(params):
        new = Case.make(case.family, cand)
        if new.params_json in seen or new.params_json == case.params_json:
            continue
        seen.add(new.params_json)
        try:
            yield render_case(new)
        except Exception:  # generic params a template cannot render
            continue


def has_case(text: str) -> bool:
    return case_from_mlir(text) is not None
