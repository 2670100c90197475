"""The onnx_op family: one operator of ONNX's default domain (opset 18) as a one-node model, drawn
from its schema (`onnx.defs`: arity, element types, attribute types and defaults) and, for the
ops real IREE bugs need, from a per-op rule (`rules.py`: Slice's negative steps and clamped
starts, Resize's modes, Pad's modes, Gather's negative indices, reductions' axes inputs, ...),
in the families' shape vocabulary. IREE's own importer turns the model into the case's MLIR.

The reference is two references that must agree (`reference.py`): ONNX Runtime and
`onnx.reference`, with ONNX's shape inference; a case they disagree on is a reference
disagreement, set apart and never compared with IREE. A case ONNX itself rejects is not drawable.
An op this release does not lower ('failed to legalize operation torch.operator "onnx.X"') is
"not supported" (the oracle's frontend gap). `shapefuzz onnx-ops` sweeps ops and prints a table
per op (`recheck/onnx_ops.py`)."""

from __future__ import annotations

from shapefuzz.families.base import Family, elementwise_rule
from shapefuzz.families.onnx_op.params import Params
from shapefuzz.families.onnx_op.reference import TOLERANCE, compare, make_inputs, reference
from shapefuzz.families.onnx_op.render import render
from shapefuzz.families.onnx_op.strategy import (
    FEATURE_DRAWS, FEATURES, RARE_CONJUNCTION, SWARM, equivalent_forms, features, is_valid, largest_operand,
    shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "compare", "equivalent_forms", "features", "is_valid", "make_inputs", "reference",
           "render", "shrink_candidates", "strategy", "export_rule"]


def export_rule(p: Params) -> dict:
    """As `compare` (integers exact either way): f32 within TOLERANCE's, f16 within its looser one
    where a result is f16."""
    from shapefuzz.families.onnx_op.model import build

    f16 = any(o.type.tensor_type.elem_type == 10 for o in build(p).graph.output)
    return elementwise_rule(*TOLERANCE["float16" if f16 else "float32"])


def mismatch_label(p: Params) -> str:
    return f"onnx_op {p.op}"  # each op's wrong values are their own bug


NO_SPELLING = {"torch": "the family is ONNX's own operators; its cases are ONNX models",
               "onnx": "its own form is the ONNX model: there is no other ONNX spelling"}
NO_CONTEXT = "a chain around an ONNX operator would be another ONNX model"
INT_LIMIT = 1 << 63  # Slice's starts and ends reach int64's extremes (the shapes are checked as declared)
EXAMPLE = {"op": "Add", "operands": [["x", "f32", [3, 4], [True, False], []], ["x", "f32", [4], [False], []]]}
FAMILY = Family.define("onnx_op", Params, globals())
