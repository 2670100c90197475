"""Drawing scatter cases, and their equivalent forms, features, swarm knobs and shrink candidates."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
import numpy as np

from shapefuzz.families.common import draw_dyn_flags, draw_size, dyn_features, with_item
from shapefuzz.families.scatter.params import (
    COMBINERS, DTYPES, FORMS, INDEX_DTYPES, MAX_BATCH, MAX_BATCH_LARGE, MAX_ORIGINAL_ELEMENTS,
    MAX_ORIGINAL_ELEMENTS_LARGE, Params, REGIME_LARGE_SIZES, is_valid, n_batch)


# ----------------------------------------------------------------------------- strategy


@st.composite
def _params(draw: Any, regime: str = "small") -> Params:
    large = draw(st.integers(0, 15)) == 0  # occasionally sizes that stress GPU limits
    rank = draw(st.integers(1, 4))
    depth = draw(st.integers(1, rank))
    k = draw(st.integers(0, 2))
    orig_shape = [draw_size(draw, large) for _ in range(rank)]
    cap, max_batch = MAX_ORIGINAL_ELEMENTS, MAX_BATCH
    if regime == "large":  # compile-only lanes: originals of 256 KB to 4 MB, big batches
        orig_shape = [draw(st.sampled_from(REGIME_LARGE_SIZES)) for _ in range(rank)]
        cap, max_batch = MAX_ORIGINAL_ELEMENTS_LARGE, MAX_BATCH_LARGE
    while int(np.prod(orig_shape)) > cap:
        orig_shape[orig_shape.index(max(orig_shape))] //= 2
    combiner = draw(st.sampled_from(COMBINERS))
    unique = draw(st.booleans())
    dup_ok = combiner != "overwrite" and not unique
    duplicates = dup_ok and draw(st.booleans())
    limit = max_batch if duplicates else min(max_batch, int(np.prod(orig_shape[:depth])))
    if combiner == "mul" and duplicates:
        limit = min(limit, 8)  # keeps products of powers of two in range
    batch_shape = [draw_size(draw, regime == "large") for _ in range(k)]
    while int(np.prod(batch_shape, dtype=np.int64)) > limit:
        batch_shape[batch_shape.index(max(batch_shape))] = max(1, max(batch_shape) // 2)
    if duplicates and int(np.prod(batch_shape, dtype=np.int64)) < 2:
        duplicates = False
    # All of the case's dims share one dynamic-mix draw: original, batch, then updates' window.
    flags = draw_dyn_flags(draw, rank + k + (rank - depth))
    params = {
        "form": draw(st.sampled_from(FORMS)),
        "dtype": draw(st.sampled_from(DTYPES)),
        "index_dtype": draw(st.sampled_from(INDEX_DTYPES)),
        "orig_shape": orig_shape,
        "orig_dyn": flags[:rank],
        "depth": depth,
        "dimension_map": draw(st.permutations(list(range(depth)))),
        "batch_shape": batch_shape,
        "batch_dyn": flags[rank : rank + k],
        "window_dyn": flags[rank + k :],
        "implicit_depth": depth == 1 and k > 0 and draw(st.booleans()),
        "combiner": combiner,
        "unique": unique,
        "duplicates": duplicates,
    }
    typed = Params(**params)
    assert is_valid(typed), params
    return typed


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


# ----------------------------------------------------------------------------- oracle helpers


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=f) for f in FORMS if f != p.form]


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    *(f"form:{f}" for f in FORMS), *(f"dtype:{d}" for d in DTYPES), "index:i32", "index:i64",
    *(f"combiner:{c}" for c in COMBINERS), "unique:true", "unique:false", "duplicates",
    "dyn:none", "dyn:all", "dyn:mixed", "dyn:all-but-one", "dyn:one",
    "batch:0", "batch:1", "batch:2", "depth:1", "depth:2", "depth:3", "rank:1", "rank:2", "rank:3", "rank:4",
    "window:none", "dimmap:permuted", "indices:implicit-depth", "size:1", "size:large",
)  # fmt: skip


def features(p: Params) -> list[str]:
    flags = p.orig_dyn + p.batch_dyn + p.window_dyn
    out = [f"form:{p.form}", f"dtype:{p.dtype}", f"index:{p.index_dtype}",
           f"rank:{len(p.orig_shape)}", f"depth:{p.depth}", f"batch:{len(p.batch_shape)}",
           f"combiner:{p.combiner}", "unique:true" if p.unique else "unique:false"]
    out += dyn_features(flags)
    if p.depth == len(p.orig_shape):
        out.append("window:none")
    if list(p.dimension_map) != sorted(p.dimension_map):
        out.append("dimmap:permuted")
    if p.implicit_depth:
        out.append("indices:implicit-depth")
    if p.duplicates:
        out.append("duplicates")
    if any(s == 1 for s in p.orig_shape + p.batch_shape):
        out.append("size:1")
    if max(p.orig_shape + p.batch_shape) > 17:
        out.append("size:large")
    return out


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(orig_dyn=[False] * len(p.orig_dyn), batch_dyn=[False] * len(p.batch_dyn),
                                  window_dyn=[False] * len(p.window_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "no-duplicates": lambda p: p.replace(duplicates=False),
    "identity-map": lambda p: p.replace(dimension_map=list(range(p.depth))),
    "explicit-depth": lambda p: p.replace(implicit_depth=False),
}


def shrink_candidates(p: Params) -> list[Params]:
    cands: list[Params] = []
    r, d, k = len(p.orig_shape), p.depth, len(p.batch_shape)
    # Lower rank: drop a window dim, or an indexed dim (with its index column).
    if r - d >= 1:
        cands.append(p.replace(orig_shape=p.orig_shape[:-1], orig_dyn=p.orig_dyn[:-1], window_dyn=p.window_dyn[:-1]))
    if d >= 2:
        drop = d - 1
        dm = [x for x in p.dimension_map if x != drop]
        cands.append(p.replace(depth=d - 1, dimension_map=dm, orig_shape=p.orig_shape[:drop] + p.orig_shape[d:],
                          orig_dyn=p.orig_dyn[:drop] + p.orig_dyn[d:]))
    if k >= 1:
        cands.append(p.replace(batch_shape=p.batch_shape[:-1], batch_dyn=p.batch_dyn[:-1],
                          implicit_depth=p.implicit_depth and k > 1))
    # Fewer dynamic dims: all static, then one at a time.
    if any(p.orig_dyn + p.batch_dyn + p.window_dyn):
        cands.append(p.replace(orig_dyn=[False] * r, batch_dyn=[False] * k, window_dyn=[False] * (r - d)))
        for key in ("orig_dyn", "batch_dyn", "window_dyn"):
            for i, f in enumerate(p[key]):
                if f:
                    cands.append(p.replace(**{key: with_item(p[key], i, False)}))
    # Smaller sizes.
    for key in ("orig_shape", "batch_shape"):
        for i, s in enumerate(p[key]):
            for smaller in sorted({1, s // 2}):
                if smaller < s:
                    cands.append(p.replace(**{key: with_item(p[key], i, smaller)}))
    simpler = {"form": "linalg_ext", "dtype": "f32", "index_dtype": "i32", "implicit_depth": False,
               "duplicates": False, "dimension_map": tuple(range(d))}
    for key, value in simpler.items():
        if p[key] != value:
            cands.append(p.replace(**{key: value}))
    if p.combiner not in ("overwrite", "add"):
        cands.append(p.replace(combiner="add"))
    return [c.replace(duplicates=False) if c.duplicates and n_batch(c) < 2 else c for c in cands]
