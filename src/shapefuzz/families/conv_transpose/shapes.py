"""Shape arithmetic of a conv_transpose case: output sizes, operand shapes in their layouts, the forward filter's labels, validity."""

from __future__ import annotations

from shapefuzz.families.conv_transpose.params import (
    DTYPES, EXPANDS, FLIPS, FORMS, PAD_MODES, Params, W_ORDERS, ZERO_DESTS)


# ----------------------------------------------------------------------------- shapes


def out_sizes(p: Params) -> list[int]:
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
    return _nc_to_layout(p, [p.n, p.groups * p.co, *out_sizes(p)])


def named_allowed(p: Params) -> bool:
    """linalg has named NCW/NCHW/NCDHW convs, but grouped ones only in 2-D (channels-last
    cases use the generic form)."""
    return (p.groups == 1 or p.rank == 2) and p.x_layout == "nc"


def fwd_labels(p: Params) -> list[str]:
    ks = [f"K{t}" for t in range(p.rank)]
    return (["G", "F", "C"] if p.groups > 1 else ["F", "C"]) + ks


def named_fwd_layouts(p: Params) -> list[list[int]]:
    n = len(fwd_labels(p))
    ident = list(range(n))
    if p.groups > 1:
        return [ident, [1, 0, *range(2, n)]]  # gfchw, fgchw
    return [ident]


def reduction_transposed(order: list[str]) -> bool:
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
        if min(out_sizes(p)) < 1:
            return False
        if p.x_layout not in X_LAYOUTS:
            return False
        if p.groups > 1 and p.input_dyn[channel_pos(p)]:
            return False
        if sorted(p.w_layout) != list(range(r + 2)):
            return False
        if sorted(p.fwd_layout) != list(range(len(fwd_labels(p)))):
            return False
        if p.form not in FORMS or p.flip not in FLIPS or p.pad_mode not in PAD_MODES:
            return False
        if p.x_expand not in EXPANDS or p.w_order not in W_ORDERS or p.zero_dest not in ZERO_DESTS:
            return False
        if p.form == "named" and (not named_allowed(p) or list(p.fwd_layout) not in named_fwd_layouts(p)):
            return False
    except (KeyError, TypeError):
        return False
    return True


def constant_zero_dest(p: Params) -> bool:
    """Whether the zero tensor x is inserted into can be a constant: there is an insert (a stride
    above 1, or the insert form with padding) and x, so the tensor, is static."""
    if any(p.input_dyn):
        return False
    full = [d * (k - 1) for d, k in zip(p.dilations, p.kernel)]
    lo = [f - pad for f, pad in zip(full, p.pad_lo)]
    hi = [f - pad + op for f, pad, op in zip(full, p.pad_hi, p.out_pad)]
    return any(s > 1 for s in p.strides) or (p.pad_mode == "insert" and (any(lo) or any(hi)))


def canonical(p: Params) -> Params:
    """Keys that a configuration ignores get one value, so equal computations have equal params."""
    if p.groups == 1 and p.x_expand != "late":
        p = p.replace(x_expand="late")
    return p.replace(zero_dest="fill") if p.zero_dest != "fill" and not constant_zero_dest(p) else p
