"""The attention family's Hypothesis strategy, validity, features, swarm knobs, equivalent forms and
shrink proposals."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.families.attention.params import DTYPES, FORMS, MASKS, SCALES, Params
from shapefuzz.families.common import dyn_features

_SEQ = (1, 2, 3, 4, 7, 8, 16, 17, 31, 33, 64, 65)
_HEAD = (1, 2, 4, 8, 16, 32, 64)
_LARGE_SEQ = (128, 256, 1024, 4096)


def is_valid(p: Params) -> bool:
    return (
        p.dtype in DTYPES and p.form in FORMS and p.mask in MASKS and p.scale in SCALES
        and 1 <= len(p.batch) <= 2 and len(p.batch_dyn) == len(p.batch)
        and min(*p.batch, p.m, p.k2, p.k1, p.n) >= 1
    )


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    nb = draw(st.integers(1, 2))
    batch = [draw(st.sampled_from((1, 2, 3, 4) if not large else (4, 8, 16))) for _ in range(nb)]
    seq = _LARGE_SEQ if large else _SEQ
    mode = draw(st.sampled_from(("static", "batch", "seq", "all", "random")))
    flags = {"static": [False] * (nb + 2), "batch": [True] * nb + [False, False], "seq": [False] * nb + [True, True],
             "all": [True] * (nb + 2)}.get(mode) or [draw(st.booleans()) for _ in range(nb + 2)]
    return Params(dtype=draw(st.sampled_from(DTYPES)), batch=tuple(batch), batch_dyn=tuple(flags[:nb]),
                  m=draw(st.sampled_from(seq)), k2=draw(st.sampled_from(seq)), k1=draw(st.sampled_from(_HEAD)),
                  n=draw(st.sampled_from(_HEAD)), m_dyn=flags[nb], k2_dyn=flags[nb + 1], scale=draw(st.sampled_from(SCALES)),
                  mask=draw(st.sampled_from(MASKS)), form=draw(st.sampled_from(FORMS)), big=large)


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in FORMS]


FEATURES = (
    "dtype:f32", "dtype:f16", "batch:1", "batch:2", "mask:none", "mask:random", "mask:causal",
    "form:attention", "form:decomposed", "dyn:none", "dyn:all", "dyn:mixed", "seq:dynamic", "m=1", "k2=1",
    "k2>m", "scale<1",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"dtype:{p.dtype}", f"batch:{len(p.batch)}", f"mask:{p.mask}", f"form:{p.form}"]
    feats += dyn_features(list(p.batch_dyn) + [p.m_dyn, p.k2_dyn])
    if p.m_dyn or p.k2_dyn:
        feats.append("seq:dynamic")
    if p.m == 1:
        feats.append("m=1")
    if p.k2 == 1:
        feats.append("k2=1")
    if p.k2 > p.m:
        feats.append("k2>m")
    if p.scale < 1:
        feats.append("scale<1")
    return feats


SWARM = {
    "static": lambda p: p.replace(batch_dyn=[False] * len(p.batch), m_dyn=False, k2_dyn=False),
    "f32": lambda p: p.replace(dtype="f32"),
    "no-mask": lambda p: p.replace(mask="none"),
    "unit-scale": lambda p: p.replace(scale=1.0),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(p.replace(**changes))

    if len(p.batch) > 1:
        add(batch=p.batch[:1], batch_dyn=p.batch_dyn[:1])
    for i, s in enumerate(p.batch):
        if s > 1:
            add(batch=[1 if j == i else b for j, b in enumerate(p.batch)])
    for field in ("m", "k2", "k1", "n"):
        if p[field] > 1:
            add(**{field: 1})
            add(**{field: p[field] // 2})
    if any(p.batch_dyn) or p.m_dyn or p.k2_dyn:
        add(batch_dyn=[False] * len(p.batch), m_dyn=False, k2_dyn=False)
        if p.m_dyn:
            add(m_dyn=False)
        if p.k2_dyn:
            add(k2_dyn=False)
    if p.mask != "none":
        add(mask="none")
    if p.form != "attention":
        add(form="attention")
    if p.dtype != "f32":
        add(dtype="f32")
    if p.scale != 1.0:
        add(scale=1.0)
    if p.big:
        add(big=False)
    return out
