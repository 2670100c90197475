"""conv-transpose (backward-data convolution), in the decompositions frontends emit.

The computation (PyTorch's ConvTranspose, NC<spatial> layout, `r` spatial dims, `G` groups):

    x: [N, G*Ci, H_1..H_r]            the input gradient's source (forward output gradient)
    w: logical [G*Ci, Co, K_1..K_r]   stored in any permutation of those dims (`w_layout`)
    out[n, g*Co+co, s*i + d*k - pad_lo] += x[n, g*Ci+ci, i] * w[g*Ci+ci, co, k]
    O_t = (H_t-1)*s_t + 1 + d_t*(K_t-1) - pad_lo_t - pad_hi_t + out_pad_t

The IR lowers it the way frontends do: zero insertion (a strided `tensor.insert_slice` into a
zero tensor), padding by d*(K-1)-pad on each side (+ output padding on the high side), a filter
flip (by `linalg.index`/`tensor.extract`, or by an indexing map with `K-1-d`) and transpose to a forward layout, group expand/collapse, and a
stride-1 forward convolution (a named linalg op or the equivalent `linalg.generic`).

Formulation keys (all give the same numbers; `equivalent_forms` swaps them):
  form      "named" | "generic"        the forward conv
  flip      "extract" | "map"
  pad_mode  "pad" (insert, then tensor.pad) | "insert" (one strided insert at offset lo)
  x_expand  "early" (group dim split at the function entry) | "late" (right before the conv)
  w_order   "fused" (one generic flips and transposes) | "split" (flip, expand, linalg.transpose)
  fwd_layout  permutation of the forward filter's logical dims [G?, F, C, K_1..K_r]

The NumPy reference is a scatter-add from the definition above, not the decomposition.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.base import DTYPE_TOLERANCE, Family, FamilyParams, elementwise_rule
from shapefuzz.families.common import IndexValues, compare_arrays, loop_dims, np_dtype, tensor_type
from shapefuzz.model import Mismatch
from shapefuzz.templates import render_template

FAMILY_NAME = "conv_transpose"
DTYPES = ("f32", "f16", "i32")
FORMS = ("named", "generic")
FLIPS = ("extract", "map")
PAD_MODES = ("pad", "insert")
EXPANDS = ("late", "early")
W_ORDERS = ("fused", "split")

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


@dataclass(frozen=True)
class Params(FamilyParams):
    RENAMED = {"in_size": "spatial", "stride": "strides", "dilation": "dilations", "dyn_x": "input_dyn"}

    rank: int
    dtype: str
    n: int
    groups: int
    ci: int  # input channels per group
    co: int  # output channels per group
    spatial: tuple[int, ...]  # the input's spatial sizes
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_lo: tuple[int, ...]
    pad_hi: tuple[int, ...]
    out_pad: tuple[int, ...]
    input_dyn: tuple[bool, ...]  # x: [N, G*Ci, spatial...]
    w_layout: tuple[int, ...]  # stored filter dims as a permutation of [G*Ci, Co, K...]
    form: str
    flip: str
    pad_mode: str
    x_expand: str
    w_order: str
    fwd_layout: tuple[int, ...]
    # "nc": x [N, G*Ci, spatial...] and out [N, G*Co, out...]; "nhc" (channels last): x [N,
    # spatial..., G*Ci] and out [N, out..., G*Co], the group dim split off the channels at the
    # end and the forward conv a channels-last linalg.generic.
    x_layout: str = "nc"


# ----------------------------------------------------------------------------- shapes


def _out_sizes(p: Params) -> list[int]:
    return [
        (h - 1) * s + 1 + d * (k - 1) - lo - hi + op
        for h, s, d, k, lo, hi, op in zip(
            p.spatial, p.strides, p.dilations, p.kernel, p.pad_lo, p.pad_hi, p.out_pad
        )
    ]


X_LAYOUTS = ("nc", "nhc")


def channel_pos(p: Params) -> int:
    """Where x's (and the output's) channel dim is."""
    return 1 if p.x_layout == "nc" else p.rank + 1


def _nc_to_layout(p: Params, dims: list) -> list:
    """[N, C, S...] in the case's x layout."""
    return dims if p.x_layout == "nc" else [dims[0], *dims[2:], dims[1]]


def x_shape(p: Params) -> list[int]:
    return _nc_to_layout(p, [p.n, p.groups * p.ci, *p.spatial])


def w_logical_shape(p: Params) -> list[int]:
    return [p.groups * p.ci, p.co, *p.kernel]


def w_shape(p: Params) -> list[int]:
    logical = w_logical_shape(p)
    return [logical[i] for i in p.w_layout]


def out_shape(p: Params) -> list[int]:
    return _nc_to_layout(p, [p.n, p.groups * p.co, *_out_sizes(p)])


def named_allowed(p: Params) -> bool:
    """linalg has named NCW/NCHW/NCDHW convs, but grouped ones only in 2-D (channels-last
    cases use the generic form)."""
    return (p.groups == 1 or p.rank == 2) and p.x_layout == "nc"


def _fwd_labels(p: Params) -> list[str]:
    ks = [f"K{t}" for t in range(p.rank)]
    return (["G", "F", "C"] if p.groups > 1 else ["F", "C"]) + ks


def named_fwd_layouts(p: Params) -> list[list[int]]:
    n = len(_fwd_labels(p))
    ident = list(range(n))
    if p.groups > 1:
        return [ident, [1, 0, *range(2, n)]]  # gfchw, fgchw
    return [ident]


def _reduction_transposed(order: list[str]) -> bool:
    """True when the filter's reduction dims (C, K_t) are not in the input's (C, spatial) order."""
    red = [lab for lab in order if lab == "C" or lab.startswith("K")]
    return red != sorted(red, key=lambda lab: -1 if lab == "C" else int(lab[1:]))


def is_valid(p: Params) -> bool:
    r = p.rank
    try:
        if not 1 <= r <= 3 or p.dtype not in DTYPES:
            return False
        lists = ("spatial", "kernel", "strides", "dilations", "pad_lo", "pad_hi", "out_pad")
        if any(len(p[k]) != r for k in lists) or len(p.input_dyn) != r + 2:
            return False
        if min(p.n, p.groups, p.ci, p.co, *p.spatial, *p.kernel, *p.strides, *p.dilations) < 1:
            return False
        for k, d, lo, hi, op in zip(p.kernel, p.dilations, p.pad_lo, p.pad_hi, p.out_pad):
            if not (0 <= lo <= d * (k - 1) and 0 <= hi <= d * (k - 1) and op >= 0):
                return False
        if min(_out_sizes(p)) < 1:
            return False
        if p.x_layout not in X_LAYOUTS:
            return False
        if p.groups > 1 and p.input_dyn[channel_pos(p)]:
            return False
        if sorted(p.w_layout) != list(range(r + 2)):
            return False
        if sorted(p.fwd_layout) != list(range(len(_fwd_labels(p)))):
            return False
        if p.form not in FORMS or p.flip not in FLIPS or p.pad_mode not in PAD_MODES:
            return False
        if p.x_expand not in EXPANDS or p.w_order not in W_ORDERS:
            return False
        if p.form == "named" and (not named_allowed(p) or list(p.fwd_layout) not in named_fwd_layouts(p)):
            return False
    except (KeyError, TypeError):
        return False
    return True


def _canonical(p: Params) -> Params:
    """Keys that a configuration ignores get one value, so equal computations have equal params."""
    return p.replace(x_expand="late") if p.groups == 1 and p.x_expand != "late" else p


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
    sizes = _SIZES if rank < 3 else (1, 2, 3, 5)
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
    q = _canonical(Params(**p))
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


# ----------------------------------------------------------------------------- rendering

_ZERO = {"f32": "0.000000e+00", "f16": "0.000000e+00", "i32": "0"}


def _ty(shape: list[int | str], dtype: str) -> str:
    return tensor_type(shape, dtype)


def _dim_operands(shape: list[int | str]) -> str:
    return ", ".join(d for d in shape if isinstance(d, str))


def _mixed(shape: list[int | str]) -> str:
    return ", ".join(str(d) for d in shape)


class _Builder:
    """Computes every name, type and map of one case; the template only lays them out."""

    def __init__(self, p: Params) -> None:
        self.p = p
        self.dtype = p.dtype
        self.steps: list[dict[str, Any]] = []
        self.counter = itertools.count()
        self.index = IndexValues()  # tensor.dim / affine.apply of the dynamic sizes

    def fresh(self, stem: str) -> str:
        return f"%{stem}{next(self.counter)}"

    def step(self, kind: str, **fields: Any) -> str:
        name = self.fresh(fields.pop("stem", "v"))
        self.steps.append({"kind": kind, "name": name, **fields})
        return name

    def tensor_dim(self, src: str, src_type: str, idx: int) -> str:
        return self.index.dim(src, src_type, idx)

    def apply(self, operand: str, scale: int, const: int) -> str:
        return self.index.apply([(scale, operand)], const)

    def zeros(self, shape: list[int | str]) -> str:
        return self.step(
            "zeros",
            stem="z",
            empty=self.fresh("e"),
            dyn=_dim_operands(shape),
            type=_ty(shape, self.dtype),
            elt=self.dtype,
            zero=_ZERO[self.dtype],
        )

    # ------------------------------------------------------------------ x side

    def build(self) -> dict[str, Any]:
        p = self.p
        r, G = p.rank, p.groups
        grouped = G > 1
        xs = x_shape(p)
        x_dims: list[int | str] = []
        for i, size in enumerate(xs):
            x_dims.append(self.tensor_dim("%x", self._static_x_type(), i) if p.input_dyn[i] else size)
        x_type = _ty(x_dims, self.dtype)
        cur, cur_shape = "%x", list(x_dims)
        last = p.x_layout == "nhc"

        def expand_groups(value: str, shape: list[int | str]) -> tuple[str, list[int | str]]:
            if last:  # [N, S..., G*Ci] -> [N, S..., G, Ci]
                new_shape = [*shape[:-1], G, p.ci]
                reassoc = [*[[i] for i in range(len(shape) - 1)], [len(shape) - 1, len(shape)]]
            else:  # [N, G*Ci, S...] -> [N, G, Ci, S...]
                new_shape = [shape[0], G, p.ci, *shape[2:]]
                reassoc = [[0], [1, 2], *[[i + 1] for i in range(2, len(shape))]]
            name = self.step(
                "expand",
                stem="xg",
                src=value,
                reassoc=str(reassoc),
                output_shape=_mixed(new_shape),
                src_type=_ty(shape, self.dtype),
                type=_ty(new_shape, self.dtype),
            )
            return name, new_shape

        if grouped and p.x_expand == "early":
            cur, cur_shape = expand_groups(cur, cur_shape)
        sp0 = 1 if last else len(cur_shape) - r  # index of the first spatial dim
        tail = len(cur_shape) - sp0 - r  # dims after the spatial ones (channels last)
        k, s, d = p.kernel, p.strides, p.dilations
        lo = [d[t] * (k[t] - 1) - p.pad_lo[t] for t in range(r)]
        hi = [d[t] * (k[t] - 1) - p.pad_hi[t] + p.out_pad[t] for t in range(r)]
        h = [cur_shape[sp0 + t] for t in range(r)]

        def spatial(t: int, extra: int) -> int | str:
            """(H-1)*s + 1 + extra, static or computed in the IR."""
            if isinstance(h[t], str):
                return self.apply(h[t], s[t], 1 - s[t] + extra)
            return (h[t] - 1) * s[t] + 1 + extra

        lead = cur_shape[:sp0]
        trail = cur_shape[sp0 + r :]

        def around(values: list, fill: Any) -> list:
            """Per-dim values: `values` at the spatial dims, `fill` elsewhere."""
            return [fill] * sp0 + list(values) + [fill] * tail

        if p.pad_mode == "insert":
            if any(s[t] > 1 for t in range(r)) or any(lo) or any(hi):
                padded = lead + [spatial(t, lo[t] + hi[t]) for t in range(r)] + trail
                z = self.zeros(padded)
                cur = self._insert(cur, cur_shape, z, padded, around(lo, 0), around(s, 1))
                cur_shape = padded
        else:
            if any(s[t] > 1 for t in range(r)):
                inserted = lead + [spatial(t, 0) for t in range(r)] + trail
                z = self.zeros(inserted)
                cur = self._insert(cur, cur_shape, z, inserted, [0] * len(cur_shape), around(s, 1))
                cur_shape = inserted
            if any(lo) or any(hi):
                padded = lead + [
                    spatial(t, lo[t] + hi[t]) if isinstance(cur_shape[sp0 + t], str) else cur_shape[sp0 + t] + lo[t] + hi[t]
                    for t in range(r)
                ] + trail
                # tensor.pad's result type carries `?` where the source is dynamic; the SSA
                # sizes computed above are only needed if a later op asks for them.
                cur = self.step(
                    "pad",
                    stem="p",
                    src=cur,
                    low=_mixed(around(lo, 0)),
                    high=_mixed(around(hi, 0)),
                    nargs=len(cur_shape),
                    src_type=_ty(cur_shape, self.dtype),
                    type=_ty(padded, self.dtype),
                    elt=self.dtype,
                    zero=_ZERO[self.dtype],
                )
                cur_shape = padded
        if grouped and p.x_expand == "late":
            cur, cur_shape = expand_groups(cur, cur_shape)
        conv_in, conv_in_shape = cur, cur_shape

        # ------------------------------------------------------------- filter side
        w_stored_labels = self._stored_labels(expanded=False)
        w_exp_labels = self._stored_labels(expanded=True)
        label_size = self._label_sizes()
        ws = w_shape(p)
        w_type = _ty(ws, self.dtype)
        w_cur, w_cur_shape = "%w", list(ws)

        def expand_filter(value: str, shape: list[int | str]) -> tuple[str, list[int | str]]:
            pos = w_stored_labels.index("I")
            new_shape = [label_size[lab] for lab in w_exp_labels]
            reassoc: list[list[int]] = []
            j = 0
            for i in range(len(shape)):
                if i == pos:
                    reassoc.append([j, j + 1])
                    j += 2
                else:
                    reassoc.append([j])
                    j += 1
            name = self.step(
                "expand",
                stem="wg",
                src=value,
                reassoc=str(reassoc),
                output_shape=_mixed(new_shape),
                src_type=_ty(shape, self.dtype),
                type=_ty(new_shape, self.dtype),
            )
            return name, new_shape

        fwd = _fwd_labels(p)
        out_labels = [fwd[i] for i in p.fwd_layout]
        out_shape_w = [label_size[lab] for lab in out_labels]
        if p.w_order == "fused":
            # split the group dim, then one generic flips and transposes
            if grouped:
                w_cur, w_cur_shape = expand_filter(w_cur, w_cur_shape)
            w_cur = self._flip(w_cur, w_cur_shape, w_exp_labels, out_labels, out_shape_w)
            w_cur_shape = out_shape_w
        else:
            # flip in the stored layout, then split the group dim, then transpose
            w_cur = self._flip(w_cur, w_cur_shape, w_stored_labels, w_stored_labels, w_cur_shape)
            if grouped:
                w_cur, w_cur_shape = expand_filter(w_cur, w_cur_shape)
            perm = [w_exp_labels.index(lab) for lab in out_labels]
            if perm != list(range(len(perm))):
                w_cur = self.step(
                    "transpose",
                    stem="wt",
                    empty=self.fresh("e"),
                    src=w_cur,
                    perm=str(perm),
                    src_type=_ty(w_cur_shape, self.dtype),
                    type=_ty(out_shape_w, self.dtype),
                )
                w_cur_shape = out_shape_w

        # ------------------------------------------------------------- conv
        o_sizes = _out_sizes(p)
        o_dims: list[int | str] = [
            self.apply(h[t], s[t], 1 - s[t] + lo[t] + hi[t] - d[t] * (k[t] - 1)) if isinstance(h[t], str) else o_sizes[t]
            for t in range(r)
        ]
        groups_co = [*([G] if grouped else []), p.co]
        conv_out_shape = [conv_in_shape[0], *o_dims, *groups_co] if last else [conv_in_shape[0], *groups_co, *o_dims]
        init = self.zeros(conv_out_shape)
        common = dict(
            x=conv_in,
            w=w_cur,
            init=init,
            x_type=_ty(conv_in_shape, self.dtype),
            w_type=_ty(w_cur_shape, self.dtype),
            type=_ty(conv_out_shape, self.dtype),
        )
        if p.form == "named":
            if grouped:
                op = "conv_2d_ngchw_gfchw" if p.fwd_layout[0] == 0 else "conv_2d_ngchw_fgchw"
            else:
                op = {1: "conv_1d_ncw_fcw", 2: "conv_2d_nchw_fchw", 3: "conv_3d_ncdhw_fcdhw"}[r]
            conv = self.step(
                "conv_named",
                stem="conv",
                op=op,
                dilations=", ".join(map(str, d)),
                rank=r,
                **common,
            )
        else:
            conv = self.step("conv_generic", stem="conv", **common, **self._generic_conv(out_labels))

        result, result_shape = conv, conv_out_shape
        if grouped:
            if last:
                final = [conv_out_shape[0], *o_dims, G * p.co]
                reassoc = [*[[i] for i in range(r + 1)], [r + 1, r + 2]]
            else:
                final = [conv_out_shape[0], G * p.co, *o_dims]
                reassoc = [[0], [1, 2], *[[i + 1] for i in range(2, len(final))]]
            result = self.step(
                "collapse",
                stem="out",
                src=conv,
                reassoc=str(reassoc),
                src_type=_ty(conv_out_shape, self.dtype),
                type=_ty(final, self.dtype),
            )
            result_shape = final
        return {
            "x_type": x_type,
            "w_type": w_type,
            "result": result,
            "result_type": _ty(result_shape, self.dtype),
            "index": self.index.ops(),
            "steps": self.steps,
        }

    def _static_x_type(self) -> str:
        return _ty(["?" if dyn else size for size, dyn in zip(x_shape(self.p), self.p.input_dyn)], self.dtype)

    def _insert(self, src, src_shape, dest, dest_shape, offsets, strides) -> str:
        return self.step(
            "insert",
            stem="i",
            src=src,
            dest=dest,
            offsets=_mixed(offsets),
            sizes=_mixed(src_shape),
            strides=_mixed(strides),
            src_type=_ty(src_shape, self.dtype),
            type=_ty(dest_shape, self.dtype),
        )

    def _stored_labels(self, expanded: bool) -> list[str]:
        p = self.p
        logical = ["I", "O", *[f"K{t}" for t in range(p.rank)]]
        labels = [logical[i] for i in p.w_layout]
        if not expanded:
            return labels
        out: list[str] = []
        for lab in labels:
            if lab == "I":
                out.extend(["G", "C"] if p.groups > 1 else ["C"])
            elif lab == "O":
                out.append("F")
            else:
                out.append(lab)
        return out

    def _label_sizes(self) -> dict[str, int]:
        p = self.p
        sizes = {"I": p.groups * p.ci, "O": p.co, "G": p.groups, "C": p.ci, "F": p.co}
        sizes.update({f"K{t}": k for t, k in enumerate(p.kernel)})
        return sizes

    def _flip(self, src, src_shape, src_labels, out_labels, out_shape) -> str:
        """A generic producing out[...] = src[..., K-1-k, ...], permuting labels as it goes."""
        p = self.p
        n = len(out_labels)
        # src labels may be unexpanded ("I", "O") when out_labels are the same list
        kernel = {f"K{t}": k for t, k in enumerate(p.kernel)}
        loop_of = {lab: j for j, lab in enumerate(out_labels)}
        e = self.fresh("e")
        common = dict(
            stem="wf",
            empty=e,
            src=src,
            src_type=_ty(src_shape, self.dtype),
            type=_ty(out_shape, self.dtype),
            iterators=", ".join(['"parallel"'] * n),
            out_map=f"affine_map<({_dims(n)}) -> ({_dims(n)})>",
            elt=self.dtype,
        )
        if p.flip == "map":
            exprs = [
                f"{kernel[lab] - 1} - d{loop_of[lab]}" if lab in kernel else f"d{loop_of[lab]}" for lab in src_labels
            ]
            in_map = f"affine_map<({_dims(n)}) -> ({', '.join(exprs)})>"
            return self.step("flip_map", in_map=in_map, **common)
        # extract: one linalg.index per loop, K-1-i by arith.subi, tensor.extract in stored order
        indices = []
        for lab in src_labels:
            j = loop_of[lab]
            indices.append({"loop": j, "flip": kernel[lab] - 1 if lab in kernel else None})
        return self.step("flip_extract", nloops=n, indices=indices, **common)

    def _generic_conv(self, w_labels: list[str]) -> dict[str, Any]:
        p = self.p
        r, grouped = p.rank, p.groups > 1
        loops = ["N", *(["G"] if grouped else []), "F", *[f"O{t}" for t in range(r)], "C", *[f"K{t}" for t in range(r)]]
        idx = {lab: j for j, lab in enumerate(loops)}
        n = len(loops)
        x_chan = [*([f"d{idx['G']}"] if grouped else []), f"d{idx['C']}"]
        x_space = []
        for t in range(r):
            dil = p.dilations[t]
            x_space.append(f"d{idx[f'O{t}']} + d{idx[f'K{t}']}" + (f" * {dil}" if dil != 1 else ""))
        w_exprs = [f"d{idx[lab]}" for lab in w_labels]
        o_chan = [*([f"d{idx['G']}"] if grouped else []), f"d{idx['F']}"]
        o_space = [f"d{idx[f'O{t}']}" for t in range(r)]
        if p.x_layout == "nhc":
            x_exprs = [f"d{idx['N']}", *x_space, *x_chan]
            o_exprs = [f"d{idx['N']}", *o_space, *o_chan]
        else:
            x_exprs = [f"d{idx['N']}", *x_chan, *x_space]
            o_exprs = [f"d{idx['N']}", *o_chan, *o_space]
        dims = _dims(n)
        return {
            "x_map": f"affine_map<({dims}) -> ({', '.join(x_exprs)})>",
            "w_map": f"affine_map<({dims}) -> ({', '.join(w_exprs)})>",
            "o_map": f"affine_map<({dims}) -> ({', '.join(o_exprs)})>",
            "iterators": ", ".join(
                '"reduction"' if lab == "C" or lab.startswith("K") else '"parallel"' for lab in loops
            ),
            "elt": self.dtype,
            "mul": "arith.muli" if self.dtype == "i32" else "arith.mulf",
            "add": "arith.addi" if self.dtype == "i32" else "arith.addf",
        }


_dims = loop_dims


def render(p: Params) -> str:
    ctx = _Builder(p).build()
    return render_template("conv_transpose.mlir.j2", **ctx)


# ----------------------------------------------------------------------------- numbers



def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    """Values that make every sum exact: f32 x in quarters, f16 x in halves (|sums| stay far below
    f16's 1024 limit for halves because strategy() bounds the reduction length), integer w."""
    rng = np.random.default_rng(seed)
    dt = p.dtype
    if dt == "f32":
        x = rng.integers(-8, 9, size=x_shape(p)) / 4.0
        w = rng.integers(-3, 4, size=w_shape(p))
    elif dt == "f16":
        x = rng.integers(-4, 5, size=x_shape(p)) / 2.0
        w = rng.integers(-2, 3, size=w_shape(p))
    else:
        x = rng.integers(-3, 4, size=x_shape(p))
        w = rng.integers(-3, 4, size=w_shape(p))
    return [np.ascontiguousarray(x.astype(np_dtype(dt))), np.ascontiguousarray(w.astype(np_dtype(dt)))]


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Scatter-add from the definition: out[n, g*Co+co, s*i + d*k - pad_lo] += x * w."""
    x, w_stored = inputs
    if p.x_layout == "nhc":  # compute channels-first, move the channels back at the end
        out = reference(p.replace(x_layout="nc"), [np.moveaxis(x, -1, 1), w_stored])[0]
        return [np.ascontiguousarray(np.moveaxis(out, 1, -1))]
    r, G, Ci, Co = p.rank, p.groups, p.ci, p.co
    acc_dt = np.int64 if p.dtype == "i32" else np.float64
    # undo the stored layout: logical w[I, O, K...]
    w = np.transpose(w_stored, np.argsort(p.w_layout)).astype(acc_dt)
    x = x.astype(acc_dt)
    N = x.shape[0]
    osz = _out_sizes(p)
    out = np.zeros([N, G * Co, *osz], dtype=acc_dt)
    s, d, lo = p.strides, p.dilations, p.pad_lo
    for g in range(G):
        xg = x[:, g * Ci : (g + 1) * Ci]  # [N, Ci, H...]
        wg = w[g * Ci : (g + 1) * Ci]  # [Ci, Co, K...]
        for kpos in itertools.product(*[range(k) for k in p.kernel]):
            contrib = np.einsum("nc...,cf->nf...", xg, wg[(slice(None), slice(None), *kpos)])
            # input position i lands at s*i + d*k - lo; keep the ones inside [0, O)
            src_sl, dst_sl = [], []
            for t in range(r):
                H, st_ = x.shape[2 + t], s[t]
                first = d[t] * kpos[t] - lo[t]  # where input position 0 lands
                i_lo = max(0, -(first // st_))  # smallest i with first + s*i >= 0
                i_hi = min(H, max(0, -((first - osz[t]) // st_)))  # i < ceil((O - first)/s)
                i_hi = max(i_hi, i_lo)
                src_sl.append(slice(i_lo, i_hi))
                start = first + st_ * i_lo
                dst_sl.append(slice(start, start + st_ * (i_hi - i_lo), st_))
            out[(slice(None), slice(g * Co, (g + 1) * Co), *dst_sl)] += contrib[(slice(None), slice(None), *src_sl)]
    return [out.astype(np_dtype(p.dtype))]


def reference_naive(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The same definition written as plain loops (slow; for checking `reference` on tiny cases)."""
    x, w_stored = inputs
    if p.x_layout == "nhc":
        out = reference_naive(p.replace(x_layout="nc"), [np.moveaxis(x, -1, 1), w_stored])[0]
        return [np.moveaxis(out, 1, -1)]
    w = np.transpose(w_stored, np.argsort(p.w_layout)).astype(np.float64)
    G, Ci, Co = p.groups, p.ci, p.co
    osz = _out_sizes(p)
    out = np.zeros([x.shape[0], G * Co, *osz])
    for idx in np.ndindex(*x.shape):
        n, c, *i = idx
        g, ci = divmod(c, Ci)
        for co in range(Co):
            for kpos in np.ndindex(*p.kernel):
                o = [p.strides[t] * i[t] + p.dilations[t] * kpos[t] - p.pad_lo[t] for t in range(len(i))]
                if all(0 <= o[t] < osz[t] for t in range(len(o))):
                    out[(n, g * Co + co, *o)] += float(x[idx]) * w[(c, co, *kpos)]
    return [out.astype(np_dtype(p.dtype))]


# Inputs make every sum exact; the tolerance only absorbs a backend that keeps partial sums in a
# wider or narrower type than we assume, never a wrong element. (rtol, atol) by result type.
TOLERANCE = {"f32": (1e-5, 1e-4), "f16": (2e-3, 2e-2)}


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    return compare_arrays(expected, actual, tolerance=TOLERANCE)


def export_rule(p: Params) -> dict:
    return elementwise_rule(*TOLERANCE[p.dtype]) if p.dtype in TOLERANCE else dict(DTYPE_TOLERANCE)


# ----------------------------------------------------------------------------- metamorphic forms


def equivalent_forms(p: Params) -> list[Params]:
    """Other formulations of the same computation: one key changed at a time, plus the simplest."""
    cands: list[Params] = []

    def add(**changes: Any) -> None:
        cands.append(_canonical(p.replace(**changes)))

    ident = list(range(len(_fwd_labels(p))))
    add(**_simplest_form(p))
    if p.groups > 1:
        add(x_expand="late" if p.x_expand == "early" else "early")
    add(pad_mode="insert" if p.pad_mode == "pad" else "pad")
    add(w_order="split" if p.w_order == "fused" else "fused")
    add(flip="map" if p.flip == "extract" else "extract")
    if p.form == "generic":
        if named_allowed(p):
            add(form="named", fwd_layout=ident)
        add(fwd_layout=ident)
    else:
        add(form="generic")
    return cands


def _simplest_form(p: Params) -> dict[str, Any]:
    return {
        "form": "named" if named_allowed(p) else "generic",
        "flip": "extract",
        "pad_mode": "pad",
        "x_expand": "late",
        "w_order": "fused",
        "fwd_layout": list(range(len(_fwd_labels(p)))),
    }


# ----------------------------------------------------------------------------- bookkeeping


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    "dyn:none", "dyn:all", "dyn:mixed", "dyn:batch", "dyn:spatial", "dyn:channel",
    "rank:1", "rank:2", "rank:3", "dtype:f32", "dtype:f16", "dtype:i32",
    "groups>1", "groups:1", "form:named", "form:generic", "flip:extract", "flip:map",
    "pad_mode:pad", "pad_mode:insert", "w_order:fused", "w_order:split",
    "x_expand:early", "x_expand:late", "stride>1", "dilation>1", "out_pad>0",
    "pad:zero", "pad:nonzero", "pad:asym", "kernel:has1", "w_layout:torch", "w_layout:permuted",
    "w_red:transposed", "fwd_red:transposed", "channels:large", "x_layout:nc", "x_layout:nhc",
)  # fmt: skip


def _dyn_nc(p: Params) -> list[bool]:
    """x's dynamic flags in [N, C, S...] order, whatever its layout."""
    d = list(p.input_dyn)
    return d if p.x_layout == "nc" else [d[0], d[-1], *d[1:-1]]


def features(p: Params) -> list[str]:
    dyn = _dyn_nc(p)
    allowed = [True, p.groups == 1] + [True] * p.rank
    n_dyn, n_allowed = sum(dyn), sum(allowed)
    f = [
        "dyn:none" if n_dyn == 0 else "dyn:all" if n_dyn == n_allowed else "dyn:mixed",
        f"rank:{p['rank']}",
        f"dtype:{p['dtype']}",
        "groups>1" if p.groups > 1 else "groups:1",
        f"form:{p['form']}",
        f"flip:{p['flip']}",
        f"pad_mode:{p['pad_mode']}",
        f"w_order:{p['w_order']}",
    ]
    if p.groups > 1:
        f.append(f"x_expand:{p['x_expand']}")
    if dyn[0]:
        f.append("dyn:batch")
    if any(dyn[2:]):
        f.append("dyn:spatial")
    if dyn[1]:
        f.append("dyn:channel")
    if any(s > 1 for s in p.strides):
        f.append("stride>1")
    if any(d > 1 for d in p.dilations):
        f.append("dilation>1")
    if any(p.out_pad):
        f.append("out_pad>0")
    pads = list(zip(p.pad_lo, p.pad_hi))
    f.append("pad:zero" if not any(lo or hi for lo, hi in pads) else "pad:nonzero")
    if any(lo != hi for lo, hi in pads):
        f.append("pad:asym")
    if any(k == 1 for k in p.kernel):
        f.append("kernel:has1")
    if list(p.w_layout) == list(range(p.rank + 2)):
        f.append("w_layout:torch")
    else:
        f.append("w_layout:permuted")
    stored = ["C" if i == 0 else "F" if i == 1 else f"K{i - 2}" for i in p.w_layout]
    if _reduction_transposed(stored):
        f.append("w_red:transposed")
    if _reduction_transposed([_fwd_labels(p)[i] for i in p.fwd_layout]):
        f.append("fwd_red:transposed")
    if max(p.ci, p.co) > 17:
        f.append("channels:large")
    f.append(f"x_layout:{p.x_layout}")
    return f


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(input_dyn=[False] * len(p.input_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "no-padding": lambda p: _repair(p.replace(pad_lo=[0] * p.rank, pad_hi=[0] * p.rank, out_pad=[0] * p.rank)),
    "stride-1": lambda p: _repair(p.replace(strides=[1] * p.rank)),
    "dilation-1": lambda p: _repair(p.replace(dilations=[1] * p.rank)),
    "no-groups": lambda p: _repair(p.replace(groups=1, fwd_layout=[i - 1 for i in p.fwd_layout if i != 0]))
    if p.groups > 1 else p,
    "torch-filter": lambda p: p.replace(w_layout=list(range(p.rank + 2))),
    "batch-1": lambda p: p.replace(n=1),
    "channels-first": lambda p: _channels_first(p),
}


def shrink_candidates(p: Params) -> list[Params]:
    """Strictly simpler params, most aggressive first; each is valid."""
    r = p.rank
    out: list[Params] = []

    def add(q: Params) -> None:
        out.append(_repair(q))

    if r > 1:  # drop the last spatial dim
        add(p.replace(
            rank=r - 1,
            **{key: p[key][:-1] for key in ("spatial", "kernel", "strides", "dilations", "pad_lo", "pad_hi", "out_pad")},
            input_dyn=p.input_dyn[:-1] if p.x_layout == "nc" else [*p.input_dyn[:r], p.input_dyn[-1]],
            w_layout=[i for i in p.w_layout if i != r + 1],
            fwd_layout=[i for i in p.fwd_layout if i != len(_fwd_labels(p)) - 1],
        ))
    if p.groups > 1:
        add(p.replace(groups=1, fwd_layout=[i - 1 for i in p.fwd_layout if i != 0]))
    if p.x_layout == "nhc":
        add(_channels_first(p))
    add(p.replace(**_simplest_form(p)))
    for key in ("n", "ci", "co"):
        if p[key] > 1:
            add(p.replace(**{key: 1}))
            add(p.replace(**{key: p[key] // 2}))
    if any(p.input_dyn):
        add(p.replace(input_dyn=[False] * (r + 2)))
        for i, dyn in enumerate(p.input_dyn):
            if dyn:
                add(p.replace(input_dyn=[v and j != i for j, v in enumerate(p.input_dyn)]))
    for key, simple in (("out_pad", 0), ("pad_lo", 0), ("pad_hi", 0), ("strides", 1), ("dilations", 1), ("kernel", 1), ("spatial", 1)):
        if any(v != simple for v in p[key]):
            add(p.replace(**{key: [simple] * r}))
            for t in range(r):
                if p[key][t] != simple:
                    vals = list(p[key])
                    vals[t] = simple if key not in ("kernel", "spatial") or vals[t] <= 2 else vals[t] // 2
                    add(p.replace(**{key: vals}))
    if p.dtype != "f32":
        add(p.replace(dtype="f32"))
    if list(p.w_layout) != list(range(r + 2)):
        add(p.replace(w_layout=list(range(r + 2))))
    for key, simple in _simplest_form(p).items():
        if p[key] != simple:
            add(p.replace(**{key: simple}))
    return out


def _channels_first(p: Params) -> Params:
    return p.replace(x_layout="nc", input_dyn=_dyn_nc(p))


def _repair(q: Params) -> Params:
    """Clamp paddings/output padding after a shrink step so the params stay valid."""
    lo, hi, op = list(q.pad_lo), list(q.pad_hi), list(q.out_pad)
    for t in range(q.rank):
        full = q.dilations[t] * (q.kernel[t] - 1)
        lo[t], hi[t] = min(lo[t], full), min(hi[t], full)
        op[t] = min(op[t], max(q.strides[t], q.dilations[t]) - 1)
    q = q.replace(pad_lo=lo, pad_hi=hi, out_pad=op)
    if q.groups > 1:
        q = q.replace(input_dyn=[v and i != channel_pos(q) for i, v in enumerate(q.input_dyn)])
    if q.form == "named" and (not named_allowed(q) or list(q.fwd_layout) not in named_fwd_layouts(q)):
        q = q.replace(form="generic")
    return _canonical(q)


FAMILY = Family.define("conv_transpose", Params, globals())
