"""The one_hot family's typed params, sizes and validity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.common import tensor_type


Form = Literal["generic", "scatter"]
FORMS: tuple[Form, ...] = get_args(Form)
Dtype = Literal["f32", "f16", "i32", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)
Consumer = Literal["none", "reduce", "both"]
CONSUMERS: tuple[Consumer, ...] = get_args(Consumer)
Range = Literal["valid", "wrap", "oob"]
RANGES: tuple[Range, ...] = get_args(Range)
OnOff = Literal["const", "input"]  # on/off as constants or 0-d arguments
MAX_OUTPUT_ELEMENTS = 1 << 14
REGIME_LARGE_SIZES = (64, 65, 127, 128, 129, 255, 256, 257, 1024)
MAX_OUTPUT_ELEMENTS_LARGE = 1 << 20
FLOAT_ON = (1.0, 2.0, 0.5, -1.0, 0.25)
FLOAT_OFF = (0.0, 0.0, -1.0, 0.25)
INT_ON = (1, 2, -1, 5)
INT_OFF = (0, 0, -1, 3)


@dataclass(frozen=True)
class Params(FamilyParams):
    form: Form
    dtype: Dtype
    index_dtype: IndexDtype
    index_shape: tuple[int, ...]
    index_dyn: tuple[bool, ...]
    depth: int
    depth_dyn: bool
    axis: int  # where the class axis goes in the output; -1 = last
    values: OnOff  # "const" | "input": on/off as constants or 0-d arguments
    on: float | int
    off: float | int
    consumer: Consumer
    range: Range  # which index values the inputs hold
    dimension_map: tuple[int, ...]


def out_axis(p: Params) -> int:
    rank = len(p.index_shape)
    return rank if p.axis == -1 else p.axis


def out_shape(p: Params) -> list[int]:
    shape = list(p.index_shape)
    shape.insert(out_axis(p), p.depth)
    return shape


def is_valid(p: Params) -> bool:
    r = len(p.index_shape)
    if not 0 <= r <= 3 or len(p.index_dyn) != r or not (p.axis == -1 or 0 <= p.axis <= r):
        return False
    if sorted(p.dimension_map) != list(range(r + 1)) or p.depth < 1 or min(p.index_shape, default=1) < 1:
        return False
    if p.dtype == "f16" and p.consumer != "none" and p.depth > 64:
        return False  # keeps every f16 partial sum exact
    return (p.form in FORMS and p.dtype in DTYPES and p.index_dtype in INDEX_DTYPES
            and p.consumer in CONSUMERS and p.range in RANGES and p.on != p.off)


def arguments(p: Params) -> list[tuple[str, str]]:
    elt, ielt = p.dtype, p.index_dtype
    out_flags = list(p.index_dyn)
    out_flags.insert(out_axis(p), p.depth_dyn)
    args = [("%indices", tensor_type(list(zip(p.index_shape, p.index_dyn)), ielt))]
    if p.depth_dyn:
        args.append(("%depth_t", f"tensor<{ielt}>"))
    if p.values == "input":
        args += [("%on_t", f"tensor<{elt}>"), ("%off_t", f"tensor<{elt}>")]
    if p.consumer != "none":
        args.append(("%weights", tensor_type(list(zip(out_shape(p), out_flags)), elt)))
    return args


def result_shapes(p: Params) -> list[list[int]]:
    shapes = []
    if p.consumer in ("none", "both"):
        shapes.append(out_shape(p))
    if p.consumer in ("reduce", "both"):
        shapes.append(list(p.index_shape))
    return shapes
