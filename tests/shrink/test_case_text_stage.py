"""A generated case whose failure is a compile-stage one goes on as plain text once its parameter
steps are done (issue #43 item 6, "minimal means minimal": `shrink.case_stage`), under a guard that
keeps every step a sound program; a wrong value or a run-time failure never does."""

from __future__ import annotations

import json
import re

import pytest

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.families import render_case
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.shrink import case_stage, replace_ops
from shapefuzz.shrink import run as shrink_run
from shapefuzz.shrink.iree import Target
from shapefuzz.size import measure

# The stride-3 conv llvm-cpu 3.13 rejects (tests/data/conv1d_stride3.mlir) as a conv case, inside a
# chain: a reverse producing its input, a clamp consuming its result.
PARAMS = {
    "rank": 1, "kind": "regular", "layout": "nwc_wcf", "compute_layout": "nwc_wcf", "form": "named", "loop_perm": [],
    "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 1, "f": 1, "m": 1, "spatial": [3], "kernel": [2],
    "strides": [3], "dilations": [1], "pad_lo": [0], "pad_hi": [0], "pad_form": "none", "pad_value": 0,
    "input_dyn": [False, False, False], "filter_dyn": [False, False, False], "bias": "none", "epilogue": "none",
    "big": False, "context": [{"op": "reverse", "operand": 0, "dim": 1, "form": "map"},
                              {"op": "clamp", "result": 0, "lo": -1.0, "hi": 1.0}],
}
CONV_ERROR = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR,
                       "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N")


def _case() -> str:
    return render_case(Case.make("conv", PARAMS))


def _fake_shrink(monkeypatch, signature: Signature, interesting=lambda text: True) -> tuple[str, object, list[str]]:
    monkeypatch.setattr(shrink_run, "SameSignature", lambda toolchain, target, known: interesting)
    monkeypatch.setattr(shrink_run, "Verifier", lambda toolchain: (lambda texts: [True] * len(texts)))
    stage = shrink_run.TextStage()
    target = Target({"llvm-cpu": signature}, ("llvm-cpu",), 5.0)
    best, problem, _ = shrink_run.shrink_text(_case(), None, target, frozenset(), stage=stage)
    return best, problem, [stage.case_form] if stage.case_form is not None else []


@pytest.mark.parametrize("signature", [
    Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values in conv"),
    Signature("llvm-cpu", Stage.RUN, Status.CRASH, "segfault"),
])
def test_a_wrong_value_or_run_time_failure_never_gets_the_compile_text_stage(monkeypatch, signature):
    # (a wrong value gets the voted stage, shrink.voted_stage, only with two reference lanes to run:
    # none without a toolchain)
    best, problem, forms = _fake_shrink(monkeypatch, signature)
    assert case_from_mlir(best) is not None and not forms  # still the case its family's reference judges
    assert not any(name in problem.stats.per_pass for name, _ in replace_ops.ROOT_PASSES)


def test_a_compile_failure_goes_on_as_text_and_keeps_its_case_form(monkeypatch):
    best, problem, forms = _fake_shrink(monkeypatch, CONV_ERROR)
    assert case_from_mlir(best) is None and "shapefuzz-case" not in best
    assert len(forms) == 1 and case_from_mlir(forms[0]) is not None  # the parameter-shrunk case
    assert all(name in problem.stats.per_pass for name, _ in replace_ops.ROOT_PASSES)
    assert measure(best).ops < measure(forms[0]).ops  # (an oracle that takes anything: it took everything)


def test_the_header_less_start_is_never_the_result_of_its_own(monkeypatch):
    """No text step taken: the case itself (its header-less form was never tried)."""
    best, _, forms = _fake_shrink(monkeypatch, CONV_ERROR, interesting=lambda text: case_from_mlir(text) is not None)
    assert case_from_mlir(best) is not None and not forms


CONV = """\
func.func @main(%input: tensor<1x3x1xf32>, %filter: tensor<2x1x1xf32>) -> tensor<1x1x1xf32> {
    %zero = arith.constant 0.0 : f32
    %init_empty = tensor.empty() : tensor<1x1x1xf32>
    %init = linalg.fill ins(%zero : f32) outs(%init_empty : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
    %conv = linalg.conv_1d_nwc_wcf {strides = dense<[3]> : tensor<1xi64>} ins(%input, %filter : tensor<1x3x1xf32>, tensor<2x1x1xf32>) outs(%init : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
    return %conv : tensor<1x1x1xf32>
}
"""
SCATTER = """\
func.func @main(%original: tensor<8xf32>, %seed: tensor<2x1xi32>) -> tensor<8xf32> {
    %indices = arith.remsi %seed, %seed : tensor<2x1xi32>
    %one = arith.constant 1.0 : f32
    %empty = tensor.empty() : tensor<2xf32>
    %updates = linalg.fill ins(%one : f32) outs(%empty : tensor<2xf32>) -> tensor<2xf32>
    %out = iree_linalg_ext.scatter dimension_map = [0] unique_indices(true) ins(%updates, %indices : tensor<2xf32>, tensor<2x1xi32>) outs(%original : tensor<8xf32>) {
    ^bb0(%a: f32, %b: f32):
      iree_linalg_ext.yield %a : f32
    } -> tensor<8xf32>
    return %out : tensor<8xf32>
}
"""


def test_the_guard_keeps_the_failing_op_and_refuses_undefined_accumulators():
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "'linalg.conv_1d_nwc_wcf' op failed to legalize")
    guard = case_stage.Guard(CONV, [sig])
    assert guard.op == "linalg.conv_1d_nwc_wcf"
    as_argument = next(c for c in replace_ops.cut_producers(CONV) if "%init: tensor" in c)
    assert guard(as_argument)  # an input accumulator is a sound program
    bypassed = CONV.replace("outs(%init :", "outs(%init_empty :")  # what bypass_ops proposed: an undefined sum
    assert not guard(bypassed)
    elementwise = CONV.replace("linalg.conv_1d_nwc_wcf {strides = dense<[3]> : tensor<1xi64>} ins(%input, %filter : "
                               "tensor<1x3x1xf32>, tensor<2x1x1xf32>)", "linalg.add ins(%init, %init : "
                               "tensor<1x1x1xf32>, tensor<1x1x1xf32>)")
    assert not guard(elementwise)  # the diagnostic's op gone (and the accumulator aliased)
    # an op the compiler made itself ('linalg.generic' of a named conv): no op kind to keep
    assert case_stage.Guard(CONV, [CONV_ERROR]).op is None


def test_the_guard_refuses_computed_indices_made_inputs_and_undefined_updates():
    """What the text passes proposed on a one_hot case (a scatter of coordinates its template
    computes in bounds): the coordinates as an input, or an elementwise op of a new input; the
    updates' fill bypassed to the `tensor.empty` it filled."""
    guard = case_stage.Guard(SCATTER, [])
    cut = [c for c in replace_ops.cut_producers(SCATTER) if "%indices: tensor<2x1xi32>" in c]
    assert cut and not any(guard(c) for c in cut)  # may read out of bounds
    replaced = [c for c in replace_ops.replace_ops(SCATTER) if re.search(r"%indices = arith.addi %rep\d+_arg", c)]
    assert replaced and not any(guard(c) for c in replaced)
    assert not guard(SCATTER.replace("ins(%updates, %indices", "ins(%empty, %indices"))  # undefined values scattered
    values = [c for c in replace_ops.cut_producers(SCATTER) if "%updates: tensor<2xf32>" in c]
    assert values and all(guard(c) for c in values)  # the values scattered may be an input: any is in bounds


@pytest.mark.iree
def test_a_generated_compile_failure_shrinks_past_its_template(toolchain, tmp_path):
    """Against IREE 3.13: the conv case in a chain loses the chain (a parameter step) and then the
    zero fill its template always writes (a text step); its case form and the entry keep the case."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.invoke.execute import verify

    text = _case()
    out = tmp_path / "case.min.mlir"
    result = shrink_run.shrink_file("case.mlir", text, toolchain, ("llvm-cpu",), out=str(out), time_limit=150,
                                    corpus=str(tmp_path / "corpus"))
    minimized, case_form = out.read_text(), result.case_form
    assert result.confirmed is True and verify(minimized, toolchain) is None
    assert list(result.target.signatures.values()) == [CONV_ERROR]
    assert case_form is not None and case_from_mlir(case_form) is not None
    assert (tmp_path / "case.min.case.mlir").read_text() == case_form
    assert case_from_mlir(minimized) is None and "linalg.conv_1d_nwc_wcf" in minimized
    for op in ("linalg.fill", "tensor.empty", "func.call", "linalg.generic"):  # template and chain ops
        assert op not in minimized, minimized
    assert "linalg.fill" in case_form and measure(minimized).ops < measure(case_form).ops
    [folder] = result.saved
    entry = load_entry(folder)
    assert entry.mlir.strip() == minimized.strip() and entry.case is None  # judged as the plain MLIR it is
    assert entry.meta["case_form"] == "case.mlir"
    kept = (tmp_path / "corpus" / entry.id / "case.mlir").read_text()
    assert json.loads(kept.splitlines()[0].split(": ", 1)[1])["family"] == "conv" and kept.strip() == case_form.strip()
    from shapefuzz.recheck.replay import ReplayOutcome, replay_entry

    assert replay_entry(entry, toolchain, confirm=False).outcome == ReplayOutcome.STILL_FAILING  # as plain MLIR


@pytest.mark.iree
def test_a_campaign_hands_back_no_header_less_failure_met_in_the_text_stage(toolchain, tmp_path):
    """A failure met while shrinking a case's text is plain MLIR: no case the campaign's buckets can
    check, judge or save (saving it as a case of its family would parse its empty parameters)."""
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.model import BackendResult, CheckReport, Verdict
    from shapefuzz.shrink.engine import Stats

    case = _case()
    other = Signature("llvm-cpu", Stage.COMPILE, Status.CRASH, "crashed")
    report = CheckReport(Verdict.FAIL, (BackendResult("llvm-cpu", Stage.COMPILE, Status.CRASH, "", other, 0.1, 0.1),))
    plain, cased = case_stage.decase(case), case + "// (another text of the case)\n"
    result = shrink_run.ShrinkResult(case, case, Target({"llvm-cpu": CONV_ERROR}, ("llvm-cpu",), 5.0), measure(case),
                                     measure(case), 1.0, Stats(), None, findings=[(other, plain, report),
                                                                                  (other, cased, report)])
    outcome = IreeTarget(toolchain, tmp_path / "corpus").save_shrunk(result)
    assert outcome is not None and [c.text for c, _ in outcome.found] == [cased]
