"""The topk family's typed params, output shapes and types, and validity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams


Form = Literal["topk", "sort"]
FORMS: tuple[Form, ...] = get_args(Form)
IndexMode = Literal["implicit", "iota", "arg"]
INDEX_MODES: tuple[IndexMode, ...] = get_args(IndexMode)
Use = Literal["values", "indices", "both"]
USES: tuple[Use, ...] = get_args(Use)
Dtype = Literal["f32", "f16", "i32", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)
ValueDraw = Literal["wide", "ties"]  # how the inputs are drawn


@dataclass(frozen=True)
class Params(FamilyParams):
    RENAMED = {"dynamic": "input_dyn"}

    form: Form
    indices: IndexMode
    use: Use  # which results are returned
    dtype: Dtype
    shape: tuple[int, ...]
    input_dyn: tuple[bool, ...]
    dim: int
    k: int
    largest: bool
    transpose: bool  # run along the last dim of a transposed input
    values: ValueDraw  # "wide" | "ties": how the inputs are drawn
    index_dtype: IndexDtype = "i32"  # of the indices operand and result (torch and ONNX emit i64)
    # Result types not derived mechanically: the declared dynamic flag of each result dim (the
    # sorted dim stays static), overriding the input's (empty: derived).
    result_dyn: tuple[bool, ...] = ()


def output_shape(params: Params) -> list[int]:
    shape = list(params.shape)
    shape[params.dim] = params.k
    return shape


def derived_output_dynamic(params: Params) -> list[bool]:
    dyn = list(params.input_dyn)
    dyn[params.dim] = False  # k is static
    return dyn


# ----------------------------------------------------------------------------- strategy


def is_valid(params: Params) -> bool:
    rank = len(params.shape)
    return (
        1 <= rank <= 3
        and len(params.input_dyn) == rank
        and 0 <= params.dim < rank
        and min(params.shape) >= 1
        and 1 <= params.k <= params.shape[params.dim]
        and not (params.transpose and params.dim == rank - 1)
        and params.form in FORMS
        and params.indices in INDEX_MODES
        and params.use in USES
        and params.dtype in DTYPES
        and params.values in ("wide", "ties")
        and params.index_dtype in INDEX_DTYPES
        and (not params.result_dyn or (len(params.result_dyn) == rank and not params.result_dyn[params.dim]))
    )
