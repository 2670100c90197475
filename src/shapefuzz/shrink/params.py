"""Parameter shrinking for generated files (`// shapefuzz-case:` header): propose smaller
parameter sets -- the family's own `shrink_candidates`, then generic reductions (ints toward 1,
bools toward False, lists shorter) -- and re-render each. Invalid renders fail verification."""

from __future__ import annotations

from typing import Any, Iterator

from shapefuzz.case import Case, case_from_mlir


def generic_reductions(params: dict[str, Any]) -> list[dict[str, Any]]:
    """Blind one-field reductions; many will not verify (the verifier filters them)."""
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
            for w in (1, 0, value // 2, value - 1):
                if 0 <= w < value:
                    add(key, w)
        elif isinstance(value, list) and value:
            add(key, value[:-1])
            for i, item in enumerate(value):
                if isinstance(item, bool):
                    if item:
                        add(key, value[:i] + [False] + value[i + 1 :])
                elif isinstance(item, int):
                    for w in (1, item // 2):
                        if 0 <= w < item:
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
