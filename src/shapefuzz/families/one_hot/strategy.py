"""Drawing one_hot cases, and their equivalent forms, features, swarm knobs and shrink candidates."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
import numpy as np

from shapefuzz.families.common import FLOAT_DTYPES, draw_dyn_flags, draw_size, dyn_features, with_item
from shapefuzz.families.one_hot.params import (
    CONSUMERS, DTYPES, FLOAT_OFF, FLOAT_ON, FORMS, INDEX_DTYPES, INT_OFF, INT_ON, MAX_OUTPUT_ELEMENTS,
    MAX_OUTPUT_ELEMENTS_LARGE, Params, RANGES, REGIME_LARGE_SIZES, is_valid, out_axis)


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
    out = [f"form:{p.form}", f"dtype:{p.dtype}", f"index:{p.index_dtype}", f"rank:{r}",
           f"values:{p.values}", f"range:{p.range}",
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
