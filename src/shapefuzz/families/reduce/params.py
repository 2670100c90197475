"""The reduce family's parameters and shapes: sum / max / min over one or several dims, arg-max /
arg-min over one dim (the value and its index, or the index alone), keepdims, f16 inputs summed in
f32 (mixed precision), any dim dynamic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Kind = Literal["sum", "max", "min", "argmax", "argmin"]
KINDS: tuple[Kind, ...] = get_args(Kind)
ARG_KINDS = ("argmax", "argmin")
Dtype = Literal["f32", "f16", "i32"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Form = Literal["generic", "reduce", "chain"]  # one linalg.generic | linalg.reduce | one linalg.reduce per dim
FORMS: tuple[Form, ...] = get_args(Form)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)
Acc = Literal["", "f32"]  # "": the input type
Use = Literal["both", "indices"]  # arg kinds: value and index, or the index alone


@dataclass(frozen=True)
class Params(FamilyParams):
    kind: Kind
    dtype: Dtype
    shape: tuple[int, ...]
    in_dyn: tuple[bool, ...]
    dims: tuple[int, ...]  # reduced dims, ascending (exactly one for arg kinds)
    keepdims: bool
    acc: Acc = ""  # "" (the input type) | "f32": f16 inputs accumulated (and returned) in f32
    form: Form = "generic"
    use: Use = "both"  # arg kinds: "both" (value and index) | "indices"
    index_dtype: IndexDtype = "i32"
    big: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def out_elt(self) -> str:
        return self.acc or self.dtype


def kept(p: Params) -> list[int]:
    return [i for i in range(p.rank) if i not in p.dims]


def reduced_shape(p: Params) -> list[int]:
    return [p.shape[i] for i in kept(p)]


def out_shape(p: Params) -> list[int]:
    return [1 if i in p.dims else s for i, s in enumerate(p.shape)] if p.keepdims else reduced_shape(p)


def out_dyn(p: Params) -> list[bool]:
    return [False if i in p.dims else d for i, d in enumerate(p.in_dyn)] if p.keepdims else [p.in_dyn[i] for i in kept(p)]


def count(p: Params) -> int:
    n = 1
    for d in p.dims:
        n *= p.shape[d]
    return n
