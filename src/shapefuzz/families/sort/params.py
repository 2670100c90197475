"""The sort family's parameters: a full sort along one dim, of the values alone or with an index
payload (an iota, or labels the caller passes), ascending or descending, stable where the
comparator promises it (ties broken by the iota payload)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Form = Literal["sort", "topk"]  # iree_linalg_ext.sort, or iree_linalg_ext.topk with k = n
FORMS: tuple[Form, ...] = get_args(Form)
Payload = Literal["none", "iota", "arg"]
PAYLOADS: tuple[Payload, ...] = get_args(Payload)
Use = Literal["values", "indices", "both"]
USES: tuple[Use, ...] = get_args(Use)
Dtype = Literal["f32", "f16", "i32", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)
ValueDraw = Literal["wide", "ties"]
VALUES: tuple[ValueDraw, ...] = get_args(ValueDraw)


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: Dtype
    shape: tuple[int, ...]
    in_dyn: tuple[bool, ...]
    dim: int
    descending: bool
    payload: Payload  # what is sorted along with the values
    use: Use  # which results are returned ("indices" needs a payload)
    stable: bool  # the comparator breaks ties by the iota payload: one right answer
    values: ValueDraw = "wide"  # how the inputs are drawn
    index_dtype: IndexDtype = "i32"
    form: Form = "sort"
    transpose: bool = False  # sort along the last dim of a transposed input
    big: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)
