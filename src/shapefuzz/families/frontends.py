"""Frontend spellings as equivalent forms: a case's parameters may carry `"frontend": "torch"`
or `"onnx"` (absent means the hand-written linalg forms), and `with_frontends` extends a family so that

- `render` writes the torch-dialect spelling (`torch_forms`), with the boundary types of the
  case's linalg form, so both take and return the same arrays;
- inputs, the NumPy reference and the comparison are the family's own, for every spelling;
- `equivalent_forms` of a linalg case include its torch spelling (where PyTorch can write it)
  and those of a torch case include the linalg forms, so `check --forms` names a frontend-only
  failure as such;
- the strategy draws a torch spelling for one case in five that PyTorch can write, an ONNX one
  (`onnx_forms`) for another and a StableHLO one (the family's `stablehlo` module, over
  `stablehlo_ir`) for a third (features `frontend:torch` / `frontend:onnx` / `frontend:stablehlo`),
  so campaigns reach IREE's torch, ONNX and StableHLO input conversions;
- a release whose `iree-opt` does not parse the family's StableHLO example is gated (`gates.py`):
  its StableHLO cases are drawn in linalg;
- a torch case shrinks through the family's candidates, kept in the same spelling.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from hypothesis import strategies as st

from shapefuzz.families.base import FRONTEND_OPERANDS, LINALG, Family, FamilyParams, HookTable, ReleaseGate
from shapefuzz.families.registry import spellings_module, stablehlo_module
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import boundary

if TYPE_CHECKING:
    import onnx

KEY = "frontend"
STABLEHLO = "stablehlo"
# Of every SHARE draws, one is spelled in torch, one in ONNX and one in StableHLO, where the
# frontend can write the case.
SHARE = 5


def frontend_of(p: FamilyParams | Mapping[str, Any]) -> str:
    """The case's spelling, from its typed params or its header JSON (`Case.params`)."""
    return p.get(KEY, LINALG) if isinstance(p, Mapping) else p.frontend


def linalg_params(p: FamilyParams) -> FamilyParams:
    """The case without its frontend: the family's own parameters (a root-operand form of the
    frontend's spelling, `operands.py`'s "unranked", goes with it)."""
    if p.operand in FRONTEND_OPERANDS:
        p = p.replace(operand="")
    return p.replace(frontend=LINALG) if p.frontend != LINALG else p


def spelled(p: FamilyParams, spelling: Spelling) -> FamilyParams:
    return spelling.normalize(linalg_params(p)).replace(frontend=spelling.frontend)


def spellings_for(family: str) -> list[Spelling]:
    """The frontends' spellings of a family, in its package's order (torch, then onnx): its
    `spellings` module's SPELLINGS (none for an unknown family), then its `stablehlo` module's."""
    module, hlo = spellings_module(family), stablehlo_module(family)
    return ([] if module is None else list(module.SPELLINGS)) + ([] if hlo is None else [hlo.SPELLING])


def stablehlo_gate(family: Family, spelling: Spelling) -> ReleaseGate:
    """The StableHLO spelling is off for a release whose `iree-opt` does not parse the family's
    example spelled in it (a build without the StableHLO input plugin, or an older syntax): such a
    release draws the case in linalg instead."""

    def example() -> FamilyParams:
        p = family.load(spelling.example or family.example)
        return spelled(p, spelling)

    return ReleaseGate(f"{STABLEHLO} spelling", "the StableHLO dialect as spelled (--iree-input-type=stablehlo)",
                       lambda p: p.frontend == STABLEHLO, example, instead=lambda p: linalg_params(p))


def with_frontends(family: Family) -> Family:
    """`family`, extended with its frontend spellings (unchanged when it has none). The hooks
    get typed params (`Family` loads them); a linalg case goes to the family's own hooks."""
    spellings = {s.frontend: s for s in spellings_for(family.name)}
    if not spellings:
        return family
    own = family.hooks

    def spelling(p: FamilyParams) -> Spelling | None:
        fe = frontend_of(p)
        if fe == LINALG:
            return None
        if fe not in spellings:
            raise ValueError(f"{family.name} has no {fe} spelling")
        return spellings[fe]

    def choose(drawn: tuple[FamilyParams, int]) -> FamilyParams:
        p, roll = drawn
        options = [s for s in spellings.values() if s.expressible(p)]
        if options and roll < len(options):
            return spelled(p, options[roll])
        return p

    def strategy(*regime: str) -> st.SearchStrategy[FamilyParams]:
        return st.tuples(own.strategy(*regime), st.integers(0, SHARE - 1)).map(choose)

    def render(p: FamilyParams) -> str:
        s = spelling(p)
        if s is None:
            return own.render(p)
        q = linalg_params(p)
        return s.build(q, boundary(own.render(q)))

    def equivalent_forms(p: FamilyParams) -> list[FamilyParams]:
        q = linalg_params(p)
        s = spelling(p)
        forms = list(own.equivalent_forms(q)) if s is None else [q] + list(own.equivalent_forms(q))
        forms += [spelled(q, other) for other in spellings.values() if other is not s and other.expressible(q)]
        return forms

    def features(p: FamilyParams) -> list[str]:
        return list(own.features(linalg_params(p))) + [f"frontend:{frontend_of(p)}"]

    def shrink_candidates(p: FamilyParams) -> list[FamilyParams]:
        s = spelling(p)
        if s is None:
            return own.shrink_candidates(p)
        return [spelled(c, s) for c in own.shrink_candidates(linalg_params(p)) if s.expressible(c)]

    def is_valid(p: FamilyParams) -> bool:
        s = spelling(p)
        q = linalg_params(p)
        return bool(own.is_valid(q)) and (s is None or s.expressible(q))

    def linalg(hook: str) -> Any:
        return lambda p, *args: own[hook](linalg_params(p), *args)

    hooks = HookTable(own, strategy=strategy, render=render, make_inputs=linalg("make_inputs"),
                      reference=linalg("reference"), compare=linalg("compare"), equivalent_forms=equivalent_forms,
                      features=features, shrink_candidates=shrink_candidates, is_valid=is_valid)
    gates = tuple(family.release_gates) + tuple(stablehlo_gate(family, s) for s in spellings.values() if s.frontend == STABLEHLO)
    return dataclasses.replace(family, hooks=hooks, release_gates=gates)


def onnx_params(family: Family, p: FamilyParams) -> FamilyParams | None:
    """The case spelled in ONNX: itself when it is, else its ONNX spelling when ONNX can write
    it (the same computation on the same arrays), else None. A case with a context chain: where
    ONNX writes the whole chain (`context/onnx_chain`)."""
    if p.frontend == "onnx":
        return p
    if p.operand and p.operand not in FRONTEND_OPERANDS:  # a constant or scalar operand ONNX's spelling does not take
        return None
    spelling = next((s for s in spellings_for(family.name) if s.frontend == "onnx"), None)
    q = linalg_params(p)
    if spelling is None or not spelling.expressible(q.replace(context=())):
        return None
    onnx = spelled(q, spelling)
    return onnx if not p.context or onnx_model(family, onnx) is not None else None


def onnx_model(family: Family, params: FamilyParams | Mapping[str, Any]) -> "onnx.ModelProto | None":
    """The ONNX model of a case spelled in ONNX (what `iree-import-onnx` imported to give its
    MLIR), or None: another spelling, or a case kept hand-written (`onnx_forms.HAND_WRITTEN`)."""
    from shapefuzz.families.onnx_models import model_spelling

    p = family.load(params)
    spelling = model_spelling(family.name)
    if p.frontend != "onnx" or spelling is None:
        return None
    if p.context:  # the whole chain's model, from the family's context hooks (`context/wrap`)
        chain_model = family.hooks.get("context_onnx_model")
        return chain_model(p) if chain_model is not None else None
    q = linalg_params(p)
    if spelling.refuse(q):
        return None
    return spelling.build(q, boundary(family.render(q)))
