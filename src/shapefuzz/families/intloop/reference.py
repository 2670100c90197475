"""The intloop family's inputs and NumPy reference (exact: integers). The second input mixes
shift amounts around the bit width (negative ones included: read unsigned, they saturate) with
values over the whole range; the state starts over the whole range."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.common import compare_arrays, np_dtype
from shapefuzz.families.intloop.params import BITS, Params, Step, steps_of
from shapefuzz.model import Mismatch


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dt, bits, shape = np_dtype(p.dtype), BITS[p.dtype], tuple(p.shape)
    info = np.iinfo(dt)
    x = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    amounts = rng.integers(-2, 2 * bits + 2, size=shape).astype(dt)
    wide = rng.integers(info.min, info.max, size=shape, dtype=dt, endpoint=True)
    y = np.where(rng.random(shape) < 0.5, amounts, wide).astype(dt)
    out = [np.ascontiguousarray(x), np.ascontiguousarray(y)]
    if p.trips_input:
        out.append(np.array(p.trips, dtype=np.int32))
    return out


def _unsigned(a: np.ndarray) -> np.ndarray:
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def _apply(step: Step, s: np.ndarray, y: np.ndarray, i: int) -> np.ndarray:
    dt = s.dtype
    bits = dt.itemsize * 8
    if step.op == "popcnt":
        return np.bitwise_count(_unsigned(s)).astype(dt)
    v = y if step.operand == "y" else np.full(s.shape, np.array(i if step.operand == "i" else step.constant).astype(dt))
    su, vu = _unsigned(s), _unsigned(np.ascontiguousarray(v.astype(dt)))
    inside = vu < bits  # a shift amount read unsigned: at least the width saturates
    amount = (vu % bits).astype(su.dtype)
    if step.op == "shl":
        return np.where(inside, np.left_shift(su, amount), 0).astype(su.dtype).view(dt)
    if step.op == "shr_u":
        return np.where(inside, np.right_shift(su, amount), 0).astype(su.dtype).view(dt)
    if step.op == "shr_s":
        return np.where(inside, np.right_shift(s, amount.astype(dt)), np.right_shift(s, bits - 1)).astype(dt)
    if step.op == "and":
        return s & v.astype(dt)
    if step.op == "or":
        return s | v.astype(dt)
    if step.op == "xor":
        return s ^ v.astype(dt)
    assert step.op == "add"
    return (su + vu).astype(su.dtype).view(dt)  # wraps, as arith.addi does


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    s, y = inputs[0].copy(), inputs[1]
    steps = steps_of(p)
    for i in range(p.trips):
        for step in steps:
            s = _apply(step, s, y, i)
    return [np.ascontiguousarray(s.astype(np_dtype(p.dtype)))]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_arrays(expected, actual)
