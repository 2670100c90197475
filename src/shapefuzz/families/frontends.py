"""Frontend spellings as equivalent forms: a case's parameters may carry `"frontend": "torch"`
or `"onnx"` (absent means the hand-written linalg forms), and `with_frontends` extends a family so that

- `render` writes the torch-dialect spelling (`torch_forms`), with the boundary types of the
  case's linalg form, so both take and return the same arrays;
- inputs, the NumPy reference and the comparison are the family's own, for every spelling;
- `equivalent_forms` of a linalg case include its torch spelling (where PyTorch can write it)
  and those of a torch case include the linalg forms, so `check --forms` names a frontend-only
  failure as such;
- the strategy draws a torch spelling for one case in four that PyTorch can write, and an ONNX
  one (`onnx_forms`) for another (features `frontend:torch` / `frontend:onnx`), so campaigns reach
  IREE's torch and ONNX lowerings;
- a torch case shrinks through the family's candidates, kept in the same spelling.
"""

from __future__ import annotations

import dataclasses

from hypothesis import strategies as st

from shapefuzz.families.base import Family, Params
from shapefuzz.families.onnx_forms import ONNX_SPELLINGS
from shapefuzz.families.torch_forms import SPELLINGS, Spelling
from shapefuzz.families.torch_ir import boundary

KEY = "frontend"
LINALG = "linalg"
# Of every SHARE draws, one is spelled in torch and one in ONNX, where the frontend can write the case.
SHARE = 4
ALL_SPELLINGS: tuple[Spelling, ...] = tuple(SPELLINGS.values()) + ONNX_SPELLINGS


def frontend_of(p: Params) -> str:
    return p.get(KEY, LINALG)


def linalg_params(p: Params) -> Params:
    """The case without its frontend: the family's own parameters."""
    return {k: v for k, v in p.items() if k != KEY}


def spelled(p: Params, spelling: Spelling) -> Params:
    return dict(spelling.normalize(linalg_params(p)), **{KEY: spelling.frontend})


def spellings_for(family: str) -> list[Spelling]:
    return [s for s in ALL_SPELLINGS if s.family == family]


def with_frontends(family: Family) -> Family:
    """`family`, extended with its frontend spellings (unchanged when it has none)."""
    spellings = {s.frontend: s for s in spellings_for(family.name)}
    if not spellings:
        return family

    def spelling(p: Params) -> Spelling | None:
        fe = frontend_of(p)
        if fe == LINALG:
            return None
        if fe not in spellings:
            raise ValueError(f"{family.name} has no {fe} spelling")
        return spellings[fe]

    def choose(drawn: tuple[Params, int]) -> Params:
        p, roll = drawn
        options = [s for s in spellings.values() if s.expressible(p)]
        if options and roll < len(options):
            return spelled(p, options[roll])
        return p

    def strategy() -> st.SearchStrategy[Params]:
        return st.tuples(family.strategy(), st.integers(0, SHARE - 1)).map(choose)

    def render(p: Params) -> str:
        s = spelling(p)
        if s is None:
            return family.render(p)
        q = linalg_params(p)
        return s.build(q, boundary(family.render(q)))

    def equivalent_forms(p: Params) -> list[Params]:
        q = linalg_params(p)
        s = spelling(p)
        forms = family.equivalent_forms(q) if s is None else [q] + family.equivalent_forms(q)
        forms += [spelled(q, other) for other in spellings.values() if other is not s and other.expressible(q)]
        out: list[Params] = []
        for f in forms:
            if f != p and f not in out:
                out.append(f)
        return out

    def features(p: Params) -> list[str]:
        return family.features(linalg_params(p)) + [f"frontend:{frontend_of(p)}"]

    def shrink_candidates(p: Params) -> list[Params]:
        s = spelling(p)
        if s is None:
            return family.shrink_candidates(p)
        out: list[Params] = []
        for c in family.shrink_candidates(linalg_params(p)):
            if s.expressible(c):
                c = spelled(c, s)
                if c != p and c not in out:
                    out.append(c)
        return out

    return dataclasses.replace(
        family,
        strategy=strategy,
        render=render,
        make_inputs=lambda p, seed: family.make_inputs(linalg_params(p), seed),
        reference=lambda p, inputs: family.reference(linalg_params(p), inputs),
        compare=lambda p, inputs, want, got: family.compare(linalg_params(p), inputs, want, got),
        equivalent_forms=equivalent_forms,
        features=features,
        shrink_candidates=shrink_candidates,
    )
