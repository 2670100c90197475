"""The matmul family: `linalg.matmul` / `batch_matmul` (one or two batch dims), A or B stored
transposed, one operand broadcast across the batch, matvec / vecmat edges, any dim `?` (K
included), f32 / f16 / bf16 operands accumulated in f32 (an f16 / bf16 result rounded once),
i8 x i8 -> i32 with zero points (MatMulInteger: (a - a_zp)(b - b_zp), exactly; per tensor, per row
of A or per column of B, an operand read as u8), and a Gemm
epilogue on 2-D cases (alpha * A.B + beta * C). Forms the metamorphic oracle compares: the named
op (indexing maps for transposes and broadcasts), one `linalg.generic`, `linalg.contract`, the
transpose / broadcast materialized before a plain op, the quantized named ops, and the qdq form
(both operands through `iree_linalg_ext.dequantize_affine` into an f32 contraction: what 3.13's
QDQ-to-integer-math rewrite matches) (params.py). Spellings: `torch.aten.mm` / `bmm` / `matmul` /
`mv` / `addmm`, PT2E's dequantize ops; ONNX MatMul, Gemm (transA, transB, alpha, beta, C),
MatMulInteger and DequantizeLinear (spellings.py)."""

from __future__ import annotations

import math

from shapefuzz.families.base import EXACT, LINALG, Family, elementwise_rule
from shapefuzz.families.gates import ReleaseGate
from shapefuzz.families.matmul.operands import operand_forms
from shapefuzz.families.matmul.params import Params, a_shape, b_shape
from shapefuzz.families.matmul.reference import UNIT_ROUNDOFF, compare, make_inputs, reference
from shapefuzz.families.matmul.render import render
from shapefuzz.families.matmul.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "RELEASE_GATES",
           "operand_forms", "OPERAND_EXAMPLES"]


def export_rule(p: Params) -> dict:
    """`compare` for exported tests: exact for f32 and i32 results; an f16 / bf16 result within the
    bound reference.py derives, taken at its largest (|a|, |b|, |bias| <= 2)."""
    if p.out not in UNIT_ROUNDOFF:
        return dict(EXACT)
    s = 4.0 * p.k * abs(p.alpha) + 2.0 * abs(p.beta) * (p.bias != "none") \
        + 2.0 * abs(p.alpha) * (p.operand in ("const", "scalar"))  # an accumulator's start, |c| <= 2
    return elementwise_rule(0.0, UNIT_ROUNDOFF[p.out] * (p.k + 3) * s)


# Older releases lack `linalg.contract` and the named ops' `indexing_maps` (transposed or broadcast
# operands; 3.2.0 takes them on `linalg.matmul`, not on `batch_matmul`): each is decided by verifying its example with the release; the generic form is drawn instead.
RELEASE_GATES = (
    ReleaseGate("form contract", "linalg.contract",
                lambda p: p.form == "contract" and p.frontend == LINALG,
                lambda: Params("f32", "f32", (), (), 2, 2, 2, False, False, False, form="contract"),
                instead=lambda p: p.replace(form="generic")),
    ReleaseGate("form named with indexing maps", "linalg.batch_matmul with indexing_maps",
                lambda p: p.form == "named" and p.frontend == LINALG and (p.trans_a or p.trans_b or p.bcast != "none"),
                # a batch_matmul with a broadcast operand: 3.2.0 parses a 2-D matmul's maps but not these
                lambda: Params("f32", "f32", (2,), (False,), 2, 2, 2, False, False, False, bcast="a"),
                instead=lambda p: p.replace(form="generic")),
    # The qdq form (new for 3.13's QDQ rewrite): IREE's affine dequantize in linalg, PT2E's
    # dequantize ops in torch; a release without them gets the same integer matmul as a generic.
    ReleaseGate("form qdq", "iree_linalg_ext.dequantize_affine",
                lambda p: p.form == "qdq" and p.frontend == LINALG,
                lambda: Params("i8", "i32", (), (), 2, 2, 2, False, False, False, form="qdq", a_zp=-1, a_zp_per="row"),
                instead=lambda p: p.replace(form="generic")),
    ReleaseGate("torch qdq spelling", "torch.quantized_decomposed.dequantize_per_tensor and _per_channel",
                lambda p: p.form == "qdq" and p.frontend == "torch",
                lambda: Params("i8", "i32", (), (), 2, 2, 2, False, False, False, form="qdq", a_zp_per="row",
                               frontend="torch"),
                instead=lambda p: p.replace(form="generic")),
)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "form:generic")


def largest_operand(p: Params) -> list[int]:
    return max(a_shape(p), b_shape(p), key=math.prod)


# One small case of each root-operand form (its release gate's example; tests compile each).
_SMALL = {"dtype": "f32", "out": "f32", "batch": [], "batch_dyn": [], "m": 3, "n": 4, "k": 5, "m_dyn": False,
          "n_dyn": True, "k_dyn": False}
OPERAND_EXAMPLES = {
    "const": {**_SMALL, "operand": "const"},
    "scalar": {**_SMALL, "dtype": "i8", "out": "i32", "form": "generic", "a_zp": 3, "operand": "scalar"},
    "folded": {**_SMALL, "trans_b": True, "form": "generic", "operand": "folded"},
}
EXAMPLE = {"dtype": "f16", "out": "f16", "batch": [], "batch_dyn": [], "m": 5, "n": 3, "k": 17, "m_dyn": True,
           "n_dyn": False, "k_dyn": True, "trans_a": True, "alpha": 0.5, "beta": 2.0, "bias": "row"}
FEATURE_DRAWS = 1024  # StableHLO, ONNX and torch spellings and the operand forms share the draws: zp:row, form:quantized are rare
FAMILY = Family.define("matmul", Params, globals())
