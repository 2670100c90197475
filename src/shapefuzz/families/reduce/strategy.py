"""The reduce family's Hypothesis strategy, validity, features, swarm knobs, equivalent forms and
shrink proposals. Reduced sizes reach past a few thousand (where split reductions kick in)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import SMALL_SIZES, draw_dyn_flags, dyn_features, shape_and_dynamic_shrinks
from shapefuzz.families.reduce.params import ARG_KINDS, DTYPES, FORMS, INDEX_DTYPES, KINDS, Acc, Params, count

_REDUCED = SMALL_SIZES + (31, 33, 64, 127, 128, 129, 1024, 1025, 4096, 4097)
_LARGE = (4096, 16384, 65537, 262144)
MAX_ELEMENTS = 1 << 15
MAX_ELEMENTS_LARGE = 1 << 22
F16_EXACT_COUNT = 128  # an f16 accumulator stays exact for sums of at most this many |x| <= 2 quarters


def is_valid(p: Params) -> bool:
    r = p.rank
    return (
        1 <= r <= 3 and len(p.in_dyn) == r and min(p.shape) >= 1 and p.kind in KINDS and p.dtype in DTYPES
        and p.form in FORMS and p.index_dtype in INDEX_DTYPES and p.use in ("both", "indices")
        and len(p.dims) >= 1 and list(p.dims) == sorted(set(p.dims)) and all(0 <= d < r for d in p.dims)
        and not (p.kind in ARG_KINDS and (len(p.dims) != 1 or p.form == "chain"))
        and not (p.kind not in ARG_KINDS and p.use != "both")
        and p.acc in ("", "f32") and not (p.acc and (p.dtype != "f16" or p.kind != "sum"))
        and not (p.kind == "sum" and p.dtype == "f16" and not p.acc and count(p) > F16_EXACT_COUNT)
        and not (p.form == "chain" and len(p.dims) < 2)
    )


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    kind = draw(st.sampled_from(KINDS))
    rank = draw(st.integers(1, 3))
    n_dims = 1 if kind in ARG_KINDS else draw(st.integers(1, rank))
    dims = sorted(draw(st.permutations(list(range(rank))))[:n_dims])
    shape = [draw(st.sampled_from(SMALL_SIZES)) for _ in range(rank)]
    for d in dims:
        shape[d] = draw(st.sampled_from(_LARGE if large else _REDUCED))
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while int(np.prod(shape)) > cap:
        i = int(np.argmax(shape))
        shape[i] = max(1, shape[i] // 2)
    dtype = draw(st.sampled_from(DTYPES))
    acc: Acc = "f32" if dtype == "f16" and kind == "sum" and draw(st.booleans()) else ""
    p = Params(kind=kind, dtype=dtype, shape=tuple(shape), in_dyn=tuple(draw_dyn_flags(draw, rank)), dims=tuple(dims),
               keepdims=draw(st.booleans()), acc=acc,
               form=draw(st.sampled_from(("generic", "reduce") + (("chain",) if len(dims) > 1 and kind not in ARG_KINDS else ()))),
               use=draw(st.sampled_from(("both", "indices"))) if kind in ARG_KINDS else "both",
               index_dtype=draw(st.sampled_from(INDEX_DTYPES)), big=large)
    if not is_valid(p):  # a long f16 sum: accumulate in f32
        p = p.replace(acc="f32")
    return p


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    forms = [p.replace(form=form) for form in FORMS]
    if p.operand in ("const", "folded"):  # the same init values, as a constant or computed from one
        forms.append(p.replace(operand="folded" if p.operand == "const" else "const"))
    return forms


FEATURES = (
    "kind:sum", "kind:max", "kind:min", "kind:argmax", "kind:argmin", "rank:1", "rank:2", "rank:3",
    "dtype:f32", "dtype:f16", "dtype:i32", "acc:f32", "dims:1", "dims:several", "dims:all", "keepdims",
    "form:generic", "form:reduce", "form:chain", "dyn:none", "dyn:all", "dyn:mixed", "reduced-dim:dynamic",
    "use:indices", "count>1024", "index:i64",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"kind:{p.kind}", f"rank:{p.rank}", f"dtype:{p.dtype}", f"form:{p.form}"]
    feats += dyn_features(p.in_dyn)
    feats.append("dims:1" if len(p.dims) == 1 else "dims:several")
    if len(p.dims) == p.rank:
        feats.append("dims:all")
    if p.acc:
        feats.append("acc:f32")
    if p.keepdims:
        feats.append("keepdims")
    if any(p.in_dyn[d] for d in p.dims):
        feats.append("reduced-dim:dynamic")
    if p.kind in ARG_KINDS:
        feats.append(f"use:{p.use}")
        feats.append(f"index:{p.index_dtype}")
    if count(p) > 1024:
        feats.append("count>1024")
    return feats


SWARM = {
    "static": lambda p: p.replace(in_dyn=[False] * p.rank),
    "f32": lambda p: p.replace(dtype="f32", acc=""),
    "no-keepdims": lambda p: p.replace(keepdims=False),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "generic": lambda p: p.replace(form="generic"),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(p.replace(**changes))

    r = p.rank
    for i in range(r):
        if r > 1 and (i not in p.dims or len(p.dims) > 1):
            new_dims = [d - (d > i) for d in p.dims if d != i]
            add(shape=[s for j, s in enumerate(p.shape) if j != i], in_dyn=[d for j, d in enumerate(p.in_dyn) if j != i],
                dims=new_dims, form=p.form if len(new_dims) > 1 or p.form != "chain" else "generic")
    for changes in shape_and_dynamic_shrinks(p.shape, p.in_dyn, lambda n: (1, n // 2)):
        add(**changes)
    if p.keepdims:
        add(keepdims=False)
    if p.form != "generic":
        add(form="generic")
    if p.kind in ARG_KINDS and p.use != "both":
        add(use="both")
    if p.dtype != "f32":
        add(dtype="f32", acc="")
    if p.index_dtype != "i32":
        add(index_dtype="i32")
    if p.kind != "sum" and p.kind not in ARG_KINDS:
        add(kind="sum")
    if p.big:
        add(big=False)
    return out
