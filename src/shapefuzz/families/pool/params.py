"""The pool family's parameters and the shape rules PyTorch and ONNX define for pooling.

Output size along a spatial dim (PyTorch `pooling_output_shape`, ONNX MaxPool/AveragePool):
    eff = dilation * (kernel - 1) + 1
    floor mode: (in + pad_lo + pad_hi - eff) // stride + 1
    ceil mode:  ceil((in + pad_lo + pad_hi - eff) / stride) + 1, minus one when that last
                window would start inside the right padding ((out - 1) * stride >= in + pad_lo).
Average divisor of a window (PyTorch avg_pool, ONNX AveragePool):
    count_include_pad: the window's elements inside [-pad_lo, in + pad_hi) (the padding counts,
                       the part of a ceil-mode window beyond the right padding does not);
    otherwise:         the window's elements inside [0, in).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Kind = Literal["max", "avg", "sum"]
KINDS: tuple[Kind, ...] = get_args(Kind)
Layout = Literal["nc", "nl"]  # channels-first [N, C, S...], channels-last [N, S..., C]
LAYOUTS: tuple[Layout, ...] = get_args(Layout)
ComputeLayout = Literal["", "nc", "nl"]  # "": the layout itself
Form = Literal["named", "generic"]
FORMS: tuple[Form, ...] = get_args(Form)
Divisor = Literal["index", "ones"]
DIVISORS: tuple[Divisor, ...] = get_args(Divisor)
Dtype = Literal["f32", "f16", "i32"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
FLOATS = ("f32", "f16")
# linalg's named pooling ops in IREE 3.13 (checked with iree-opt): no channels-first 3-D one.
NAMED = {("nc", 1): "ncw", ("nc", 2): "nchw", ("nl", 1): "nwc", ("nl", 2): "nhwc", ("nl", 3): "ndhwc"}


@dataclass(frozen=True)
class Params(FamilyParams):
    kind: Kind
    layout: Layout  # the function's input and result layout
    dtype: Dtype
    n: int
    c: int
    spatial: tuple[int, ...]  # input spatial sizes (rank 1..3)
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_lo: tuple[int, ...]
    pad_hi: tuple[int, ...]
    ceil_mode: bool
    count_include_pad: bool  # avg only (False otherwise)
    in_dyn: tuple[bool, ...]  # per input dim, in the layout's order
    form: Form = "named"
    compute_layout: ComputeLayout = ""  # the layout the pool runs in ("" = layout); another one adds transposes
    # How an average's divisor is computed: "index" (window counts from linalg.index arithmetic) or
    # "ones" (a sum-pool of padded ones, a constant expression IREE evaluates at compile time).
    divisor: Divisor = "index"
    big: bool = False  # drawn for compile-only lanes

    @property
    def rank(self) -> int:
        return len(self.spatial)

    @property
    def work_layout(self) -> str:
        return self.compute_layout or self.layout


def eff_kernel(p: Params, i: int) -> int:
    return p.dilations[i] * (p.kernel[i] - 1) + 1


def out_size(size: int, k: int, s: int, d: int, lo: int, hi: int, ceil_mode: bool) -> int:
    """One spatial output size, as PyTorch and ONNX define it (may be <= 0: not a valid case)."""
    num = size + lo + hi - (d * (k - 1) + 1)
    if num < 0:
        return 0
    if not ceil_mode:
        return num // s + 1
    out = -(-num // s) + 1
    if (out - 1) * s >= size + lo:  # the last window would start inside the right padding
        out -= 1
    return out


def drops_last_window(p: Params, i: int) -> bool:
    """Whether ceil mode's last window along spatial dim `i` would start inside the right padding
    (the window `out_size` leaves out)."""
    if not p.ceil_mode:
        return False
    num = p.spatial[i] + p.pad_lo[i] + p.pad_hi[i] - eff_kernel(p, i)
    return num >= 0 and -(-num // p.strides[i]) * p.strides[i] >= p.spatial[i] + p.pad_lo[i]


def out_spatial(p: Params) -> list[int]:
    return [out_size(p.spatial[i], p.kernel[i], p.strides[i], p.dilations[i], p.pad_lo[i], p.pad_hi[i], p.ceil_mode)
            for i in range(p.rank)]


def ceil_extra(p: Params, i: int) -> int:
    """Right padding beyond pad_hi a ceil-mode window may read: at most stride - 1 for any input size."""
    return p.strides[i] - 1 if p.ceil_mode else 0


def perm_to(layout: str, rank: int, target: str) -> list[int]:
    """Permutation taking `layout` dims to `target` (out dim j = in dim perm[j])."""
    if layout == target:
        return list(range(rank + 2))
    return [0] + list(range(2, rank + 2)) + [1] if target == "nl" else [0, rank + 1] + list(range(1, rank + 1))


def input_shape(p: Params, layout: str | None = None) -> list[int]:
    lay = layout or p.layout
    return [p.n, p.c, *p.spatial] if lay == "nc" else [p.n, *p.spatial, p.c]


def output_shape(p: Params, layout: str | None = None) -> list[int]:
    lay = layout or p.layout
    out = out_spatial(p)
    return [p.n, p.c, *out] if lay == "nc" else [p.n, *out, p.c]


def windows_cover_input(p: Params) -> bool:
    """Every window of every spatial dim holds at least one input element (else max over
    nothing and a zero divisor: frontends reject such pools)."""
    for i in range(p.rank):
        size, k, s, d, lo = p.spatial[i], p.kernel[i], p.strides[i], p.dilations[i], p.pad_lo[i]
        for o in range(out_spatial(p)[i]):
            start = o * s - lo
            if not any(0 <= start + j * d < size for j in range(k)):
                return False
    return True
