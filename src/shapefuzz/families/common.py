"""The family toolkit: what every op family needs and none should write again.

- `DTYPES`: the element types we generate (MLIR name <-> NumPy dtype, float or not);
- `tensor_type`: the one `tensor<...>` builder;
- `affine_expr` / `loop_dims` / `identity_map`: affine-map text;
- `Dim`, `collapse_step`, `expand_step`, `split_step`: pure reshape steps (all collapses or all
  expansions) laid out by a template macro;
- size pools and dynamic-dim mixes shared by the strategies;
- `compare_arrays` and its pieces: the one comparison of results against a reference, returning a
  typed `Mismatch(kind, detail)` (the kind is what a signature buckets on).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Sequence

import numpy as np

from shapefuzz.model import Mismatch, MismatchKind

# ----------------------------------------------------------------------------- element types


@dataclass(frozen=True)
class DType:
    mlir: str  # the MLIR element type ("f32", "i8", ...)
    numpy: np.dtype
    is_float: bool

    @property
    def bits(self) -> int:
        return self.numpy.itemsize * 8


DTYPES: dict[str, DType] = {
    name: DType(name, np.dtype(np_name), name.startswith("f"))
    for name, np_name in (("f64", "float64"), ("f32", "float32"), ("f16", "float16"), ("i64", "int64"),
                          ("i32", "int32"), ("i8", "int8"))
}
FLOAT_DTYPES = tuple(name for name, dt in DTYPES.items() if dt.is_float)


def np_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an MLIR element type name."""
    return DTYPES[name].numpy


def is_float(name: str) -> bool:
    return DTYPES[name].is_float


def literal(value: Any, elt: str) -> str:
    """A constant of element type `elt` as MLIR writes it (`1.0`, `-2`)."""
    return repr(float(value)) if is_float(elt) else str(int(value))


# ----------------------------------------------------------------------------- types and maps


@dataclass(frozen=True)
class Dim:
    size: int
    dyn: bool
    ssa: str | None = None  # the SSA value holding the size at run time (dynamic dims we can name)

    @property
    def text(self) -> str:
        return "?" if self.dyn else str(self.size)


DimLike = Any  # Dim | (size, dyn) | int (static) | str (an SSA size: dynamic) | None (dynamic)


def _dim_text(d: DimLike) -> str:
    if isinstance(d, Dim):
        return d.text
    if isinstance(d, tuple):
        return "?" if d[1] else str(d[0])
    if d is None or isinstance(d, str):
        return "?"
    return str(int(d))


def tensor_type(dims: Sequence[DimLike], elt: str, dyn: Sequence[bool] | None = None) -> str:
    """`tensor<2x?xf32>`. Each dim is a `Dim`, a `(size, dynamic)` pair, a static int, or an SSA
    name / None for a dynamic one; `dyn`, when given, marks dims dynamic by position instead."""
    if dyn is not None:
        parts = ["?" if d else str(int(s)) for s, d in zip(dims, dyn)]
    else:
        parts = [_dim_text(d) for d in dims]
    return "tensor<" + "".join(p + "x" for p in parts) + elt + ">"


def affine_expr(terms: Iterable[tuple[int, str]], const: int = 0) -> str:
    """sum(coeff * sym) + const, in MLIR affine syntax (`s0 * 2 - s1 + 3`)."""
    out = ""
    for coeff, sym in terms:
        mag = abs(coeff)
        piece = sym if mag == 1 else f"{sym} * {mag}"
        if not out:
            out = piece if coeff > 0 else f"-{piece}" if mag == 1 else f"{sym} * {coeff}"
        else:
            out += f" + {piece}" if coeff > 0 else f" - {piece}"
    if not out:
        return str(const)
    if const > 0:
        out += f" + {const}"
    elif const < 0:
        out += f" - {-const}"
    return out


def loop_dims(n: int) -> str:
    return ", ".join(f"d{i}" for i in range(n))


def identity_map(n: int) -> str:
    return f"affine_map<({loop_dims(n)}) -> ({loop_dims(n)})>"


def reassoc_text(groups: Sequence[Sequence[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


# ----------------------------------------------------------------------------- index values


class IndexValues:
    """The index-typed SSA values a case's dynamic sizes need (`arith.constant`, `tensor.dim`,
    `affine.apply`), each created once, on demand. All depend only on the function's arguments,
    so the `index_values` macro (templates/index_values.mlir.j2) lays them out at the top of the
    function: constants, then dims, then applies, each in creation order."""

    def __init__(self) -> None:
        self.consts: set[int] = set()
        self.dims: list[dict[str, Any]] = []
        self.applies: list[dict[str, Any]] = []
        self._names: dict[Any, str] = {}

    def const(self, value: int) -> str:
        self.consts.add(value)
        return f"%c{value}"

    def dim(self, src: str, src_type: str, idx: int, name: str | None = None) -> str:
        """`tensor.dim src, idx` (named `name`, default `%<src>_d<idx>`)."""
        key = ("dim", src, idx)
        if key not in self._names:
            self.const(idx)
            self._names[key] = name or f"%{src[1:]}_d{idx}"
            self.dims.append({"name": self._names[key], "src": src, "idx": idx, "type": src_type})
        return self._names[key]

    def apply(self, terms: Sequence[tuple[int, str]], const: int = 0, divisor: int = 0, name: str | None = None) -> str:
        """`affine.apply` of sum(coeff * value) + const, or with `divisor` of
        (sum + const) floordiv divisor + 1 (an output size). An unchanged value is returned as is."""
        terms = list(terms)
        if name is None and not divisor and const == 0 and len(terms) == 1 and terms[0][0] == 1:
            return terms[0][1]
        syms = [f"s{j}" for j in range(len(terms))]
        sym_terms = [(c, s) for (c, _), s in zip(terms, syms)]
        if not divisor:
            body = affine_expr(sym_terms, const)
        elif divisor == 1:
            body = affine_expr(sym_terms, const + 1)
        else:
            body = f"({affine_expr(sym_terms, const)}) floordiv {divisor} + 1"
        amap = f"affine_map<()[{', '.join(syms)}] -> ({body})>"
        operands = [v for _, v in terms]
        key = ("apply", name) if name else ("apply", amap, tuple(operands))
        if key not in self._names:
            self._names[key] = name or f"%s{len(self.applies)}"
            self.applies.append({"name": self._names[key], "map": amap, "operands": operands})
        return self._names[key]

    def ops(self) -> dict[str, Any]:
        """What the macro lays out."""
        return {"consts": sorted(self.consts), "dims": self.dims, "applies": self.applies}


# ----------------------------------------------------------------------------- reshape steps


@dataclass(frozen=True)
class Reshape:
    """One tensor.collapse_shape / tensor.expand_shape step, laid out by a template's macro."""

    kind: str  # "collapse" | "expand"
    res: str
    src: str
    src_ty: str
    dst_ty: str
    reassoc: str
    output_shape: tuple[str, ...] = ()


def collapse_step(res: str, src: str, dims: list[Dim], groups: list[list[int]], elt: str) -> tuple[Reshape | None, list[Dim]]:
    """Collapse each group of consecutive source dims into one dim. None when nothing changes."""
    out = []
    for g in groups:
        members = [dims[i] for i in g]
        if len(members) == 1:
            out.append(members[0])
        else:
            out.append(Dim(int(np.prod([m.size for m in members])), any(m.dyn for m in members)))
    if all(len(g) == 1 for g in groups):
        return None, dims
    return Reshape("collapse", res, src, tensor_type(dims, elt), tensor_type(out, elt), reassoc_text(groups)), out


def size_text(d: Dim) -> str:
    """A dim's size as an op's size operands take it: the static size, or its SSA value."""
    if not d.dyn:
        return str(d.size)
    assert d.ssa is not None, "every dynamic dim of an expand target needs an SSA size"
    return d.ssa


def expand_step(res: str, src: str, dims: list[Dim], target: list[Dim | int], elt: str) -> tuple[Reshape | None, list[Dim]]:
    """Expand to `target`: an int i there stands for source dim i, a Dim for a new dim (a unit dim,
    or a split of one source dim when several Dims follow one source index; see `split_step`).
    New unit dims join the group of the nearest preceding source dim (or the following one)."""
    out = [dims[t] if isinstance(t, int) else t for t in target]
    if len(out) == len(dims):
        return None, dims
    owner: list[int] = []
    last = None
    for t in target:
        if isinstance(t, int):
            last = t
        owner.append(last if last is not None else -1)
    first_src = next((t for t in target if isinstance(t, int)), None)
    owners = [first_src if o == -1 else o for o in owner]
    groups = [[j for j, o in enumerate(owners) if o == i] for i in range(len(dims))]
    shape = tuple(size_text(d) for d in out)
    return Reshape("expand", res, src, tensor_type(dims, elt), tensor_type(out, elt), reassoc_text(groups), shape), out


def split_step(res: str, src: str, dims: list[Dim], groups: list[list[Dim]], elt: str) -> Reshape:
    """Expand source dim i into the dims `groups[i]` (the inverse of a collapse)."""
    out = [d for g in groups for d in g]
    reassoc, j = [], 0
    for g in groups:
        reassoc.append(list(range(j, j + len(g))))
        j += len(g)
    shape = tuple(size_text(d) for d in out)
    return Reshape("expand", res, src, tensor_type(dims, elt), tensor_type(out, elt), reassoc_text(reassoc), shape)


# ----------------------------------------------------------------------------- strategies

# Sizes biased toward 1, primes and just above powers of two; kept small so CPU runs are cheap.
SMALL_SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17)
LARGE_SIZES = (31, 33, 65, 127, 129)

# How the dynamic flags of all a case's dims are drawn; "all_but_one" is the mix of bug class 2.
DYN_MODES = ("none", "all", "all_but_one", "one", "random")


def draw_size(draw: Any, large: bool = False) -> int:
    from hypothesis import strategies as st  # the comparison half of this module is used without hypothesis

    pool = SMALL_SIZES + (LARGE_SIZES if large else ())
    return draw(st.sampled_from(pool))


def draw_dyn_flags(draw: Any, n: int, modes: Sequence[str] = DYN_MODES) -> list[bool]:
    """Dynamic flags for n dims, reaching none / all / all-but-one / exactly-one / random mixes."""
    from hypothesis import strategies as st

    if n == 0:
        return []
    mode = draw(st.sampled_from(tuple(modes)))
    if mode == "none":
        return [False] * n
    if mode == "all":
        return [True] * n
    if mode in ("all_but_one", "one"):
        k = draw(st.integers(0, n - 1))
        return [(i != k) if mode == "all_but_one" else (i == k) for i in range(n)]
    return [draw(st.booleans()) for _ in range(n)]


def dyn_features(flags: Sequence[bool]) -> list[str]:
    n, k = len(flags), sum(flags)
    out = ["dyn:none" if k == 0 else "dyn:all" if k == n else "dyn:mixed"]
    if n >= 2 and k == n - 1:
        out.append("dyn:all-but-one")
    if n >= 2 and k == 1:
        out.append("dyn:one")
    return out


# ----------------------------------------------------------------------------- comparison


def _where(index: tuple[int, ...]) -> list[int]:
    return [int(i) for i in index]


def count_mismatch(expected: Sequence[Any], actual: Sequence[Any]) -> Mismatch | None:
    if len(actual) != len(expected):
        return Mismatch(MismatchKind.COUNT, f"expected {len(expected)} result(s), got {len(actual)}")
    return None


def shape_mismatch(i: int, want: np.ndarray, got: np.ndarray) -> Mismatch | None:
    if tuple(got.shape) != tuple(want.shape):
        return Mismatch(MismatchKind.SHAPE, f"result {i}: shape {list(got.shape)}, expected {list(want.shape)}")
    return None


def _plain(value: Any) -> str:
    """A NumPy scalar as a plain number (`4.0`, not `np.float64(4.0)`)."""
    return repr(value.item()) if hasattr(value, "item") else repr(value)


def values_mismatch(
    i: int, want: np.ndarray, got: np.ndarray, *, rtol: float = 0.0, atol: Any = 0.0, what: str = "elements"
) -> Mismatch | None:
    """Element-wise: exact for integers (and for floats with no tolerance), NaN equal to NaN;
    `atol` may be an array (a per-element error bound). `want` may be wider than `got`."""
    if want.dtype.kind in "iub" and got.dtype.kind in "iub":
        bad = want.astype(np.int64) != got.astype(np.int64)
    else:
        w, g = want.astype(np.float64), got.astype(np.float64)
        close = np.abs(g - w) <= atol + rtol * np.abs(w)
        bad = ~(close | (np.isnan(w) & np.isnan(g)) | ((w == g) & np.isinf(w)))
    if not bad.any():
        return None
    where = np.argwhere(bad)
    first = tuple(int(v) for v in where[0])
    # the size of the error too, and a few more places: what a maintainer asks first
    w, g = want.astype(np.float64)[bad], got.astype(np.float64)[bad]
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_err = np.abs(g - w)
        rel_err = abs_err / np.abs(w)
    finite = np.isfinite(abs_err)
    max_abs = f"{abs_err[finite].max():.6g}" if finite.any() else "nan/inf"
    rel_ok = np.isfinite(rel_err)
    max_rel = f"{rel_err[rel_ok].max():.6g}" if rel_ok.any() else "inf (expected 0)"
    more = "; ".join(f"{_where(tuple(int(v) for v in at))}: got {_plain(got[tuple(at)])}, expected "
                     f"{_plain(want[tuple(at)])}" for at in where[1:5])
    return Mismatch(
        MismatchKind.VALUES,
        f"result {i}: {int(bad.sum())} of {bad.size} {what} differ; first at {_where(first)}: "
        f"got {_plain(got[first])}, expected {_plain(want[first])}; max abs error {max_abs}, max rel error {max_rel}"
        + (f"; next: {more}" if more else ""),
    )


def compare_arrays(
    expected: Sequence[np.ndarray],
    actual: Sequence[np.ndarray],
    *,
    check_dtype: bool = False,
    tolerance: dict[str, tuple[float, float]] | None = None,
) -> Mismatch | None:
    """The results against the reference: count, then per result shape, dtype (when asked) and
    values. `tolerance` maps an MLIR float type to (rtol, atol); others compare exactly."""
    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    for i, (want, got) in enumerate(zip(expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got)
        if problem:
            return problem
        if check_dtype and got.dtype != want.dtype:
            return Mismatch(MismatchKind.DTYPE, f"result {i}: dtype {got.dtype}, expected {want.dtype}")
        rtol, atol = (tolerance or {}).get(_mlir_name(want.dtype), (0.0, 0.0))
        problem = values_mismatch(i, want, got, rtol=rtol, atol=atol)
        if problem:
            return problem
    return None


def _mlir_name(dtype: np.dtype) -> str:
    return next((name for name, dt in DTYPES.items() if dt.numpy == dtype), str(dtype))


def with_item(seq: Sequence[Any], i: int, value: Any) -> tuple[Any, ...]:
    """`seq` with item i replaced: for tuple-valued params."""
    return (*seq[:i], value, *seq[i + 1 :])


def shape_and_dynamic_shrinks(
    shape: Sequence[int], dyn: Sequence[bool], sizes: Callable[[int], Iterable[int]]
) -> list[dict[str, list[Any]]]:
    """Shrink steps for a family with one `shape` and one `in_dyn` flag per dim, as param
    changes in the order they are tried: each dim made smaller (to `sizes(n)`), then every dim
    static, then each dynamic dim static on its own."""
    steps: list[dict[str, list[Any]]] = []
    for i, n in enumerate(shape):
        if n > 1:
            steps += [{"shape": [v if j == i else s for j, s in enumerate(shape)]} for v in sizes(n)]
    if any(dyn):
        steps.append({"in_dyn": [False] * len(dyn)})
        steps += [{"in_dyn": [d and j != i for j, d in enumerate(dyn)]} for i, flag in enumerate(dyn) if flag]
    return steps
