"""The conv family's layouts (dim labels per boundary layout, the named op if any) and its typed params."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams


# --------------------------------------------------------------------------------------------
# Layouts. Each is (rank, kind, input labels, filter labels, output labels, named op or None).
# "S" stands for the spatial dims: s0.. in the input, k0.. in the filter, o0.. in the output.
# Kinds: "regular" (n, c, f), "grouped" (n, g, c, f), "depthwise" (n, c), "depthwise_m" (n, c, m).


@dataclass(frozen=True)
class Layout:
    name: str
    rank: int
    kind: str
    input: str
    filter: str
    output: str
    named_op: str | None


def _layouts() -> dict[str, Layout]:
    table = [
        # rank 1
        ("nwc_wcf", 1, "regular", "nSc", "Scf", "nSf", "conv_1d_nwc_wcf"),
        ("ncw_fcw", 1, "regular", "ncS", "fcS", "nfS", "conv_1d_ncw_fcw"),
        ("ngcw_gfcw", 1, "grouped", "ngcS", "gfcS", "ngfS", None),
        ("nwgc_gfwc", 1, "grouped", "nSgc", "gfSc", "nSgf", None),
        ("nwc_wc", 1, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_1d_nwc_wc"),
        ("ncw_cw", 1, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_1d_ncw_cw"),
        ("nwc_wcm", 1, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_1d_nwc_wcm"),
        ("ncw_cmw", 1, "depthwise_m", "ncS", "cmS", "ncmS", None),
        # rank 2
        ("nhwc_hwcf", 2, "regular", "nSc", "Scf", "nSf", "conv_2d_nhwc_hwcf"),
        ("nhwc_fhwc", 2, "regular", "nSc", "fSc", "nSf", "conv_2d_nhwc_fhwc"),
        ("nchw_fchw", 2, "regular", "ncS", "fcS", "nfS", "conv_2d_nchw_fchw"),
        ("ngchw_fgchw", 2, "grouped", "ngcS", "fgcS", "ngfS", "conv_2d_ngchw_fgchw"),
        ("ngchw_gfchw", 2, "grouped", "ngcS", "gfcS", "ngfS", "conv_2d_ngchw_gfchw"),
        ("nhwgc_gfhwc", 2, "grouped", "nSgc", "gfSc", "nSgf", "conv_2d_nhwgc_gfhwc"),
        ("nhwc_hwc", 2, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_2d_nhwc_hwc"),
        ("nchw_chw", 2, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_2d_nchw_chw"),
        ("nhwc_hwcm", 2, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_2d_nhwc_hwcm"),
        ("nchw_cmhw", 2, "depthwise_m", "ncS", "cmS", "ncmS", None),
        # rank 3
        ("ndhwc_dhwcf", 3, "regular", "nSc", "Scf", "nSf", "conv_3d_ndhwc_dhwcf"),
        ("ncdhw_fcdhw", 3, "regular", "ncS", "fcS", "nfS", "conv_3d_ncdhw_fcdhw"),
        ("ngcdhw_gfcdhw", 3, "grouped", "ngcS", "gfcS", "ngfS", None),
        ("ndhwgc_gfdhwc", 3, "grouped", "nSgc", "gfSc", "nSgf", None),
        ("ndhwc_dhwc", 3, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_3d_ndhwc_dhwc"),
        ("ncdhw_cdhw", 3, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_3d_ncdhw_cdhw"),
        ("ndhwc_dhwcm", 3, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_3d_ndhwc_dhwcm"),
        ("ncdhw_cmdhw", 3, "depthwise_m", "ncS", "cmS", "ncmS", None),
    ]
    return {row[0]: Layout(*row) for row in table}


LAYOUTS = _layouts()
# The layouts whose named op has a quantized twin taking scalar zero points (`ins(x, w, x_zp, w_zp)`;
# linalg 3.13 has these seven, and no 1-D, NCW, NCHW depthwise or NCDHW one).
QUANTIZED_OPS = {lay: f"{LAYOUTS[lay].named_op}_q" for lay in (
    "nhwc_hwcf", "nhwc_fhwc", "nchw_fchw", "ngchw_gfchw", "nhwc_hwc", "nhwc_hwcm", "ndhwc_dhwcf")}
I8_MAX = (1 << 7) - 1
I8_MIN = -I8_MAX - 1
# The qdq form's dequantize scales (input, filter: powers of two) and the largest reduction whose
# f32 partial sums are all exact: |(x - x_zp)(w - w_zp)| <= 255 * 255, summed below 2^24.
QDQ_SCALES = (0.5, 0.25)
QDQ_MAX_REDUCTION = (1 << 24) // (((1 << 8) - 1) ** 2)
Kind = Literal["regular", "grouped", "depthwise", "depthwise_m"]
KINDS: tuple[Kind, ...] = get_args(Kind)
DTYPES = {"f32": ("f32",), "f16": ("f32", "f16"), "i32": ("i32",), "i8": ("i32",)}
Dtype = Literal["f32", "f16", "i32", "i8"]  # the keys of DTYPES
Acc = Literal["f32", "f16", "i32"]  # the accumulator types DTYPES allows
Form = Literal["named", "generic"]
PadForm = Literal["none", "pad", "insert"]
Bias = Literal["none", "epilogue", "init"]
Epilogue = Literal["none", "relu"]


def _expand(spec: str, rank: int, spatial_prefix: str) -> list[str]:
    labels: list[str] = []
    for ch in spec:
        if ch == "S":
            labels.extend(f"{spatial_prefix}{i}" for i in range(rank))
        else:
            labels.append(ch)
    return labels


def input_labels(layout: Layout) -> list[str]:
    return _expand(layout.input, layout.rank, "s")


def filter_labels(layout: Layout) -> list[str]:
    return _expand(layout.filter, layout.rank, "k")


def output_labels(layout: Layout) -> list[str]:
    return _expand(layout.output, layout.rank, "o")


def layouts_for(rank: int, kind: str) -> list[Layout]:
    return [lay for lay in LAYOUTS.values() if lay.rank == rank and lay.kind == kind]




@dataclass(frozen=True)
class Params(FamilyParams):
    rank: int
    kind: Kind
    layout: str  # the layout at the function boundary (LAYOUTS; an unknown one is refused when rendered)
    compute_layout: str  # the layout the convolution runs in (transposes between)
    form: Form
    loop_perm: tuple[int, ...]  # the generic's loop order (empty for named)
    dtype: Dtype
    acc: Acc
    n: int
    g: int
    c: int
    f: int
    m: int
    spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_lo: tuple[int, ...]
    pad_hi: tuple[int, ...]
    pad_form: PadForm
    pad_value: float | int
    input_dyn: tuple[bool, ...]  # in the boundary layout's input dim order
    filter_dyn: tuple[bool, ...]  # in the boundary layout's filter dim order
    bias: Bias
    epilogue: Epilogue
    big: bool
    # Free operand dim orders: the function's input / filter / output dims are these
    # permutations of the layout's (empty: the layout's own order). With `perm_compute` the
    # linalg.generic itself takes them in that order (no transposes; compute_layout == layout).
    input_perm: tuple[int, ...] = ()
    filter_perm: tuple[int, ...] = ()
    output_perm: tuple[int, ...] = ()
    perm_compute: bool = False
    # Result types not derived mechanically: the declared dynamic flag of each output dim (in the
    # boundary output order), overriding what the operands imply (empty: derived). A dim may be
    # static although the operands give it as `?`, or `?` although they fix it.
    result_dyn: tuple[bool, ...] = ()
    # Quantized i8 cases: zero points subtracted from the (padded) input and the filter, as the
    # `_q` named ops and ONNX ConvInteger do; with `qdq` both go through IREE's affine dequantize
    # into an f32 convolution whose result is scaled back to i32 (3.13's QDQ rewrite matches it).
    input_zp: int = 0
    filter_zp: int = 0
    qdq: bool = False

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        # Old headers: `in_dyn` / `filt_dyn` as {dim label: dynamic} dicts.
        lay = LAYOUTS.get(data.get("layout", ""))
        for old, new, labels, perm in (("in_dyn", "input_dyn", input_labels, "input_perm"),
                                       ("filt_dyn", "filter_dyn", filter_labels, "filter_perm")):
            if old in data and new not in data and lay is not None:
                flags = data.pop(old)
                data[new] = [bool(flags[lab]) for lab in permuted(labels(lay), tuple(data.get(perm, ())))]
        return data

    @property
    def in_dyn(self) -> dict[str, bool]:
        return dict(zip(boundary_labels(self)[0], self.input_dyn))

    @property
    def filt_dyn(self) -> dict[str, bool]:
        return dict(zip(boundary_labels(self)[1], self.filter_dyn))


def permuted(labels: list[str], perm: tuple[int, ...]) -> list[str]:
    return [labels[i] for i in perm] if perm else list(labels)


def boundary_labels(p: Params) -> tuple[list[str], list[str], list[str]]:
    """The (input, filter, output) dim labels of the function's arguments and result."""
    io = LAYOUTS[p.layout]
    return (permuted(input_labels(io), p.input_perm), permuted(filter_labels(io), p.filter_perm),
            permuted(output_labels(io), p.output_perm))
