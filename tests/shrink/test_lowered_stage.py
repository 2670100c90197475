"""A compile failure of a frontend spelling that its conversion does not cause is shrunk in the
linalg that conversion makes (issue #43 item 6, "minimal means minimal": `shrink.lowered_stage`):
an audit found torch and ONNX reproducers keeping a chain of frontend ops where one linalg op fails
the same way. A bug of the conversion itself keeps its frontend spelling."""

from __future__ import annotations

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.families import linalg_spelling, render_case
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.shrink import lowered_stage
from shapefuzz.shrink.engine import Pass, Problem
from shapefuzz.shrink.iree import Target
from shapefuzz.size import sort_key

sys.path.insert(0, str(Path(__file__).parent))
from test_case_text_stage import CONV_ERROR, PARAMS  # noqa: E402  (the stride-3 conv case in a chain)

# ONNX MaxPool whose own conversion 3.13 breaks: torch-mlir's lowering makes a `linalg.fill` of a
# negative size (the corpus entry llvm-cpu-compile-error-f632326448d3)
ONNX_MAXPOOL = """\
func.func @main(%arg0: !torch.vtensor<[1,1,?,?],f16>) -> !torch.vtensor<[1,1,?,?],f16> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64} {
  %0 = torch.operator "onnx.MaxPool"(%arg0) {torch.onnx.ceil_mode = 0 : si64, torch.onnx.dilations = [1 : si64, 1 : si64], torch.onnx.kernel_shape = [2 : si64, 2 : si64], torch.onnx.pads = [1 : si64, 1 : si64, 0 : si64, 0 : si64], torch.onnx.strides = [1 : si64, 1 : si64]} : (!torch.vtensor<[1,1,?,?],f16>) -> !torch.vtensor<[1,1,?,?],f16>
  return %0 : !torch.vtensor<[1,1,?,?],f16>
}
"""
STABLEHLO_ADD = """\
func.func @main(%a: tensor<4x?xf32>, %b: tensor<4x?xf32>) -> tensor<4x?xf32> {
  %0 = stablehlo.add %a, %b : tensor<4x?xf32>
  return %0 : tensor<4x?xf32>
}
"""
LINALG = """\
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  return %a : tensor<4xf32>
}
"""


def _torch_conv_case() -> str:
    return render_case(Case.make("conv", dict(PARAMS, frontend="torch")))


def test_frontend_spellings_are_told_from_iree_input():
    assert lowered_stage.frontend_spelled(_torch_conv_case())
    assert lowered_stage.frontend_spelled(ONNX_MAXPOOL) and lowered_stage.frontend_spelled(STABLEHLO_ADD)
    assert not lowered_stage.frontend_spelled(LINALG)


def _problem(start: str) -> Problem:
    problem = Problem(start, lambda text: True, sort_key, admissible=lambda text: len(text) < 10_000)
    problem.stopped_because = None
    return problem


def _target(signature: Signature) -> Target:
    return Target(signatures={signature.backend: signature}, check_backends=(signature.backend,), compile_timeout=5.0)


def test_a_lowered_text_with_more_ops_leaves_the_problem_as_it_was(monkeypatch):
    """The converted text is kept only with no more compute ops than the frontend text: here it has
    more (and no pass cuts it), so the problem is back on the frontend text, under its old bound."""
    start = _torch_conv_case()
    bigger = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n" + "".join(
        f"  %c{i} = math.absf %a : tensor<4xf32>\n" for i in range(40)) + "  return %a : tensor<4xf32>\n}\n"
    monkeypatch.setattr(lowered_stage, "lowered", lambda text, toolchain: bigger)
    problem = _problem(start)
    bound = problem.admissible
    got = lowered_stage.shrink_lowered(start, start, problem, _target(CONV_ERROR), SimpleNamespace(), lambda t: [[]])
    assert got is None and problem.current == start and problem.admissible is bound and problem.stopped_because is None


def test_a_failure_at_the_input_phase_or_of_run_time_is_never_lowered(monkeypatch):
    def never(text, toolchain):
        raise AssertionError("lowered for a failure the conversion owns")

    monkeypatch.setattr(lowered_stage, "lowered", never)
    start = _torch_conv_case()
    at_input = Target(signatures={"llvm-cpu": CONV_ERROR}, check_backends=("llvm-cpu",), compile_timeout=5.0, phase="input")
    wrong = _target(Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values"))
    for target in (at_input, wrong):
        assert lowered_stage.shrink_lowered(start, start, _problem(start), target, SimpleNamespace(),
                                            lambda t: [[]]) is None


def test_a_case_whose_own_linalg_spelling_passes_keeps_its_frontend_spelling(monkeypatch):
    """Where the family's own linalg spelling does not fail the same way, the conversion may have made
    what fails later (an audit: torch-mlir's ONNX MaxPool typed a pad's dynamic dim static, and ROCm
    codegen tripped over it): its linalg would carry that bug to IREE's tracker, so it is not taken."""
    start = _torch_conv_case()
    own = linalg_spelling(start)
    assert own is not None and "linalg.conv_1d_nwc_wcf" in own and not lowered_stage.frontend_spelled(own)
    assert case_from_mlir(own) is not None  # a case file: judged by its family's reference
    assert linalg_spelling(render_case(Case.make("conv", PARAMS))) is None  # a linalg case
    assert linalg_spelling(LINALG) is None  # no case
    monkeypatch.setattr(lowered_stage, "lowered", lambda text, toolchain: LINALG)
    tried: list[str] = []
    problem = Problem(start, lambda text: tried.append(text) or text != own, sort_key)
    got = lowered_stage.shrink_lowered(start, start, problem, _target(CONV_ERROR), SimpleNamespace(), lambda t: [[]],
                                       case_text=start)
    assert got is None and tried == [own] and problem.current == start


def test_the_issue_text_says_a_reproducer_left_its_frontend_spelling_behind():
    from shapefuzz.export.issue import _cut_words

    torch_case = case_from_mlir(_torch_conv_case())
    linalg_case = case_from_mlir(render_case(Case.make("conv", PARAMS)))
    lowered = SimpleNamespace(cut_from=torch_case, mlir=LINALG)
    assert "lowered to linalg by IREE's torch conversion" in _cut_words(lowered)  # type: ignore[arg-type]
    kept = SimpleNamespace(cut_from=torch_case, mlir=_torch_conv_case())
    assert _cut_words(kept) == "cut down to plain MLIR"  # type: ignore[arg-type]
    assert _cut_words(SimpleNamespace(cut_from=linalg_case, mlir=LINALG)) == "cut down to plain MLIR"  # type: ignore[arg-type]


@pytest.mark.iree
def test_the_conversions_output_is_iree_input_without_the_frontend(toolchain):
    """Against IREE 3.13: torch's conversion output before IREE's ABI wraps it, on builtin tensors;
    StableHLO's `--compile-to=input`, spelled as `func.func`; none for a conversion that fails."""
    torch_low = lowered_stage.lowered(_torch_conv_case(), toolchain)
    assert torch_low is not None and "torch" not in torch_low and "hal." not in torch_low
    assert "func.func @main(%arg0: tensor<1x3x1xf32>, %arg1: tensor<2x1x1xf32>) -> tensor<1x1x1xf32>" in torch_low
    assert "linalg.conv_1d_ncw_fcw" in torch_low
    hlo_low = lowered_stage.lowered(STABLEHLO_ADD, toolchain)
    assert hlo_low is not None and "func.func @main" in hlo_low and "util." not in hlo_low
    assert "linalg.generic" in hlo_low and "stablehlo" not in hlo_low
    assert lowered_stage.lowered(ONNX_MAXPOOL, toolchain) is None


@pytest.mark.iree
def test_a_torch_case_of_a_codegen_bug_shrinks_to_the_one_linalg_op_that_fails(toolchain, tmp_path):
    """Against IREE 3.13: the stride-3 conv spelled in torch inside a chain (a flip producing its
    input, a clamp consuming its result, and the permutes torch's NCW layout needs) fails llvm-cpu's
    compile as the linalg case does. Its torch text keeps the permutes around the convolution; the
    linalg torch-mlir makes of it cuts down to the lone strided conv."""
    text = _torch_conv_case()
    out = tmp_path / "case.min.mlir"
    from shapefuzz.shrink import run as shrink_run

    result = shrink_run.shrink_file("case.mlir", text, toolchain, ("llvm-cpu",), out=str(out), time_limit=150)
    minimized = out.read_text()
    assert result.confirmed is True and list(result.target.signatures.values()) == [CONV_ERROR]
    assert result.stage_note == lowered_stage.NOTE
    assert not lowered_stage.frontend_spelled(minimized), minimized
    assert "linalg.conv_1d_ncw_fcw" in minimized and "dense<3>" in minimized
    for op in ("linalg.transpose", "linalg.generic", "linalg.fill", "tensor.pad"):  # the chain, the permutes
        assert op not in minimized, minimized
    assert result.case_form is not None and case_from_mlir(result.case_form) is not None  # the torch case kept


def test_a_step_that_makes_a_scalar_an_argument_is_not_taken():
    """The converted text of a StableHLO loop extracts its trip count as an i32: cut to an argument, no
    check can give it inputs (the final re-check failed "argument type 'i32' is not a ranked tensor")."""
    assert lowered_stage.tensor_arguments_only("func.func @main(%a: tensor<4xf32>, %b: tensor<?x1xi8>) -> tensor<4xf32> {")
    assert not lowered_stage.tensor_arguments_only("func.func @main(%a: tensor<4xf32>, %n: i32) -> tensor<4xf32> {")
    assert lowered_stage.tensor_arguments_only("func.func private @f(%n: i32) -> i32 {\n}\nfunc.func @main() {")
