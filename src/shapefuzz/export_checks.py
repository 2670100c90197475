"""The comparisons exported tests make, written with NumPy alone: `export` copies this file's
source verbatim into the tests it writes, so they need nothing of shapefuzz.

The rules are the oracle's: top-k values must equal the sorted top-k exactly; top-k indices are
never judged by index equality (ties have more than one right answer) but must be distinct, valid,
and select through the input exactly the expected values. Everything else is compared element-wise
(exact for integers and for families whose inputs keep every sum exact, a per-dtype tolerance
otherwise). Scatter inputs are drawn so that duplicate coordinates give the same result in any
order, so its exact comparison is duplicate-safe as it stands.
"""

import numpy as np


def topk_positions(x, dim, k, largest):
    """Positions along `dim` of one valid top-k selection, in output order (stable sort)."""
    key = x.astype(np.int64) if x.dtype.kind in "iu" else x.astype(np.float64)
    if largest:
        key = -key
    return np.take(np.argsort(key, axis=dim, kind="stable"), np.arange(k), axis=dim)


def topk_ambiguous(x, dim, k, largest):
    """True when some slice has equal values among the first k+1 it would select, so that more
    than one list of indices is right (an exact comparison of indices would be a false alarm)."""
    n = x.shape[dim]
    rows = np.moveaxis(x, dim, -1).reshape(-1, n)
    if rows.size == 0:
        return False
    ordered = np.take_along_axis(rows, topk_positions(rows, 1, min(k + 1, n), largest), axis=1)
    return bool((ordered[:, 1:] == ordered[:, :-1]).any())


def check_topk_indices(x, labels, dim, want_values, got):
    """Indices judged by what they select: distinct, valid, and picking exactly `want_values`.
    `labels` is the indices operand when the op returns labels, else None (positions)."""
    n = x.shape[dim]
    rows_x = np.moveaxis(x, dim, -1).reshape(-1, n)
    rows_got = np.moveaxis(got.astype(np.int64), dim, -1).reshape(rows_x.shape[0], -1)
    rows_want = np.moveaxis(want_values, dim, -1).reshape(rows_x.shape[0], -1)
    rows_labels = None if labels is None else np.moveaxis(labels, dim, -1).reshape(-1, n).astype(np.int64)
    for r in range(rows_x.shape[0]):
        idx = rows_got[r]
        if rows_labels is not None:
            where = {int(label): p for p, label in enumerate(rows_labels[r])}
            missing = [int(i) for i in idx if int(i) not in where]
            if missing:
                return f"slice {r}: index {missing[0]} is not one of the input indices"
            pos = np.array([where[int(i)] for i in idx], dtype=np.int64)
        else:
            if idx.size and (idx.min() < 0 or idx.max() >= n):
                return f"slice {r}: index {int(idx[(idx < 0) | (idx >= n)][0])} out of range [0, {n})"
            pos = idx
        if len(set(pos.tolist())) != len(pos):
            return f"slice {r}: repeated indices {idx.tolist()}"
        picked = rows_x[r][pos]
        if not np.array_equal(picked, rows_want[r]):
            return f"slice {r}: indices {idx.tolist()} select {picked.tolist()}, expected values {rows_want[r].tolist()}"
    return None


def encode_operand(array):
    """An array as plain JSON-able text (dtype, shape, bytes in hex): exact for every value, NaN included."""
    a = np.ascontiguousarray(array)
    return {"dtype": a.dtype.str, "shape": list(a.shape), "hex": a.tobytes().hex()}


def operand(rule, inputs, i):
    """The root op's operand `i`: the entry's argument `i`, or, for a case whose arguments pass
    through producers first (a chain), the root's operand the rule carries ("operands")."""
    if "operands" in rule:
        o = rule["operands"][i]
        return np.frombuffer(bytes.fromhex(o["hex"]), dtype=np.dtype(o["dtype"])).reshape(o["shape"])
    return inputs[i]


def tolerance(dtype):
    """The oracle's tolerance for floats it cannot make exact (none for integers)."""
    return 0.0 if np.dtype(dtype).kind in "iub" else {2: 1e-2, 4: 1e-5}.get(np.dtype(dtype).itemsize, 1e-9)


def _elementwise(i, want, got, rtol, atol):
    if want.dtype.kind in "iub" or (rtol == 0 and atol == 0):
        bad = ~((got == want) | (np.isnan(got) & np.isnan(want))) if want.dtype.kind == "f" else got != want
    else:
        bad = ~np.isclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=atol, equal_nan=True)
    if bad.any():
        first = tuple(int(v) for v in np.argwhere(bad)[0])
        return (f"result {i}: {int(bad.sum())} of {want.size} elements differ; first at {list(first)}: "
                f"got {got[first]!r}, expected {want[first]!r}")
    return None


def compare(rule, inputs, expected, actual):
    """None when `actual` is right, else one line saying where it is wrong. `rule` is a small
    JSON-able dict: {"kind": "topk", "dim", "k", "largest", "labels", "results"} (values exact,
    indices by what they select; "squeezed": true when the k = 1 dim is dropped, an arg-max;
    "operands": the root's operands encoded, when producers sit between the arguments and it) or {"kind": "elementwise", "rtol", "atol"} (None: the dtype's
    default tolerance; 0 and 0: exact)."""
    if len(actual) != len(expected):
        return f"expected {len(expected)} results, got {len(actual)}"
    for i, (want, got) in enumerate(zip(expected, actual)):
        got = np.asarray(got)
        if tuple(got.shape) != tuple(want.shape):
            return f"result {i}: shape {list(got.shape)}, expected {list(want.shape)}"
        if rule.get("kind") == "topk" and rule["results"][i] == "indices":
            if got.dtype.kind not in "iu":
                return f"result {i} (indices): dtype {got.dtype}, expected an integer type"
            x = operand(rule, inputs, 0)
            if rule.get("squeezed"):  # an arg-max without keepdims: its k = 1 dim dropped
                got = np.expand_dims(got, rule["dim"])
            values = np.take_along_axis(x, topk_positions(x, rule["dim"], rule["k"], rule["largest"]), axis=rule["dim"])
            problem = check_topk_indices(x, operand(rule, inputs, 1) if rule["labels"] else None, rule["dim"], values, got)
            if problem:
                return f"result {i} (indices): {problem}"
            continue
        got = got.astype(want.dtype) if got.dtype != want.dtype and np.can_cast(got.dtype, want.dtype) else got
        if rule.get("kind") == "topk":
            rtol = atol = 0.0
        else:
            rtol = tolerance(want.dtype) if rule.get("rtol") is None else rule["rtol"]
            atol = tolerance(want.dtype) if rule.get("atol") is None else rule["atol"]
        problem = _elementwise(i, want, got, rtol, atol)
        if problem:
            return problem
    return None
