"""The one_hot family: an index tensor of rank 0..3 expanded along a class axis of size `depth`.

Semantics (ONNX OneHot, the one frontends lower to): the output has rank r+1, the class axis at
`axis` (-1 = last). out[..., c, ...] = on if norm(idx[...]) == c else off, where a negative index
wraps once (norm(i) = i + depth for i < 0) and an index still outside [0, depth) after wrapping
selects no class: its row is all `off` (ONNX: "values outside [-depth, depth-1] give all off").
The IR and the NumPy reference both implement exactly this.

Depth is static or dynamic (a 0-d index-typed input, as ONNX passes it); on/off values are constants
or 0-d inputs. Optional consumer, as a mixture-of-experts router uses it: multiply by a weight tensor
of the one-hot's shape and sum over the class axis ("reduce": only the sum is returned, "both": the
one-hot and the sum). Forms (the metamorphic oracle compares them):
- "generic": a linalg.generic comparing linalg.index(axis) with the normalized index (cmpi + select).
- "scatter": fill with off, iree_linalg_ext.scatter the on value at (position..., class) with a
  permuted dimension_map; indices that hit no class go to a dump slot at class `depth`, sliced away."""

from __future__ import annotations

from shapefuzz.families.base import Family
from shapefuzz.families.one_hot.params import (
    CONSUMERS, DTYPES, FLOAT_OFF, FLOAT_ON, FORMS, INDEX_DTYPES, INT_OFF, INT_ON, MAX_OUTPUT_ELEMENTS,
    MAX_OUTPUT_ELEMENTS_LARGE, Params, RANGES, REGIME_LARGE_SIZES, arguments, is_valid, out_axis, out_shape,
    result_shapes)
from shapefuzz.families.one_hot.reference import compare, export_rule, make_inputs, reference
from shapefuzz.families.one_hot.render import render
from shapefuzz.families.one_hot.strategy import FEATURES, SWARM, equivalent_forms, features, shrink_candidates, strategy

# Hypothesis's search in the contract test reaches size:large (1 draw in 16 asks for large sizes) once
# in 800 since the operand forms and StableHLO share the draws; a campaign's seeded draws, 5 in 300
FEATURE_DRAWS = 800


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "range:valid")


def largest_operand(p: Params) -> list[int]:
    return [*p.index_shape, p.depth]


EXAMPLE = {"form": "generic", "dtype": "i32", "index_dtype": "i64", "index_shape": [3, 1], "index_dyn": [True, False],
           "depth": 16, "depth_dyn": True, "axis": 1, "values": "input", "on": 2, "off": 0, "consumer": "both",
           "range": "wrap", "dimension_map": [0, 1, 2]}
def context_fixed_operands(p: Params) -> tuple[int, ...]:
    """The 0-d on/off arguments carry the params' own values, which the reference reads from the
    params: no producer on them (one whose inverse cannot give the value exactly, a dequantize of
    0.25, would make the reference disagree with the module it judges)."""
    if p.values != "input":
        return ()
    first = 2 if p.depth_dyn else 1  # after the indices and the 0-d depth
    return (first, first + 1)


FAMILY = Family.define("one_hot", Params, globals())

__all__ = ['CONSUMERS', 'DTYPES', 'FAMILY', 'FEATURES', 'FLOAT_OFF', 'FLOAT_ON', 'FORMS', 'INDEX_DTYPES', 'INT_OFF', 'INT_ON', 'MAX_OUTPUT_ELEMENTS', 'MAX_OUTPUT_ELEMENTS_LARGE', 'Params', 'RANGES', 'REGIME_LARGE_SIZES', 'SWARM', 'arguments', 'compare', 'equivalent_forms', 'export_rule', 'features', 'is_valid', 'make_inputs', 'out_axis', 'out_shape', 'reference', 'render', 'result_shapes', 'shrink_candidates', 'strategy']
