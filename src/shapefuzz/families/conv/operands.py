"""The conv family's root-operand forms (families/operands.py): "const" accumulates into a dense
non-splat constant instead of a zero fill, "scalar" into a 0-d tensor argument (the last one)
broadcast over the output, "folded" computes the filter inside the graph (a constant of its
halves doubled by a linalg.generic) instead of taking it as an argument. The constant values are
laid out by output (filter) coordinate in the boundary layout, so every compute layout of a case
reads the same ones."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import is_float, np_dtype
from shapefuzz.families.conv.params import Params, boundary_labels
from shapefuzz.families.conv.shapes import compute_labels, filter_shape, output_shape
from shapefuzz.families.operands import fits_constant, pattern, quarters

_INT_INIT = 64  # integer accumulator values: small beside i32


def operand_forms(p: Params) -> tuple[str, ...]:
    """An accumulator other than a zero fill (not when a bias fills it, nor for the qdq form, whose
    f32 result is rescaled to i32), and the filter computed from constants."""
    if p.big:
        return ()
    forms: list[str] = []
    if p.bias != "init" and not p.qdq:
        forms += ["const"] if fits_constant(output_shape(p)) else []
        forms.append("scalar")
    if fits_constant(filter_shape(p)):
        forms.append("folded")
    return tuple(forms)


def init_values(p: Params) -> np.ndarray:
    """The "const" accumulator in the boundary output layout, in the accumulator's type."""
    if is_float(p.acc):
        return quarters(output_shape(p))
    return pattern(output_shape(p), -_INT_INIT, _INT_INIT)


def init_in_compute_layout(p: Params) -> np.ndarray:
    """`init_values`, its dims in the order the convolution's output takes them."""
    out = boundary_labels(p)[2]
    return np.transpose(init_values(p), [out.index(lab) for lab in compute_labels(p)[2]])


def filter_values(p: Params) -> np.ndarray:
    """The "folded" filter in the boundary filter layout, in the filter's type: even integers (the
    constant holds their halves) in the range the plain inputs take, or multiples of 1/4 in [-1, 1]."""
    shape = filter_shape(p)
    if is_float(p.dtype):
        return quarters(shape, limit=1).astype(np_dtype(p.dtype))
    quantized = p.input_zp or p.filter_zp or p.qdq  # (whose plain inputs span all of i8)
    half = 64 if p.dtype == "i8" and quantized else 2 if p.dtype == "i8" else 4
    return (2 * pattern(shape, -half, half - 1)).astype(np_dtype(p.dtype))


def scalar_input(p: Params, rng: np.random.Generator) -> np.ndarray:
    """The "scalar" accumulator argument: a 0-d array of the accumulator's type."""
    if is_float(p.acc):
        return np.array(rng.integers(-8, 9) / 4.0, dtype=np_dtype(p.acc))
    return np.array(rng.integers(-_INT_INIT, _INT_INIT + 1), dtype=np.int32)


def operands(p: Params, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                                           np.ndarray | None]:
    """(input, filter, bias or None, the accumulator's start in the boundary layout or None)."""
    rest = list(inputs[1:])
    w = filter_values(p) if p.operand == "folded" else rest.pop(0)
    bias = rest.pop(0) if p.bias != "none" else None
    init = init_values(p) if p.operand == "const" else rest.pop(0) if p.operand == "scalar" else None
    return inputs[0], w, bias, init
