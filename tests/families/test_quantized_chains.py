"""QDQ chains (issue 45): dequantize -> matmul / conv -> quantize as frontends export them, the
pattern 3.13's QDQ-to-integer-math rewrite matches: IREE's affine dequantize on both operands
(innermost), an affine quantize of the result, in linalg, ONNX (DequantizeLinear / QuantizeLinear)
and torch (PT2E's quantized_decomposed ops); the same NumPy semantics as the generic-bodied
dequantize / quantize; a release gate back to those; judged on llvm-cpu and the twin lane."""

from __future__ import annotations

import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family
from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.compose import root_types
from shapefuzz.families.context.wrap import QDQ_FAMILIES, generic_quantization
from shapefuzz.families.frontends import linalg_params
from shapefuzz.families.gates import Closed, Gated
from shapefuzz.families.generate import draw_params
from shapefuzz.families.registry import FAMILY_MODULES
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import module_traits
from shapefuzz.judge.oracle import check_case
from shapefuzz.model import Stage, Status, Verdict

TWIN = "llvm-cpu-no-qdq-rewrite"
QDQ = (ContextOp.make("dequantize_affine", operand=0, scale=0.25, zero_point=-20),
       ContextOp.make("dequantize_affine", operand=1, scale=0.125, zero_point=19),
       ContextOp.make("quantize_affine", result=0, scale=0.5, zero_point=-7))


def _matmul(**changes):
    p = {"dtype": "f32", "out": "f32", "batch": [], "batch_dyn": [], "m": 5, "n": 3, "k": 7, "m_dyn": True,
         "n_dyn": False, "k_dyn": False, "form": "named"}
    return get_family("matmul").load(p | changes)


def _conv(**changes):
    p = {"rank": 2, "kind": "regular", "layout": "nhwc_hwcf", "compute_layout": "nhwc_hwcf", "form": "named",
         "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 3, "f": 2, "m": 1, "spatial": [6, 5],
         "kernel": [3, 2], "strides": [1, 1], "dilations": [1, 1], "pad_lo": [0, 0], "pad_hi": [0, 0],
         "pad_form": "none", "pad_value": 0, "input_dyn": [True, False, False, False], "filter_dyn": [False] * 4,
         "bias": "none", "epilogue": "none", "big": False}
    return get_family("conv").load(p | changes)


def test_the_qdq_families_are_those_whose_roots_take_a_free_float_operand():
    some = set()
    for name in FAMILY_MODULES:
        family = get_family(name)
        if family.no_context:  # never drawn inside a chain (onnx_op: ONNX's own operators)
            continue
        q = linalg_params(family.load(family.example))
        # its example, or that example on floats (one_hot's is i32; drawn, its values may be f32, and the
        # fresh campaign drew one_hot inside affine dequantize chains)
        def free(p) -> bool:
            args, _ = root_types(family.render(p))
            return any(t.elt in ("f32", "f16") and i not in family.fixed_operands(p) for i, t in enumerate(args))

        some |= {name} if free(q) or hasattr(q, "dtype") and free(q.replace(dtype="f32")) else set()
    assert some == set(QDQ_FAMILIES) and "one_hot" in some and "intloop" not in some


def test_drawn_chains_put_the_affine_dequantize_innermost_on_both_operands():
    pairs = 0
    for seed in range(60):
        p = draw_params("matmul", seed, context_share=1.0)
        affine = [op for op in p.context if op.op == "dequantize_affine"]
        if not affine:
            continue
        pairs += 1
        for op in affine:  # the root operand's own producer: nothing between it and the matmul
            assert [c for c in p.context if c.is_producer and c.operand == op.operand][-1] == op
        text = get_family("matmul").render(p)
        assert BACKENDS[TWIN].ineligible_for(module_traits(text)) is None or p.frontend != "linalg", text
    assert pairs >= 5
    gathers = [p for p in (draw_params("gather", seed, context_share=1.0) for seed in range(60))
               if any(op.op == "dequantize_affine" for op in p.context)]  # a quantized embedding table
    assert gathers and all(op.operand == 0 for p in gathers for op in p.context if op.op == "dequantize_affine")
    text = get_family("gather").render(gathers[0])
    assert "qdq" not in module_traits(text)  # no contraction: the twin has nothing to change


def test_the_affine_ops_compute_what_the_generic_ones_do():
    family = get_family("matmul")
    p = _matmul().replace(context=QDQ)
    plain = p.replace(context=generic_quantization(QDQ))
    assert [op.op for op in plain.context] == ["dequantize", "dequantize", "quantize"]
    inputs = family.make_inputs(p, 3)
    assert [x.dtype.name for x in inputs] == ["int8", "int8"]
    assert family.reference(p, inputs)[0].tolist() == family.reference(plain, inputs)[0].tolist()
    text = family.render(p)
    assert text.count("iree_linalg_ext.dequantize_affine") == 2 and "iree_linalg_ext.quantize_affine" in text
    assert "qdq" in module_traits(text) and "qdq" not in module_traits(family.render(plain))
    onnx = family.render(p.replace(frontend="onnx"))
    assert onnx.count('"onnx.DequantizeLinear"') == 2 and '"onnx.QuantizeLinear"' in onnx
    torch = family.render(p.replace(frontend="torch"))
    assert torch.count("torch.quantized_decomposed.dequantize_per_tensor") == 2
    assert "torch.quantized_decomposed.quantize_per_tensor" in torch


def test_a_release_without_the_affine_ops_gets_the_generic_dequantize_and_quantize():
    gated = Gated((Closed("matmul", "context affine quantization", "no", True),
                   Closed("matmul", "context torch quantization", "no", True)))
    for frontend in ("linalg", "torch"):
        p = _matmul().replace(context=QDQ, frontend=frontend)
        q = gated.params("matmul", p)
        assert q == p.replace(context=generic_quantization(QDQ)) and get_family("matmul").is_valid(q)
    onnx = _matmul().replace(context=QDQ, frontend="onnx")
    assert gated.params("matmul", onnx) == onnx


REAL = [
    ("matmul", _matmul().replace(context=QDQ)),
    ("matmul", _matmul(trans_b=True).replace(context=QDQ[:2], frontend="torch")),
    ("matmul", _matmul().replace(context=QDQ, frontend="onnx")),
    ("conv", _conv().replace(context=QDQ)),
    ("conv", _conv(layout="nchw_fchw", compute_layout="nchw_fchw").replace(context=QDQ, frontend="torch")),
]
# (a `?` table dim makes 3.13 fail this chain in linalg with a 2^55-byte stack allocation, the
# generic-bodied dequantize / quantize too: an IREE bug, left to campaigns to file)
GATHER = {"dtype": "f32", "src_shape": [7, 3], "src_dyn": [False, False], "depth": 1, "dimension_map": [0],
          "batch_shape": [5], "batch_dyn": [False], "implicit_depth": True, "index_dtype": "i64"}


@pytest.mark.iree
@pytest.mark.parametrize("frontend", ["linalg", "onnx", "torch"])
def test_a_gather_from_a_quantized_table_matches_its_reference(toolchain, frontend):
    family = get_family("gather")
    p = family.load(GATHER).replace(context=(QDQ[0], QDQ[2]), frontend=frontend)
    assert family.is_valid(p) and "// linalg chain" not in family.render(p)
    report = check_case(Case.make("gather", p), ["llvm-cpu"], toolchain, confirm=False)
    assert report.verdict == Verdict.PASS, [(r.backend, r.detail[:300]) for r in report.results]


@pytest.mark.iree
@pytest.mark.parametrize("index", range(len(REAL)))
def test_qdq_chains_match_their_reference_with_the_rewrite_and_without(toolchain, index):
    family, p = REAL[index]
    assert get_family(family).is_valid(p)
    text = get_family(family).render(p)
    assert "// linalg chain" not in text and "qdq" in module_traits(text)
    report = check_case(Case.make(family, p), ["llvm-cpu", TWIN], toolchain, confirm=False)
    assert report.verdict == Verdict.PASS, [(r.backend, r.detail[:300]) for r in report.results]
    for result in report.results:
        assert (result.stage, result.status) == (Stage.COMPARE, Status.OK), (result.backend, result.detail[:300])
