"""The one_hot family's inputs, NumPy reference, comparison and export rule."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.base import EXACT
from shapefuzz.families.common import FLOAT_DTYPES, compare_arrays, np_dtype
from shapefuzz.families.one_hot.params import Params, out_axis, out_shape
from shapefuzz.model import Mismatch


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    depth = p.depth
    lo, hi = {"valid": (0, depth), "wrap": (-depth, depth), "oob": (-depth - 3, depth + 3)}[p.range]
    idt = np_dtype(p.index_dtype)
    dt = np_dtype(p.dtype)
    inputs = [np.asarray(rng.integers(lo, hi, size=p.index_shape), dtype=idt)]
    if p.depth_dyn:
        inputs.append(np.array(depth, dtype=idt))
    if p.values == "input":
        inputs += [np.array(p.on, dtype=dt), np.array(p.off, dtype=dt)]
    if p.consumer != "none":
        w: np.ndarray  # float halves or integers
        if p.dtype in FLOAT_DTYPES:
            w = rng.integers(-4, 5, size=out_shape(p)) / 2  # multiples of 1/2 in [-2, 2]
        else:
            w = rng.integers(-3, 4, size=out_shape(p))
        inputs.append(np.asarray(w, dtype=dt))
    return inputs


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    idx = inputs[0].astype(np.int64)
    depth = p.depth
    dt = np_dtype(p.dtype)
    norm = np.where(idx < 0, idx + depth, idx)
    hit = norm[..., None] == np.arange(depth)  # class axis last, then moved into place
    hit = np.moveaxis(hit, -1, out_axis(p))
    onehot = np.where(hit, np.array(p.on, dtype=dt), np.array(p.off, dtype=dt)).astype(dt)
    out = []
    if p.consumer in ("none", "both"):
        out.append(onehot)
    if p.consumer in ("reduce", "both"):
        wide = np.float64 if dt.kind == "f" else np.int64
        total = (onehot.astype(wide) * inputs[-1].astype(wide)).sum(axis=out_axis(p))
        out.append(np.asarray(total).astype(dt))  # ints wrap like the i8/i32 arithmetic does
    return out


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Exact: the values keep every sum exact in every dtype (ints wrap in both)."""
    return compare_arrays(expected, actual, check_dtype=True)


def export_rule(p: Params) -> dict:
    return dict(EXACT)  # as `compare`
