"""The conv family's inputs, NumPy reference (on the canonical form), comparison and export rule."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np

from shapefuzz.families.base import DTYPE_TOLERANCE, EXACT
from shapefuzz.families.common import count_mismatch, is_float, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.families.conv.operands import operands, scalar_input
from shapefuzz.families.conv.params import I8_MAX, I8_MIN, LAYOUTS, Params, boundary_labels
from shapefuzz.families.conv.shapes import (
    bias_labels, bias_shape, filter_shape, input_shape, out_spatial, reduction_size)
from shapefuzz.model import Mismatch


# --------------------------------------------------------------------------------------------
# Inputs, reference, comparison


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    """Float operands are small multiples of 1/4; integers small, except a quantized i8 case
    (zero points, or the qdq form): its input and filter span the whole i8 range, a quarter of
    them at -128 or 127."""
    rng = np.random.default_rng(seed)
    dtype = p.dtype

    def draw(shape, acc_type=False):
        if dtype == "i8" and _quantized(p) and not acc_type:
            vals = rng.integers(I8_MIN, I8_MAX + 1, size=shape)
            edge = rng.random(shape) < 0.25
            return np.where(edge, rng.choice(np.array([I8_MIN, I8_MAX]), size=shape), vals).astype(np.int8)
        if is_float(dtype):
            # Small multiples of 1/4: f32 products and sums are exact.
            vals = rng.integers(-4, 5, size=shape) / 4.0
            return vals.astype(np_dtype(p.acc if acc_type else dtype))
        lim = 4 if dtype == "i8" else 8
        vals = rng.integers(-lim, lim + 1, size=shape)
        return vals.astype(np.int32 if acc_type else np_dtype(dtype))

    arrays = [draw(tuple(input_shape(p))), draw(tuple(filter_shape(p)))]
    if p.bias != "none":
        arrays.append(draw(bias_shape(p), acc_type=True))
    if p.operand == "folded":  # the filter is the graph's own (the other arguments keep their values)
        del arrays[1]
    if p.operand == "scalar":
        arrays.append(scalar_input(p, rng))
    return arrays


def _quantized(p: Params) -> bool:
    return bool(p.input_zp or p.filter_zp or p.qdq)


def _canonical_names(kind: str) -> dict[str, str]:
    if kind in ("depthwise", "depthwise_m"):
        return {"n": "n", "c": "G", "m": "F"}
    return {"n": "n", "g": "G", "c": "C", "f": "F"}


def _to_canonical(arr: np.ndarray, labels: list[str], order: list[str], kind: str) -> np.ndarray:
    names = _canonical_names(kind)
    cur = [names.get(lab, lab) for lab in labels]
    for lab in order:
        if lab not in cur:
            arr = arr[..., None]
            cur.append(lab)
    return np.transpose(arr, [cur.index(lab) for lab in order])


def _from_canonical(arr: np.ndarray, order: list[str], labels: list[str], kind: str) -> np.ndarray:
    names = _canonical_names(kind)
    want = [names.get(lab, lab) for lab in labels]
    drop = tuple(i for i, lab in enumerate(order) if lab not in want)
    arr = arr.reshape([s for i, s in enumerate(arr.shape) if i not in drop])
    kept = [lab for lab in order if lab in want]
    return np.transpose(arr, [kept.index(lab) for lab in want])


def _conv_canonical(p: Params, x: np.ndarray, w: np.ndarray, pad_value) -> np.ndarray:
    """x [n, G, C, *S], w [G, F, C, *K] -> [n, G, F, *O], in x's dtype (float64/int64)."""
    rank = p.rank
    pads = [(0, 0)] * 3 + list(zip(p.pad_lo, p.pad_hi))
    xp = np.pad(x, pads, mode="constant", constant_values=pad_value)
    outs = out_spatial(p)
    n, g, _, *_ = x.shape
    f = w.shape[1]
    out = np.zeros([n, g, f, *outs], dtype=x.dtype)
    for kpos in itertools.product(*[range(k) for k in p.kernel]):
        sl = tuple(
            slice(kpos[i] * p.dilations[i],
                  kpos[i] * p.dilations[i] + (outs[i] - 1) * p.strides[i] + 1,
                  p.strides[i])
            for i in range(rank))
        xs = xp[(slice(None),) * 3 + sl]
        wk = w[(slice(None),) * 3 + tuple(kpos)]
        out += np.einsum("ngc...,gfc->ngf...", xs, wk)
    return out


def _exact_result(p: Params, inputs: list[np.ndarray], absolute: bool = False) -> np.ndarray:
    """The mathematically exact result (float64 / int64) in the boundary output layout;
    with `absolute`, the same computation on |x|, |w|, |bias| (an error bound's scale)."""
    io = LAYOUTS[p.layout]
    kind = p.kind
    wide = np.float64 if is_float(p.dtype) else np.int64
    # zero points come off every input value, padding included (the padded tensor is what the
    # `_q` op, or the dequantize, reads), and off every filter value
    x_in, w_in, bias_in, init = operands(p, inputs)
    x = x_in.astype(wide) - p.input_zp
    w = w_in.astype(wide) - p.filter_zp
    pad_value: Any = wide(np_dtype(p.dtype).type(p.pad_value)) - p.input_zp
    if absolute:
        x, w, pad_value = np.abs(x), np.abs(w), abs(pad_value)
    b_in, b_filt, b_out = boundary_labels(p)
    xc = _to_canonical(x, b_in, ["n", "G", "C", *[f"s{i}" for i in range(p.rank)]], kind)
    wc = _to_canonical(w, b_filt, ["G", "F", "C", *[f"k{i}" for i in range(p.rank)]], kind)
    oc = _conv_canonical(p, xc, wc, pad_value)
    out = _from_canonical(oc, ["n", "G", "F", *[f"o{i}" for i in range(p.rank)]],
                          b_out, kind)
    if init is not None:  # the accumulator the sums start at (boundary layout, or a 0-d scalar)
        out = out + (np.abs(init) if absolute else init).astype(wide)
    if bias_in is not None:
        bias = bias_in.astype(wide)
        if absolute:
            bias = np.abs(bias)
        labels = b_out
        blabs = bias_labels(kind)
        shape = [out.shape[i] if lab in blabs else 1 for i, lab in enumerate(labels)]
        order = [lab for lab in labels if lab in blabs]
        bias = np.transpose(bias, [blabs.index(lab) for lab in order]).reshape(shape)
        out = out + bias
    if p.epilogue == "relu" and not absolute:
        out = np.maximum(out, 0)
    return out


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    exact = _exact_result(p, inputs)
    acc = p.acc
    if acc == "i32":  # two's-complement wraparound, as arith.addi/muli do
        return [exact.astype(np.int64).astype(np.int32)]
    return [exact.astype(np_dtype(acc))]


def _needs_tolerance(p: Params) -> bool:
    return p.acc == "f16"


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray],
            actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual) or shape_mismatch(0, expected[0], np.asarray(actual[0]))
    if problem:
        return problem
    act = np.asarray(actual[0])
    if _needs_tolerance(p):
        # f16 accumulation: each of the K additions (and the bias add) rounds with unit
        # roundoff 2^-11 relative to the running magnitude; bound by (K + 2) * u * sum(|terms|).
        scale = _exact_result(p, inputs, absolute=True)
        exact = _exact_result(p, inputs)
        tol = (reduction_size(p) + 2) * 2.0 ** -11 * scale * 2 + 2.0 ** -14
        return values_mismatch(0, exact, act, atol=tol)
    return values_mismatch(0, expected[0], act)


def export_rule(p: Params) -> dict:
    """Exact, as `compare`; f16 accumulation gets the dtype's tolerance (the per-element bound
    `compare` computes needs the exact result, which an exported test does not have)."""
    return dict(DTYPE_TOLERANCE if _needs_tolerance(p) else EXACT)
