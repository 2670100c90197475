"""The pool family's inputs and NumPy reference, from the definition (params.py's docstring).

Inputs are small multiples of 1/4, so every window sum is exact in f32 and f16 (|x| <= 64 in
f32; |x| <= 2 in f16, whose sums of at most 125 elements stay below 512); max and sum are then
exact, and an average is one division, allowed two ulps (the compiler may divide by a reciprocal)."""

from __future__ import annotations

import itertools

import numpy as np

from shapefuzz.families.common import compare_arrays, np_dtype
from shapefuzz.families.pool.params import Params, input_shape, out_spatial, perm_to
from shapefuzz.model import Mismatch

# Two ulps of the element type, for averages only.
AVG_RTOL = {"f32": 2.0 ** -22, "f16": 2.0 ** -9}


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = tuple(input_shape(p))
    x: np.ndarray  # float quarters or integers
    if p.dtype == "f32":
        x = rng.integers(-256, 257, size=shape) / 4.0
    elif p.dtype == "f16":
        x = rng.integers(-8, 9, size=shape) / 4.0
    else:
        x = rng.integers(-1000, 1001, size=shape)
    return [np.ascontiguousarray(x.astype(np_dtype(p.dtype)))]


def _window_positions(p: Params, i: int, o: int) -> list[int]:
    start = o * p.strides[i] - p.pad_lo[i]
    return [start + j * p.dilations[i] for j in range(p.kernel[i])]


def _divisor(p: Params, positions: list[list[int]]) -> int:
    count = 1
    for i, pos in enumerate(positions):
        lo, hi = (-p.pad_lo[i], p.spatial[i] + p.pad_hi[i]) if p.count_include_pad else (0, p.spatial[i])
        count *= sum(lo <= q < hi for q in pos)
    return count


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    x = np.transpose(inputs[0], perm_to(p.layout, p.rank, "nc")).astype(np.float64)  # [N, C, S...]
    outs = out_spatial(p)
    y = np.zeros((p.n, p.c, *outs), dtype=np.float64)
    for o in itertools.product(*(range(n) for n in outs)):
        positions = [_window_positions(p, i, o[i]) for i in range(p.rank)]
        inside = [[q for q in pos if 0 <= q < p.spatial[i]] for i, pos in enumerate(positions)]
        window = x[(slice(None), slice(None)) + np.ix_(*inside)] if p.rank else x
        flat = window.reshape(p.n, p.c, -1)
        if p.kind == "max":
            value = flat.max(axis=2)
        else:
            value = flat.sum(axis=2)
            if p.kind == "avg":
                value = value / _divisor(p, positions)
        y[(slice(None), slice(None)) + o] = value
    y = np.transpose(y, perm_to("nc", p.rank, p.layout))
    return [np.ascontiguousarray(y.astype(np_dtype(p.dtype)))]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    tolerance: dict[str, tuple[float, float]] | None = {p.dtype: (AVG_RTOL[p.dtype], 0.0)} if p.kind == "avg" else None
    return compare_arrays(expected, actual, tolerance=tolerance)
