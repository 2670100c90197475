"""The sort family's parameters: a full sort along one dim, of the values alone or with an index
payload (an iota, or labels the caller passes), ascending or descending, stable where the
comparator promises it (ties broken by the iota payload)."""

from __future__ import annotations

from dataclasses import dataclass

from shapefuzz.families.base import FamilyParams

FORMS = ("sort", "topk")  # iree_linalg_ext.sort, or iree_linalg_ext.topk with k = n
PAYLOADS = ("none", "iota", "arg")
USES = ("values", "indices", "both")
DTYPES = ("f32", "f16", "i32", "i8")
INDEX_DTYPES = ("i32", "i64")
VALUES = ("wide", "ties")


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: str
    shape: tuple[int, ...]
    in_dyn: tuple[bool, ...]
    dim: int
    descending: bool
    payload: str  # PAYLOADS: what is sorted along with the values
    use: str  # USES: which results are returned ("indices" needs a payload)
    stable: bool  # the comparator breaks ties by the iota payload: one right answer
    values: str = "wide"  # VALUES: how the inputs are drawn
    index_dtype: str = "i32"
    form: str = "sort"
    transpose: bool = False  # sort along the last dim of a transposed input
    big: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)
