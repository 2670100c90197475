"""The conv_transpose family's inputs, NumPy reference (a scatter-add from the definition), comparison and export rule."""

from __future__ import annotations

import itertools

import numpy as np

from shapefuzz.families.base import DTYPE_TOLERANCE, elementwise_rule
from shapefuzz.families.common import compare_arrays, np_dtype
from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import out_sizes, w_shape, x_shape
from shapefuzz.model import Mismatch


# ----------------------------------------------------------------------------- numbers



def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    """Values that make every sum exact: f32 x in quarters, f16 x in halves (|sums| stay far below
    f16's 1024 limit for halves because strategy() bounds the reduction length), integer w."""
    rng = np.random.default_rng(seed)
    dt = p.dtype
    x: np.ndarray  # float quarters or halves, or integers
    if dt == "f32":
        x = rng.integers(-8, 9, size=x_shape(p)) / 4.0
        w = rng.integers(-3, 4, size=w_shape(p))
    elif dt == "f16":
        x = rng.integers(-4, 5, size=x_shape(p)) / 2.0
        w = rng.integers(-2, 3, size=w_shape(p))
    else:
        x = rng.integers(-3, 4, size=x_shape(p))
        w = rng.integers(-3, 4, size=w_shape(p))
    return [np.ascontiguousarray(x.astype(np_dtype(dt))), np.ascontiguousarray(w.astype(np_dtype(dt)))]


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Scatter-add from the definition: out[n, g*Co+co, s*i + d*k - pad_lo] += x * w."""
    x, w_stored = inputs
    if p.x_layout == "nhc":  # compute channels-first, move the channels back at the end
        out = reference(p.replace(x_layout="nc"), [np.moveaxis(x, -1, 1), w_stored])[0]
        return [np.ascontiguousarray(np.moveaxis(out, 1, -1))]
    r, G, Ci, Co = p.rank, p.groups, p.ci, p.co
    acc_dt = np.int64 if p.dtype == "i32" else np.float64
    # undo the stored layout: logical w[I, O, K...]
    w = np.transpose(w_stored, np.argsort(p.w_layout)).astype(acc_dt)
    x = x.astype(acc_dt)
    N = x.shape[0]
    osz = out_sizes(p)
    out = np.zeros([N, G * Co, *osz], dtype=acc_dt)
    s, d, lo = p.strides, p.dilations, p.pad_lo
    for g in range(G):
        xg = x[:, g * Ci : (g + 1) * Ci]  # [N, Ci, H...]
        wg = w[g * Ci : (g + 1) * Ci]  # [Ci, Co, K...]
        for kpos in itertools.product(*[range(k) for k in p.kernel]):
            contrib = np.einsum("nc...,cf->nf...", xg, wg[(slice(None), slice(None)) + kpos])
            # input position i lands at s*i + d*k - lo; keep the ones inside [0, O)
            src_sl, dst_sl = [], []
            for t in range(r):
                H, st_ = x.shape[2 + t], s[t]
                first = d[t] * kpos[t] - lo[t]  # where input position 0 lands
                i_lo = max(0, -(first // st_))  # smallest i with first + s*i >= 0
                i_hi = min(H, max(0, -((first - osz[t]) // st_)))  # i < ceil((O - first)/s)
                i_hi = max(i_hi, i_lo)
                src_sl.append(slice(i_lo, i_hi))
                start = first + st_ * i_lo
                dst_sl.append(slice(start, start + st_ * (i_hi - i_lo), st_))
            out[(slice(None), slice(g * Co, (g + 1) * Co), *dst_sl)] += contrib[(slice(None), slice(None), *src_sl)]
    return [out.astype(np_dtype(p.dtype))]


def reference_naive(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The same definition written as plain loops (slow; for checking `reference` on tiny cases)."""
    x, w_stored = inputs
    if p.x_layout == "nhc":
        out = reference_naive(p.replace(x_layout="nc"), [np.moveaxis(x, -1, 1), w_stored])[0]
        return [np.moveaxis(out, 1, -1)]
    w = np.transpose(w_stored, np.argsort(p.w_layout)).astype(np.float64)
    G, Ci, Co = p.groups, p.ci, p.co
    osz = out_sizes(p)
    out = np.zeros([x.shape[0], G * Co, *osz])
    for idx in np.ndindex(*x.shape):
        n, c, *i = idx
        g, ci = divmod(c, Ci)
        for co in range(Co):
            for kpos in np.ndindex(*p.kernel):
                o = [p.strides[t] * i[t] + p.dilations[t] * kpos[t] - p.pad_lo[t] for t in range(len(i))]
                if all(0 <= o[t] < osz[t] for t in range(len(o))):
                    out[(n, g * Co + co, *o)] += float(x[idx]) * w[(c, co, *kpos)]
    return [out.astype(np_dtype(p.dtype))]


# Inputs make every sum exact; the tolerance only absorbs a backend that keeps partial sums in a
# wider or narrower type than we assume, never a wrong element. (rtol, atol) by result type.
TOLERANCE = {"f32": (1e-5, 1e-4), "f16": (2e-3, 2e-2)}


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_arrays(expected, actual, tolerance=TOLERANCE)


def export_rule(p: Params) -> dict:
    return elementwise_rule(*TOLERANCE[p.dtype]) if p.dtype in TOLERANCE else dict(DTYPE_TOLERANCE)
