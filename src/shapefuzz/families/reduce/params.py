"""The reduce family's parameters and shapes: sum / max / min over one or several dims, arg-max /
arg-min over one dim (the value and its index, or the index alone), keepdims, f16 inputs summed in
f32 (mixed precision), any dim dynamic."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.families.base import FamilyParams

KINDS = ("sum", "max", "min", "argmax", "argmin")
ARG_KINDS = ("argmax", "argmin")
DTYPES = ("f32", "f16", "i32")
FORMS = ("generic", "reduce", "chain")  # one linalg.generic | linalg.reduce | one linalg.reduce per dim
INDEX_DTYPES = ("i32", "i64")


@dataclass(frozen=True)
class Params(FamilyParams):
    kind: str
    dtype: str
    shape: tuple[int, ...]
    in_dyn: tuple[bool, ...]
    dims: tuple[int, ...]  # reduced dims, ascending (exactly one for arg kinds)
    keepdims: bool
    acc: str = ""  # "" (the input type) | "f32": f16 inputs accumulated (and returned) in f32
    form: str = "generic"
    use: str = "both"  # arg kinds: "both" (value and index) | "indices"
    index_dtype: str = "i32"
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
