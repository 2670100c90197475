"""The topk family's inputs, NumPy reference, comparison (ties judged by the values the indices select) and export rule."""

from __future__ import annotations

import numpy as np

from shapefuzz.export_checks import check_topk_indices
from shapefuzz.families.common import count_mismatch, is_float, np_dtype, shape_mismatch, values_mismatch
from shapefuzz.families.topk.params import Params
from shapefuzz.model import Mismatch, MismatchKind


# Labels for indices == "arg": distinct, not positions, so a kernel that returns positions
# instead of the labels it was given is caught.
_LABEL_OFFSET = 1000


# ----------------------------------------------------------------------------- inputs


def make_inputs(params: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = tuple(params.shape)
    dtype = params.dtype
    if params.values == "ties":
        # A handful of distinct values: many ties, including across the k boundary.
        pool = np.array([-2, -1, 0, 1, 3], dtype=np.int64)
        ints = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], size=shape)
        x = ints / 2.0 if is_float(dtype) else ints
    elif dtype == "f32":
        x = rng.integers(-4096, 4097, size=shape) / 4.0  # exact multiples of 1/4
    elif dtype == "f16":
        x = rng.integers(-1024, 1025, size=shape) / 4.0  # |x| <= 256, exact in f16
    elif dtype == "i32":
        x = rng.integers(-(10**6), 10**6 + 1, size=shape)
    else:
        x = rng.integers(-100, 101, size=shape)  # away from the pad values -128/127
    inputs = [np.ascontiguousarray(x.astype(np_dtype(dtype)))]
    if params.indices == "arg":
        # Per slice along the dim: a random permutation of distinct labels.
        n, dim = shape[params.dim], params.dim
        moved_shape = tuple(s for i, s in enumerate(shape) if i != dim) + (n,)
        labels = np.empty(moved_shape, dtype=np.int64)
        flat = labels.reshape(-1, n)
        for row in range(flat.shape[0]):
            flat[row] = rng.permutation(n) * 3 + _LABEL_OFFSET
        inputs.append(np.ascontiguousarray(np.moveaxis(labels, -1, dim).astype(np_dtype(params.index_dtype))))
    return inputs


# ----------------------------------------------------------------------------- reference


def _positions(params: Params, x: np.ndarray) -> np.ndarray:
    """Positions along the dim of one valid top-k selection, in output order (stable sort)."""
    dim, k = params.dim, params.k
    key = x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.float64)
    if params.largest:
        key = -key
    return np.take(np.argsort(key, axis=dim, kind="stable"), np.arange(k), axis=dim)


def topk_values(params: Params, x: np.ndarray) -> np.ndarray:
    """The sorted top-k values: unique even with ties."""
    return np.take_along_axis(x, _positions(params, x), axis=params.dim)


def reference(params: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    x = inputs[0]
    pos = _positions(params, x)
    values = np.take_along_axis(x, pos, axis=params.dim)
    if params.indices == "arg":
        indices = np.take_along_axis(inputs[1], pos, axis=params.dim).astype(np_dtype(params.index_dtype))
    else:
        indices = pos.astype(np_dtype(params.index_dtype))
    out = []
    if params.use in ("values", "both"):
        out.append(values)
    if params.use in ("indices", "both"):
        out.append(indices)
    return out


# ----------------------------------------------------------------------------- compare


def _check_indices(params: Params, inputs: list[np.ndarray], want: np.ndarray, got: np.ndarray) -> str | None:
    """Indices judged by what they select: distinct, valid, and picking exactly `want` (the rule
    exported tests copy, so the oracle and the exports judge ties alike)."""
    labels = inputs[1] if params.indices == "arg" else None
    return check_topk_indices(inputs[0], labels, params.dim, want, got)


def compare(
    params: Params,
    inputs: list[np.ndarray],
    expected: list[np.ndarray],
    actual: list[np.ndarray],
) -> Mismatch | None:
    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    want_values = topk_values(params, inputs[0])
    names = [u for u in ("values", "indices") if params.use in (u, "both")]
    for i, (name, want, got) in enumerate(zip(names, expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got)
        if problem:
            return Mismatch(problem.kind, f"{name}: {problem.detail}")
        if name == "values":
            problem = values_mismatch(i, want, got)
            if problem:
                return Mismatch(problem.kind, f"values: {problem.detail}")
        else:
            if got.dtype.kind not in "iu":
                return Mismatch(MismatchKind.DTYPE, f"indices: dtype {got.dtype}, expected an integer type")
            detail = _check_indices(params, inputs, want_values, got)
            if detail:
                return Mismatch(MismatchKind.INDICES, f"indices: {detail}")
    return None


def export_rule(p: Params) -> dict:
    """`compare` for exported tests: values exactly, indices by what they select (ties allowed)."""
    return {"kind": "topk", "dim": int(p.dim), "k": int(p.k), "largest": bool(p.largest),
            "labels": p.indices == "arg", "results": [name for name in ("values", "indices") if p.use in (name, "both")]}
