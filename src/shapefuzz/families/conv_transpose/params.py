"""The conv_transpose family's typed params and the formulation choices they name."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.families.base import FamilyParams


FAMILY_NAME = "conv_transpose"
DTYPES = ("f32", "f16", "i32")
FORMS = ("named", "generic")
FLIPS = ("extract", "map")
PAD_MODES = ("pad", "insert")
EXPANDS = ("late", "early")
W_ORDERS = ("fused", "split")


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
