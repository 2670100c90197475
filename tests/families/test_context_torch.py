"""Chains spelled in torch (`families/context/torch_chain.py`): the chain's ops as the aten ops the fx
importer emits, around the family's own torch form, in one function; it lowers through IREE's
torch input pipeline and agrees with the linalg chain on llvm-cpu; a chain torch cannot write
exactly stays linalg."""

from __future__ import annotations

import re

import pytest
from click.testing import CliRunner

from support.context_testing import lower_torch, torch_chains
from shapefuzz.case import Case
from shapefuzz.cli import cli
from shapefuzz.families import get_family, render_case
from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.frontends import linalg_params, spelled, spellings_for
from shapefuzz.families.generate import draw_params
from shapefuzz.model import Verdict
from shapefuzz.judge.oracle import check_case

op = ContextOp.make
# Ops that fit an operand and a result of any rank >= 1 (f32 or f16).
ANY_RANK = (op("dequantize", operand=0, scale=0.5, zero_point=-3, **{"from": "i8"}),
            op("reverse", operand=0, dim=0, form="extract"),
            op("multi_use", result=0, factor=-0.5),
            op("extract", result=0, dim=0),
            op("softmax", result=0, dim=0),
            op("quantize", result=0, scale=0.25, zero_point=-2))
# Shape-moving ops on a rank-2 operand and result (a matmul without batch).
RANK_2 = (op("concat", operand=0, dim=1, split=1),
          op("slice", operand=0, offsets=[1, 0], strides=[2, 1], extra=[0, 1], drop=0),
          op("pad", operand=0, lo=[0, 1], hi=[1, 0], value=0.5),
          op("transpose", operand=0, perm=[1, 0], form="named"),
          op("bias", result=0, dim=1),
          op("clamp", result=0, lo=-1.0, hi=2.5),
          op("transpose_out", result=0, perm=[1, 0]),
          op("reshape", result=0, groups=[[0, 1]]))


def _torch_spelling(family: str):
    return next(s for s in spellings_for(family) if s.frontend == "torch")


def _spelled_chain(family: str, chain: tuple[ContextOp, ...], start: int = 1, f32: bool = False):
    """The first context-free draw of `family` that torch writes and the chain fits, spelled in
    torch (`f32`: one without f16, whose linalg chains 3.13 may fail to link: fmaxf)."""
    fam, torch = get_family(family), _torch_spelling(family)
    for s in range(start, start + 300):
        q = linalg_params(draw_params(family, s, context_share=0.0))
        if not torch.expressible(q):
            continue
        t = spelled(q, torch).replace(context=chain)
        if not fam.is_valid(t) or not fam.is_valid(t.replace(frontend="linalg")):
            continue
        if not f32 or "f16" not in fam.render(t.replace(frontend="linalg")):
            return t
    raise AssertionError(f"no {family} draw takes the chain")


@pytest.mark.iree
@pytest.mark.parametrize("family,chain", [("matmul", ANY_RANK), ("norm", ANY_RANK), ("pool", ANY_RANK),
                                          ("matmul", RANK_2)], ids=["matmul", "norm", "pool", "matmul-rank2"])
def test_a_chain_spelled_in_torch_and_in_linalg_agree_on_llvm_cpu(family, chain, toolchain):
    t = _spelled_chain(family, chain, f32=True)
    text = render_case(Case.make(family, t))
    assert "// linalg chain" not in text and "func.func private @root" not in text  # one torch function
    assert "linalg." not in text and "tensor." not in text
    for case in (Case.make(family, t), Case.make(family, t.replace(frontend="linalg"))):
        report = check_case(case, ("llvm-cpu",), toolchain, confirm=False)
        assert report.verdict == Verdict.PASS, report


# The aten ops each context op is written with.
SPELLED_AS = {"pad": "constant_pad_nd", "transpose": ("transpose.int", "permute"), "expand": "view",
              "collapse": ("squeeze.dim", "flatten.using_ints"), "slice": ("slice.Tensor", "select.int"), "concat": "cat",
              "broadcast": "broadcast_to", "reverse": "flip", "dequantize": "sub.Scalar", "cast": "to.dtype",
              "to_static": "tensor_static_info_cast", "bias": "add.Tensor", "relu": "relu", "clamp": "clamp",
              "multi_use": "mul.Scalar", "extract": "index_select", "cast_out": "to.dtype", "quantize": "round",
              "transpose_out": ("transpose.int", "permute"), "reshape": "flatten.using_ints",
              "reduce": ("sum.dim_IntList", "amax"), "softmax": "softmax.int",
              "dequantize_affine": "quantized_decomposed.dequantize_per_tensor",
              "quantize_affine": "quantized_decomposed.quantize_per_tensor"}


def test_each_op_is_spelled_in_aten_ops_and_drawn_torch_chains_cover_every_op():
    seen = set()
    for family in ("matmul", "pool", "reduce", "norm"):
        fam = get_family(family)
        for t in torch_chains(family, 40):
            text = fam.render(t)
            assert "// linalg chain" not in text and "linalg." not in text
            for c in t.context:
                names = SPELLED_AS[c.op] if isinstance(SPELLED_AS[c.op], tuple) else (SPELLED_AS[c.op],)
                assert any(re.search(rf"torch\.(aten\.)?{re.escape(n)} ", text) for n in names), (c.op, text)
                seen.add(c.op)
    assert seen == set(SPELLED_AS), set(SPELLED_AS) - seen


@pytest.mark.iree
@pytest.mark.parametrize("family", ["matmul", "pool", "reduce", "conv_transpose"])
def test_drawn_torch_chains_lower_through_the_torch_input_pipeline(family, toolchain):
    fam = get_family(family)
    cases = torch_chains(family, 50)
    assert len(cases) >= 15, len(cases)
    bad = lower_torch(toolchain, [fam.render(t) for t in cases])
    # a chain case may fail where its root's torch form fails alone (a frontend-only IREE bug)
    roots = lower_torch(toolchain, [fam.render(cases[i].replace(context=())) for i, _ in bad])
    assert len(roots) == len(bad), [(cases[i].to_json(), line) for i, line in bad][:2]


def test_a_chain_torch_cannot_write_stays_linalg():
    i4 = (op("dequantize", operand=0, scale=0.5, zero_point=1, **{"from": "i4"}),)
    t = _spelled_chain("matmul", (i4[0].with_attrs(**{"from": "i8"}),))
    fam = get_family("matmul")
    assert fam.is_valid(t) and "torch.aten.sub.Scalar" in fam.render(t)
    no = t.replace(context=i4)
    assert not fam.is_valid(no) and fam.is_valid(no.replace(frontend="linalg"))
    assert "// linalg chain: torch cannot write this chain" in fam.render(no)
    assert no not in fam.equivalent_forms(no.replace(frontend="linalg"))
    assert t in fam.equivalent_forms(t.replace(frontend="linalg"))  # where torch writes it, check --forms has it
    # drawn: a chain torch cannot write around a torch case is drawn in linalg
    for s in range(200):
        p = draw_params("matmul", s, context_share=1.0)
        if any(c.op == "dequantize" and c.get("from") == "i4" for c in p.context):
            assert p.frontend != "torch"
        if p.frontend == "torch" and p.context:
            assert "// linalg chain" not in fam.render(p)


def test_gen_context_shows_torch_spelled_chains():
    for seed in range(60):
        out = CliRunner().invoke(cli, ["gen", "--op", "matmul", "--seed", str(seed), "--context"])
        assert out.exit_code == 0, out.output
        header = out.output.splitlines()[0]
        if '"frontend":"torch"' in header and '"context"' in header:
            assert "!torch.vtensor" in out.output and "func.func private @root" not in out.output
            return
    raise AssertionError("no torch-spelled chain in 60 draws")
