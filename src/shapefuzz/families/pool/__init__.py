"""The pool family: max, average and sum pooling over 1-3 spatial dims, channels-first or -last,
with kernel, stride, dilation, symmetric or asymmetric padding, ceil mode and (average)
count_include_pad, any input dim dynamic. Output sizes and average divisors are PyTorch's and
ONNX's (params.py). Forms the metamorphic oracle compares: a named `linalg.pooling_*` op (where
IREE has one for the layout and rank) or the equivalent `linalg.generic`, run in the case's layout
or in the other one between transposes. Spellings: `torch.aten.max_pool{1,2,3}d` / `avg_pool*d`
(sum as avg_pool with divisor_override 1), ONNX MaxPool / AveragePool (spellings.py)."""

from __future__ import annotations

from shapefuzz.families.base import Family, EXACT, elementwise_rule
from shapefuzz.families.pool.params import Params, input_shape
from shapefuzz.families.pool.reference import compare, make_inputs, reference
from shapefuzz.families.pool.render import render
from shapefuzz.families.pool.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule"]

def export_rule(p: Params) -> dict:
    """`compare` for exported tests: max and sum exact, an average within two ulps."""
    from shapefuzz.families.pool.reference import AVG_RTOL

    return elementwise_rule(AVG_RTOL[p.dtype], 0.0) if p.kind == "avg" else dict(EXACT)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "pad:none")


def largest_operand(p: Params) -> list[int]:
    return input_shape(p)


EXAMPLE = {"kind": "max", "layout": "nc", "dtype": "f32", "n": 1, "c": 2, "spatial": [7], "kernel": [3],
           "strides": [2], "dilations": [1], "pad_lo": [1], "pad_hi": [1], "ceil_mode": True,
           "count_include_pad": False, "in_dyn": [True, False, False]}
FAMILY = Family.define("pool", Params, globals())
