"""The scatter family: `iree_linalg_ext.scatter` and equivalent formulations.

Semantics (IREE's op definition): `original` has rank R; its leading `depth` dims are addressed by
the indices, the trailing R-depth dims form the window. `indices` is [batch..., depth] (or just
[batch...] when depth is 1: the "implicit depth" form); `updates` is [batch..., window...]. For each
batch position b, column j of indices[b] addresses original dim dimension_map[j] (a permutation of
the leading dims), and the whole window is combined element-wise:
    out[coord(b), w] = combine(updates[b, w], out[coord(b), w])
Combiners: overwrite (the update), add, sub (original - update: checks the block-argument order),
max, min, mul. Indices are never negative nor out of range (undefined in the op). Duplicate
coordinates appear only with `unique_indices(false)` and an order-independent combiner (all but
overwrite; float inputs are small multiples of 1/4 or powers of two so every order is exact).

Forms (the metamorphic oracle compares them):
- "linalg_ext": the scatter op itself.
- "reshape": batch dims collapsed to one (or a unit batch dim added), window dims collapsed to one
  (or a unit window dim added) with tensor.collapse_shape / expand_shape around the scatter, and the
  result reshaped back (class 2's collapse-into-store folding).
- "generic": a linalg.generic over (output dims, batch dims as reduction) that reads each index with
  tensor.extract and selects combine(update, acc) where the index matches.
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
    collapse_step,
    compare_arrays,
    draw_dyn_flags,
    draw_size,
    dyn_features,
    expand_step,
    np_dtype,
    split_step,
    tensor_type,
    with_item,
)
from shapefuzz.model import Mismatch
from shapefuzz.templates import render_template

FORMS = ("linalg_ext", "reshape", "generic")
DTYPES = ("f32", "f16", "i32", "i8")
INDEX_DTYPES = ("i32", "i64")
COMBINERS = ("overwrite", "add", "sub", "max", "min", "mul")
MAX_ORIGINAL_ELEMENTS = 1 << 14
MAX_BATCH = 64
REGIME_LARGE_SIZES = (64, 65, 127, 128, 129, 255, 256, 257, 1024)
MAX_ORIGINAL_ELEMENTS_LARGE = 1 << 20
MAX_BATCH_LARGE = 4096


@dataclass(frozen=True)
class Params(FamilyParams):
    form: str  # FORMS
    dtype: str
    index_dtype: str
    orig_shape: tuple[int, ...]
    orig_dyn: tuple[bool, ...]
    depth: int  # leading dims of `original` addressed by the indices
    dimension_map: tuple[int, ...]
    batch_shape: tuple[int, ...]
    batch_dyn: tuple[bool, ...]
    window_dyn: tuple[bool, ...]  # the updates' window dims
    implicit_depth: bool
    combiner: str  # COMBINERS
    unique: bool  # the op's unique_indices attribute
    duplicates: bool  # whether the inputs repeat a coordinate


# ----------------------------------------------------------------------------- validity


def n_batch(p: Params) -> int:
    return int(np.prod(p.batch_shape, dtype=np.int64)) if p.batch_shape else 1


def n_coords(p: Params) -> int:
    return int(np.prod(p.orig_shape[: p.depth], dtype=np.int64))


def is_valid(p: Params) -> bool:
    r, d, k = len(p.orig_shape), p.depth, len(p.batch_shape)
    if not (1 <= d <= r and 0 <= k <= 2):
        return False
    if len(p.orig_dyn) != r or len(p.batch_dyn) != k or len(p.window_dyn) != r - d:
        return False
    if sorted(p.dimension_map) != list(range(d)):
        return False
    if p.implicit_depth and (d != 1 or k == 0):
        return False
    if min(p.orig_shape + p.batch_shape, default=1) < 1:
        return False
    if p.duplicates and (p.unique or p.combiner == "overwrite" or n_batch(p) < 2):
        return False
    # Unique coordinates must exist for every batch position (overwrite never takes duplicates).
    if not p.duplicates and n_batch(p) > n_coords(p):
        return False
    return p.form in FORMS and p.dtype in DTYPES and p.index_dtype in INDEX_DTYPES and p.combiner in COMBINERS


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


# ----------------------------------------------------------------------------- shapes


def _shapes(p: Params) -> dict[str, list[tuple[int, bool]]]:
    r, d = len(p.orig_shape), p.depth
    orig = list(zip(p.orig_shape, p.orig_dyn))
    batch = list(zip(p.batch_shape, p.batch_dyn))
    window = list(zip(p.orig_shape[d:], p.window_dyn))
    idx = batch if p.implicit_depth else batch + [(d, False)]
    assert len(window) == r - d
    return {"original": orig, "indices": idx, "updates": batch + window}


def result_shapes(p: Params) -> list[list[int]]:
    return [list(p.orig_shape)]


# ----------------------------------------------------------------------------- render


def render(p: Params) -> str:
    shapes = _shapes(p)
    elt, ielt = p.dtype, p.index_dtype
    r, d, k = len(p.orig_shape), p.depth, len(p.batch_shape)
    w = r - d
    dim_ops: list[tuple[str, str, int, str]] = []

    def dims_of(arg: str, prefix: str, shape: list[tuple[int, bool]], ty: str) -> list[Dim]:
        out = []
        for i, (size, dyn) in enumerate(shape):
            ssa = f"%{prefix}{i}" if dyn else None
            if dyn:
                dim_ops.append((ssa, arg, i, ty))
            out.append(Dim(size, dyn, ssa))
        return out

    orig_ty = tensor_type(shapes["original"], elt)
    idx_ty = tensor_type(shapes["indices"], ielt)
    upd_ty = tensor_type(shapes["updates"], elt)
    ctx: dict[str, Any] = {
        "form": p.form,
        "orig_ty": orig_ty,
        "idx_ty": idx_ty,
        "upd_ty": upd_ty,
        "elt": elt,
        "idx_elt": ielt,
        "is_float": elt in FLOAT_DTYPES,
        "dim_map": p.dimension_map,
        "unique": p.unique,
        "combiner": p.combiner,
        "implicit_depth": p.implicit_depth,
        "nconsts": max(r, k + w, k + 1, d),
    }
    if p.form == "reshape":
        od = dims_of("%original", "od", shapes["original"], orig_ty)
        ud = dims_of("%updates", "ud", shapes["updates"], upd_ty)
        pre, post = [], []
        # Updates: [batch..., window...]. Expand first (unit dims only, so every dynamic size is an
        # argument's dim), then collapse: each a pure step. Batch rank 0/1 gains a unit batch dim,
        # 2 collapses to one; window rank 0/1 gains a unit dim, 2+ collapses to one.
        kb = k + 1 if k < 2 else k

        def two_steps(name: str, src: str, dims: list[Dim], with_window: bool, elem: str) -> tuple[str, list[Dim]]:
            target: list[Any] = list(range(k)) + ([Dim(1, False)] if k < 2 else [])
            if with_window:
                target += [k + i for i in range(w)] + ([Dim(1, False)] if w <= 1 else [])
            else:
                target += [k + i for i in range(len(dims) - k)]  # the depth column, if any
            step, dims2 = expand_step(f"%{name}_e", src, dims, target, elem)
            cur = src
            if step:
                pre.append(step)
                cur = f"%{name}_e"
            groups = [[0, 1]] if k == 2 else [[i] for i in range(kb)]
            rest = list(range(kb, len(dims2)))
            groups += [rest] if with_window and w >= 2 else [[i] for i in rest]
            step, dims3 = collapse_step(f"%{name}_c", cur, dims2, groups, elem)
            if step:
                pre.append(step)
                cur = f"%{name}_c"
            return cur, dims3

        r_upd, ud3 = two_steps("upd", "%updates", ud, True, elt)
        r_upd_ty = tensor_type(ud3, elt)
        idx_dims = dims_of("%indices", "id", shapes["indices"], idx_ty)
        r_idx, id3 = two_steps("idx", "%indices", idx_dims, False, ielt)
        r_idx_ty = tensor_type(id3, ielt)
        # Original: [indexed..., window...]: window collapsed to one dim, or a unit dim appended.
        if w >= 2:
            step, o2 = collapse_step("%orig_r", "%original", od, [[i] for i in range(d)] + [list(range(d, r))], elt)
            back = split_step("%result", "%scattered", o2, [[x] for x in od[:d]] + [od[d:]], elt)
        else:
            step, o2 = expand_step("%orig_r", "%original", od, list(range(r)) + [Dim(1, False)], elt)
            back, _ = collapse_step("%result", "%scattered", o2, [[i] for i in range(r - 1)] + [[r - 1, r]], elt)
        assert step is not None and back is not None
        pre.append(step)
        post.append(back)
        ctx.update(pre_steps=pre, post_steps=post, r_upd=r_upd, r_upd_ty=r_upd_ty, r_idx=r_idx,
                   r_idx_ty=r_idx_ty, r_orig="%orig_r", r_orig_ty=tensor_type(o2, elt))
    elif p.form == "generic":
        loops = [f"o{i}" for i in range(r)] + [f"b{i}" for i in range(k)]
        head = "(" + ", ".join(loops) + ")"
        upd_res = [f"b{i}" for i in range(k)] + [f"o{d + i}" for i in range(w)]
        ctx.update(
            upd_map=f"affine_map<{head} -> ({', '.join(upd_res)})>",
            out_map=f"affine_map<{head} -> ({', '.join(loops[:r])})>",
            iterators=['"parallel"'] * r + ['"reduction"'] * k,
            batch_loops=[r + i for i in range(k)],
            columns=[(j, p.dimension_map[j]) for j in range(d)],
            extract_prefix=", ".join(f"%g_b{i}" for i in range(k)),
        )
    ctx["dim_ops"] = dim_ops
    return render_template("scatter.mlir.j2", **ctx)


# ----------------------------------------------------------------------------- inputs / reference


def _values(rng: np.random.Generator, p: Params, shape: list[int], role: str) -> np.ndarray:
    dt = np_dtype(p.dtype)
    if p.combiner == "mul":
        pool = [-2, -1, 1, 2, 0.5, -0.5] if p.dtype in FLOAT_DTYPES else [-2, -1, 1, 2]
        return rng.choice(np.array(pool), size=shape).astype(dt)
    if p.dtype in FLOAT_DTYPES:
        return (rng.integers(-16, 17, size=shape) / 4).astype(dt)  # multiples of 1/4 in [-4, 4]
    lo, hi = (-8, 9) if p.dtype == "i8" else (-100, 101)
    return rng.integers(lo, hi, size=shape).astype(dt)


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    d = p.depth
    indexed = p.orig_shape[:d]
    window = p.orig_shape[d:]
    nb, nc = n_batch(p), n_coords(p)
    if p.duplicates:
        flat = rng.integers(0, nc, size=nb)
        flat[rng.integers(0, nb)] = flat[(rng.integers(0, nb))]  # at least one repeat likely
        if len(set(flat.tolist())) == nb:
            flat[-1] = flat[0]
    else:
        flat = rng.choice(nc, size=nb, replace=False)
    coords = np.stack(np.unravel_index(flat, indexed), axis=-1) if nb else np.zeros((0, d), np.int64)
    # Column j addresses original dim dimension_map[j].
    cols = coords[:, list(p.dimension_map)]
    idt = np_dtype(p.index_dtype)
    indices = cols.reshape(list(p.batch_shape) + ([] if p.implicit_depth else [d])).astype(idt)
    original = _values(rng, p, list(p.orig_shape), "original")
    updates = _values(rng, p, list(p.batch_shape) + list(window), "updates")
    return [original, indices, updates]


def _combine(comb: str, u: np.ndarray, o: np.ndarray) -> np.ndarray:
    if comb == "overwrite":
        return u
    if comb == "add":
        return o + u
    if comb == "sub":
        return o - u
    if comb == "max":
        return np.maximum(o, u)
    if comb == "min":
        return np.minimum(o, u)
    if comb == "mul":
        return o * u
    raise ValueError(comb)


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    original, indices, updates = inputs
    d = p.depth
    out = original.copy()
    nb = n_batch(p)
    cols = indices.reshape(nb, d).astype(np.int64)
    upd = updates.reshape((nb,) + tuple(p.orig_shape[d:]))
    with np.errstate(over="ignore"):
        for b in range(nb):
            coord = [0] * d
            for j in range(d):
                coord[p.dimension_map[j]] = int(cols[b, j])
            key = tuple(coord)
            out[key] = _combine(p.combiner, upd[b], out[key]).astype(out.dtype)
    return [out]


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Exact: inputs keep every order of combination exact."""
    return compare_arrays(expected, actual, check_dtype=True)


def export_rule(p: Params) -> dict:
    return dict(EXACT)  # as `compare`: exact, duplicate coordinates included


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
    out = [f"form:{p['form']}", f"dtype:{p['dtype']}", f"index:{p['index_dtype']}",
           f"rank:{len(p['orig_shape'])}", f"depth:{p['depth']}", f"batch:{len(p['batch_shape'])}",
           f"combiner:{p['combiner']}", "unique:true" if p.unique else "unique:false"]
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


FAMILY = Family.define("scatter", Params, globals())
