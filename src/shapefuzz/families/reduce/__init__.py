"""The reduce family: sum / max / min over one or several dims and arg-max / arg-min over one,
keepdims, f16 inputs summed in f32, reduced sizes past a few thousand, any dim dynamic. Forms the
metamorphic oracle compares: one `linalg.generic`, a `linalg.reduce` (arg kinds: over the values
and an iota), and a chain of one `linalg.reduce` per dim. Spellings: `torch.aten.sum.dim_IntList`,
`amax` / `amin`, `argmax` / `argmin`, `max.dim` / `min.dim`; ONNX ReduceSum / ReduceMax /
ReduceMin and ArgMax / ArgMin (spellings.py). Arg indices are judged by the value they select."""

from __future__ import annotations

from shapefuzz.families.base import Family, EXACT
from shapefuzz.families.reduce.operands import operand_forms
from shapefuzz.families.reduce.params import Params
from shapefuzz.families.reduce.reference import compare, make_inputs, reference
from shapefuzz.families.reduce.render import render
from shapefuzz.families.reduce.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "operand_forms",
           "OPERAND_EXAMPLES"]

def export_rule(p: Params) -> dict:
    """`compare` for exported tests: sums (exact inputs) and extremes exactly; an arg-max as a top-k
    with k = 1 (the index judged by the value it selects), its dim dropped without keepdims."""
    from shapefuzz.families.reduce.params import ARG_KINDS

    if p.kind not in ARG_KINDS:
        return dict(EXACT)
    return {"kind": "topk", "dim": int(p.dims[0]), "k": 1, "largest": p.kind == "argmax", "labels": False,
            "results": ["values", "indices"] if p.use == "both" else ["indices"], "squeezed": not p.keepdims}


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "form:generic")


def largest_operand(p: Params) -> list[int]:
    return list(p.shape)


# One small case of each root-operand form (its release gate's example; tests compile each).
OPERAND_EXAMPLES = {
    "const": {"kind": "sum", "dtype": "f32", "shape": [3, 17], "in_dyn": [True, False], "dims": [1], "keepdims": True,
              "form": "reduce", "operand": "const"},
    "folded": {"kind": "max", "dtype": "i32", "shape": [4, 3, 5], "in_dyn": [False, True, False], "dims": [0, 2],
               "keepdims": False, "operand": "folded"},
    "scalar": {"kind": "sum", "dtype": "f16", "shape": [6, 5], "in_dyn": [False, True], "dims": [0, 1],
               "keepdims": False, "acc": "f32", "form": "reduce", "operand": "scalar"},
}
EXAMPLE = {"kind": "argmax", "dtype": "f32", "shape": [3, 17], "in_dyn": [True, False], "dims": [1],
           "keepdims": True, "use": "both", "index_dtype": "i64"}
FAMILY = Family.define("reduce", Params, globals())
