"""The matmul family's Hypothesis strategy, validity, features, swarm knobs and shrink proposals.
Sizes are 1, primes and just above powers of two; K reaches past a thousand (where split-K and
data tiling differ), the large regime (compile-only lanes) to a few thousand."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import SMALL_SIZES, draw_dyn_flags, dyn_features
from shapefuzz.families.matmul.params import (
    BCASTS, BIASES, DTYPES, I8_MAX, I8_MIN, SCALES, U8_MAX, Params, Vec, a_shape, b_shape, c_shape, forms_for, problem)

_K = SMALL_SIZES + (31, 33, 64, 65, 127, 129, 257, 1025)
_LARGE = (127, 128, 129, 255, 256, 257, 512, 513, 1023, 1024, 1025, 2049)
_BATCH = (1, 1, 2, 3, 4, 5, 7)
_ZP = (0, 0, 1, -1, 3, -7, I8_MAX, I8_MIN)
_ZP_U8 = (0, 0, 1, 1 << 7, U8_MAX - 1, U8_MAX)  # an operand read as u8 (ONNX's uint8)
MAX_ELEMENTS = 1 << 15
MAX_ELEMENTS_LARGE = 1 << 22

__all__ = ["FEATURES", "SWARM", "equivalent_forms", "features", "is_valid", "shrink_candidates", "strategy"]


def is_valid(p: Params) -> bool:
    return not problem(p)


def _largest(p: Params) -> int:
    return max(int(np.prod(s)) for s in (a_shape(p), b_shape(p), c_shape(p)))


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    dtype = draw(st.sampled_from(DTYPES))
    nb = draw(st.integers(0, 2))
    batch = [draw(st.sampled_from(_BATCH)) for _ in range(nb)]
    vec: Vec = draw(st.sampled_from(("", "", "", "", "matvec", "vecmat")))
    sizes = _LARGE if large else SMALL_SIZES
    m, n = draw(st.sampled_from(sizes)), draw(st.sampled_from(sizes))
    k = draw(st.sampled_from(_LARGE if large else _K))
    m, n = (1 if vec == "vecmat" else m), (1 if vec == "matvec" else n)
    flags = draw_dyn_flags(draw, nb + 3)
    trans_a, trans_b = draw(st.booleans()), draw(st.booleans())
    p = Params(dtype=dtype, out="i32" if dtype == "i8" else "f32", batch=tuple(batch), batch_dyn=tuple(flags[:nb]), m=m, n=n, k=k,
               m_dyn=flags[nb] and vec != "vecmat", n_dyn=flags[nb + 1] and vec != "matvec", k_dyn=flags[nb + 2],
               trans_a=trans_a and vec != "vecmat", trans_b=trans_b and vec != "matvec",
               bcast=draw(st.sampled_from(BCASTS)) if nb else "none", vec=vec, form="generic", big=large)
    if dtype in ("f16", "bf16") and draw(st.booleans()):
        p = p.replace(out=dtype)
    if dtype == "i8":
        p = p.replace(a_zp=draw(st.sampled_from(_ZP)), b_zp=draw(st.sampled_from(_ZP)))
    if not nb and not vec and dtype != "i8" and draw(st.booleans()):
        bias = draw(st.sampled_from(BIASES))
        p = p.replace(alpha=draw(st.sampled_from(SCALES)), bias=bias,
                      beta=draw(st.sampled_from(SCALES)) if bias != "none" else 1.0)
    cap = MAX_ELEMENTS_LARGE if large else MAX_ELEMENTS
    while _largest(p) > cap:  # halve the largest of M, N, K until every operand fits
        field = max(("m", "n", "k"), key=lambda f: p[f])
        p = p.replace(**{field: max(1, p[field] // 2)})
    # the quantized named op first where it writes the case: its cases are rare (plain layouts
    # only), and since the qdq form (and u8 / per-row operands, drawn after) share them
    forms = sorted(forms_for(p), key=lambda form: form != "quantized")
    p = p.replace(form=draw(st.sampled_from(forms)))
    if dtype == "i8" and p.form != "quantized":  # (the quantized named op takes neither)
        # one operand in four read as u8; on a plain 2-D case, one in three with a zero point per
        # row of A / per column of B (MatMulInteger's vectors)
        for side, per in (("a", "row"), ("b", "col")):
            if draw(st.integers(0, 3)) == 0:
                p = p.replace(**{f"{side}_unsigned": True, f"{side}_zp": draw(st.sampled_from(_ZP_U8))})
            if not nb and not vec and draw(st.integers(0, 2)) == 0:
                p = p.replace(**{f"{side}_zp_per": per})
    return p


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in forms_for(p)]


FEATURES = (
    "dtype:f32", "dtype:f16", "dtype:bf16", "dtype:i8", "out:narrow", "batch:0", "batch:1", "batch:2",
    "bcast:a", "bcast:b", "trans:a", "trans:b", "vec:matvec", "vec:vecmat", "form:named", "form:generic",
    "form:contract", "form:materialized", "form:quantized", "form:qdq", "dyn:none", "dyn:all", "dyn:mixed",
    "k:dynamic", "zp:nonzero", "zp:extreme", "zp:row", "zp:col", "u8", "epilogue", "bias:row", "bias:full", "unit-batch", "m=1", "n=1", "k=1", "k>1024",
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"dtype:{p.dtype}", f"batch:{len(p.batch)}", f"form:{p.form}"]
    feats += dyn_features([*p.batch_dyn, p.m_dyn, p.n_dyn, p.k_dyn])
    if p.out != p.acc:
        feats.append("out:narrow")
    if p.bcast != "none":
        feats.append(f"bcast:{p.bcast}")
    feats += [f"trans:{x}" for x, t in (("a", p.trans_a), ("b", p.trans_b)) if t]
    if p.vec:
        feats.append(f"vec:{p.vec}")
    if p.k_dyn:
        feats.append("k:dynamic")
    if p.a_zp or p.b_zp:
        feats.append("zp:nonzero")
    if any(zp in ((0, U8_MAX) if unsigned else (I8_MIN, I8_MAX))  # an end of the operand's range
           for zp, unsigned in ((p.a_zp, p.a_unsigned), (p.b_zp, p.b_unsigned))):
        feats.append("zp:extreme")
    feats += [f"zp:{per}" for per in (p.a_zp_per, p.b_zp_per) if per != "tensor"]
    if p.a_unsigned or p.b_unsigned:
        feats.append("u8")
    if p.epilogue:
        feats.append("epilogue")
    if p.bias != "none":
        feats.append(f"bias:{p.bias}")
    if 1 in p.batch:
        feats.append("unit-batch")
    feats += [f"{x}=1" for x in ("m", "n", "k") if p[x] == 1]
    if p.k > 1024:
        feats.append("k>1024")
    return feats


# every integer-only choice off: what a float case must have
_INTEGER_OFF = dict(a_zp=0, b_zp=0, a_zp_per="tensor", b_zp_per="tensor", a_unsigned=False, b_unsigned=False)


def _with_form(p: Params, **changes: Any) -> Params:
    """The params changed, in their form when it still writes them, else the generic form."""
    q = p.replace(**changes)
    return q if q.form in forms_for(q) else q.replace(form="generic")


SWARM = {
    "static": lambda p: p.replace(batch_dyn=[False] * len(p.batch), m_dyn=False, n_dyn=False, k_dyn=False),
    "f32": lambda p: _with_form(p, dtype="f32", out="f32", **_INTEGER_OFF),
    "no-transpose": lambda p: _with_form(p, trans_a=False, trans_b=False),
    "no-broadcast": lambda p: _with_form(p, bcast="none"),
    "generic": lambda p: p.replace(form="generic"),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(_with_form(p, **changes))

    if p.batch:
        rest = len(p.batch) - 1
        add(batch=p.batch[:rest], batch_dyn=p.batch_dyn[:rest], bcast=p.bcast if rest else "none")
        for i, s in enumerate(p.batch):
            if s > 1:
                add(batch=[1 if j == i else b for j, b in enumerate(p.batch)])
    for field in ("m", "n", "k"):
        if p[field] > 1:
            add(**{field: 1})
            add(**{field: p[field] // 2})
    if any(p.batch_dyn) or p.m_dyn or p.n_dyn or p.k_dyn:
        add(batch_dyn=[False] * len(p.batch), m_dyn=False, n_dyn=False, k_dyn=False)
        for field in ("m_dyn", "n_dyn", "k_dyn"):
            if p[field]:
                add(**{field: False})
    if p.vec:
        add(vec="")
    if p.trans_a or p.trans_b:
        add(trans_a=False, trans_b=False)
    if p.bcast != "none":
        add(bcast="none")
    if p.epilogue or p.beta != 1.0:
        add(alpha=1.0, beta=1.0, bias="none")
    if p.a_zp or p.b_zp:
        add(a_zp=0, b_zp=0)
    if p.a_zp_per != "tensor" or p.b_zp_per != "tensor":
        add(a_zp_per="tensor", b_zp_per="tensor")
    for side in ("a", "b"):
        if p[f"{side}_unsigned"]:  # the same bits read signed: a zero point over 127 becomes 127
            add(**{f"{side}_unsigned": False, f"{side}_zp": min(p[f"{side}_zp"], I8_MAX)})
    if p.out != p.acc:
        add(out=p.acc)
    if p.dtype != "f32":
        add(dtype="f32", out="f32", **_INTEGER_OFF)
    if p.form not in ("named", "generic"):
        add(form="generic")
    if p.big:
        add(big=False)
    return out
