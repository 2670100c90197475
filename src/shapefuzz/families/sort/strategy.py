"""The sort family's Hypothesis strategy, validity, features, swarm knobs, equivalent forms and
shrink proposals. Sorted sizes cluster around powers of two, where sort kernels change tiling."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import draw_dyn_flags, dyn_features, shape_and_dynamic_shrinks
from shapefuzz.families.sort.params import DTYPES, FORMS, INDEX_DTYPES, PAYLOADS, USES, VALUES, Form, Params

_SORTED = (1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 256, 257, 1023, 1024, 1025)
_LARGE_SORTED = (2047, 2048, 2049, 4095, 4096, 4097, 16384, 16385)
_OUTER = (1, 1, 2, 3, 4, 5, 7, 8)
MAX_ELEMENTS = 6000
MAX_ELEMENTS_LARGE = 1 << 20


def is_valid(p: Params) -> bool:
    r = p.rank
    return (
        1 <= r <= 3 and len(p.in_dyn) == r and 0 <= p.dim < r and min(p.shape) >= 1
        and p.dtype in DTYPES and p.payload in PAYLOADS and p.use in USES and p.values in VALUES
        and p.index_dtype in INDEX_DTYPES and p.form in FORMS
        and not (p.use != "values" and p.payload == "none")
        and not (p.stable and p.payload != "iota")  # only the iota payload orders ties by position
        and not (p.stable and p.form == "topk")  # topk's comparator sees values only
        and not (p.transpose and p.dim == r - 1)
    )


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    rank = draw(st.integers(2 if large else 1, 3))
    dim = draw(st.integers(0, rank - 1))
    shape = [draw(st.sampled_from(_OUTER if not large else (16, 64, 128))) for _ in range(rank)]
    shape[dim] = draw(st.sampled_from(_LARGE_SORTED if large else _SORTED))
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while int(np.prod(shape)) > cap:
        i = max((j for j in range(rank) if j != dim), key=lambda j: shape[j])
        shape[i] = max(1, shape[i] // 2)
    payload = draw(st.sampled_from(PAYLOADS))
    use = "values" if payload == "none" else draw(st.sampled_from(USES))
    stable = payload == "iota" and draw(st.booleans())
    form: Form = "sort" if stable else draw(st.sampled_from(("sort", "sort", "topk")))
    return Params(dtype=draw(st.sampled_from(DTYPES)), shape=tuple(shape), in_dyn=tuple(draw_dyn_flags(draw, rank)),
                  dim=dim, descending=draw(st.booleans()), payload=payload, use=use, stable=stable,
                  values=draw(st.sampled_from(VALUES)), index_dtype=draw(st.sampled_from(INDEX_DTYPES)), form=form,
                  transpose=dim != rank - 1 and draw(st.booleans()), big=large)


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    out = []
    for form in FORMS:
        for transpose in (False, True):
            out.append(p.replace(form=form, transpose=transpose))
    if p.payload == "none":  # values only: sorting them with an unused iota payload is the same
        out.append(p.replace(payload="iota"))
    return out


FEATURES = (
    "rank:1", "rank:2", "rank:3", "dtype:f32", "dtype:f16", "dtype:i32", "dtype:i8", "dyn:none", "dyn:all",
    "dyn:mixed", "sorted-dim:dynamic", "order:descending", "order:ascending", "payload:none", "payload:iota",
    "payload:arg", "use:values", "use:indices", "use:both", "stable", "values:ties", "form:sort", "form:topk",
    "transpose", "n:pow2", "n:pow2+-1", "n=1", "index:i64",
)  # fmt: skip


def features(p: Params) -> list[str]:
    n = p.shape[p.dim]
    feats = [f"rank:{p.rank}", f"dtype:{p.dtype}", f"order:{'descending' if p.descending else 'ascending'}",
             f"payload:{p.payload}", f"use:{p.use}", f"values:{p.values}", f"form:{p.form}", f"index:{p.index_dtype}"]
    feats += dyn_features(p.in_dyn)
    if p.in_dyn[p.dim]:
        feats.append("sorted-dim:dynamic")
    if p.stable:
        feats.append("stable")
    if p.transpose:
        feats.append("transpose")
    if n == 1:
        feats.append("n=1")
    elif n >= 8:
        near = (n + 1) & n == 0 or (n - 1) & (n - 2) == 0
        feats.append("n:pow2" if n & (n - 1) == 0 else "n:pow2+-1" if near else "n:other")
    return feats


SWARM = {
    "static": lambda p: p.replace(in_dyn=[False] * p.rank),
    "f32": lambda p: p.replace(dtype="f32"),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "no-transpose": lambda p: p.replace(transpose=False),
    "distinct-values": lambda p: p.replace(values="wide"),
    "both-results": lambda p: p.replace(use="both") if p.payload != "none" else p,
    "unstable": lambda p: p.replace(stable=False),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(p.replace(**changes))

    r, dim = p.rank, p.dim
    for i in range(r):
        if i != dim and r > 1:
            nd = dim - (1 if i < dim else 0)
            add(shape=[s for j, s in enumerate(p.shape) if j != i], in_dyn=[d for j, d in enumerate(p.in_dyn) if j != i],
                dim=nd, transpose=p.transpose and nd != r - 2)
    for changes in shape_and_dynamic_shrinks(p.shape, p.in_dyn, lambda n: (1, n // 2, n - 1)):
        add(**changes)
    if p.transpose:
        add(transpose=False)
    if p.form != "sort":
        add(form="sort")
    if p.stable:
        add(stable=False)
    if p.use == "both":
        add(use="values")
    if p.payload == "arg":
        add(payload="iota")
    if p.payload != "none" and p.use == "values":
        add(payload="none", stable=False)
    if p.dtype != "f32":
        add(dtype="f32")
    if p.index_dtype != "i32":
        add(index_dtype="i32")
    if p.values != "wide":
        add(values="wide")
    if p.descending:
        add(descending=False)
    if p.big:
        add(big=False)
    return out
