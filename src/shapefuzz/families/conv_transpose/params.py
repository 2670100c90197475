"""The conv_transpose family's typed params and the formulation choices they name."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams


FAMILY_NAME = "conv_transpose"
Dtype = Literal["f32", "f16", "i32"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Form = Literal["named", "generic"]
FORMS: tuple[Form, ...] = get_args(Form)
Flip = Literal["extract", "map"]
FLIPS: tuple[Flip, ...] = get_args(Flip)
PadMode = Literal["pad", "insert"]
PAD_MODES: tuple[PadMode, ...] = get_args(PadMode)
Expand = Literal["late", "early"]
EXPANDS: tuple[Expand, ...] = get_args(Expand)
WOrder = Literal["fused", "split"]
W_ORDERS: tuple[WOrder, ...] = get_args(WOrder)
XLayout = Literal["nc", "nhc"]  # the input's channels first, or last
ZeroDest = Literal["fill", "constant"]
ZERO_DESTS: tuple[ZeroDest, ...] = get_args(ZeroDest)


@dataclass(frozen=True)
class Params(FamilyParams):
    RENAMED = {"in_size": "spatial", "stride": "strides", "dilation": "dilations", "dyn_x": "input_dyn"}

    rank: int
    dtype: Dtype
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
    form: Form
    flip: Flip
    pad_mode: PadMode
    x_expand: Expand
    w_order: WOrder
    fwd_layout: tuple[int, ...]
    # "nc": x [N, G*Ci, spatial...] and out [N, G*Co, out...]; "nhc" (channels last): x [N,
    # spatial..., G*Ci] and out [N, out..., G*Co], the group dim split off the channels at the
    # end and the forward conv a channels-last linalg.generic.
    x_layout: XLayout = "nc"
    # The zero tensor x is inserted into (zero insertion, padding): a `linalg.fill` of a
    # `tensor.empty`, or a splat `arith.constant` as iree-turbine's backward-data lowering writes
    # it (static shapes only; the form IREE's strided-insert preprocessing passes rewrite).
    zero_dest: ZeroDest = "fill"
