"""The matmul family's inputs, NumPy reference and comparison. Float operands are multiples of 1/4
with |x| <= 2 (exact in f16 and bf16), so every product and every f32 sum of them is exact, in any
order: an f32 result is compared exactly. An f16 / bf16 result is the exact sum rounded once;
a frontend may accumulate in that type, so it is judged within the error bound of a K-term sum in
it: u * (|c| + (K + 2) * (|alpha| * sum_k |a||b| + |beta * bias|)), u the type's unit roundoff.
i8 operands span the whole range (a quarter of them at -128 or 127; an operand read as u8 is a
uint8 array over 0..255, a quarter at 0 or 255) and are summed exactly in int64: (a - a_zp) .
(b - b_zp), a zero point per row of A or per column of B where the case has them, wrapped to i32
as `arith.addi` would (the strategy keeps K small enough that nothing wraps). The qdq form computes
the same in f32 (every partial sum exact, params.QDQ_MAX_K), scaled back to i32 exactly. A case
with a root-operand form (operands.py) starts its sum at the constant or scalar accumulator (added
before alpha, as the IR does), or reads B's values from its constant."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import count_mismatch, shape_mismatch, values_mismatch
from shapefuzz.families.matmul.operands import operands, scalar_input
from shapefuzz.families.matmul.params import I8_MAX, I8_MIN, U8_MAX, Params, a_shape, b_shape, bias_shape, zero_points
from shapefuzz.model import Mismatch

UNIT_ROUNDOFF = {"f16": 2.0 ** -11, "bf16": 2.0 ** -8}
# What crosses the function boundary (.npy carries no bf16: bf16 operands and results travel as f32).
BOUNDARY = {"f32": "f32", "f16": "f16", "bf16": "f32", "i8": "i8", "i32": "i32"}
_NUMPY = {"f32": np.float32, "f16": np.float16, "i8": np.int8, "u8": np.uint8, "i32": np.int32}


def boundary_elt(elt: str) -> str:
    return BOUNDARY[elt]


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shapes = [a_shape(p), b_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    out = []
    x: np.ndarray  # i8 values or float quarters
    for i, shape in enumerate(shapes):
        if p.quantized:
            lo, hi = (0, U8_MAX) if (p.a_unsigned, p.b_unsigned)[i] else (I8_MIN, I8_MAX)
            x = rng.integers(lo, hi + 1, size=tuple(shape))
            edge = rng.random(tuple(shape)) < 0.25
            x = np.where(edge, rng.choice(np.array([lo, hi]), size=tuple(shape)), x)
            elt = "u8" if lo == 0 else "i8"
        else:
            x = rng.integers(-8, 9, size=tuple(shape)) / 4.0
            elt = boundary_elt(p.dtype if i < 2 else p.out)
        out.append(np.ascontiguousarray(x.astype(_NUMPY[elt])))
    if p.operand == "folded":  # B is the graph's own (the other arguments keep their plain values)
        del out[1]
    if p.operand == "scalar":
        out.append(scalar_input(p, rng))
    return out


def _b_dtype(p: Params) -> type:
    return (np.uint8 if p.b_unsigned else np.int8) if p.quantized else _NUMPY[boundary_elt(p.dtype)]


def _logical(p: Params, inputs: list[np.ndarray], wide: type) -> tuple[np.ndarray, np.ndarray]:
    """A as [.., M, K] and B as [.., K, N] in a wide type, zero points subtracted (a u8 operand is a
    uint8 array: it widens to 0..255)."""
    a_in, b_in, _, _ = operands(p, inputs, _b_dtype(p))
    a: np.ndarray = a_in.astype(wide)
    b: np.ndarray = b_in.astype(wide)
    a = a[..., None, :] if p.vec == "vecmat" else (np.swapaxes(a, -1, -2) if p.trans_a else a)
    b = b[..., :, None] if p.vec == "matvec" else (np.swapaxes(b, -1, -2) if p.trans_b else b)
    a_zp: np.ndarray = np.array(zero_points(p, "a"), dtype=wide)
    b_zp: np.ndarray = np.array(zero_points(p, "b"), dtype=wide)
    return a - (a_zp[:, None] if p.a_zp_per == "row" else a_zp[0]), b - (b_zp[None, :] if p.b_zp_per == "col" else b_zp[0])


def _drop_vec(p: Params, c: np.ndarray) -> np.ndarray:
    if p.vec == "matvec":
        return c[..., 0]
    if p.vec == "vecmat":
        return c[..., 0, :]
    return c


def round_bf16(x: np.ndarray) -> np.ndarray:
    """f32 values rounded to the nearest bf16 (ties to even), as f32: what `arith.truncf` gives."""
    bits = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    low = (1 << 16) - 1  # the 16 bits bf16 drops
    bits = (bits + (low >> 1) + ((bits >> 16) & 1)) & ~np.uint64(low)
    return bits.astype(np.uint32).view(np.float32)


def exact(p: Params, inputs: list[np.ndarray]) -> np.ndarray:
    """The result before its final rounding (float64, or int64 for i8)."""
    wide = np.int64 if p.quantized else np.float64
    a, b = _logical(p, inputs, wide)
    _, _, bias, init = operands(p, inputs, _b_dtype(p))
    c = _drop_vec(p, np.matmul(a, b))
    if init is not None:  # the accumulator the sum starts at (a constant, or a scalar broadcast)
        c = c + init.astype(wide)
    c = c * (1 if p.quantized else p.alpha)
    if bias is not None:
        c = c + p.beta * bias.astype(np.float64)
    return c


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    c = exact(p, inputs)
    if p.quantized:
        return [np.ascontiguousarray(c.astype(np.int32))]  # wraps as i32 arithmetic does
    if p.out == "bf16":
        return [np.ascontiguousarray(round_bf16(c.astype(np.float32)))]
    return [np.ascontiguousarray(c.astype(_NUMPY[p.out]))]


def tolerance(p: Params, inputs: list[np.ndarray]) -> np.ndarray | float:
    """0 where the result is exact (an f32 or i32 result); else the per-element bound above."""
    if p.out not in UNIT_ROUNDOFF:
        return 0.0
    a, b = _logical(p, inputs, np.float64)
    _, _, bias, init = operands(p, inputs, _b_dtype(p))
    s = abs(p.alpha) * _drop_vec(p, np.matmul(np.abs(a), np.abs(b)))
    if init is not None:
        s = s + abs(p.alpha) * np.abs(init.astype(np.float64))
    if bias is not None:
        s = s + abs(p.beta) * np.abs(bias.astype(np.float64))
    return UNIT_ROUNDOFF[p.out] * (np.abs(exact(p, inputs)) + (p.k + 2) * s)


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual) or shape_mismatch(0, expected[0], np.asarray(actual[0]))
    if problem:
        return problem
    return values_mismatch(0, expected[0], np.asarray(actual[0]), atol=tolerance(p, inputs))
