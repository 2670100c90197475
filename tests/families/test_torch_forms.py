"""Torch-dialect and ONNX spellings of every family: they verify, run against the family's NumPy
reference on llvm-cpu, agree with the linalg forms of the same case, shrink in their own spelling,
and a form that fails alone is named; a torch op the release cannot lower is unsupported."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.cli import cli
from shapefuzz.invoke.execute import verify, verify_many
from shapefuzz.families import FAMILY_MODULES, get_family, render_case
from shapefuzz.families.frontends import frontend_of, linalg_params, spelled, spellings_for
from shapefuzz.iree.input_dialect import input_type_flags, unlowered_op
from shapefuzz.families.generate import draw
from shapefuzz.model import Stage, Status, Verdict
from shapefuzz.judge.oracle import check_case, check_forms, check_module

# A real frontend-only disagreement in 3.13: a grouped conv with a dynamic batch whose filter-per-group
# dim is dynamic (with a static batch it compiles).
# The torch spelling unflattens the conv's `?` channel dim into static [g, f], and the torch
# lowering of `torch.aten.unflatten.int` builds an invalid tensor.expand_shape ("expected dimension
# 1 of collapsed type to be static value of 4"); every linalg form compiles and is right.
UNFLATTEN_BUG = {"rank": 1, "kind": "grouped", "layout": "ngcw_gfcw", "compute_layout": "ngcw_gfcw", "form": "generic",
                 "loop_perm": [0, 1, 2, 3, 4, 5], "dtype": "f32", "acc": "f32", "n": 1, "g": 2, "c": 1, "f": 2, "m": 1,
                 "spatial": [3], "kernel": [2], "strides": [1], "dilations": [1], "pad_lo": [0], "pad_hi": [0],
                 "pad_form": "none", "pad_value": 0, "in_dyn": {"n": True, "g": False, "c": False, "s0": False},
                 "filt_dyn": {"g": False, "f": True, "c": False, "k0": False}, "bias": "none", "epilogue": "none",
                 "big": False}



def _spelling(family: str, frontend: str):
    return next(s for s in spellings_for(family) if s.frontend == frontend)


def _torch(family: str, params: dict):
    return spelled(get_family(family).load(params), _spelling(family, "torch"))


def _example(family: str, frontend: str) -> dict:
    """The family's known-good case (`Family.example`), or its spelling's own where it cannot write that one."""
    return dict(_spelling(family, frontend).example or get_family(family).example)


# Families a frontend writes: all but those that declare why not (`Family.no_spelling`).
ONNX_FAMILIES = tuple(f for f in FAMILY_MODULES if "onnx" not in get_family(f).no_spelling)
TORCH_FAMILIES = tuple(f for f in FAMILY_MODULES if "torch" not in get_family(f).no_spelling)  # onnx_op: ONNX's own


@pytest.mark.parametrize("frontend", ["torch", "onnx"])
def test_every_family_has_a_spelling_in_each_frontend(frontend):
    want = [f for f in FAMILY_MODULES if frontend not in get_family(f).no_spelling]
    assert sorted(s.family for f in FAMILY_MODULES for s in spellings_for(f) if s.frontend == frontend) == sorted(want)


@pytest.mark.parametrize("family", TORCH_FAMILIES)
def test_linalg_and_torch_forms_are_equivalent_forms_of_each_other(family):
    fam = get_family(family)
    p = _example(family, "torch")
    t = _torch(family, p)
    assert frontend_of(t) == "torch" and "frontend" not in linalg_params(t).to_json()
    assert t in fam.equivalent_forms(p)
    back = fam.equivalent_forms(t)
    assert all(frontend_of(q) != "torch" for q in back) and any(frontend_of(q) == "linalg" for q in back)
    assert "frontend:torch" in fam.features(t)
    # the same inputs and the same reference serve both spellings
    ins_l, ins_t = fam.make_inputs(p, 3), fam.make_inputs(t, 3)
    assert [a.shape for a in ins_l] == [a.shape for a in ins_t]
    for a, b in zip(fam.reference(p, ins_l), fam.reference(t, ins_t)):
        assert (a == b).all()


@pytest.mark.iree
@pytest.mark.parametrize("frontend", ["torch", "onnx"])
@pytest.mark.parametrize("family", FAMILY_MODULES)
def test_drawn_cases_verify_in_each_spelling(family, frontend, toolchain):
    if frontend in get_family(family).no_spelling:
        pytest.skip(get_family(family).no_spelling[frontend])
    fam = get_family(family)
    spelling = _spelling(family, frontend)
    texts = []
    for seed in range(40):
        q = linalg_params(draw(fam.strategy(), seed)).replace(operand="")  # (a root-operand form is linalg's)
        if spelling.expressible(q):
            texts.append(render_case(Case.make(family, spelled(q, spelling))))
    assert len(texts) >= 8, f"only {len(texts)} of 40 {family} draws have a {frontend} spelling"
    assert all("!torch.vtensor" in t for t in texts)
    assert all(('torch.operator "onnx.' in t) == (frontend == "onnx") for t in texts)
    errors = verify_many(texts, toolchain)
    bad = [(t, e) for t, e in zip(texts, errors) if e]
    assert not bad, bad[0][1] + "\n" + bad[0][0]


def test_the_strategy_and_campaigns_draw_each_spelling():
    from shapefuzz.campaign.iree import load_family

    for fam in (get_family("topk"), load_family("topk")):  # every topk case has both spellings
        drawn = [frontend_of(draw(fam.strategy(), seed)) for seed in range(40)]
        assert 3 <= drawn.count("torch") <= 20 and 3 <= drawn.count("onnx") <= 20 and "linalg" in drawn


@pytest.mark.iree
@pytest.mark.parametrize("family", TORCH_FAMILIES)
def test_torch_form_runs_right_and_agrees_with_the_linalg_forms(family, toolchain):
    case = Case.make(family, _torch(family, _example(family, "torch")))
    result = check_forms(case, ["llvm-cpu"], toolchain, seed=1, confirm=False)
    for form, report in result.reports:
        (r,) = report.results
        assert r.status == Status.OK and r.stage == Stage.COMPARE, (form.params, r.detail[:600])
    assert any(frontend_of(form.params) == "linalg" for form, _ in result.reports)
    assert result.verdict == Verdict.PASS and not result.disagreements


@pytest.mark.iree
@pytest.mark.parametrize("family", ONNX_FAMILIES)
def test_onnx_form_runs_right(family, toolchain):
    case = Case.make(family, spelled(get_family(family).load(_example(family, "onnx")), _spelling(family, "onnx")))
    report = check_case(case, ["llvm-cpu"], toolchain, seed=2, confirm=False)
    (r,) = report.results
    assert r.status == Status.OK and r.stage == Stage.COMPARE, r.detail[:600]


@pytest.mark.iree
def test_check_forms_names_a_torch_only_failure(tmp_path, toolchain):
    case = Case.make("conv", _torch("conv", UNFLATTEN_BUG))
    path = tmp_path / "case.mlir"
    path.write_text(render_case(case))
    out = CliRunner().invoke(cli, ["check", "--forms", str(path), "--backends", "llvm-cpu", "--no-confirm"])
    assert out.exit_code == 1, out.output
    disagree = [line for line in out.output.splitlines() if line.startswith("forms disagree:")]
    # the torch spelling is the case itself ("same form"); every linalg form passes
    assert len(disagree) == 1 and "same form" in disagree[0] and "expand_shape" in disagree[0], out.output
    forms = [line for line in out.output.splitlines() if line.startswith("form [")]
    assert sum("frontend='linalg'" in line for line in forms) >= 2, out.output  # the linalg forms are named
    linalg = case_from_mlir(render_case(Case.make("conv", UNFLATTEN_BUG)))
    result = check_forms(linalg, ["llvm-cpu"], toolchain, confirm=False)
    assert [line for line in result.disagreements if "frontend='torch'" in line], result.disagreements


@pytest.mark.iree
def test_a_torch_op_the_release_cannot_lower_is_unsupported(toolchain):
    text = """func.func @main(%self: !torch.vtensor<[?,8],f32>, %idx: !torch.vtensor<[?,3],si64>, %src: !torch.vtensor<[?,3],f32>) -> !torch.vtensor<[?,8],f32> {
  %int1 = torch.constant.int 1
  %str = torch.constant.str "multiply"
  %0 = torch.aten.scatter.reduce %self, %int1, %idx, %src, %str : !torch.vtensor<[?,8],f32>, !torch.int, !torch.vtensor<[?,3],si64>, !torch.vtensor<[?,3],f32>, !torch.str -> !torch.vtensor<[?,8],f32>
  return %0 : !torch.vtensor<[?,8],f32>
}
"""
    assert verify(text, toolchain) is None  # iree-opt 3.13 parses and verifies the torch dialect
    report = check_module(text, ["llvm-cpu"], None, toolchain, confirm=False)
    (r,) = report.results
    assert report.verdict == Verdict.PASS and r.status == Status.UNSUPPORTED and r.signature is None
    assert "does not lower torch." in r.detail


@pytest.mark.iree
def test_torch_input_that_does_not_verify_is_ours(toolchain):
    text = """func.func @main(%x: !torch.vtensor<[2,3],f32>) -> !torch.vtensor<[2,3],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.topk %x, %int1 : !torch.vtensor<[2,3],f32>, !torch.int -> !torch.vtensor<[2,1],f32>
  return %0 : !torch.vtensor<[2,3],f32>
}
"""
    report = check_module(text, ["llvm-cpu"], None, toolchain)
    assert report.verdict == Verdict.INVALID and report.verify_error


def test_frontend_flags_and_unlowered_ops():
    example = _example("topk", "torch")
    torch_text = render_case(Case.make("topk", _torch("topk", example)))
    assert input_type_flags(torch_text) == ("--iree-input-type=torch",)
    assert input_type_flags('%0 = torch.operator "onnx.TopK"(%x, %k)') == ("--iree-input-type=onnx",)
    assert input_type_flags(render_case(Case.make("topk", example))) == ()
    onnx_text = render_case(Case.make("topk", spelled(get_family("topk").load(_example("topk", "onnx")), _spelling("topk", "onnx"))))
    assert input_type_flags(onnx_text) == ("--iree-input-type=onnx",) and "opset_version = 18" in onnx_text
    assert unlowered_op("""m.mlir:3:17: error: failed to legalize operation 'torch.operator' that was explicitly marked
illegal: %0 = "torch.operator"(%arg0) <{name = "onnx.ScatterND"}> : (!torch.vtensor<[3],f32>)""") == "onnx.ScatterND"
    assert unlowered_op("x.mlir:3:8: error: failed to legalize operation 'torch.aten.convolution' that was "
                        "explicitly marked illegal") == "torch.aten.convolution"
    assert unlowered_op("error: failed to legalize operation 'spirv.Foo'") is None


@pytest.mark.iree
@pytest.mark.parametrize("family", TORCH_FAMILIES)
def test_torch_cases_shrink_in_their_spelling(family, toolchain):
    fam = get_family(family)
    t = _torch(family, _example(family, "torch"))
    cands = fam.shrink_candidates(t)
    assert cands and all(frontend_of(c) == "torch" and c != t for c in cands)
    if family in ONNX_FAMILIES:
        o = spelled(get_family(family).load(_example(family, "onnx")), _spelling(family, "onnx"))
        assert all(frontend_of(c) == "onnx" for c in fam.shrink_candidates(o))
    texts = [render_case(Case.make(family, c)) for c in cands[:12]]
    assert verify_many(texts, toolchain) == [None] * len(texts)


@pytest.mark.iree
def test_a_torch_finding_is_saved_replayed_and_exported_with_its_input_type(tmp_path, toolchain):
    path = tmp_path / "case.mlir"
    path.write_text(render_case(Case.make("conv", _torch("conv", UNFLATTEN_BUG))))
    corpus = tmp_path / "corpus"
    runner = CliRunner()
    added = runner.invoke(cli, ["corpus", "add", str(path), "--backends", "llvm-cpu", "--corpus", str(corpus)])
    assert added.exit_code == 0, added.output
    (entry,) = [p for p in corpus.iterdir() if not p.name.startswith(".") and p.is_dir()]
    assert case_from_mlir((entry / "reproducer.mlir").read_text()).params["frontend"] == "torch"
    replayed = runner.invoke(cli, ["replay", str(corpus), "--backends", "llvm-cpu"])
    assert replayed.exit_code == 0 and "still failing" in replayed.output, replayed.output
    lit = tmp_path / "t.mlir"
    exported = runner.invoke(cli, ["export", str(entry), "--format", "lit", "-o", str(lit)])
    assert exported.exit_code == 0, exported.output
    run_lines = [line for line in lit.read_text().splitlines() if line.startswith("// RUN:")]
    assert run_lines and all("--iree-input-type=torch" in line for line in run_lines if "iree-compile" in line)


# Indexing depth >= 2 is spelled `torch.aten.index_put` (advanced-index assignment): sub as an
# accumulated neg, a permuted dimension_map, a dynamic batch dim and a window dim.
DEEP_SCATTER = dict(get_family("scatter").example, dtype="f32", orig_shape=[4, 2, 5], orig_dyn=[False, True, False], depth=2,
                    dimension_map=[1, 0], batch_shape=[3, 2], batch_dyn=[True, False], window_dyn=[False],
                    implicit_depth=False, combiner="sub", duplicates=True)


@pytest.mark.iree
def test_deep_scatter_is_index_put_and_runs_right(toolchain):
    case = Case.make("scatter", _torch("scatter", DEEP_SCATTER))
    assert "torch.aten.index_put" in render_case(case)
    result = check_forms(case, ["llvm-cpu"], toolchain, seed=4, confirm=False)
    assert result.verdict == Verdict.PASS and not result.disagreements, [r.results for _, r in result.reports]


@pytest.mark.iree
def test_index_put_with_0d_index_tensors_crashes_the_3_13_torch_lowering(toolchain):
    # A real finding of the torch spelling (no batch dims: `x[i, j] = v` with 0-d index tensors):
    # ConvertAtenIndexPutHackedTwinOp segfaults (TorchToTMTensor) where the linalg forms pass.
    p = dict(DEEP_SCATTER, orig_shape=[17, 13], orig_dyn=[True, True], batch_shape=[], batch_dyn=[], window_dyn=[],
             dimension_map=[0, 1], combiner="add", duplicates=False)
    result = check_forms(Case.make("scatter", _torch("scatter", p)), ["llvm-cpu"], toolchain, confirm=False)
    crashed = [r for form, report in result.reports for r in report.results
               if frontend_of(get_family("scatter").load(form.params)) == "torch"]
    assert crashed and crashed[0].status == Status.CRASH, crashed
    assert result.disagreements and all("frontend='torch'" not in line for line in result.disagreements)
