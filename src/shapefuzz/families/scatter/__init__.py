"""The scatter family: `iree_linalg_ext.scatter` and equivalent formulations.

Semantics (IREE's op definition): `original` has rank R; its leading `depth` dims are addressed by
the indices, the trailing R-depth dims form the window. `indices` is [batch..., depth] (or just
[batch...] when depth is 1: the "implicit depth" form); `updates` is [batch..., window...]. For each
batch position b, column j of indices[b] addresses original dim dimension_map[j] (a permutation of
the leading dims), and the whole window is combined element-wise:
    out[coord(b), w] = combine(updates[b, w], out[coord(b), w])
Combiners: overwrite (the update), add, sub (original - update: checks the block-argument order),
max, min, mul. Indices are never negative nor out of range (undefined in the op). Duplicate
coordinates appear only with `unique_indices(false)` and an order-independent combiner (all but
overwrite; float inputs are small multiples of 1/4 or powers of two so every order is exact).

Forms (the metamorphic oracle compares them):
- "linalg_ext": the scatter op itself.
- "reshape": batch dims collapsed to one (or a unit batch dim added), window dims collapsed to one
  (or a unit window dim added) with tensor.collapse_shape / expand_shape around the scatter, and the
  result reshaped back (class 2's collapse-into-store folding).
- "generic": a linalg.generic over (output dims, batch dims as reduction) that reads each index with
  tensor.extract and selects combine(update, acc) where the index matches."""

from __future__ import annotations

from shapefuzz.families.base import Family
from shapefuzz.families.scatter.params import (
    COMBINERS, DTYPES, FORMS, INDEX_DTYPES, MAX_BATCH, MAX_BATCH_LARGE, MAX_ORIGINAL_ELEMENTS,
    MAX_ORIGINAL_ELEMENTS_LARGE, Params, REGIME_LARGE_SIZES, is_valid, n_batch, n_coords, result_shapes,
    shape_table)
from shapefuzz.families.scatter.operands import operand_forms
from shapefuzz.families.scatter.reference import compare, export_rule, make_inputs, reference
from shapefuzz.families.scatter.render import render
from shapefuzz.families.scatter.strategy import FEATURES, SWARM, equivalent_forms, features, shrink_candidates, strategy


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "index:i32")


def largest_operand(p: Params) -> list[int]:
    return list(p.orig_shape)


# One small case of each root-operand form (its release gate's example; tests compile each).
_SMALL = {"form": "linalg_ext", "dtype": "f32", "index_dtype": "i32", "orig_shape": [6, 3], "orig_dyn": [False, True],
          "depth": 1, "dimension_map": [0], "batch_shape": [4], "batch_dyn": [True], "window_dyn": [False],
          "implicit_depth": False, "combiner": "add", "unique": False, "duplicates": True}
OPERAND_EXAMPLES = {
    "const": {**_SMALL, "operand": "const"},
    "folded": {**_SMALL, "orig_shape": [3, 4, 2], "orig_dyn": [False, True, False], "depth": 2,
               "dimension_map": [1, 0], "batch_shape": [5], "batch_dyn": [False], "window_dyn": [True],
               "combiner": "sub", "form": "reshape", "operand": "folded"},
    # (a depth-1 scatter without batch dims: 3.13 runs out of memory in FoldUnitExtentDims on any;
    # a generic form's is computed right)
    "scalar": {**_SMALL, "dtype": "i32", "index_dtype": "i64", "batch_shape": [], "batch_dyn": [],
               "combiner": "max", "unique": True, "duplicates": False, "form": "generic", "operand": "scalar"},
}
EXAMPLE = {"form": "linalg_ext", "dtype": "f16", "index_dtype": "i64", "orig_shape": [17, 3], "orig_dyn": [True, False],
           "depth": 1, "dimension_map": [0], "batch_shape": [2], "batch_dyn": [False], "window_dyn": [True],
           "implicit_depth": True, "combiner": "min", "unique": False, "duplicates": True}
FEATURE_DRAWS = 400  # "size:large" (a dim past 17) is rare: 0 to 4 in 300 derandomized draws, by how the spellings branch
FAMILY = Family.define("scatter", Params, globals())

__all__ = ['COMBINERS', 'DTYPES', 'FAMILY', 'FEATURES', 'FORMS', 'INDEX_DTYPES', 'MAX_BATCH', 'MAX_BATCH_LARGE', 'MAX_ORIGINAL_ELEMENTS', 'MAX_ORIGINAL_ELEMENTS_LARGE', 'Params', 'REGIME_LARGE_SIZES', 'SWARM', 'compare', 'equivalent_forms', 'export_rule', 'features', 'is_valid', 'make_inputs', 'n_batch', 'n_coords', 'reference', 'render', 'result_shapes', 'shape_table', 'shrink_candidates', 'strategy', 'operand_forms', 'OPERAND_EXAMPLES']
