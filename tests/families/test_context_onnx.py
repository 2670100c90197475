"""Chains spelled in ONNX (`families/context/onnx_chain.py`): the family's root model with the
chain's ops as ONNX nodes around it, imported by iree-import-onnx and judged by onnx.reference."""

from __future__ import annotations

import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.frontends import onnx_model, onnx_params, spelled, spellings_for
from shapefuzz.families.generate import draw_params
from shapefuzz.model import Status, Verdict
from shapefuzz.judge.oracle import case_expectation, check_case

# One chain over every kind of op whose ONNX form differs: a reverse (Slice, negative step) and
# a cast (f16 -> f32) before the root's first operand; a bias (Add), multi-use (Mul, Add) and a
# softmax after its result.
CHAIN = (ContextOp.make("cast", operand=0, **{"from": "f16"}),
         ContextOp.make("reverse", operand=0, dim=0, form="extract"),
         ContextOp.make("bias", result=0, dim=1),
         ContextOp.make("multi_use", result=0, factor=0.5),
         ContextOp.make("softmax", result=0, dim=1))


def _chain_case(family: str, seed: int, chain: tuple[ContextOp, ...], frontend: str, in_onnx: bool = True) -> Case:
    """A context-free draw of `family` that ONNX can write, with `chain` around it, in `frontend`
    (`in_onnx`: a chain ONNX can write too)."""
    fam = get_family(family)
    onnx = next(s for s in spellings_for(family) if s.frontend == "onnx")
    for s in range(seed, seed + 200):
        p = draw_params(family, s, context_share=0.0).replace(frontend="linalg")
        if not onnx.expressible(p):
            continue
        q = spelled(p, onnx).replace(frontend="linalg", context=chain)
        if fam.is_valid(q) and (not in_onnx or fam.is_valid(q.replace(frontend="onnx"))):
            return Case.make(family, q.replace(frontend=frontend))
    raise AssertionError(f"no {family} draw takes the chain")


@pytest.mark.iree
@pytest.mark.parametrize("family", ["matmul", "norm"])
def test_a_chain_spelled_in_onnx_and_in_linalg_agree_on_llvm_cpu(family, toolchain):
    linalg, onnx = (_chain_case(family, 1, CHAIN, fe) for fe in ("linalg", "onnx"))
    text = render_case(onnx)
    assert "// linalg chain" not in text
    for op in ("Cast", "Slice", "Add", "Mul", "Softmax"):  # the chain's ops came in through the importer
        assert f'torch.operator "onnx.{op}"' in text, op
    expectation = case_expectation(onnx)
    assert expectation.second is not None and expectation.second.status == Status.OK  # onnx.reference agrees
    for case in (linalg, onnx):
        report = check_case(case, ("llvm-cpu",), toolchain, confirm=False)
        assert report.verdict == Verdict.PASS, report


@pytest.mark.parametrize("family", ["matmul", "norm", "pool", "gather"])
def test_onnx_reference_agrees_with_the_numpy_reference_on_drawn_chains(family):
    judged = 0
    for seed in range(60):
        p = draw_params(family, seed, context_share=1.0)
        if not p.context or p.frontend != "onnx":
            continue
        expectation = case_expectation(Case.make(family, p))
        second = expectation.second
        assert second is not None, p
        if second.status == Status.UNSUPPORTED:  # a known gap of onnx.reference (pool pads, opset-18 DQ)
            assert second.note, p
            continue
        assert second.status == Status.OK, second.disagreement
        judged += 1
    assert judged >= 1, family


def test_a_chain_onnx_cannot_write_stays_linalg():
    i4 = (ContextOp.make("dequantize", operand=0, scale=0.5, zero_point=1, **{"from": "i4"}),)
    case = _chain_case("matmul", 1, i4, "linalg", in_onnx=False)
    fam = get_family("matmul")
    p = fam.load(case.params)
    assert onnx_params(fam, p) is None  # no ONNX spelling of it, so no second judge
    onnx = p.replace(frontend="onnx")
    assert onnx_model(fam, onnx) is None and not fam.is_valid(onnx)
    assert "// linalg chain: ONNX cannot write this chain" in render_case(Case.make("matmul", onnx))
    i8 = p.replace(context=(i4[0].with_attrs(**{"from": "i8"}),))
    assert onnx_params(fam, i8) is not None and onnx_model(fam, onnx_params(fam, i8)) is not None


def test_drawn_onnx_cases_get_chains_in_onnx_and_unwritable_ones_fall_back_to_linalg():
    spelled_onnx = 0
    for seed in range(80):
        p = draw_params("matmul", seed, context_share=1.0)
        if p.context and p.frontend == "onnx":
            spelled_onnx += 1
            assert onnx_model(get_family("matmul"), p) is not None
        if any(op.op == "dequantize" and op.get("from") == "i4" for op in p.context):
            assert p.frontend == "linalg"
    assert spelled_onnx >= 3


def test_the_campaign_renders_a_chain_case_with_its_chain():
    from shapefuzz.campaign.iree import load_family

    p = _chain_case("matmul", 1, CHAIN, "onnx").params
    assert load_family("matmul").render(p) == get_family("matmul").render(p)
    linalg = _chain_case("matmul", 1, CHAIN, "linalg").params
    assert "func.func private @root" in load_family("matmul").render(linalg)


def test_a_rank_0_root_operand_stays_rank_0_in_a_chain_case():
    """A campaign filed a chain case's rank-0 operands, fed as 1-element arrays, as compiler bugs."""
    fam = get_family("one_hot")
    p = fam.load({"form": "scatter", "dtype": "f32", "index_dtype": "i32", "index_shape": [], "index_dyn": [],
                  "depth": 16, "depth_dyn": False, "axis": -1, "values": "input", "on": 0.25, "off": 0.0,
                  "consumer": "none", "range": "oob", "dimension_map": [0],
                  "context": [{"op": "cast_out", "result": 0, "to": "f16"}, {"op": "reduce", "result": 0, "dim": 0, "kind": "max"}]})
    inputs = fam.make_inputs(p, 1)
    assert [a.shape for a in inputs] == [a.shape for a in fam.make_inputs(p.replace(context=()), 1)]
    assert [e.shape for e in fam.reference(p, inputs)] == [()]
