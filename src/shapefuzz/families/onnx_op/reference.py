"""Inputs, the two references and the comparison of the onnx_op family.

Inputs speak the families' vocabulary: floats are quarters in [-4, 4] (sums and products of a few
stay exact), integers small, an operand's `(lo, hi)` range where its op needs one (indices in
[-n, n-1], a divisor without 0, a logarithm's positive argument).

The reference is two references that must agree: ONNX Runtime (CPU) and `onnx.reference`, on
the same model and inputs, and ONNX's shape inference (every `?` dim at its size) must type each
output as both compute it. When either raises, or they differ (by `compare`), the case is a
reference disagreement (`ReferenceDisagreement`): set apart, never compared with IREE."""

from __future__ import annotations

import zlib
from typing import Any

import numpy as np

from shapefuzz.families.onnx_op.model import build, static_model
from shapefuzz.families.onnx_op.params import NUMPY_TYPE, Params, runtime
from shapefuzz.errors import UndefinedReference
from shapefuzz.families.common import count_mismatch, shape_mismatch, values_mismatch
from shapefuzz.model import Mismatch, MismatchKind

# (rtol, atol) by result dtype; integers and booleans exact. f32 leaves room for the last bits
# of a transcendental (ONNX Runtime's and NumPy's exp/tanh/erf, IREE's polynomial ones).
TOLERANCE = {"float32": (1e-4, 1e-5), "float16": (1e-2, 1e-2)}


class ReferenceDisagreement(UndefinedReference, ValueError):
    """ONNX Runtime, onnx.reference and ONNX's shape inference do not agree on a case: what, in one line.
    An undefined reference: a campaign discards the candidate, never judged (a disagreement `known.py`
    does not list yet is no bug of ours or IREE's); `onnx-ops` counts it per op."""


def _draw(rng: np.random.Generator, dtype: str, shape: tuple[int, ...], data: tuple) -> np.ndarray:
    np_type = np.dtype(NUMPY_TYPE[dtype])
    if dtype == "i1":
        return rng.integers(0, 2, size=shape).astype(bool)
    if data:
        lo, hi = data[0], data[1]
    elif np_type.kind == "f":
        lo, hi = -4, 4
    elif dtype == "u8":
        lo, hi = 0, 255
    elif dtype == "i8":
        lo, hi = -128, 127
    else:
        lo, hi = -8, 8
    nonzero = data[2:] == ("nonzero",)
    if np_type.kind == "f":  # quarters in [lo, hi]
        q = rng.integers(int(np.ceil(lo * 4)), int(np.floor(hi * 4)) + 1, size=shape)
        if nonzero:
            q = np.where(q == 0, 1 if hi > 0 else -1, q)
        return (q / 4).astype(np_type)
    a = rng.integers(int(lo), int(hi) + 1, size=shape)
    if nonzero:
        a = np.where(a == 0, 1 if hi > 0 else -1, a)
    return a.astype(np_type)


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng([seed, zlib.crc32(p.op.encode())])
    # (np.array: a rank-0 draw is a NumPy scalar, which ONNX Runtime does not take as a tensor)
    return [np.array(_draw(rng, dtype, shape, data), dtype=NUMPY_TYPE[dtype]).reshape(shape)
            for _, dtype, shape, _, data in runtime(p)]


def _first_line(error: BaseException) -> str:
    lines = [line for line in str(error).strip().splitlines() if line.strip()] or [type(error).__name__]
    return f"{type(error).__name__}: {lines[0][:300]}"


def session(model: Any) -> Any:
    """An ONNX Runtime session of the model on the CPU (raises what ONNX Runtime raises)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = options.inter_op_num_threads = 1  # a worker is one of several
    options.log_severity_level = 4  # its own errors come back as exceptions
    return ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])


def _feeds(model: Any, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    # (np.asarray: arithmetic on a rank-0 array gives a NumPy scalar, which ONNX Runtime refuses)
    return {info.name: np.asarray(a) for info, a in zip(model.graph.input, inputs)}


def run_onnxruntime(model: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    feeds = _feeds(model, inputs)
    return [np.asarray(r) for r in session(model).run(None, feeds)]


def run_onnx_reference(model: Any, inputs: list[np.ndarray]) -> list[np.ndarray]:
    from onnx.reference import ReferenceEvaluator

    return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, _feeds(model, inputs))]


def show(arrays: list[np.ndarray], limit: int = 300) -> str:
    """Arrays for a one-line message: dtype, shape, the first and last values."""
    parts = []
    for a in arrays:
        text = np.array2string(np.asarray(a), threshold=32, edgeitems=3, max_line_width=10_000).replace("\n", "")
        parts.append(f"{a.dtype}{list(np.shape(a))} {text}"[:limit])
    return "; ".join(parts)


def inferred_outputs(p: Params) -> list[tuple[tuple[int | None, ...], np.dtype]]:
    """What ONNX's shape inference says each output is, every `?` dim at its size (None: unknown)."""
    from onnx import helper

    out = []
    for info in static_model(p).graph.output:
        t = info.type.tensor_type
        dims = tuple(d.dim_value if d.HasField("dim_value") else None for d in t.shape.dim)
        out.append((dims, np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type))))
    return out


def references(p: Params, inputs: list[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """(ONNX Runtime's results, onnx.reference's): ReferenceDisagreement when either raises."""
    model = build(p)
    try:
        ort_out = run_onnxruntime(model, inputs)
    except Exception as error:  # noqa: BLE001 - a reference failing on a model ONNX accepts is data
        raise ReferenceDisagreement(f"ONNX Runtime fails: {_first_line(error)}") from None
    try:
        ref_out = run_onnx_reference(model, inputs)
    except Exception as error:  # noqa: BLE001
        raise ReferenceDisagreement(f"onnx.reference fails: {_first_line(error)}") from None
    return ort_out, ref_out


def disagreement(p: Params, inputs: list[np.ndarray], ort_out: list[np.ndarray], ref_out: list[np.ndarray]) -> str:
    """"" when both references and ONNX's shape inference agree, else what differs."""
    problem = compare_results(ort_out, ref_out)
    if problem is not None:
        return (f"ONNX Runtime and onnx.reference differ ({problem.detail}); ONNX Runtime: {show(ort_out, 300)}; "
                f"onnx.reference: {show(ref_out, 300)}")
    for i, ((dims, dtype), got) in enumerate(zip(inferred_outputs(p), ort_out)):
        if len(dims) != got.ndim or any(d is not None and d != s for d, s in zip(dims, got.shape)) or dtype != got.dtype:
            shown = [("?" if d is None else d) for d in dims]
            return (f"ONNX's shape inference types output {i} as {dtype}{shown}, both references compute "
                    f"{got.dtype}{list(got.shape)}")
    return ""


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The agreed reference: ONNX Runtime's results once onnx.reference and ONNX's shape inference
    agree with them; ReferenceDisagreement otherwise."""
    ort_out, ref_out = references(p, inputs)
    problem = disagreement(p, inputs, ort_out, ref_out)
    if problem:
        raise ReferenceDisagreement(problem)
    return ort_out


def compare_results(expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Count, shape and kind, then values (the families' `values_mismatch`): floats within the
    dtype's tolerance with NaN where the expected has NaN (and nowhere else), infinities equal;
    integers and booleans exact. An unsigned result read back signed (IREE's integers are
    signless) is read as unsigned."""
    found = count_mismatch(expected, actual)
    if found is not None:
        return found
    for i, (e, a) in enumerate(zip(expected, actual)):
        e, a = np.asarray(e), np.asarray(a)
        found = shape_mismatch(i, e, a)
        if found is not None:
            return found
        if e.dtype.kind == "u" and a.dtype.kind == "i" and e.dtype.itemsize == a.dtype.itemsize:
            a = a.view(e.dtype)
        if e.dtype.kind != a.dtype.kind or e.dtype.itemsize != a.dtype.itemsize:
            return Mismatch(MismatchKind.DTYPE, f"result {i}: dtype {a.dtype}, expected {e.dtype}")
        rtol, atol = TOLERANCE.get(e.dtype.name, (1e-5, 1e-5)) if e.dtype.kind == "f" else (0.0, 0.0)
        found = values_mismatch(i, e, a, rtol=rtol, atol=atol)
        if found is not None:
            return found
    return None


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_results(expected, actual)
