"""The sort family's inputs, NumPy reference and comparison. Values must equal the sorted input
exactly; indices of an unstable sort are judged by what they select (distinct, valid, picking
exactly the sorted values: `export_checks.check_topk_indices` with k = n), never flagged for a
tie order; a stable sort's indices are unique and compared exactly."""

from __future__ import annotations

import numpy as np

from shapefuzz.export_checks import check_topk_indices
from shapefuzz.families.common import count_mismatch, is_float, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.families.sort.params import Params
from shapefuzz.model import Mismatch, MismatchKind

LABEL_OFFSET = 1000  # labels are not positions, so a kernel returning positions is caught


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = tuple(p.shape)
    if p.values == "ties":
        ints = rng.choice(np.array([-2, -1, 0, 1, 3])[: int(rng.integers(1, 6))], size=shape)
        x = ints / 2.0 if is_float(p.dtype) else ints
    elif p.dtype == "f32":
        x = rng.integers(-4096, 4097, size=shape) / 4.0
    elif p.dtype == "f16":
        x = rng.integers(-1024, 1025, size=shape) / 4.0
    elif p.dtype == "i32":
        x = rng.integers(-(10**6), 10**6 + 1, size=shape)
    else:
        x = rng.integers(-100, 101, size=shape)  # away from the topk form's fill values -128 / 127
    inputs = [np.ascontiguousarray(x.astype(np_dtype(p.dtype)))]
    if p.payload == "arg":
        n = shape[p.dim]
        moved = np.empty(tuple(s for i, s in enumerate(shape) if i != p.dim) + (n,), dtype=np.int64)
        flat = moved.reshape(-1, n)
        for row in range(flat.shape[0]):
            flat[row] = rng.permutation(n) * 3 + LABEL_OFFSET
        inputs.append(np.ascontiguousarray(np.moveaxis(moved, -1, p.dim).astype(np_dtype(p.index_dtype))))
    return inputs


def order(p: Params, x: np.ndarray) -> np.ndarray:
    """Positions along the dim in sorted order; ties keep their input order (a stable sort)."""
    key = x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.float64)
    return np.argsort(-key if p.descending else key, axis=p.dim, kind="stable")


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    x = inputs[0]
    pos = order(p, x)
    out = []
    if p.use in ("values", "both"):
        out.append(np.take_along_axis(x, pos, axis=p.dim))
    if p.use in ("indices", "both"):
        picked = np.take_along_axis(inputs[1], pos, axis=p.dim) if p.payload == "arg" else pos
        out.append(picked.astype(np_dtype(p.index_dtype)))
    return out


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    names = [u for u in ("values", "indices") if p.use in (u, "both")]
    sorted_values = np.take_along_axis(inputs[0], order(p, inputs[0]), axis=p.dim)
    for i, (name, want, got) in enumerate(zip(names, expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got)
        if problem:
            return Mismatch(problem.kind, f"{name}: {problem.detail}")
        if name == "values" or p.stable:
            problem = values_mismatch(i, want, got)
            if problem:
                return Mismatch(problem.kind if name == "values" else MismatchKind.INDICES, f"{name}: {problem.detail}")
            continue
        if got.dtype.kind not in "iu":
            return Mismatch(MismatchKind.DTYPE, f"indices: dtype {got.dtype}, expected an integer type")
        labels = inputs[1] if p.payload == "arg" else None
        detail = check_topk_indices(inputs[0], labels, p.dim, sorted_values, got)
        if detail:
            return Mismatch(MismatchKind.INDICES, f"indices: {detail}")
    return None
