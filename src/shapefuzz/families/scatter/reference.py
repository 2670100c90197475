"""The scatter family's inputs (exact in every combining order), NumPy reference, comparison and export rule."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.base import EXACT
from shapefuzz.families.common import FLOAT_DTYPES, compare_arrays, np_dtype
from shapefuzz.families.scatter.params import Params, n_batch, n_coords
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
    return [original, indices, updates]


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
    original, indices, updates = inputs
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
