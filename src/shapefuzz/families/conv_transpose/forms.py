"""The conv_transpose family's equivalent forms and features."""

from __future__ import annotations

from typing import Any

from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import (
    canonical, constant_zero_dest, fwd_labels, named_allowed, reduction_transposed)


# ----------------------------------------------------------------------------- metamorphic forms


def equivalent_forms(p: Params) -> list[Params]:
    """Other formulations of the same computation: one key changed at a time, plus the simplest."""
    cands: list[Params] = []

    def add(**changes: Any) -> None:
        cands.append(canonical(p.replace(**changes)))

    ident = list(range(len(fwd_labels(p))))
    add(**simplest_form(p))
    if p.groups > 1:
        add(x_expand="late" if p.x_expand == "early" else "early")
    add(pad_mode="insert" if p.pad_mode == "pad" else "pad")
    add(w_order="split" if p.w_order == "fused" else "fused")
    add(flip="map" if p.flip == "extract" else "extract")
    if constant_zero_dest(p):
        add(zero_dest="fill" if p.zero_dest == "constant" else "constant")
    if p.form == "generic":
        if named_allowed(p):
            add(form="named", fwd_layout=ident)
        add(fwd_layout=ident)
    else:
        add(form="generic")
    return cands


def simplest_form(p: Params) -> dict[str, Any]:
    return {
        "form": "named" if named_allowed(p) else "generic",
        "flip": "extract",
        "pad_mode": "pad",
        "x_expand": "late",
        "w_order": "fused",
        "fwd_layout": list(range(len(fwd_labels(p)))),
        "zero_dest": "fill",
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
    "zero_dest:fill", "zero_dest:constant",
)  # fmt: skip


def dyn_nc(p: Params) -> list[bool]:
    """x's dynamic flags in [N, C, S...] order, whatever its layout."""
    d = list(p.input_dyn)
    return d if p.x_layout == "nc" else [d[0], d[-1], *d[1:-1]]


def features(p: Params) -> list[str]:
    dyn = dyn_nc(p)
    allowed = [True, p.groups == 1] + [True] * p.rank
    n_dyn, n_allowed = sum(dyn), sum(allowed)
    f = [
        "dyn:none" if n_dyn == 0 else "dyn:all" if n_dyn == n_allowed else "dyn:mixed",
        f"rank:{p.rank}",
        f"dtype:{p.dtype}",
        "groups>1" if p.groups > 1 else "groups:1",
        f"form:{p.form}",
        f"flip:{p.flip}",
        f"pad_mode:{p.pad_mode}",
        f"w_order:{p.w_order}",
    ]
    if p.groups > 1:
        f.append(f"x_expand:{p.x_expand}")
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
    if reduction_transposed(stored):
        f.append("w_red:transposed")
    if reduction_transposed([fwd_labels(p)[i] for i in p.fwd_layout]):
        f.append("fwd_red:transposed")
    if max(p.ci, p.co) > 17:
        f.append("channels:large")
    f.append(f"x_layout:{p.x_layout}")
    if constant_zero_dest(p):
        f.append(f"zero_dest:{p.zero_dest}")
    return f
