"""The norm family's inputs, NumPy reference (float64, from the definitions) and a tolerance
derived from the dtype and the reduction length N.

Inputs are multiples of 1/4 (|x| <= 2; softmax inputs |x| <= 8; a batch norm's variance in
[1/4, 4]), exact in f16, so every f32 sum of them or of their squares is exact in any order; the
statistics still round (a mean divided by N, a variance as E[x^2] - mean^2 or as a sum of N
rounded squares, a root), which the bound follows, u = 2^-24 the f32 unit roundoff:
- norms: the variance is within dv = u * ((N + 16) var + 16 E[x^2]), so the inverse root within
  r * (dv / 2 / (var + eps) + 16u); the result within |s| * (|x - m| r (that + 4u) + 4u r (|x| + |m|))
  + 4u (|y| + |b|), taken four times over.
- softmax: each exp within (4 |x - max| + 8) u, the sum within N u: y within y u (4 |x - max| + 2N + 64), twice.
- log-softmax: within u (|x| + |max| + 4 |log sum| + 2N + 64) + 2^-21 (the absolute error Vulkan allows
  a log near 1), twice.
The result's own rounding adds 2 u_out |y|, and a flushed subnormal the smallest normal of the result
type. A lost channel, a wrong axis or a wrong group is off by a large fraction of |y|."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import count_mismatch, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.families.norm.params import Params, count, operand_shape, operands, param_dims, reduced
from shapefuzz.model import Mismatch

U32 = 2.0 ** -24
UNIT_ROUNDOFF = {"f32": U32, "f16": 2.0 ** -11}
SMALLEST_NORMAL = {"f32": float(np.finfo(np.float32).tiny), "f16": float(np.finfo(np.float16).tiny)}


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dt = np_dtype(p.dtype)
    span = 32 if p.kind in ("softmax", "logsoftmax") else 8
    out = [rng.integers(-span, span + 1, size=tuple(p.shape)) / 4.0]
    for name in operands(p):
        shape = tuple(operand_shape(p))
        low = 1 if name == "var" else -8
        out.append(rng.integers(low, 17 if name == "var" else 9, size=shape) / 4.0)
    return [np.ascontiguousarray(a.astype(dt)) for a in out]


def _bcast(p: Params, a: np.ndarray) -> np.ndarray:
    """A scale / bias / mean / var operand broadcast against the input."""
    dims = param_dims(p)
    return a.astype(np.float64).reshape([p.shape[i] if i in dims else 1 for i in range(p.rank)])


def _grouped(p: Params, x: np.ndarray) -> tuple[np.ndarray, tuple[int, ...]]:
    """The input as the statistics see it and the axes they reduce: a group norm's channel dim
    split into [groups, channels per group]."""
    if p.kind != "group":
        return x, tuple(reduced(p))
    c = p.channel
    shape = list(x.shape[:c]) + [p.groups, x.shape[c] // p.groups] + list(x.shape[c + 1:])
    axes = tuple(i + (i > c) for i in reduced(p) if i != c) + (c + 1,)
    return x.reshape(shape), axes


def _stats(p: Params, x: np.ndarray) -> dict[str, np.ndarray]:
    """Per element of the input (broadcast back): mean m, variance var, E[x^2], inverse root r."""
    if p.kind == "batch":
        return {}
    g, axes = _grouped(p, x)
    ex2 = np.mean(g * g, axis=axes, keepdims=True) if count(p) else g
    m = np.zeros_like(ex2) if p.kind == "rms" else np.mean(g, axis=axes, keepdims=True)
    var = ex2 if p.kind == "rms" else np.mean((g - m) ** 2, axis=axes, keepdims=True)
    r = 1.0 / np.sqrt(var + p.eps)
    shape = g.shape
    return {k: np.broadcast_to(v, shape).reshape(x.shape) for k, v in (("m", m), ("var", var), ("ex2", ex2), ("r", r))}


def _exact(p: Params, inputs: list[np.ndarray]) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    x = inputs[0].astype(np.float64)
    named = {name: _bcast(p, a) for name, a in zip(operands(p), inputs[1:])}
    if p.kind in ("softmax", "logsoftmax"):
        mx = x.max(axis=p.axis, keepdims=True)
        s = np.exp(x - mx).sum(axis=p.axis, keepdims=True)
        y = (x - mx) - np.log(s) if p.kind == "logsoftmax" else np.exp(x - mx) / s
        return y, {"x": x, "max": mx + 0 * x, "logsum": np.log(s) + 0 * x}
    if p.kind == "batch":
        st = {"m": named["mean"] + 0 * x, "r": 1.0 / np.sqrt(named["var"] + p.eps) + 0 * x}
    else:
        st = _stats(p, x)
    z = (x - st["m"]) * st["r"]
    s = named.get("scale", np.ones(1))
    b = named.get("bias", np.zeros(1))
    return z * s + b, {"x": x, "s": np.abs(s) + 0 * x, "b": np.abs(b) + 0 * x, **st}


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    y, _ = _exact(p, inputs)
    return [np.ascontiguousarray(y.astype(np_dtype(p.dtype)))]


def tolerance(p: Params, inputs: list[np.ndarray]) -> np.ndarray:
    """The per-element bound of the module docstring."""
    y, t = _exact(p, inputs)
    u, n = U32, max(count(p), 1)
    ay = np.abs(y)
    if p.kind == "softmax":
        err = 2 * ay * u * (4 * np.abs(t["x"] - t["max"]) + 2 * n + 64)
    elif p.kind == "logsoftmax":
        err = 2 * (u * (np.abs(t["x"]) + np.abs(t["max"]) + 4 * np.abs(t["logsum"]) + 2 * n + 64) + 2.0 ** -21)
    else:
        x, m, r = t["x"], t["m"], t["r"]
        if p.kind == "batch":
            rel_r = np.full_like(x, 16 * u)
        else:
            var, ex2 = t["var"], t["ex2"]
            dv = u * ((n + 16) * var + 16 * ex2)
            rel_r = dv / 2 / (var + p.eps) + 16 * u
        dz = np.abs(x - m) * r * (rel_r + 4 * u) + 4 * u * r * (np.abs(x) + np.abs(m))
        err = 4 * (t["s"] * dz + 4 * u * (ay + t["b"]))
    return err + 2 * UNIT_ROUNDOFF[p.dtype] * ay + SMALLEST_NORMAL[p.dtype]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual) or shape_mismatch(0, expected[0], np.asarray(actual[0]))
    if problem:
        return problem
    return values_mismatch(0, expected[0], np.asarray(actual[0]), atol=tolerance(p, inputs))
