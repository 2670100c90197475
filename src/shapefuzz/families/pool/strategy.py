"""The pool family's Hypothesis strategy, validity, features, swarm knobs, equivalent forms and
shrink proposals."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import assume
from hypothesis import strategies as st

from shapefuzz.families.common import draw_dyn_flags, dyn_features
from shapefuzz.families.pool.params import (
    DIVISORS, DTYPES, FLOATS, FORMS, KINDS, LAYOUTS, NAMED, ComputeLayout, Dtype, Params, eff_kernel, input_shape,
    out_spatial, windows_cover_input)

_SPATIAL = {1: (1, 3, 4, 5, 7, 8, 9, 13, 16, 17, 33), 2: (1, 3, 4, 5, 7, 8, 9, 13, 16), 3: (1, 3, 4, 5, 7, 8)}
_LARGE_SPATIAL = {1: (255, 256, 1025), 2: (31, 64, 65, 129), 3: (16, 17, 31)}
_CHANNELS = (1, 2, 3, 4, 5, 8)
MAX_ELEMENTS = 1 << 14  # input elements of an executed case
MAX_ELEMENTS_LARGE = 1 << 21


def is_valid(p: Params) -> bool:
    r = p.rank
    lists = (p.kernel, p.strides, p.dilations, p.pad_lo, p.pad_hi)
    if not (1 <= r <= 3 and all(len(x) == r for x in lists) and len(p.in_dyn) == r + 2):
        return False
    if p.kind not in KINDS or p.layout not in LAYOUTS or p.dtype not in DTYPES or p.form not in FORMS:
        return False
    if p.compute_layout not in ("",) + LAYOUTS or p.compute_layout == p.layout:
        return False
    if min(p.n, p.c, *p.spatial, *p.kernel, *p.strides, *p.dilations) < 1 or min(*p.pad_lo, *p.pad_hi) < 0:
        return False
    if p.kind == "avg" and p.dtype not in FLOATS:
        return False
    if (p.count_include_pad or p.divisor != "index") and p.kind != "avg":
        return False
    if p.divisor not in DIVISORS:
        return False
    if p.form == "named" and (p.work_layout, r) not in NAMED:
        return False
    # Frontends' rule: padding at most half the kernel; and every window sees the input.
    if any(lo > k // 2 or hi > k // 2 for lo, hi, k in zip(p.pad_lo, p.pad_hi, p.kernel)):
        return False
    return min(out_spatial(p)) >= 1 and windows_cover_input(p)


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    rank = draw(st.sampled_from((1, 2, 2, 2, 3)))
    kind = draw(st.sampled_from(KINDS))
    dtype: Dtype = draw(st.sampled_from(("f32", "f32", "f16") + (("i32",) if kind != "avg" else ())))
    layout = draw(st.sampled_from(LAYOUTS))
    spatial = [draw(st.sampled_from((_LARGE_SPATIAL if large else _SPATIAL)[rank])) for _ in range(rank)]
    kmax = 3 if rank == 3 else 5
    kernel = [draw(st.integers(1, kmax)) for _ in range(rank)]
    strides = [draw(st.sampled_from((1, 1, 1, 2, 2, 3))) for _ in range(rank)]
    dilations = [draw(st.sampled_from((1, 1, 1, 2))) for _ in range(rank)]
    pad_mode = draw(st.sampled_from(("none", "symmetric", "asymmetric")))
    pad_lo = [0 if pad_mode == "none" else draw(st.integers(0, k // 2)) for k in kernel]
    pad_hi = list(pad_lo) if pad_mode != "asymmetric" else [draw(st.integers(0, k // 2)) for k in kernel]
    # Kernels no larger than the padded input (a window must fit at least once).
    for i in range(rank):
        while kernel[i] > 1 and eff_kernel_of(kernel[i], dilations[i]) > spatial[i] + pad_lo[i] + pad_hi[i]:
            if dilations[i] > 1:
                dilations[i] = 1
            else:
                kernel[i] -= 1
        pad_lo[i], pad_hi[i] = min(pad_lo[i], kernel[i] // 2), min(pad_hi[i], kernel[i] // 2)
    n = draw(st.sampled_from((1, 1, 2, 3) if not large else (1, 2)))
    c = draw(st.sampled_from(_CHANNELS if not large else (16, 32, 33)))
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while n * c * int(np.prod(spatial)) > cap and c > 1:
        c = max(1, c // 2)
    layout_flags = draw_dyn_flags(draw, rank + 2)
    work: ComputeLayout = draw(st.sampled_from(("",) * 3 + tuple(lay for lay in LAYOUTS if lay != layout)))
    form = draw(st.sampled_from(FORMS))
    if form == "named" and ((work or layout), rank) not in NAMED:
        form = "generic"
    p = Params(kind=kind, layout=layout, dtype=dtype, n=n, c=c, spatial=tuple(spatial), kernel=tuple(kernel),
               strides=tuple(strides), dilations=tuple(dilations), pad_lo=tuple(pad_lo), pad_hi=tuple(pad_hi),
               ceil_mode=draw(st.booleans()), count_include_pad=kind == "avg" and draw(st.booleans()),
               in_dyn=tuple(layout_flags), form=form,
               compute_layout=work, big=large,
               divisor="ones" if kind == "avg" and draw(st.integers(0, 3)) == 0 else "index")
    if not is_valid(p):
        # Windows that miss the input (dilation with padding, ceil mode): the simplest fix keeps the rest.
        p = p.replace(dilations=[1] * rank)
        if not is_valid(p):
            p = p.replace(ceil_mode=False, pad_lo=[0] * rank, pad_hi=[0] * rank)
    assume(is_valid(p))
    return p


def eff_kernel_of(k: int, d: int) -> int:
    return d * (k - 1) + 1


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    out = []
    for form in FORMS:
        for work in ("",) + tuple(lay for lay in LAYOUTS if lay != p.layout):
            for divisor in DIVISORS if p.kind == "avg" else ("index",):
                out.append(p.replace(form=form, compute_layout=work, divisor=divisor))
    return out


FEATURES = (
    "kind:max", "kind:avg", "kind:sum", "rank:1", "rank:2", "rank:3", "layout:nc", "layout:nl",
    "form:named", "form:generic", "compute:transposed", "dtype:f32", "dtype:f16", "dtype:i32",
    "dyn:none", "dyn:all", "dyn:mixed", "dyn:all-but-one", "pad:none", "pad:symmetric", "pad:asymmetric",
    "ceil_mode", "ceil:extra-window", "count_include_pad", "stride>1", "dilation>1", "kernel:1",
    "out:1", "window>input", "divisor:ones",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"kind:{p.kind}", f"rank:{p.rank}", f"layout:{p.layout}", f"form:{p.form}", f"dtype:{p.dtype}"]
    feats += dyn_features(p.in_dyn)
    if p.compute_layout:
        feats.append("compute:transposed")
    if not any(p.pad_lo) and not any(p.pad_hi):
        feats.append("pad:none")
    else:
        feats.append("pad:symmetric" if p.pad_lo == p.pad_hi else "pad:asymmetric")
    if p.ceil_mode:
        feats.append("ceil_mode")
        if out_spatial(p) != out_spatial(p.replace(ceil_mode=False)):
            feats.append("ceil:extra-window")
    if p.count_include_pad:
        feats.append("count_include_pad")
    if p.divisor == "ones":
        feats.append("divisor:ones")
    if max(p.strides) > 1:
        feats.append("stride>1")
    if max(p.dilations) > 1:
        feats.append("dilation>1")
    if min(p.kernel) == 1:
        feats.append("kernel:1")
    if min(out_spatial(p)) == 1:
        feats.append("out:1")
    if any(eff_kernel(p, i) > p.spatial[i] for i in range(p.rank)):
        feats.append("window>input")
    return feats


SWARM = {
    "static": lambda p: p.replace(in_dyn=[False] * len(p.in_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "no-pad": lambda p: p.replace(pad_lo=[0] * p.rank, pad_hi=[0] * p.rank),
    "floor": lambda p: p.replace(ceil_mode=False),
    "unit-stride": lambda p: p.replace(strides=[1] * p.rank),
    "no-dilation": lambda p: p.replace(dilations=[1] * p.rank),
    "same-layout": lambda p: p.replace(compute_layout=""),
    "index-divisor": lambda p: p.replace(divisor="index"),
}


def _drop_dim(p: Params, i: int) -> Params:
    def cut(seq: Any) -> list:
        return [v for j, v in enumerate(seq) if j != i]

    pos = (2 + i) if p.layout == "nc" else (1 + i)
    return p.replace(spatial=cut(p.spatial), kernel=cut(p.kernel), strides=cut(p.strides), dilations=cut(p.dilations),
                     pad_lo=cut(p.pad_lo), pad_hi=cut(p.pad_hi), in_dyn=[d for j, d in enumerate(p.in_dyn) if j != pos])


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []
    r = p.rank
    if r > 1:
        out += [_drop_dim(p, i) for i in range(r)]
    for field in ("n", "c"):
        if p[field] > 1:
            out += [p.replace(**{field: 1}), p.replace(**{field: p[field] // 2})]
    for i in range(r):
        for field in ("spatial", "kernel", "strides", "dilations"):
            seq = list(p[field])
            if seq[i] > 1:
                for v in (1, seq[i] // 2, seq[i] - 1):
                    out.append(p.replace(**{field: seq[:i] + [v] + seq[i + 1:]}))
        for field in ("pad_lo", "pad_hi"):
            seq = list(p[field])
            if seq[i] > 0:
                out.append(p.replace(**{field: seq[:i] + [0] + seq[i + 1:]}))
    if any(p.in_dyn):
        out.append(p.replace(in_dyn=[False] * len(p.in_dyn)))
        out += [p.replace(in_dyn=[d and j != i for j, d in enumerate(p.in_dyn)]) for i in range(len(p.in_dyn)) if p.in_dyn[i]]
    if p.ceil_mode:
        out.append(p.replace(ceil_mode=False))
    if p.count_include_pad:
        out.append(p.replace(count_include_pad=False))
    if p.divisor != "index":
        out.append(p.replace(divisor="index"))
    if p.compute_layout:
        out.append(p.replace(compute_layout=""))
    if p.form == "generic":
        out.append(p.replace(form="named"))
    if p.kind != "max":
        out.append(p.replace(kind="max", count_include_pad=False, divisor="index"))
    if p.dtype != "f32":
        out.append(p.replace(dtype="f32"))
    if p.layout == "nl":
        out.append(p.replace(layout="nc", in_dyn=[p.in_dyn[0], p.in_dyn[-1], *p.in_dyn[1:-1]], compute_layout=""))
    if p.big:
        out.append(p.replace(big=False))
    return out
