"""Drawing conv_transpose cases: size tables, the work budget and the Hypothesis strategy."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
import numpy as np

from shapefuzz.families.conv_transpose.params import EXPANDS, FLIPS, FORMS, PAD_MODES, Params, W_ORDERS, ZERO_DESTS
from shapefuzz.families.conv_transpose.shapes import canonical, is_valid, out_shape


_SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 17)
_CHANNELS = (1, 1, 2, 3, 4, 5, 7, 8, 9, 17)
_LARGE_CHANNELS = (31, 33, 65)
_KERNELS = (1, 2, 2, 3, 3, 5)
_MAX_WORK = 400_000  # output elements x reduction length, to keep CPU runs quick
# The large regime (compile-only lanes): spatial 32-64, channels 64-256.
_REGIME_LARGE_SIZES = (32, 33, 48, 63, 64)
_REGIME_LARGE_CHANNELS = (64, 65, 96, 128, 256)
_MAX_WORK_LARGE = 200_000_000
_F16_MAX_TERMS = 96  # reduction length bound that keeps f16 sums exact (see make_inputs)


# ----------------------------------------------------------------------------- strategy


@st.composite
def _params(draw: Any, regime: str = "small") -> Params:
    large = regime == "large"
    rank = draw(st.sampled_from((1, 1, 2, 2, 2, 3)))
    dtype = draw(st.sampled_from(("f32", "f32", "i32") if large else ("f32", "f32", "f16", "i32")))
    groups = draw(st.sampled_from((1, 1, 2, 3, 4)))
    chan = st.one_of(st.sampled_from(_CHANNELS), st.sampled_from(_LARGE_CHANNELS)) if draw(
        st.integers(0, 9)
    ) == 0 else st.sampled_from(_CHANNELS)
    if large:
        chan = st.sampled_from(_REGIME_LARGE_CHANNELS)
    ci, co = draw(chan), draw(chan if large else st.sampled_from(_CHANNELS))
    n = draw(st.sampled_from((1, 1, 2, 3, 5)))
    sizes: tuple[int, ...] = _SIZES if rank < 3 else (1, 2, 3, 5)
    if large:
        sizes = _REGIME_LARGE_SIZES if rank < 3 else (8, 9, 16, 17)
    in_size = [draw(st.sampled_from(sizes)) for _ in range(rank)]
    kernel = [draw(st.sampled_from(_KERNELS if rank < 3 else (1, 2, 3))) for _ in range(rank)]
    stride = [draw(st.sampled_from((1, 1, 2, 3))) for _ in range(rank)]
    dilation = [draw(st.sampled_from((1, 1, 1, 2))) for _ in range(rank)]
    pad_lo, pad_hi, out_pad = [], [], []
    for k, s, d in zip(kernel, stride, dilation):
        full = d * (k - 1)
        lo = draw(st.sampled_from(sorted({0, full, full // 2, *range(0, full + 1)})))
        hi = lo if draw(st.booleans()) else draw(st.integers(0, full))
        op = draw(st.integers(0, max(s, d) - 1)) if draw(st.booleans()) else 0
        pad_lo.append(lo)
        pad_hi.append(hi)
        out_pad.append(op)
    dyn_allowed = [True, groups == 1] + [True] * rank
    mode = draw(st.sampled_from(("none", "all", "mixed", "mixed")))
    if mode == "none":
        dyn = [False] * (rank + 2)
    elif mode == "all":
        dyn = list(dyn_allowed)
    else:
        dyn = [a and draw(st.booleans()) for a in dyn_allowed]
    w_layout = draw(
        st.one_of(
            st.just(list(range(rank + 2))),  # PyTorch [Cin, Cout/G, k...]
            st.just([*range(2, rank + 2), 1, 0]),  # TF conv_transpose [k..., Cout, Cin]
            st.permutations(list(range(rank + 2))),
        )
    )
    p: dict[str, Any] = {
        "rank": rank,
        "dtype": dtype,
        "n": n,
        "groups": groups,
        "ci": ci,
        "co": co,
        "spatial": in_size,
        "kernel": kernel,
        "strides": stride,
        "dilations": dilation,
        "pad_lo": pad_lo,
        "pad_hi": pad_hi,
        "out_pad": out_pad,
        "input_dyn": dyn,
        "w_layout": list(w_layout),
    }
    named_ok = groups == 1 or rank == 2
    form = draw(st.sampled_from(FORMS)) if named_ok else "generic"
    p["form"] = form
    p["flip"] = draw(st.sampled_from(FLIPS))
    p["pad_mode"] = draw(st.sampled_from(PAD_MODES))
    p["x_expand"] = draw(st.sampled_from(EXPANDS))
    p["w_order"] = draw(st.sampled_from(W_ORDERS))
    n_fwd = rank + (3 if groups > 1 else 2)
    ident = list(range(n_fwd))
    if form == "named":
        p["fwd_layout"] = draw(st.sampled_from([ident, [1, 0, *range(2, n_fwd)]] if groups > 1 else [ident]))
    else:
        p["fwd_layout"] = list(draw(st.one_of(st.just(ident), st.permutations(ident))))
    # Channels last (drawn last, so every earlier choice of a seed stays): the same computation
    # on x [N, S..., G*Ci], with a channels-last forward conv (generic only).
    if draw(st.sampled_from(("nc", "nc", "nhc"))) == "nhc":
        p["x_layout"] = "nhc"
        p["input_dyn"] = [dyn[0], *dyn[2:], dyn[1]]
        p["form"] = "generic"
    # The zero tensor x is inserted into (drawn last too): a fill, or a constant where static.
    p["zero_dest"] = draw(st.sampled_from(ZERO_DESTS))
    q = canonical(Params(**p))
    while large and _work(q) > _MAX_WORK_LARGE:  # channels first, keeping the large spatial sizes
        if max(q.ci, q.co) > 16:
            q = q.replace(ci=max(16, q.ci // 2)) if q.ci >= q.co else q.replace(co=max(16, q.co // 2))
        elif q.n > 1:
            q = q.replace(n=1)
        else:
            break
    return q


def _work(p: Params) -> int:
    return int(np.prod(out_shape(p))) * p.ci * int(np.prod(p.kernel))


def _small_enough(p: Params, cap: int = _MAX_WORK) -> bool:
    if p.dtype == "f16" and p.ci * int(np.prod(p.kernel)) > _F16_MAX_TERMS:
        return False
    return _work(p) <= cap


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    cap = _MAX_WORK_LARGE if regime == "large" else _MAX_WORK
    return _params(regime).filter(lambda p: is_valid(p) and _small_enough(p, cap))
