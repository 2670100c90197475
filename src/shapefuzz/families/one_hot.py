"""The one_hot family: an index tensor of rank 0..3 expanded along a class axis of size `depth`.

Semantics (ONNX OneHot, the one frontends lower to): the output has rank r+1, the class axis at
`axis` (-1 = last). out[..., c, ...] = on if norm(idx[...]) == c else off, where a negative index
wraps once (norm(i) = i + depth for i < 0) and an index still outside [0, depth) after wrapping
selects no class: its row is all `off` (ONNX: "values outside [-depth, depth-1] give all off").
The IR and the NumPy reference both implement exactly this.

Depth is static or dynamic (a 0-d index-typed input, as ONNX passes it); on/off values are constants
or 0-d inputs. Optional consumer, as a mixture-of-experts router uses it: multiply by a weight tensor
of the one-hot's shape and sum over the class axis ("reduce": only the sum is returned, "both": the
one-hot and the sum). Forms (the metamorphic oracle compares them):
- "generic": a linalg.generic comparing linalg.index(axis) with the normalized index (cmpi + select).
- "scatter": fill with off, iree_linalg_ext.scatter the on value at (position..., class) with a
  permuted dimension_map; indices that hit no class go to a dump slot at class `depth`, sliced away.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.base import EXACT, Family, FamilyParams
from shapefuzz.families.common import (
    FLOAT_DTYPES,
    Dim,
    compare_arrays,
    draw_dyn_flags,
    draw_size,
    dyn_features,
    literal,
    np_dtype,
    with_item,
    tensor_type,
)
from shapefuzz.model import Mismatch
from shapefuzz.templates import render_template

FORMS = ("generic", "scatter")
DTYPES = ("f32", "f16", "i32", "i8")
INDEX_DTYPES = ("i32", "i64")
CONSUMERS = ("none", "reduce", "both")
RANGES = ("valid", "wrap", "oob")
MAX_OUTPUT_ELEMENTS = 1 << 14
REGIME_LARGE_SIZES = (64, 65, 127, 128, 129, 255, 256, 257, 1024)
MAX_OUTPUT_ELEMENTS_LARGE = 1 << 20
FLOAT_ON = (1.0, 2.0, 0.5, -1.0, 0.25)
FLOAT_OFF = (0.0, 0.0, -1.0, 0.25)
INT_ON = (1, 2, -1, 5)
INT_OFF = (0, 0, -1, 3)


@dataclass(frozen=True)
class Params(FamilyParams):
    form: str  # FORMS
    dtype: str
    index_dtype: str
    index_shape: tuple[int, ...]
    index_dyn: tuple[bool, ...]
    depth: int
    depth_dyn: bool
    axis: int  # where the class axis goes in the output; -1 = last
    values: str  # "const" | "input": on/off as constants or 0-d arguments
    on: float | int
    off: float | int
    consumer: str  # CONSUMERS
    range: str  # RANGES: which index values the inputs hold
    dimension_map: tuple[int, ...]


def out_axis(p: Params) -> int:
    rank = len(p.index_shape)
    return rank if p.axis == -1 else p.axis


def out_shape(p: Params) -> list[int]:
    shape = list(p.index_shape)
    shape.insert(out_axis(p), p.depth)
    return shape


def is_valid(p: Params) -> bool:
    r = len(p.index_shape)
    if not 0 <= r <= 3 or len(p.index_dyn) != r or not (p.axis == -1 or 0 <= p.axis <= r):
        return False
    if sorted(p.dimension_map) != list(range(r + 1)) or p.depth < 1 or min(p.index_shape, default=1) < 1:
        return False
    if p.dtype == "f16" and p.consumer != "none" and p.depth > 64:
        return False  # keeps every f16 partial sum exact
    return (p.form in FORMS and p.dtype in DTYPES and p.index_dtype in INDEX_DTYPES
            and p.consumer in CONSUMERS and p.range in RANGES and p.on != p.off)


@st.composite
def _params(draw: Any, regime: str = "small") -> Params:
    large = draw(st.integers(0, 15)) == 0
    rank = draw(st.integers(0, 3))
    index_shape = [draw_size(draw, large) for _ in range(rank)]
    depth = draw_size(draw, large)
    cap = MAX_OUTPUT_ELEMENTS
    if regime == "large":  # compile-only lanes: outputs of 256 KB to 4 MB
        index_shape = [draw(st.sampled_from(REGIME_LARGE_SIZES)) for _ in range(rank)]
        depth = draw(st.sampled_from(REGIME_LARGE_SIZES))
        cap = MAX_OUTPUT_ELEMENTS_LARGE
    dtype = draw(st.sampled_from(DTYPES))
    consumer = draw(st.sampled_from(CONSUMERS))
    if dtype == "f16" and consumer != "none":
        depth = min(depth, 64)
    while int(np.prod(index_shape, dtype=np.int64)) * depth > cap:
        index_shape[index_shape.index(max(index_shape))] //= 2
    flags = draw_dyn_flags(draw, rank + 1)  # index dims, then depth: one mix over all of them
    is_float = dtype in FLOAT_DTYPES
    on = draw(st.sampled_from(FLOAT_ON if is_float else INT_ON))
    off = draw(st.sampled_from([v for v in (FLOAT_OFF if is_float else INT_OFF) if v != on]))
    axis = draw(st.sampled_from([-1] + list(range(rank + 1))))
    params = {
        "form": draw(st.sampled_from(FORMS)),
        "dtype": dtype,
        "index_dtype": draw(st.sampled_from(INDEX_DTYPES)),
        "index_shape": index_shape,
        "index_dyn": flags[:rank],
        "depth": depth,
        "depth_dyn": flags[rank],
        "axis": axis,
        "values": draw(st.sampled_from(("const", "input"))),
        "on": on,
        "off": off,
        "consumer": consumer,
        "range": draw(st.sampled_from(RANGES)),
        "dimension_map": draw(st.permutations(list(range(rank + 1)))),
    }
    typed = Params(**params)
    assert is_valid(typed), params
    return typed


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def _arguments(p: Params) -> list[tuple[str, str]]:
    elt, ielt = p.dtype, p.index_dtype
    out_flags = list(p.index_dyn)
    out_flags.insert(out_axis(p), p.depth_dyn)
    args = [("%indices", tensor_type(list(zip(p.index_shape, p.index_dyn)), ielt))]
    if p.depth_dyn:
        args.append(("%depth_t", f"tensor<{ielt}>"))
    if p.values == "input":
        args += [("%on_t", f"tensor<{elt}>"), ("%off_t", f"tensor<{elt}>")]
    if p.consumer != "none":
        args.append(("%weights", tensor_type(list(zip(out_shape(p), out_flags)), elt)))
    return args


def result_shapes(p: Params) -> list[list[int]]:
    shapes = []
    if p.consumer in ("none", "both"):
        shapes.append(out_shape(p))
    if p.consumer in ("reduce", "both"):
        shapes.append(list(p.index_shape))
    return shapes


def render(p: Params) -> str:
    elt, ielt = p.dtype, p.index_dtype
    r, a = len(p.index_shape), out_axis(p)
    is_float = elt in FLOAT_DTYPES
    idx_dims = [Dim(s, d, f"%id{i}" if d else None) for i, (s, d) in enumerate(zip(p.index_shape, p.index_dyn))]
    idx_ty = tensor_type(idx_dims, ielt)
    dim_ops = [(d.ssa, "%indices", i, idx_ty) for i, d in enumerate(idx_dims) if d.dyn]
    depth_dim = Dim(p.depth, p.depth_dyn, "%depth")
    out_dims = list(idx_dims)
    out_dims.insert(a, depth_dim)
    out_ty = tensor_type(out_dims, elt)
    big_dims = list(idx_dims)
    big_dims.insert(a, Dim(p.depth + 1, p.depth_dyn, "%depth_p1"))
    loops = [f"d{i}" for i in range(r + 1)]
    head = "(" + ", ".join(loops) + ")"
    idx_loops = loops[:a] + loops[a + 1 :]  # the output's loops other than the class axis
    results = []
    if p.consumer in ("none", "both"):
        results.append(("%onehot", out_ty))
    red_ty = tensor_type(idx_dims, elt)
    if p.consumer in ("reduce", "both"):
        results.append(("%reduced", red_ty))
    # Column j of the scatter's coordinates addresses output dim dimension_map[j]: the class for
    # the class axis (None), else the position along the matching index dim.
    columns = []
    for j, q in enumerate(p.dimension_map):
        columns.append((j, None if q == a else (q if q < a else q - 1)))
    ctx = {
        "form": p.form,
        "args": _arguments(p),
        "results": results,
        "elt": elt,
        "ielt": ielt,
        "is_float": is_float,
        "nconsts": max(r + 1, 2),
        "depth": p.depth,
        "depth_dyn": p.depth_dyn,
        "values_input": p.values == "input",
        "on": literal(p.on, elt),
        "off": literal(p.off, elt),
        "zero": literal(0, elt),
        "dim_ops": dim_ops,
        "axis": a,
        "rank": r,
        "idx_ty": idx_ty,
        "out_ty": out_ty,
        "out_dyn_sizes": [d.ssa for d in out_dims if d.dyn],
        "idx_map": f"affine_map<{head} -> ({', '.join(idx_loops)})>",
        "out_map": f"affine_map<{head} -> ({', '.join(loops)})>",
        "out_iters": ['"parallel"'] * (r + 1),
        "big_ty": tensor_type(big_dims, elt),
        "big_dyn_sizes": [d.ssa for d in big_dims if d.dyn],
        "idx_dyn_sizes": [d.ssa for d in idx_dims if d.dyn],
        "coord_ty": tensor_type(idx_dims + [Dim(r + 1, False)], ielt),
        "coord_in_map": f"affine_map<{head} -> ({', '.join(loops[:r])})>",
        "coord_out_map": f"affine_map<{head} -> ({', '.join(loops)})>",
        "coord_iters": ['"parallel"'] * (r + 1),
        "columns": columns,
        "upd_ty": tensor_type(idx_dims, elt),
        "dim_map": p.dimension_map,
        "slice_offsets": ["0"] * (r + 1),
        "slice_sizes": [d.ssa if d.dyn else str(d.size) for d in out_dims],
        "slice_strides": ["1"] * (r + 1),
        "consumer": p.consumer,
        "red_ty": red_ty,
        "red_map": f"affine_map<{head} -> ({', '.join(idx_loops)})>",
        "red_iters": ['"reduction"' if i == a else '"parallel"' for i in range(r + 1)],
    }
    return render_template("one_hot.mlir.j2", **ctx)


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    depth = p.depth
    lo, hi = {"valid": (0, depth), "wrap": (-depth, depth), "oob": (-depth - 3, depth + 3)}[p.range]
    idt = np_dtype(p.index_dtype)
    dt = np_dtype(p.dtype)
    inputs = [np.asarray(rng.integers(lo, hi, size=p.index_shape), dtype=idt)]
    if p.depth_dyn:
        inputs.append(np.array(depth, dtype=idt))
    if p.values == "input":
        inputs += [np.array(p.on, dtype=dt), np.array(p.off, dtype=dt)]
    if p.consumer != "none":
        if p.dtype in FLOAT_DTYPES:
            w = rng.integers(-4, 5, size=out_shape(p)) / 2  # multiples of 1/2 in [-2, 2]
        else:
            w = rng.integers(-3, 4, size=out_shape(p))
        inputs.append(np.asarray(w, dtype=dt))
    return inputs


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    idx = inputs[0].astype(np.int64)
    depth = p.depth
    dt = np_dtype(p.dtype)
    norm = np.where(idx < 0, idx + depth, idx)
    hit = norm[..., None] == np.arange(depth)  # class axis last, then moved into place
    hit = np.moveaxis(hit, -1, out_axis(p))
    onehot = np.where(hit, np.array(p.on, dtype=dt), np.array(p.off, dtype=dt)).astype(dt)
    out = []
    if p.consumer in ("none", "both"):
        out.append(onehot)
    if p.consumer in ("reduce", "both"):
        wide = np.float64 if dt.kind == "f" else np.int64
        total = (onehot.astype(wide) * inputs[-1].astype(wide)).sum(axis=out_axis(p))
        out.append(np.asarray(total).astype(dt))  # ints wrap like the i8/i32 arithmetic does
    return out


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Exact: the values keep every sum exact in every dtype (ints wrap in both)."""
    return compare_arrays(expected, actual, check_dtype=True)


def export_rule(p: Params) -> dict:
    return dict(EXACT)  # as `compare`


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=f) for f in FORMS if f != p.form]


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    *(f"form:{f}" for f in FORMS), *(f"dtype:{d}" for d in DTYPES), "index:i32", "index:i64",
    "rank:0", "rank:1", "rank:2", "rank:3", "axis:first", "axis:inner", "axis:last", "axis:-1",
    "dyn:none", "dyn:all", "dyn:mixed", "dyn:all-but-one", "dyn:one", "depth:dyn",
    "values:const", "values:input", "use:onehot", "use:reduce", "use:both",
    "range:valid", "range:wrap", "range:oob", "dimmap:permuted", "size:1", "size:large",
)  # fmt: skip


def features(p: Params) -> list[str]:
    r, a = len(p.index_shape), out_axis(p)
    out = [f"form:{p['form']}", f"dtype:{p['dtype']}", f"index:{p['index_dtype']}", f"rank:{r}",
           f"values:{p['values']}", f"range:{p['range']}",
           {"none": "use:onehot", "reduce": "use:reduce", "both": "use:both"}[p.consumer],
           "axis:last" if a == r else "axis:first" if a == 0 else "axis:inner"]
    out += dyn_features(list(p.index_dyn) + [p.depth_dyn])
    if p.depth_dyn:
        out.append("depth:dyn")
    if p.axis == -1:
        out.append("axis:-1")
    if list(p.dimension_map) != sorted(p.dimension_map):
        out.append("dimmap:permuted")
    if p.depth == 1 or 1 in p.index_shape:
        out.append("size:1")
    if max([*p.index_shape, p.depth]) > 17:
        out.append("size:large")
    return out


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(index_dyn=[False] * len(p.index_dyn), depth_dyn=False),
    "f32": lambda p: p.replace(dtype="f32", on=float(p.on), off=float(p.off)),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "valid-range": lambda p: p.replace(range="valid"),
    "no-consumer": lambda p: p.replace(consumer="none"),
    "const-values": lambda p: p.replace(values="const"),
    "identity-map": lambda p: p.replace(dimension_map=list(range(len(p.index_shape) + 1))),
}


def shrink_candidates(p: Params) -> list[Params]:
    cands: list[Params] = []
    r, a = len(p.index_shape), out_axis(p)
    if r >= 1:  # drop the last index dim
        axis = p.axis if p.axis == -1 else min(a, r - 1)
        cands.append(p.replace(index_shape=p.index_shape[:-1], index_dyn=p.index_dyn[:-1], axis=axis,
                          dimension_map=list(range(r))))
    if any(p.index_dyn) or p.depth_dyn:
        cands.append(p.replace(index_dyn=[False] * r, depth_dyn=False))
        if p.depth_dyn:
            cands.append(p.replace(depth_dyn=False))
        for i, f in enumerate(p.index_dyn):
            if f:
                cands.append(p.replace(index_dyn=with_item(p.index_dyn, i, False)))
    for i, s in enumerate(p.index_shape):
        for smaller in sorted({1, s // 2}):
            if smaller < s:
                cands.append(p.replace(index_shape=with_item(p.index_shape, i, smaller)))
    for smaller in sorted({1, 2, p.depth // 2}):
        if 1 <= smaller < p.depth:
            cands.append(p.replace(depth=smaller))
    simpler = {"form": "generic", "consumer": "none", "range": "valid", "values": "const", "index_dtype": "i32",
               "axis": -1, "dimension_map": tuple(range(r + 1))}
    for key, value in simpler.items():
        if p[key] != value:
            cands.append(p.replace(**{key: value}))
    if p.dtype != "f32":
        cands.append(p.replace(dtype="f32", on=1.0, off=0.0))
    return cands


FAMILY = Family.define("one_hot", Params, globals())
