"""The reduce family's root-operand forms (families/operands.py), for sum / max / min in one
reduction (the chain form has an init per step; an arg kind's index is judged by the value it
selects, which an init could hold): the init is a dense non-splat constant ("const"), the same
values computed in the graph (a constant of their halves doubled: "folded"; the two are
equivalent forms of each other), or a 0-d tensor argument ("scalar", the last one; a 0-d result's
init is the argument itself, a larger one its broadcast). The reduction starts from the init: a
sum adds it, a max or min takes it as one more candidate."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import np_dtype
from shapefuzz.families.operands import fits_constant, pattern, quarters
from shapefuzz.families.reduce.params import ARG_KINDS, Params, reduced_shape


def operand_forms(p: Params) -> tuple[str, ...]:
    if p.big or p.kind in ARG_KINDS or p.form == "chain":
        return ()
    return (("const", "folded") if fits_constant(reduced_shape(p)) else ()) + ("scalar",)


def init_values(p: Params) -> np.ndarray:
    """The "const" / "folded" init, in the result's type: values of the inputs' own range (so a
    max or min sometimes keeps one), even integers or multiples of 1/4 (their halves exact)."""
    shape = reduced_shape(p)
    if p.dtype == "i32":
        return 2 * pattern(shape, -500, 500)
    return quarters(shape, 64 if p.dtype == "f32" else 2).astype(np_dtype(p.out_elt))


def scalar_input(p: Params, rng: np.random.Generator) -> np.ndarray:
    if p.dtype == "i32":
        return np.array(rng.integers(-1000, 1001), dtype=np.int32)
    limit = 256 if p.dtype == "f32" else 8
    return np.array(rng.integers(-limit, limit + 1) / 4.0, dtype=np_dtype(p.out_elt))


def start(p: Params, inputs: list[np.ndarray]) -> np.ndarray | None:
    """The init the reduction starts from (None: the identity of its combiner)."""
    if p.operand in ("const", "folded"):
        return init_values(p)
    return inputs[1] if p.operand == "scalar" else None
