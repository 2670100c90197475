"""The gather family's parameters and shapes.

out[b..., w...] = source[i_0, ..., i_{depth-1}, w...], where i_q = indices[b..., j] for the column j
with dimension_map[j] = q (`iree_linalg_ext.gather`'s definition): the index columns address the
source's leading `depth` dims in the order the map gives, the rest of the source is the window.
Indices are always in range (the op leaves out-of-range reads undefined)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Form = Literal["linalg_ext", "extract"]  # iree_linalg_ext.gather | linalg.generic with tensor.extract
FORMS: tuple[Form, ...] = get_args(Form)
IndexLayout = Literal["plain", "transposed", "strided"]
INDEX_LAYOUTS: tuple[IndexLayout, ...] = get_args(IndexLayout)
Dtype = Literal["f32", "f16", "i32", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: Dtype
    src_shape: tuple[int, ...]
    src_dyn: tuple[bool, ...]
    depth: int
    dimension_map: tuple[int, ...]
    batch_shape: tuple[int, ...]
    batch_dyn: tuple[bool, ...]
    implicit_depth: bool  # depth 1 only: indices [B...] without the trailing column dim
    index_dtype: IndexDtype
    # How the indices argument is laid out: "plain" [B..., depth]; "transposed" [depth, B...]
    # (moved last by a linalg.transpose); "strided" (the first batch dim holds 2B-1 rows, every
    # other one used, through a stride-2 tensor.extract_slice).
    index_layout: IndexLayout = "plain"
    form: Form = "linalg_ext"
    big: bool = False


def window_shape(p: Params) -> list[int]:
    return list(p.src_shape[p.depth:])


def out_shape(p: Params) -> list[int]:
    return list(p.batch_shape) + window_shape(p)


def out_dyn(p: Params) -> list[bool]:
    return list(p.batch_dyn) + list(p.src_dyn[p.depth:])


def used_index_shape(p: Params) -> list[int]:
    """The indices the op reads: [B..., depth] ([B...] with an implicit depth)."""
    return list(p.batch_shape) + ([] if p.implicit_depth else [p.depth])


def arg_index_shape(p: Params) -> list[int]:
    """The indices argument as the function takes it."""
    used = used_index_shape(p)
    if p.index_layout == "transposed":
        return [used[-1]] + used[:-1]
    if p.index_layout == "strided":
        return [2 * used[0] - 1] + used[1:]
    return used


def arg_index_dyn(p: Params) -> list[bool]:
    dyn = list(p.batch_dyn) + ([] if p.implicit_depth else [False])
    return [dyn[-1]] + dyn[:-1] if p.index_layout == "transposed" else dyn
