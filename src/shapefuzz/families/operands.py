"""Root-operand forms (issue 45, item 4): operands of a family's root op in the forms IREE bug
reports needed and plain draws never make. A case's params carry `"operand": <form>` (left out of
the header when plain):

- "const": a dense non-splat `arith.constant` operand (an accumulator, a reduction's init, a
  scatter's original, gather's indices), its values fixed by the params (`pattern`, or the plain
  case's inputs at seed 0); the reference adds or reads the same values;
- "folded": an operand computed inside the graph from constants, what IREE's const-eval folds: a
  weight (matmul's B, conv's filter) or a reduction's init as a constant of halves doubled by a
  `linalg.generic`, gather / scatter indices as an iota-like `linalg.generic` of `linalg.index`;
- "scalar": a 0-d tensor operand: a `tensor<f32>` (or integer) argument broadcast into an
  accumulator or a reduction's init (a 0-d result's init is the argument itself), the one index of
  a gather or scatter as a 0-d tensor;
- "unranked" (torch spellings, every family that has one): each tensor argument passes through
  `!torch.vtensor` with no rank, sizes or dtype and back (`torch.tensor_static_info_cast`), as
  TorchScript-era imports leave values.

A family writes the linalg forms itself: its package's `operand_forms(p)` names the ones that write
a case, and `OPERAND_EXAMPLES` gives a small case of each (the release gate's example, and what
tests/families/test_operand_forms.py compiles). `with_operands(family)` draws a form for one case
in SHARE where one applies, after every other draw (so the rest of each seed's draw is what it
was), never inside a chain; refuses a form that does not write a case (invalid, and one line when
rendered); adds the `operand:<form>` feature, a shrink step back to the plain operands, and a release
gate per form (a release that does not parse a form's example gets the plain operands instead)."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any, Callable, Sequence

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.base import (
    FRONTEND_OPERANDS, LINALG, OPERANDS, Family, FamilyParams, HookTable, ReleaseGate, no_operand_forms)

# Of every SHARE draws whose case some form writes, one gets a form (the rest are drawn as before).
SHARE = 6
TORCH = "torch"
# A constant operand holds at most this many elements (a literal of 4096 values is ~25 KB of text).
MAX_CONSTANT_ELEMENTS = 1 << 12
# What a release must parse for each form (a gate's `needs`).
NEEDS = {
    "const": "a dense non-splat arith.constant root operand (tensor.cast to its '?' type)",
    "folded": "a root operand computed from constants by linalg.generic",
    "scalar": "a 0-d tensor root operand",
    "unranked": "torch.tensor_static_info_cast to and from !torch.vtensor",
}
DESCRIPTIONS = {
    "const": "a dense non-splat constant",
    "folded": "computed in the graph from constants",
    "scalar": "a 0-d tensor",
    "unranked": "through a torch tensor without static rank",
}


def describe(form: str) -> str:
    """"operand: const (a dense non-splat constant)": how a report names a case's form ("" plain)."""
    return f"operand: {form} ({DESCRIPTIONS.get(form, 'unknown form')})" if form else ""


def reproducer_operand(mlir: str | None) -> str:
    """`describe` of the form a reproducer's case header names ("": none, no header, a broken one)."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.errors import ShapefuzzError

    try:
        case = case_from_mlir(mlir) if mlir else None
    except (ShapefuzzError, ValueError):
        return ""
    form = case.params.get("operand") if case is not None and isinstance(case.params, dict) else None
    return describe(form) if isinstance(form, str) and form in OPERANDS else ""


# ----------------------------------------------------------------------------- values and literals


def pattern(shape: Sequence[int], lo: int, hi: int) -> np.ndarray:
    """Integers in [lo, hi] over `shape`, non-splat wherever it holds two elements or more
    (neighbours differ by 7 modulo the range): the values of a constant operand."""
    count = int(np.prod(shape, dtype=np.int64))
    span = hi - lo + 1
    return (lo + (np.arange(count, dtype=np.int64) * 7 + 3) % span).reshape(tuple(shape))


def quarters(shape: Sequence[int], limit: int = 2) -> np.ndarray:
    """Multiples of 1/4 in [-limit, limit] (exact in f16 and bf16; f32 sums of them exact)."""
    return pattern(shape, -4 * limit, 4 * limit) / 4.0


def fits_constant(shape: Sequence[int]) -> bool:
    return int(np.prod(shape, dtype=np.int64)) <= MAX_CONSTANT_ELEMENTS


def _scalar_text(value: Any, elt: str) -> str:
    if elt.startswith(("f", "bf")):
        return repr(float(value))
    return str(int(value))


def dense(values: np.ndarray, elt: str) -> str:
    """`dense<...>` of an array in MLIR's nested form (a 0-d one: `dense<1.5>`)."""
    def nest(a: np.ndarray) -> str:
        if a.ndim == 0:
            return _scalar_text(a.item(), elt)
        return "[" + ", ".join(nest(x) for x in a) + "]"

    return f"dense<{nest(np.asarray(values))}>"


def static_type(shape: Sequence[int], elt: str) -> str:
    return "tensor<" + "".join(f"{s}x" for s in shape) + elt + ">"


def constant_lines(name: str, values: np.ndarray, elt: str, declared: str) -> list[str]:
    """`name` = the values as a constant, cast to the declared type where it has `?` dims."""
    static = static_type(values.shape, elt)
    if static == declared:
        return [f"{name} = arith.constant {dense(values, elt)} : {static}"]
    return [f"{name}_cst = arith.constant {dense(values, elt)} : {static}",
            f"{name} = tensor.cast {name}_cst : {static} to {declared}"]


def doubled_lines(name: str, values: np.ndarray, elt: str, declared: str) -> list[str]:
    """`name` = `values` computed in the graph: a constant of their halves doubled by a
    linalg.generic (x + x; an integer one wraps as the values' i8 bits do), cast to the declared
    type. Every value must be even (integers) or a multiple of 1/8 (floats)."""
    static = static_type(values.shape, elt)
    halves = values / 2 if elt.startswith(("f", "bf")) else np.asarray(values) // 2
    rank = values.ndim
    ident = "affine_map<(" + ", ".join(f"d{i}" for i in range(rank)) + ") -> (" + \
        ", ".join(f"d{i}" for i in range(rank)) + ")>"
    add = "arith.addf" if elt.startswith(("f", "bf")) else "arith.addi"
    doubled = f"{name}_dbl" if static != declared else name
    lines = [f"{name}_half = arith.constant {dense(halves, elt)} : {static}",
             f"{name}_e = tensor.empty() : {static}",
             f"{doubled} = linalg.generic {{indexing_maps = [{ident}, {ident}], iterator_types = ["
             + ", ".join(['"parallel"'] * rank) + f"]}} ins({name}_half : {static}) outs({name}_e : {static}) {{",
             f"^bb0(%h: {elt}, %o: {elt}):",
             f"  %h2 = {add} %h, %h : {elt}",
             f"  linalg.yield %h2 : {elt}",
             f"}} -> {static}"]
    if doubled != name:
        lines.append(f"{name} = tensor.cast {doubled} : {static} to {declared}")
    return lines


def i8_bits(values: np.ndarray) -> np.ndarray:
    """u8 values (0..255) as the i8 bits that hold them: what an i8 constant spells."""
    return np.asarray(values, dtype=np.int64).astype(np.uint8).view(np.int8).astype(np.int64)


# ----------------------------------------------------------------------------- unranked (torch)

_ARG = re.compile(r"(%[\w.$-]+): (!torch\.vtensor<\[[^\]]*\],\w+>)")


def unranked(text: str) -> str:
    """The torch function with each tensor argument cast to `!torch.vtensor` (no static
    information) and back to its type before any op reads it."""
    head, brace, body = text.partition("{\n")
    signature = head[head.index("func.func @main("):]
    signature = signature[:signature.index(") ->")]
    args = _ARG.findall(signature)
    if not brace or not args:
        raise ValueError("unranked: no !torch.vtensor argument to take the rank from")
    casts = []
    for name, ty in args:
        body = re.sub(re.escape(name) + r"(?![\w.$-])", f"{name}_ranked", body)
        casts += [f"  {name}_unranked = torch.tensor_static_info_cast {name} : {ty} to !torch.vtensor\n",
                  f"  {name}_ranked = torch.tensor_static_info_cast {name}_unranked : !torch.vtensor to {ty}\n"]
    return head + brace + "".join(casts) + body


# ----------------------------------------------------------------------------- the wrapper


@st.composite
def _drawn(draw: Any, inner: st.SearchStrategy[FamilyParams],
           forms_for: Callable[[FamilyParams], tuple[str, ...]]) -> FamilyParams:
    """A case of `inner`, with a form (one of those that write it) for the top roll of SHARE (the
    least likely under Hypothesis's shrinking). Small draws, and a pick only after the roll: a
    wide trailing draw would make Hypothesis's @given search repeat the same cases over it.
    Decorated once here (`st.composite` reads the function's source)."""
    p = draw(inner)
    forms = forms_for(p)  # (a case no form writes draws nothing more: ONNX spellings, chains)
    if not forms or draw(st.integers(0, SHARE - 1)) != SHARE - 1:
        return p
    return p.replace(operand=forms[draw(st.integers(0, len(forms) - 1))])



def with_operands(family: Family) -> Family:
    """`family` with its root-operand forms drawn, checked, rendered (torch's), featured and gated."""
    own = family.hooks
    linalg_forms = family.operand_forms
    torch_example = functools.partial(_torch_example, family)

    def forms_for(p: FamilyParams) -> tuple[str, ...]:
        """The forms that write the case (its own form ignored); none inside a chain."""
        q = p.replace(operand="") if p.operand else p
        if q.context:
            return ()
        if q.frontend == TORCH:
            return ("unranked",) if torch_example() is not None else ()
        return tuple(linalg_forms(q)) if q.frontend == LINALG else ()

    def problem(p: FamilyParams) -> str:
        if not p.operand or p.operand in forms_for(p):
            return ""
        return (f"{family.name}: operand form {p.operand!r} does not write this case"
                f" (it takes {', '.join(map(repr, forms_for(p))) or 'no operand form'})")

    def plain(p: FamilyParams) -> FamilyParams:
        """The params the inner hooks take: a frontend's form is this module's, not the family's."""
        return p.replace(operand="") if p.operand in FRONTEND_OPERANDS else p

    def strategy(*regime: str) -> st.SearchStrategy[FamilyParams]:
        if linalg_forms is no_operand_forms and torch_example() is None:  # (onnx_op): drawn as before
            return own.strategy(*regime)
        return _drawn(own.strategy(*regime), forms_for)

    def render(p: FamilyParams) -> str:
        why = problem(p)
        if why:
            raise ValueError(why)
        if p.operand in FRONTEND_OPERANDS:
            return unranked(own.render(plain(p)))
        return own.render(p)

    def is_valid(p: FamilyParams) -> bool:
        return not problem(p) and bool(own.is_valid(plain(p)))

    def equivalent_forms(p: FamilyParams) -> list[FamilyParams]:
        if p.operand in FRONTEND_OPERANDS:  # the same torch case with its ranks, and its other forms
            q = plain(p)
            return [q] + list(own.equivalent_forms(q))
        return list(own.equivalent_forms(p))

    def shrink_candidates(p: FamilyParams) -> list[FamilyParams]:
        inner = list(own.shrink_candidates(plain(p)))
        if not p.operand:
            return inner
        kept = inner if p.operand not in FRONTEND_OPERANDS else [q.replace(operand=p.operand) for q in inner]
        return [p.replace(operand="")] + kept

    def features(p: FamilyParams) -> list[str]:
        return list(own.features(plain(p))) + ([f"operand:{p.operand}"] if p.operand else [])

    def passing(hook: str) -> Any:
        return lambda p, *args: own[hook](plain(p), *args)

    hooks = HookTable(own, strategy=strategy, render=render, is_valid=is_valid, equivalent_forms=equivalent_forms,
                      shrink_candidates=shrink_candidates, features=features, make_inputs=passing("make_inputs"),
                      reference=passing("reference"), compare=passing("compare"))
    examples: dict[str, Callable[[], Any]] = {
        form: functools.partial(family.load, ex) for form, ex in family.operand_examples.items()}
    unranked_example = torch_example()
    if unranked_example is not None:
        examples["unranked"] = lambda: unranked_example
    gates = tuple(ReleaseGate(f"operand {form}", NEEDS[form], functools.partial(_is_form, form), example,
                              instead=lambda p: p.replace(operand=""))
                  for form, example in examples.items())
    return dataclasses.replace(family, hooks=hooks, release_gates=family.release_gates + gates,
                               export_rule=lambda p: family.export_rule(plain(p)))


def _is_form(form: str, p: FamilyParams) -> bool:
    return p.operand == form


_EXAMPLES: dict[str, FamilyParams | None] = {}


def _torch_example(family: Family) -> FamilyParams | None:
    """The family's example spelled in torch with the "unranked" form (None: no torch spelling of
    it); the families with one draw the form. Kept per family name (a family is built per call)."""
    from shapefuzz.families.frontends import linalg_params, spelled, spellings_for

    if family.name not in _EXAMPLES:
        torch = next((s for s in spellings_for(family.name) if s.frontend == TORCH), None)
        q = linalg_params(family.load(family.example)) if torch is not None and family.example else None
        _EXAMPLES[family.name] = spelled(q, torch).replace(operand="unranked") \
            if torch is not None and q is not None and torch.expressible(q) else None
    return _EXAMPLES[family.name]


__all__ = ["DESCRIPTIONS", "MAX_CONSTANT_ELEMENTS", "NEEDS", "OPERANDS", "SHARE", "constant_lines", "dense", "describe",
           "doubled_lines", "fits_constant", "i8_bits", "no_operand_forms", "pattern", "quarters", "static_type",
           "unranked", "with_operands"]
