"""The attention family: softmax(scale * Q K^T + mask) V with batch [B] or [B, H], dynamic batch
and sequence lengths, an additive mask (random or causal, every row keeping a key), f16 or f32.
Forms the metamorphic oracle compares: `iree_linalg_ext.attention` and the same computation
decomposed into linalg ops accumulated in f32. Spelling: `torch.aten.scaled_dot_product_attention`
(spellings.py). Results are judged within a tolerance derived from the dtype and the reduction
lengths (reference.py), never a fixed epsilon."""

from __future__ import annotations

from shapefuzz.families.attention.params import Params, k_shape
from shapefuzz.families.attention.reference import compare, make_inputs, reference
from shapefuzz.families.attention.render import render
from shapefuzz.families.attention.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)
from shapefuzz.families.base import LINALG, Family, elementwise_rule
from shapefuzz.families.gates import ReleaseGate

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "RELEASE_GATES"]

def export_rule(p: Params) -> dict:
    """`compare` for exported tests: the tolerance reference.py derives, bounded from the params
    alone (|q|, |k|, |v| <= 1, so every logit is at most K1 * scale)."""
    from shapefuzz.families.attention.reference import UNIT_ROUNDOFF

    return elementwise_rule(0.0, UNIT_ROUNDOFF[p.dtype] * (4 * p.k1 * p.scale + 2 * p.k2 + 8))


# Measured: 3.2.0-3.4.0 expect the op's indexing maps in an attribute dictionary, not `<indexing_maps = ...>`.
RELEASE_GATES = (
    ReleaseGate("form attention", "iree_linalg_ext.attention as rendered",
                lambda p: p.form == "attention" and p.frontend == LINALG,
                lambda: Params("f32", (1,), (False,), 2, 2, 2, 2, False, False, 1.0),
                instead=lambda p: p.replace(form="decomposed")),
)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "mask:none")


def largest_operand(p: Params) -> list[int]:
    return k_shape(p)


EXAMPLE = {"dtype": "f32", "batch": [2], "batch_dyn": [True], "m": 3, "k2": 5, "k1": 4, "n": 2, "m_dyn": False,
           "k2_dyn": True, "scale": 0.5, "mask": "random"}
NO_SPELLING = {"onnx": "the importer IREE 3.13 ships reads opset 18; ONNX has had Attention since opset 23"}


def context_fixed_operands(p: Params) -> tuple[int, ...]:
    """The mask (0 or -inf, never a whole row masked) is the family's to draw: no producer on it."""
    return (3,) if p.mask != "none" else ()


FAMILY = Family.define("attention", Params, globals())
