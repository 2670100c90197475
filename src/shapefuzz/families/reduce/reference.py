"""The reduce family's inputs, reference and comparison. Inputs are small multiples of 1/4, so every
sum is exact in any order (f32 accumulation of f16 inputs included; an f16 accumulator only where
its partial sums stay below 512); max / min are exact. Arg-max / arg-min indices are judged by the
value they select (in range, and the extreme of their slice), never by which of tied positions.
A root-operand form's init (operands.py) is where the reduction starts: added to a sum, one more
candidate of a max or min."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import count_mismatch, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.families.reduce.operands import scalar_input, start
from shapefuzz.families.reduce.params import ARG_KINDS, Params, out_shape
from shapefuzz.model import Mismatch, MismatchKind


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = tuple(p.shape)
    x: np.ndarray  # float quarters or integers
    if p.dtype == "f32":
        x = rng.integers(-256, 257, size=shape) / 4.0
    elif p.dtype == "f16":
        x = rng.integers(-8, 9, size=shape) / 4.0
    else:
        x = rng.integers(-1000, 1001, size=shape)
    out = [np.ascontiguousarray(x.astype(np_dtype(p.dtype)))]
    return out + ([scalar_input(p, rng)] if p.operand == "scalar" else [])


def _extreme(p: Params, x: np.ndarray) -> np.ndarray:
    fn = np.max if p.kind in ("max", "argmax") else np.min
    return fn(x, axis=tuple(p.dims))


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    x = inputs[0]
    shape = out_shape(p)
    init = start(p, inputs)
    if p.kind == "sum":
        wide = x.astype(np.float64 if x.dtype.kind == "f" else np.int64).sum(axis=tuple(p.dims))
        if init is not None:
            wide = wide + init.astype(wide.dtype)
        return [np.array(wide.astype(np_dtype(p.out_elt))).reshape(shape)]
    extreme = np.array(_extreme(p, x))
    if init is not None:  # the init is one more candidate
        extreme = (np.maximum if p.kind == "max" else np.minimum)(extreme, init.astype(extreme.dtype))
    value = np.array(extreme).reshape(shape)
    if p.kind not in ARG_KINDS:
        return [value]
    fn = np.argmax if p.kind == "argmax" else np.argmin
    index = np.array(fn(x, axis=p.dims[0]).astype(np_dtype(p.index_dtype))).reshape(shape)
    return [value, index] if p.use == "both" else [index]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    names = ["values", "indices"] if p.kind in ARG_KINDS and p.use == "both" else (
        ["indices"] if p.kind in ARG_KINDS else ["values"])
    for i, (name, want, got) in enumerate(zip(names, expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got)
        if problem:
            return Mismatch(problem.kind, f"{name}: {problem.detail}")
        if name == "values":
            problem = values_mismatch(i, want, got)
            if problem:
                return problem
            continue
        detail = _check_indices(p, inputs[0], got)
        if detail:
            return Mismatch(MismatchKind.INDICES, f"indices: {detail}")
    return None


def _check_indices(p: Params, x: np.ndarray, got: np.ndarray) -> str | None:
    dim, n = p.dims[0], p.shape[p.dims[0]]
    idx = got.astype(np.int64)
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        return f"index {int(idx[(idx < 0) | (idx >= n)].flat[0])} out of range [0, {n})"
    picked = np.take_along_axis(x, idx.reshape(out_shape(p) if p.keepdims else np.expand_dims(idx, dim).shape), axis=dim)
    want = np.array(_extreme(p, x)).reshape(picked.shape)
    bad = picked != want
    if bad.any():
        first = tuple(int(v) for v in np.argwhere(bad)[0])
        return f"{int(bad.sum())} of {bad.size} indices select a value that is not the slice's {p.kind[3:]}; " \
               f"first at {list(first)}: selects {picked[first]!r}, the {p.kind[3:]} is {want[first]!r}"
    return None
