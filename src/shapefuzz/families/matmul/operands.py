"""The matmul family's root-operand forms (families/operands.py): "const" accumulates into a dense
non-splat constant instead of a zero fill, "scalar" into a 0-d tensor argument (the last one)
broadcast over the result, "folded" computes B inside the graph (a constant of its halves
doubled by a linalg.generic) instead of taking it as an argument. The accumulator's values are
added before alpha scales the sum and the result is rounded, exactly as the IR does."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.matmul.params import Params, b_shape, bias_shape, c_shape
from shapefuzz.families.operands import fits_constant, pattern, quarters

# Integer accumulator values: small beside i32, so no sum wraps.
_INT_INIT = 64


def operand_forms(p: Params) -> tuple[str, ...]:
    """The forms that write the case: an accumulator other than a zero fill (not for the qdq form,
    whose f32 sum is rescaled to i32), and B computed from constants."""
    if p.big:
        return ()
    forms: list[str] = []
    if p.form != "qdq":
        forms += ["const"] if fits_constant(c_shape(p)) else []
        forms.append("scalar")
    if fits_constant(b_shape(p)):
        forms.append("folded")
    return tuple(forms)


def init_values(p: Params) -> np.ndarray:
    """The "const" accumulator, [batch.., M, N] less the vector's dim, in the accumulator's type."""
    if p.quantized:
        return pattern(c_shape(p), -_INT_INIT, _INT_INIT)
    return quarters(c_shape(p))


def b_values(p: Params) -> np.ndarray:
    """The "folded" B as stored (u8 values for an operand read unsigned): even integers (the
    constant holds their halves) or multiples of 1/4 in [-2, 2]."""
    if p.quantized:
        lo, hi = (0, 127) if p.b_unsigned else (-64, 63)
        return 2 * pattern(b_shape(p), lo, hi)
    return quarters(b_shape(p))


def scalar_input(p: Params, rng: np.random.Generator) -> np.ndarray:
    """The "scalar" accumulator argument: a 0-d array of the accumulator's type."""
    if p.quantized:
        return np.array(rng.integers(-_INT_INIT, _INT_INIT + 1), dtype=np.int32)
    return np.array(rng.integers(-8, 9) / 4.0, dtype=np.float32)


def operands(p: Params, inputs: list[np.ndarray], b_dtype: type) -> tuple[np.ndarray, np.ndarray, np.ndarray | None,
                                                                      np.ndarray | None]:
    """(A, B, the bias or None, the accumulator's start or None) from the function's arguments."""
    rest = list(inputs[1:])
    b = b_values(p).astype(b_dtype) if p.operand == "folded" else rest.pop(0)
    bias = rest.pop(0) if p.bias != "none" else None
    init = init_values(p) if p.operand == "const" else rest.pop(0) if p.operand == "scalar" else None
    return inputs[0], b, bias, init


def argument_shapes(p: Params) -> list[list[int]]:
    """The function's arguments' shapes: A, B (unless folded), the bias, the scalar."""
    from shapefuzz.families.matmul.params import a_shape

    shapes = [a_shape(p)] + ([] if p.operand == "folded" else [b_shape(p)])
    return shapes + ([bias_shape(p)] if p.bias != "none" else []) + ([[]] if p.operand == "scalar" else [])
