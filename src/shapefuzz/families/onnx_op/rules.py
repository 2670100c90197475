"""Per-op rules: what a schema cannot say (valid ranks, attribute values, which operands are
constants, index ranges), for the ops whose semantics real IREE bugs need. Each rule draws one
case, `rule(draw, large) -> Params`, in the families' shape vocabulary; ONNX's shape inference
still has the last word (`model.drawable`). Ops without a rule are drawn from their schema
(`generic.py`). The rules live in `rules_shape.py` (elementwise, data movement) and
`rules_compute.py` (reductions, contractions, normalization, pools, quantization)."""

from __future__ import annotations

from shapefuzz.families.onnx_op import rules_compute, rules_shape  # noqa: F401 - each registers its rules
from shapefuzz.families.onnx_op.rule_kit import RULES, Rule

__all__ = ["RULES", "Rule"]
