"""The scatter family's inputs (exact in every combining order), NumPy reference, comparison and export
rule. A root-operand form's original or indices (operands.py) are read from the same constants the
module holds, or from its 0-d argument."""

from __future__ import annotations

import math

import numpy as np

from shapefuzz.families.base import EXACT
from shapefuzz.families.common import FLOAT_DTYPES, compare_arrays, np_dtype
from shapefuzz.families.scatter.params import Params, n_batch, n_coords, shape_table
from shapefuzz.model import Mismatch


# ----------------------------------------------------------------------------- inputs / reference


def _values(rng: np.random.Generator, p: Params, shape: list[int], role: str) -> np.ndarray:
    dt = np_dtype(p.dtype)
    if p.combiner == "mul":
        pool = [-2, -1, 1, 2, 0.5, -0.5] if p.dtype in FLOAT_DTYPES else [-2, -1, 1, 2]
        return rng.choice(np.array(pool), size=shape).astype(dt)
    if p.dtype in FLOAT_DTYPES:
        return (rng.integers(-16, 17, size=shape) / 4).astype(dt)  # multiples of 1/4 in [-4, 4]
    lo, hi = (-8, 9) if p.dtype == "i8" else (-100, 101)
    return rng.integers(lo, hi, size=shape).astype(dt)


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    d = p.depth
    indexed = p.orig_shape[:d]
    window = p.orig_shape[d:]
    nb, nc = n_batch(p), n_coords(p)
    if p.duplicates:
        flat = rng.integers(0, nc, size=nb)
        flat[rng.integers(0, nb)] = flat[(rng.integers(0, nb))]  # at least one repeat likely
        if len(set(flat.tolist())) == nb:
            flat[-1] = flat[0]
    else:
        flat = rng.choice(nc, size=nb, replace=False)
    coords = np.stack(np.unravel_index(flat, indexed), axis=-1) if nb else np.zeros((0, d), np.int64)
    # Column j addresses original dim dimension_map[j].
    cols = coords[:, list(p.dimension_map)]
    idt = np_dtype(p.index_dtype)
    indices = cols.reshape(list(p.batch_shape) + ([] if p.implicit_depth else [d])).astype(idt)
    original = _values(rng, p, list(p.orig_shape), "original")
    updates = _values(rng, p, list(p.batch_shape) + list(window), "updates")
    if p.operand == "const":  # the original is the module's own (operands.py)
        return [indices, updates]
    if p.operand == "folded":
        return [original, updates]
    return [original, indices if p.operand != "scalar" else np.array(indices.reshape(()), copy=True), updates]


# The root-operand forms' operands (operands.py renders them; its docstring says how the indices are made).


def step(p: Params) -> int:
    """The folded indices' stride through the flat coordinates: odd, from 3, prime to their count."""
    n, s = n_coords(p), 3
    while math.gcd(s, n) != 1:
        s += 2
    return s


def strides(sizes: tuple[int, ...] | list[int]) -> list[int]:
    """Row-major strides of `sizes`."""
    out: list[int] = []
    acc = 1
    for size in reversed(sizes):
        out.insert(0, acc)
        acc *= size
    return out


def iota_indices(p: Params) -> np.ndarray:
    """The "folded" indices ([batch..., depth], or [batch...] with an implicit depth)."""
    batch = list(p.batch_shape)
    count = int(np.prod(batch, dtype=np.int64)) if batch else 1
    lin = np.arange(count, dtype=np.int64) // (2 if p.duplicates else 1)
    flat = (step(p) * lin + 1) % n_coords(p)
    indexed = list(p.orig_shape[: p.depth])
    coord = [(flat // st) % size for st, size in zip(strides(indexed), indexed)]
    cols = np.stack([coord[q] for q in p.dimension_map], axis=-1)
    return cols.reshape(batch + ([] if p.implicit_depth else [p.depth]))


def constant_original(p: Params) -> np.ndarray:
    """The "const" original: the plain case's at seed 0."""
    return make_inputs(p.replace(operand=""), 0)[0]


def arguments(p: Params, inputs: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(original, indices, updates) as the plain case's arguments hold them."""
    if p.operand == "const":
        return constant_original(p), inputs[0], inputs[1]
    if p.operand == "folded":
        return inputs[0], iota_indices(p).astype(np_dtype(p.index_dtype)), inputs[1]
    original, indices, updates = inputs
    return original, indices.reshape([n for n, _ in shape_table(p)["indices"]]), updates


def _combine(comb: str, u: np.ndarray, o: np.ndarray) -> np.ndarray:
    if comb == "overwrite":
        return u
    if comb == "add":
        return o + u
    if comb == "sub":
        return o - u
    if comb == "max":
        return np.maximum(o, u)
    if comb == "min":
        return np.minimum(o, u)
    if comb == "mul":
        return o * u
    raise ValueError(comb)


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    original, indices, updates = arguments(p, inputs)
    d = p.depth
    out = original.copy()
    nb = n_batch(p)
    cols = indices.reshape(nb, d).astype(np.int64)
    upd = updates.reshape((nb,) + tuple(p.orig_shape[d:]))
    with np.errstate(over="ignore"):
        for b in range(nb):
            coord = [0] * d
            for j in range(d):
                coord[p.dimension_map[j]] = int(cols[b, j])
            key = tuple(coord)
            out[key] = _combine(p.combiner, upd[b], out[key]).astype(out.dtype)
    return [out]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Exact: inputs keep every order of combination exact."""
    return compare_arrays(expected, actual, check_dtype=True)


def export_rule(p: Params) -> dict:
    return dict(EXACT)  # as `compare`: exact, duplicate coordinates included
