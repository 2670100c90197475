"""The scatter family's typed params, sizes and validity."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from shapefuzz.families.base import FamilyParams


Form = Literal["linalg_ext", "reshape", "generic"]
FORMS: tuple[Form, ...] = get_args(Form)
Dtype = Literal["f32", "f16", "i32", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
IndexDtype = Literal["i32", "i64"]
INDEX_DTYPES: tuple[IndexDtype, ...] = get_args(IndexDtype)
Combiner = Literal["overwrite", "add", "sub", "max", "min", "mul"]
COMBINERS: tuple[Combiner, ...] = get_args(Combiner)
MAX_ORIGINAL_ELEMENTS = 1 << 14
MAX_BATCH = 64
REGIME_LARGE_SIZES = (64, 65, 127, 128, 129, 255, 256, 257, 1024)
MAX_ORIGINAL_ELEMENTS_LARGE = 1 << 20
MAX_BATCH_LARGE = 4096


@dataclass(frozen=True)
class Params(FamilyParams):
    form: Form
    dtype: Dtype
    index_dtype: IndexDtype
    orig_shape: tuple[int, ...]
    orig_dyn: tuple[bool, ...]
    depth: int  # leading dims of `original` addressed by the indices
    dimension_map: tuple[int, ...]
    batch_shape: tuple[int, ...]
    batch_dyn: tuple[bool, ...]
    window_dyn: tuple[bool, ...]  # the updates' window dims
    implicit_depth: bool
    combiner: Combiner
    unique: bool  # the op's unique_indices attribute
    duplicates: bool  # whether the inputs repeat a coordinate


# ----------------------------------------------------------------------------- validity


def n_batch(p: Params) -> int:
    return int(np.prod(p.batch_shape, dtype=np.int64)) if p.batch_shape else 1


def n_coords(p: Params) -> int:
    return int(np.prod(p.orig_shape[: p.depth], dtype=np.int64))


def is_valid(p: Params) -> bool:
    r, d, k = len(p.orig_shape), p.depth, len(p.batch_shape)
    if not (1 <= d <= r and 0 <= k <= 2):
        return False
    if len(p.orig_dyn) != r or len(p.batch_dyn) != k or len(p.window_dyn) != r - d:
        return False
    if sorted(p.dimension_map) != list(range(d)):
        return False
    if p.implicit_depth and (d != 1 or k == 0):
        return False
    if min(p.orig_shape + p.batch_shape, default=1) < 1:
        return False
    if p.duplicates and (p.unique or p.combiner == "overwrite" or n_batch(p) < 2):
        return False
    # Unique coordinates must exist for every batch position (overwrite never takes duplicates).
    if not p.duplicates and n_batch(p) > n_coords(p):
        return False
    return p.form in FORMS and p.dtype in DTYPES and p.index_dtype in INDEX_DTYPES and p.combiner in COMBINERS


# ----------------------------------------------------------------------------- shapes


def shape_table(p: Params) -> dict[str, list[tuple[int, bool]]]:
    r, d = len(p.orig_shape), p.depth
    orig = list(zip(p.orig_shape, p.orig_dyn))
    batch = list(zip(p.batch_shape, p.batch_dyn))
    window = list(zip(p.orig_shape[d:], p.window_dyn))
    idx = batch if p.implicit_depth else batch + [(d, False)]
    assert len(window) == r - d
    return {"original": orig, "indices": idx, "updates": batch + window}


def result_shapes(p: Params) -> list[list[int]]:
    return [list(p.orig_shape)]
