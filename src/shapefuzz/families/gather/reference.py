"""The gather family's inputs (every index in range, exact values), NumPy reference and the exact
comparison (a gather moves values, it computes nothing). A root-operand form's indices (operands.py)
are read from the same constants the module holds, or from its 0-d argument."""

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
    out = [np.ascontiguousarray(src.astype(np_dtype(p.dtype))), np.ascontiguousarray(arg.astype(np_dtype(p.index_dtype)))]
    if p.operand in ("const", "folded"):  # the indices are the module's own
        return out[:1]
    return out if p.operand != "scalar" else [out[0], np.array(out[1].reshape(()), copy=True)]


# The root-operand forms' indices (operands.py renders them).


def batch_strides(p: Params) -> list[int]:
    """Each batch dim's stride in the linear batch index (row-major)."""
    strides: list[int] = []
    step = 1
    for size in reversed(p.batch_shape):
        strides.insert(0, step)
        step *= size
    return strides


def iota_indices(p: Params) -> np.ndarray:
    """The "folded" indices as the op reads them ([B..., depth], or [B...] with an implicit depth)."""
    cols = list(p.batch_shape) + [p.depth]
    lin = np.zeros(cols[:-1], dtype=np.int64)
    for k, stride in enumerate(batch_strides(p)):
        shape = [1] * len(p.batch_shape)
        shape[k] = p.batch_shape[k]
        lin = lin + stride * np.arange(p.batch_shape[k]).reshape(shape)
    out = np.stack([(5 * lin + 3 * j + 1) % p.src_shape[p.dimension_map[j]] for j in range(p.depth)], axis=-1)
    return out.reshape(used_index_shape(p))


def constant_indices(p: Params) -> np.ndarray:
    """The "const" indices: the plain case's indices argument at seed 0."""
    return make_inputs(p.replace(operand=""), 0)[1]


def index_argument(p: Params, inputs: list[np.ndarray]) -> np.ndarray:
    """The indices as the plain case's argument holds them, from the arguments or the constants."""
    if p.operand == "const":
        return constant_indices(p)
    if p.operand == "folded":
        return iota_indices(p)
    return inputs[1]


def used_indices(p: Params, arg: np.ndarray) -> np.ndarray:
    """[B..., depth] as the op sees them."""
    if p.index_layout == "transposed":
        arg = np.moveaxis(arg, 0, -1)
    elif p.index_layout == "strided":
        arg = arg[0::2]
    return arg.reshape(list(p.batch_shape) + [p.depth]).astype(np.int64)


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    src, idx = inputs[0], used_indices(p, index_argument(p, inputs))
    coords: list[np.ndarray | None] = [None] * p.depth
    for j, q in enumerate(p.dimension_map):
        coords[q] = idx[..., j]
    return [np.array(src[tuple(coords)], copy=True)]  # stays 0-d for a rank-0 result (ascontiguousarray would not)


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_arrays(expected, actual)
