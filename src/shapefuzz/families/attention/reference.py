"""The attention family's inputs, NumPy reference (float64, from the definition) and a tolerance
derived from the dtype and the reduction lengths: the logits carry about |logit| * eps of error
each (K1 products summed), which the softmax turns into relative error of the weights, and the
weighted sum over K2 values adds up to K2 * eps; so a result may differ by
eps * (4 * max|logit| + 2 * K2 + 8) * max|V|, eps the dtype's unit roundoff. A wrong mask, a lost
row or a wrong softmax is off by a large fraction of max|V|, far above that."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.attention.params import Params, k_shape, mask_shape, q_shape, v_shape
from shapefuzz.families.common import count_mismatch, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.model import Mismatch

UNIT_ROUNDOFF = {"f32": 2.0 ** -24, "f16": 2.0 ** -11}


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dt = np_dtype(p.dtype)
    arrays = [rng.integers(-4, 5, size=tuple(s)) / 4.0 for s in (q_shape(p), k_shape(p), v_shape(p))]
    out = [np.ascontiguousarray(a.astype(dt)) for a in arrays]
    if p.mask != "none":
        shape = tuple(mask_shape(p))
        if p.mask == "causal":  # query i sees keys j <= i + (K2 - M), and at least key 0
            i = np.arange(p.m)[:, None]
            j = np.arange(p.k2)[None, :]
            keep = (j <= i + max(p.k2 - p.m, 0)) | (j == 0)
            keep = np.broadcast_to(keep, shape)
        else:
            keep = rng.random(shape) < 0.7
            keep[..., 0] |= ~keep.any(axis=-1)  # every row keeps a key
        out.append(np.ascontiguousarray(np.where(keep, 0.0, -np.inf).astype(dt)))
    return out


def _logits(p: Params, inputs: list[np.ndarray]) -> np.ndarray:
    q, k = (a.astype(np.float64) for a in inputs[:2])
    s = np.einsum("...mk,...nk->...mn", q, k) * p.scale
    if p.mask != "none":
        s = s + inputs[3].astype(np.float64)
    return s


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    s = _logits(p, inputs)
    w = np.exp(s - s.max(axis=-1, keepdims=True))
    w = w / w.sum(axis=-1, keepdims=True)
    o = np.einsum("...mn,...nd->...md", w, inputs[2].astype(np.float64))
    return [np.ascontiguousarray(o.astype(np_dtype(p.dtype)))]


def tolerance(p: Params, inputs: list[np.ndarray]) -> float:
    s = _logits(p, inputs)
    finite = np.abs(s[np.isfinite(s)])
    logit = float(finite.max()) if finite.size else 0.0
    vmax = float(np.abs(inputs[2].astype(np.float64)).max()) if inputs[2].size else 0.0
    return UNIT_ROUNDOFF[p.dtype] * (4 * logit + 2 * p.k2 + 8) * max(vmax, 1.0)


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual) or shape_mismatch(0, expected[0], np.asarray(actual[0]))
    if problem:
        return problem
    return values_mismatch(0, expected[0], np.asarray(actual[0]), atol=tolerance(p, inputs))
