"""The gather family's Hypothesis strategy, validity, features, swarm knobs, equivalent forms and
shrink proposals."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import SMALL_SIZES, draw_dyn_flags, dyn_features
from shapefuzz.families.gather.params import DTYPES, FORMS, INDEX_DTYPES, INDEX_LAYOUTS, Params, out_shape

_LARGE = (257, 513, 1024)
MAX_ELEMENTS = 1 << 14
MAX_ELEMENTS_LARGE = 1 << 21


def is_valid(p: Params) -> bool:
    r, nb = len(p.src_shape), len(p.batch_shape)
    return (
        1 <= r <= 3 and len(p.src_dyn) == r and 1 <= p.depth <= min(r, 2)
        and sorted(p.dimension_map) == list(range(p.depth))
        and 0 <= nb <= 2 and len(p.batch_dyn) == nb and min((*p.src_shape, *p.batch_shape)) >= 1
        and p.dtype in DTYPES and p.index_dtype in INDEX_DTYPES and p.form in FORMS and p.index_layout in INDEX_LAYOUTS
        and not (p.implicit_depth and (p.depth != 1 or nb == 0))  # the op takes no rank-0 indices
        and not (p.index_layout != "plain" and nb == 0)
        and not (p.index_layout == "transposed" and p.implicit_depth)
    )


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    rank = draw(st.integers(2 if large else 1, 3))
    depth = draw(st.integers(1, min(rank, 2)))
    src = [draw(st.sampled_from(_LARGE if large else SMALL_SIZES)) for _ in range(rank)]
    nb = draw(st.sampled_from((0, 1, 1, 1, 2)))
    batch = [draw(st.sampled_from((16, 64, 129) if large else SMALL_SIZES)) for _ in range(nb)]
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while int(np.prod(src)) > cap or int(np.prod(batch + src[depth:])) > cap:
        i = int(np.argmax(src))
        src[i] = max(1, src[i] // 2)
    flags = draw_dyn_flags(draw, rank + nb)
    implicit = depth == 1 and nb > 0 and draw(st.booleans())
    layouts = ("plain",) if nb == 0 else ("plain", "plain", "strided") + (() if implicit else ("transposed",))
    dmap = list(range(depth))
    if depth == 2 and draw(st.booleans()):
        dmap = [1, 0]
    return Params(dtype=draw(st.sampled_from(DTYPES)), src_shape=tuple(src), src_dyn=tuple(flags[:rank]), depth=depth,
                  dimension_map=tuple(dmap), batch_shape=tuple(batch), batch_dyn=tuple(flags[rank:]), implicit_depth=implicit,
                  index_dtype=draw(st.sampled_from(INDEX_DTYPES)), index_layout=draw(st.sampled_from(layouts)),
                  form=draw(st.sampled_from(FORMS)), big=large)


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in FORMS]


FEATURES = (
    "rank:1", "rank:2", "rank:3", "depth:1", "depth:2", "map:permuted", "batch:0", "batch:1", "batch:2",
    "implicit-depth", "dtype:f32", "dtype:f16", "dtype:i32", "dtype:i8", "index:i32", "index:i64",
    "indices:plain", "indices:transposed", "indices:strided", "form:linalg_ext", "form:extract",
    "dyn:none", "dyn:all", "dyn:mixed", "window:none", "gathered-dim:dynamic",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"rank:{len(p.src_shape)}", f"depth:{p.depth}", f"batch:{len(p.batch_shape)}", f"dtype:{p.dtype}",
             f"index:{p.index_dtype}", f"indices:{p.index_layout}", f"form:{p.form}"]
    feats += dyn_features(list(p.src_dyn) + list(p.batch_dyn))
    if list(p.dimension_map) != list(range(p.depth)):
        feats.append("map:permuted")
    if p.implicit_depth:
        feats.append("implicit-depth")
    if p.depth == len(p.src_shape):
        feats.append("window:none")
    if any(p.src_dyn[: p.depth]):
        feats.append("gathered-dim:dynamic")
    return feats


SWARM = {
    "static": lambda p: p.replace(src_dyn=[False] * len(p.src_dyn), batch_dyn=[False] * len(p.batch_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "plain-indices": lambda p: p.replace(index_layout="plain"),
    "identity-map": lambda p: p.replace(dimension_map=list(range(p.depth))),
    "explicit-depth": lambda p: p.replace(implicit_depth=False),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(p.replace(**changes))

    nb, r = len(p.batch_shape), len(p.src_shape)
    for k in range(nb):
        add(batch_shape=[s for j, s in enumerate(p.batch_shape) if j != k],
            batch_dyn=[d for j, d in enumerate(p.batch_dyn) if j != k],
            index_layout=p.index_layout if nb > 1 else "plain", implicit_depth=p.implicit_depth and nb > 1)
    if r > p.depth:  # drop the last window dim
        add(src_shape=list(p.src_shape[:-1]), src_dyn=list(p.src_dyn[:-1]))
    if p.depth == 2 and r > 2:
        add(depth=1, dimension_map=[0])
    for i in range(r):
        if p.src_shape[i] > 1:
            for v in (1, p.src_shape[i] // 2):
                add(src_shape=[v if j == i else s for j, s in enumerate(p.src_shape)])
    for k in range(nb):
        if p.batch_shape[k] > 1:
            for v in (1, p.batch_shape[k] // 2):
                add(batch_shape=[v if j == k else s for j, s in enumerate(p.batch_shape)])
    if any(p.src_dyn) or any(p.batch_dyn):
        add(src_dyn=[False] * r, batch_dyn=[False] * nb)
        for i in range(r):
            if p.src_dyn[i]:
                add(src_dyn=[d and j != i for j, d in enumerate(p.src_dyn)])
        for k in range(nb):
            if p.batch_dyn[k]:
                add(batch_dyn=[d and j != k for j, d in enumerate(p.batch_dyn)])
    if p.index_layout != "plain":
        add(index_layout="plain")
    if list(p.dimension_map) != list(range(p.depth)):
        add(dimension_map=list(range(p.depth)))
    if p.implicit_depth:
        add(implicit_depth=False)
    if p.form != "linalg_ext":
        add(form="linalg_ext")
    if p.dtype != "f32":
        add(dtype="f32")
    if p.index_dtype != "i32":
        add(index_dtype="i32")
    if p.big:
        add(big=False)
    return out


def largest_shape(p: Params) -> list[int]:
    return max([list(p.src_shape), out_shape(p)], key=lambda s: int(np.prod(s)) if s else 1)
