"""The topk family: the k largest (or smallest) entries along one dimension, with their indices.

Formulations of the same computation (the metamorphic oracle compares them):
  - form "topk": `iree_linalg_ext.topk`, which merges into outs pre-filled with -inf/INT_MIN
    (+inf/INT_MAX for smallest) and index 0;
  - form "sort": `iree_linalg_ext.sort` over the values (and an index payload), then a
    `tensor.extract_slice` of the first k along the dim;
  - `transpose`: the input is transposed so the sorted dim comes last, the op runs along the
    last dim, and the results are transposed back (what frontends do for dim != -1).
Input indices ("indices"): "implicit" (topk without an indices operand; sort of the values
alone, or with an iota payload when indices are returned), "iota" (an explicit i32 iota built in
the IR and passed as the indices operand / sort payload), "arg" (a function argument holding
arbitrary distinct i32 labels; the op returns the labels of the chosen positions).
Results ("use"): "values", "indices" or "both" returned — bug class 5 (one result unused).

Ties are never judged by index equality: values must equal the reference's sorted top-k exactly;
indices must be distinct, valid, and select (through the input) exactly the expected values."""

from __future__ import annotations

from shapefuzz.families.base import Family
from shapefuzz.families.topk.params import (
    DTYPES, FORMS, INDEX_DTYPES, INDEX_MODES, Params, USES, derived_output_dynamic, is_valid, output_shape)
from shapefuzz.families.topk.reference import compare, export_rule, make_inputs, reference, topk_values
from shapefuzz.families.topk.render import render
from shapefuzz.families.topk.strategy import FEATURES, SWARM, equivalent_forms, features, shrink_candidates, strategy


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "index:i32")


def largest_operand(p: Params) -> list[int]:
    return list(p.shape)


EXAMPLE = {"form": "topk", "indices": "arg", "use": "both", "dtype": "f32", "shape": [7, 16], "dynamic": [True, False],
           "dim": 1, "k": 3, "largest": False, "transpose": False, "values": "ties"}
FAMILY = Family.define("topk", Params, globals())

__all__ = ['DTYPES', 'FAMILY', 'FEATURES', 'FORMS', 'INDEX_DTYPES', 'INDEX_MODES', 'Params', 'SWARM', 'USES', 'compare', 'derived_output_dynamic', 'equivalent_forms', 'export_rule', 'features', 'is_valid', 'make_inputs', 'output_shape', 'reference', 'render', 'shrink_candidates', 'strategy', 'topk_values']
