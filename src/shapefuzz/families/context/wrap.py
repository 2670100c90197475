"""`with_context(family)`: the family's hooks with the chain in them, as `frontends.with_frontends`
extends a family with its spellings. A case without context goes straight to the family's own
hooks (its header, render, forms, candidates and features are what they always were); a case
with one is rendered, fed, judged, shrunk and labelled as one computation (`compose`).

Cases spelled in linalg, ONNX or torch carry context (an ONNX case's chain is spelled in ONNX around
the family's root model, `onnx_chain`; a torch case's in aten ops around the family's torch form,
`torch_chain`; a chain the frontend cannot write exactly stays linalg). The strategy
draws a chain for the share set (`sharing`/`set_share`): campaigns one case in `SHARE`
(`--context-share`, 0 = never); outside a campaign none unless asked (`gen --context`), so every
draw recorded before stays the same."""

from __future__ import annotations

import contextlib
import dataclasses
import functools
from fractions import Fraction
from typing import Any, Iterator

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.base import LINALG, Family, FamilyParams, HookTable, ReleaseGate
from shapefuzz.families.context import compose
from shapefuzz.families.context.chain import KEY, Chain, ContextOp, inner_drops, outermost_drops
from shapefuzz.families.context.strategy import QDQ_OPS, draw_chain, leaving_out
from shapefuzz.families.frontends import linalg_params

ONNX = "onnx"
TORCH = "torch"
SPELLED = (LINALG, ONNX, TORCH)  # the spellings a chain is written in

# A campaign draws a chain for one case in SHARE (a linalg case whose root has an op that fits).
SHARE = 2
MAX_ROOT_ELEMENTS = 1 << 22  # the largest root tensor a chain is drawn around (see too_large)
# The share as a fraction (numerator, denominator): a draw gets a chain when a number drawn below the
# denominator is below the numerator. A share of 1/n draws what it always drew (one number below n,
# a chain on 0); 0.8 is 4/5 (it was rounded to 1/1, so the context bench's "0.8" arm drew at 1.0).
_share = {"numerator": 0, "denominator": 0}  # outside a campaign: none unless asked


def set_share(fraction: float) -> None:
    """The share of drawn cases that get a chain: 0 (never) to 1 (always); the default 1/SHARE."""
    if fraction <= 0:
        _share.update(numerator=0, denominator=0)
        return
    exact = Fraction(min(1.0, fraction)).limit_denominator(100)
    exact = exact or Fraction(1, 100)
    _share.update(numerator=exact.numerator, denominator=exact.denominator)


def share() -> float:
    return 0.0 if not _share["denominator"] else _share["numerator"] / _share["denominator"]


@contextlib.contextmanager
def sharing(fraction: float | None, left_out: tuple[str, ...] = ()) -> Iterator[None]:
    """Draws inside get a chain at this share (None: as set), with the ops `left_out` never
    drawn (a swarm epoch); the settings are restored after."""
    before = dict(_share)
    if fraction is not None:
        set_share(fraction)
    try:
        with leaving_out(left_out):
            yield
    finally:
        _share.update(before)


def bare(p: FamilyParams) -> FamilyParams:
    """The case without its chain: the family's own params."""
    return p.replace(context=()) if p.context else p


@st.composite
def _drawn(draw: Any, body: Any, *regime: str) -> FamilyParams:
    """`body(draw, *regime)` as a strategy. Decorated once here: `st.composite` reads the
    function's source, and a worker judging a case builds the family (`get_family`) several times
    per check, which paid for that read every time."""
    return body(draw, *regime)


def with_context(family: Family) -> Family:
    if family.no_context:  # a family that says why its op never sits in a chain: as it is
        return family
    own = family.hooks

    def consumers_ok(q: FamilyParams) -> bool:
        return dict(family.export_rule(q)).get("kind") == "elementwise"

    @functools.lru_cache(maxsize=64)
    def root(q: FamilyParams) -> str:
        return own["render"](q)

    def plan(p: FamilyParams) -> compose.Plan:
        if p.frontend not in SPELLED:
            raise ValueError(f"context: only on cases spelled in linalg, ONNX or torch (this one is {p.frontend})")
        q = linalg_params(bare(p))  # a frontend's spelling has its linalg form's boundary types
        return compose.plan(root(q), p.context, tuple(family.fixed_operands(q)), consumers_ok(q),
                            tuple(family.nonnegative_operands(q)))

    def too_large(q: FamilyParams) -> bool:
        """Whether the root declares a tensor over MAX_ROOT_ELEMENTS, its `?` dims at the sizes the
        params give them (the case rendered all static): a chain's draw builds the root's inputs,
        and a "large"-regime attention's took 24 GB. Such a case gets no chain."""
        try:
            sized = family.sized_tensor_types(q)
        except Exception:  # noqa: BLE001 - a family whose static form differs: no chain, to be safe
            return True
        return any(int(np.prod(shape, dtype=np.float64)) > MAX_ROOT_ELEMENTS for shape, _ in sized)

    @functools.lru_cache(maxsize=64)
    def root_shapes(q: FamilyParams) -> list[tuple[int, ...]]:
        return [tuple(a.shape) for a in own["make_inputs"](q, 0)]

    def chained(draw: Any, regime: str) -> FamilyParams:
        p = draw(own["strategy"](regime))
        numerator, denominator = _share["numerator"], _share["denominator"]
        if p.frontend not in SPELLED or not denominator or draw(st.integers(0, denominator - 1)) >= numerator:
            return p
        q = linalg_params(p)
        if too_large(q):
            return p
        args, results = compose.root_types(root(q))
        chain = draw_chain(draw, args, results, root_shapes(q), tuple(family.fixed_operands(q)), consumers_ok(q),
                           nonnegative=tuple(family.nonnegative_operands(q)))
        if not chain:
            return p
        c = p.replace(context=chain)
        return c if spells_chain(c) else q.replace(context=chain)

    def spells_chain(c: FamilyParams) -> bool:
        """Whether the case's frontend writes its whole chain (linalg always does)."""
        if c.frontend == ONNX:
            return onnx_model(c) is not None
        return c.frontend == LINALG or c.frontend == TORCH and torch_text(c) is not None

    def onnx_model(p: FamilyParams) -> Any:
        """The whole chain's ONNX model of a case spelled in ONNX (None: ONNX cannot write it)."""
        from shapefuzz.families.context.onnx_chain import onnx_chain_model

        try:
            return onnx_chain_model(family, p, plan(p)) if p.frontend == ONNX and p.context else None
        except (ValueError, AssertionError):
            return None

    def torch_text(p: FamilyParams) -> str | None:
        """The whole chain in the torch dialect around the root's torch form (None: torch cannot write it)."""
        from shapefuzz.families.context.torch_chain import chain_text

        try:
            return chain_text(own["render"](bare(p)), plan(p)) if p.frontend == TORCH and p.context else None
        except (ValueError, AssertionError):
            return None

    def strategy(*regime: str) -> st.SearchStrategy[FamilyParams]:
        return _drawn(chained, *regime)

    def render(p: FamilyParams) -> str:
        if not p.context:
            return own["render"](p)
        if p.frontend == ONNX:
            return render_onnx(p)
        if p.frontend == TORCH:
            text = torch_text(p)
            return text if text is not None else ("// linalg chain: torch cannot write this chain\n"
                                                  + compose.render(root(linalg_params(bare(p))), plan(p)))
        return compose.render(root(bare(p)), plan(p))

    def render_onnx(p: FamilyParams) -> str:
        """What `iree-import-onnx` makes of the chain's model; the linalg chain, saying why, where
        the importer rejects it (our bug, as for a root the importer rejects)."""
        from shapefuzz.iree.onnx_import import ImportFailure, import_model

        model = onnx_model(p)
        why = "ONNX cannot write this chain"
        if model is not None:
            try:
                return import_model(model)
            except ImportFailure as error:
                why = str(error).splitlines()[0]
        pl = plan(p)
        return f"// linalg chain: {why}\n" + compose.render(root(linalg_params(bare(p))), pl)

    def make_inputs(p: FamilyParams, seed: int) -> list[np.ndarray]:
        if not p.context:
            return own["make_inputs"](p, seed)
        return compose.make_inputs(plan(p), own["make_inputs"](bare(p), seed), seed)

    def reference(p: FamilyParams, inputs: list[np.ndarray]) -> list[np.ndarray]:
        if not p.context:
            return own["reference"](p, inputs)
        pl = plan(p)
        results = own["reference"](bare(p), compose.root_inputs_of(pl, inputs))
        return compose.consume(pl, results, inputs)

    def compare(p: FamilyParams, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Any:
        if not p.context:
            return own["compare"](p, inputs, expected, actual)
        pl, q = plan(p), bare(p)
        root_in = compose.root_inputs_of(pl, inputs)
        if not any(pl.consumers):
            return own["compare"](q, root_in, expected, actual)
        results = own["reference"](q, root_in)
        return compose.compare_with_consumers(pl, dict(family.export_rule(q)), results, inputs, expected, actual)

    def fits(p: FamilyParams) -> bool:
        """Whether the chain fits the root's types and its concrete sizes."""
        try:
            compose.check_sizes(plan(p), root_shapes(bare(p)))
            return True
        except (ValueError, AssertionError):
            return False

    def with_chain(q: FamilyParams, chain: Chain) -> FamilyParams | None:
        c = q.replace(context=chain)
        if q.frontend not in SPELLED or not own["is_valid"](q) or not fits(c):
            return None
        return c if spells_chain(c) else None

    def equivalent_forms(p: FamilyParams) -> list[FamilyParams]:
        if not p.context:
            return own["equivalent_forms"](p)
        forms = [with_chain(f, p.context) for f in own["equivalent_forms"](bare(p))]
        return [f for f in forms if f is not None]

    def features(p: FamilyParams) -> list[str]:
        out = list(own["features"](bare(p)))
        if p.context:
            out += sorted({f"context:{op.op}" for op in p.context})
            out += sorted({"context:producer" if op.is_producer else "context:consumer" for op in p.context})
        return out

    def shrink_candidates(p: FamilyParams) -> list[FamilyParams]:
        if not p.context:
            return own["shrink_candidates"](p)
        q = bare(p)
        drops = [q.replace(context=c) for c in outermost_drops(p.context)]
        inner = [with_chain(q, c) for c in inner_drops(p.context)]  # (None: the rest does not fit)
        kept = [with_chain(c, p.context) for c in own["shrink_candidates"](q)]
        return drops + [q] + [c for c in inner + kept if c is not None]

    def is_valid(p: FamilyParams) -> bool:
        return bool(own["is_valid"](bare(p))) and (not p.context or fits(p) and spells_chain(p))

    def export_rule(p: FamilyParams) -> dict[str, Any]:
        if not p.context or not any(plan(p).consumers):
            return dict(family.export_rule(bare(p)))
        pl, inputs = plan(p), make_inputs(p, 0)
        results = own["reference"](bare(p), compose.root_inputs_of(pl, inputs))
        tols = compose.tolerances(pl, dict(family.export_rule(bare(p))), results, inputs)
        return {"kind": "elementwise", "rtol": max(t[0] for t in tols), "atol": max(t[1] for t in tols)}

    def root_operands(p: FamilyParams, inputs: list[np.ndarray]) -> list[np.ndarray] | None:
        """The root's operands from the entry's arguments, where producers stand between them
        (None: the arguments are the root's operands)."""
        if not p.context or not any(plan(p).producers):
            return None
        return compose.root_inputs_of(plan(p), inputs)

    def affine_example() -> FamilyParams:
        """The family's example with IREE's affine dequantize on its first free float operand
        (the release gate's example: what a release must parse for a QDQ chain)."""
        q = linalg_params(family.load(family.example))
        i = first_free_float(q)
        if i is None and hasattr(q, "dtype"):  # an integer example (one_hot's i32 values): its f32 form
            q = q.replace(dtype="f32")
            i = first_free_float(q)
        if i is None:
            raise ValueError(f"{family.name}: its example has no free float operand for a QDQ chain")
        return q.replace(context=(ContextOp.make("dequantize_affine", operand=i, scale=0.5, zero_point=-3),))

    def first_free_float(q: FamilyParams) -> int | None:
        args, _ = compose.root_types(root(q))
        fixed = tuple(family.fixed_operands(q))
        return next((i for i, t in enumerate(args) if t.elt in ("f32", "f16") and i not in fixed), None)

    hooks = HookTable(own, strategy=strategy, render=render, make_inputs=make_inputs, reference=reference,
                      compare=compare, equivalent_forms=equivalent_forms, features=features,
                      shrink_candidates=shrink_candidates, is_valid=is_valid, context_onnx_model=onnx_model,
                      context_root_operands=root_operands)

    def torch_affine_example() -> FamilyParams:
        """`affine_example` in torch: PT2E's dequantize before the family's torch form."""
        from shapefuzz.families.frontends import spelled, spellings_for

        q = affine_example()
        torch = next(s for s in spellings_for(family.name) if s.frontend == TORCH)
        return spelled(q.replace(context=()), torch).replace(context=q.context)

    def affine(frontend: str) -> Any:
        return lambda p: p.frontend == frontend and any(op.op in QDQ_OPS for op in p.context)

    gates = family.release_gates
    if family.name in QDQ_FAMILIES:  # the roots a QDQ chain is drawn around (a free float operand)
        plain = lambda p: p.replace(context=generic_quantization(p.context))  # noqa: E731
        gates += (ReleaseGate("context affine quantization", "iree_linalg_ext.dequantize_affine", affine(LINALG),
                              affine_example, instead=plain),
                  ReleaseGate("context torch quantization", "torch.quantized_decomposed.dequantize_per_tensor",
                              affine(TORCH), torch_affine_example, instead=plain))
    return dataclasses.replace(family, hooks=hooks, export_rule=export_rule, release_gates=gates)


# The families whose roots take a free float operand (a QDQ chain is drawn around them:
# `strategy._draw_qdq`); checked by tests/test_quantized_chains.py.
# (one_hot too: `strategy._draw_qdq` draws the chain for any root with a free float operand, and without
# its gate `--without quantized` left one_hot's affine dequantize in, as a release without the op would)
QDQ_FAMILIES = ("conv", "conv_transpose", "scatter", "one_hot", "topk", "pool", "sort", "gather", "reduce", "attention",
                "matmul", "norm")


def generic_quantization(chain: Chain) -> Chain:
    """The chain with each affine (de)quantize as the generic-bodied op of the same values (what
    a release without IREE's affine ops parses)."""
    plain = {"dequantize_affine": "dequantize", "quantize_affine": "quantize"}
    out = []
    for op in chain:
        if op.op in plain:
            extra: dict[str, Any] = {"from": "i8"} if op.op == "dequantize_affine" else {}
            where: dict[str, Any] = {"operand": op.operand} if op.is_producer else {"result": op.result}
            op = ContextOp.make(plain[op.op], **where, **extra, scale=op.get("scale"), zero_point=op.get("zero_point"))
        out.append(op)
    return tuple(out)


__all__ = ["KEY", "SHARE", "bare", "set_share", "share", "sharing", "with_context"]
