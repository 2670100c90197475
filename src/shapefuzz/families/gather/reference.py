"""The gather family's inputs (every index in range, exact values), NumPy reference and the exact
comparison (a gather moves values, it computes nothing)."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import compare_arrays, np_dtype
from shapefuzz.families.gather.params import Params, arg_index_shape, used_index_shape
from shapefuzz.model import Mismatch


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    src: np.ndarray = rng.integers(-100, 101, size=tuple(p.src_shape))
    if p.dtype in ("f32", "f16"):
        src = src / 4.0
    used = used_index_shape(p)
    cols = used + ([1] if p.implicit_depth else [])
    idx = np.empty(cols, dtype=np.int64)
    for j, q in enumerate(p.dimension_map):
        idx[..., j] = rng.integers(0, p.src_shape[q], size=tuple(cols[:-1]))
    idx = idx.reshape(used)
    if p.index_layout == "transposed":
        arg = np.moveaxis(idx, -1, 0)
    elif p.index_layout == "strided":
        arg = np.zeros(arg_index_shape(p), dtype=np.int64)
        arg[0::2] = idx
        arg[1::2] = -7  # rows the op never reads: out of range, so reading one shows
    else:
        arg = idx
    return [np.ascontiguousarray(src.astype(np_dtype(p.dtype))), np.ascontiguousarray(arg.astype(np_dtype(p.index_dtype)))]


def used_indices(p: Params, arg: np.ndarray) -> np.ndarray:
    """[B..., depth] as the op sees them."""
    if p.index_layout == "transposed":
        arg = np.moveaxis(arg, 0, -1)
    elif p.index_layout == "strided":
        arg = arg[0::2]
    return arg.reshape(list(p.batch_shape) + [p.depth]).astype(np.int64)


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    src, idx = inputs[0], used_indices(p, inputs[1])
    coords: list[np.ndarray | None] = [None] * p.depth
    for j, q in enumerate(p.dimension_map):
        coords[q] = idx[..., j]
    return [np.array(src[tuple(coords)], copy=True)]  # stays 0-d for a rank-0 result (ascontiguousarray would not)


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_arrays(expected, actual)
