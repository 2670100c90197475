"""The norm family's Hypothesis strategy, validity, features, swarm knobs and shrink proposals.
Sizes are 1, primes and just above powers of two; the reduced dims reach past a hundred (the
large regime, for compile-only lanes, past a thousand)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.families.common import LARGE_SIZES, SMALL_SIZES, draw_dyn_flags, dyn_features
from shapefuzz.families.norm.params import (
    AXIS_KINDS, CHANNEL_KINDS, DTYPES, KINDS, LAYOUTS, MAX_RANK, MIN_RANK, Params, count, forms_for, problem, reduced)

# Written without integer literals over 99: Hypothesis draws integers from the constants of the
# loaded modules, and a new one would change what recorded seeds of other families draw.
_WIDE = tuple(s * 8 for s in LARGE_SIZES)
_EPS = (1e-5, 1e-5, 1e-6, 1e-12, 1e-3, 0.5)
_GROUPS = (1, 2, 3, 4, 8)
_PER_GROUP = (1, 1, 2, 3, 4)
MAX_ELEMENTS = 1 << 15
MAX_ELEMENTS_LARGE = 1 << 22

__all__ = ["FEATURES", "SWARM", "equivalent_forms", "features", "is_valid", "shrink_candidates", "strategy"]


def is_valid(p: Params) -> bool:
    return not problem(p)


def _elements(shape: list[int]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    kind = draw(st.sampled_from(KINDS))
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(max(MIN_RANK[kind], 3 if large else 1), MAX_RANK))
    shape = [draw(st.sampled_from(LARGE_SIZES if large else SMALL_SIZES)) for _ in range(rank)]
    layout = draw(st.sampled_from(LAYOUTS)) if kind in CHANNEL_KINDS else ""
    axis = draw(st.integers(0, rank - 1)) if kind in AXIS_KINDS else 0
    p = Params(kind=kind, dtype=dtype, shape=tuple(shape), dyn=(False,) * rank, axis=axis, layout=layout, big=large)
    groups = 1
    if kind == "group":
        groups = draw(st.sampled_from(_GROUPS))
        shape[p.channel] = groups * draw(st.sampled_from(_PER_GROUP))
    red = [i for i in reduced(p) if not (kind == "group" and i == p.channel)]
    if red and (large or draw(st.booleans())):  # a long reduction
        shape[red[-1]] = draw(st.sampled_from(_WIDE if large else LARGE_SIZES))
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    fixed = p.channel if kind == "group" else -1
    while _elements(shape) > cap:  # halve the largest dim (a group norm's channels kept) until it fits
        i = max((j for j in range(rank) if j != fixed), key=lambda j: shape[j])
        shape[i] = max(1, shape[i] // 2)
    dyn = draw_dyn_flags(draw, rank)
    if kind == "group":
        dyn[p.channel] = False
    p = p.replace(shape=shape, dyn=dyn, groups=groups)
    if kind not in ("softmax", "logsoftmax"):
        p = p.replace(eps=draw(st.sampled_from(_EPS)))
    if kind not in ("softmax", "logsoftmax", "batch"):
        p = p.replace(affine=draw(st.booleans()))
    forms = forms_for(p)
    if len(forms) > 2 and draw(st.booleans()):  # the named op (softmax), not left to a third index
        return p.replace(form=forms[2])
    return p.replace(form=draw(st.sampled_from(forms[:2])))


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in forms_for(p)]


FEATURES = tuple(f"kind:{k}" for k in KINDS) + (
    "dtype:f32", "dtype:f16", "layout:nchw", "layout:nhwc", "form:twopass", "form:fused", "form:named", "dyn:none",
    "dyn:all", "dyn:mixed", "affine", "unit-batch", "unit-channel", "groups>1", "reduce:1", "reduce:long",
    "axis:inner", "axis:all", "eps:tiny", "eps:large",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"kind:{p.kind}", f"dtype:{p.dtype}", f"form:{p.form}"] + dyn_features(p.dyn)
    if p.layout:
        feats.append(f"layout:{p.layout}")
        if p.shape[p.channel] == 1:
            feats.append("unit-channel")
    if p.affine and p.kind not in ("softmax", "logsoftmax"):
        feats.append("affine")
    if p.shape[0] == 1 and p.rank > 1:
        feats.append("unit-batch")
    if p.groups > 1:
        feats.append("groups>1")
    if p.kind != "batch":
        n = count(p)
        feats += ["reduce:1"] * (n == 1) + ["reduce:long"] * (n > 64)
    if p.kind in AXIS_KINDS and p.rank > 1:
        if p.kind in ("softmax", "logsoftmax") and p.axis < p.rank - 1:
            feats.append("axis:inner")
        if p.kind in ("layer", "rms") and p.axis == 0:
            feats.append("axis:all")
    if p.kind not in ("softmax", "logsoftmax"):
        feats += ["eps:tiny"] * (p.eps < 1e-6) + ["eps:large"] * (p.eps >= 0.5)
    return feats


def _with_form(p: Params, **changes: Any) -> Params:
    q = p.replace(**changes)
    return q if q.form in forms_for(q) else q.replace(form="twopass")


SWARM = {
    "static": lambda p: p.replace(dyn=[False] * p.rank),
    "f32": lambda p: p.replace(dtype="f32"),
    "nchw": lambda p: p.replace(layout="nchw") if p.layout else p,
    "twopass": lambda p: p.replace(form="twopass"),
    "no-affine": lambda p: p.replace(affine=False) if p.kind != "batch" else p,
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(_with_form(p, **changes))

    for i, s in enumerate(p.shape):
        if s > 1:
            for size in (1, s // 2):
                add(shape=[size if j == i else t for j, t in enumerate(p.shape)])
    if p.groups > 1:
        add(groups=1)
    if any(p.dyn):
        add(dyn=[False] * p.rank)
        for i, d in enumerate(p.dyn):
            if d:
                add(dyn=[False if j == i else t for j, t in enumerate(p.dyn)])
    if p.dtype != "f32":
        add(dtype="f32")
    if p.affine and p.kind != "batch":
        add(affine=False)
    if p.layout == "nhwc":
        add(layout="nchw")
    if p.eps != 1e-5:
        add(eps=1e-5)
    if p.form != "twopass":
        add(form="twopass")
    if p.big:
        add(big=False)
    return out
