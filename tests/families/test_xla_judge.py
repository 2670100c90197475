"""XLA (jax / jaxlib on the CPU, the optional `[xla]` extra) as the second judge of StableHLO-spelled
cases: it runs the very module IREE compiles, its `?` dims refined from the inputs' sizes, and
agrees with the NumPy reference on one case of each spelled op; a planted disagreement is filed as
"references disagree" (ours, never the compiler's); without jax the ONNX judge stays as it was.
The tests that run XLA skip, saying why, where jax is not installed."""

from __future__ import annotations

import numpy as np
import pytest

from shapefuzz.campaign.outcomes import Candidate, Failure, Outcome, Triage, Verdict
from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.frontends import spelled, spellings_for
from shapefuzz.judge import onnx_judge, xla_judge
from shapefuzz.judge.onnx_judge import SecondOpinion
from shapefuzz.judge.oracle import case_expectation, check_case
from shapefuzz.model import Status

needs_jax = pytest.mark.skipif(not xla_judge.available(), reason="jax and jaxlib are not installed (pip install .[xla])")

# One small case per spelled op, dynamic dims among them (refined from the inputs' sizes for XLA).
CASES = {
    "conv": {"rank": 1, "kind": "grouped", "layout": "ngcw_gfcw", "compute_layout": "ngcw_gfcw", "form": "generic",
             "loop_perm": [0, 1, 2, 3, 4, 5], "dtype": "f32", "acc": "f32", "n": 2, "g": 2, "c": 3, "f": 2, "m": 1,
             "spatial": [9], "kernel": [3], "strides": [2], "dilations": [2], "pad_lo": [2], "pad_hi": [1],
             "pad_form": "pad", "pad_value": 0, "input_dyn": [False] * 4, "filter_dyn": [False] * 4, "bias": "epilogue",
             "epilogue": "none", "big": False},
    "conv_transpose": {"rank": 1, "dtype": "i32", "n": 3, "groups": 1, "ci": 2, "co": 2, "spatial": [4], "kernel": [3],
                       "strides": [2], "dilations": [2], "pad_lo": [2], "pad_hi": [0], "out_pad": [1],
                       "input_dyn": [True, True, False], "w_layout": [2, 0, 1], "form": "named", "flip": "extract",
                       "pad_mode": "pad", "x_expand": "late", "w_order": "fused", "fwd_layout": [0, 1, 2]},
    "matmul": {"dtype": "i8", "out": "i32", "batch": [], "batch_dyn": [], "m": 3, "n": 4, "k": 5, "m_dyn": True,
               "n_dyn": False, "k_dyn": False, "a_zp": 3, "b_zp": -2, "b_zp_per": "col", "a_unsigned": True},
    "reduce": {"kind": "sum", "dtype": "f16", "shape": [4, 33], "in_dyn": [True, True], "dims": [1], "keepdims": True,
               "acc": "f32"},
    "sort": {"dtype": "i32", "shape": [3, 12], "in_dyn": [True, False], "dim": 1, "descending": False, "payload": "iota",
             "use": "both", "stable": True, "values": "ties", "index_dtype": "i32"},
    "gather": {"dtype": "i8", "src_shape": [6, 4], "src_dyn": [True, False], "depth": 1, "dimension_map": [0],
               "batch_shape": [3, 2], "batch_dyn": [False, False], "implicit_depth": True, "index_dtype": "i64"},
    "scatter": {"form": "linalg_ext", "dtype": "i32", "index_dtype": "i32", "orig_shape": [5, 3], "orig_dyn": [False, True],
                "depth": 1, "dimension_map": [0], "batch_shape": [4], "batch_dyn": [False], "window_dyn": [True],
                "implicit_depth": False, "combiner": "max", "unique": False, "duplicates": True},
    "intloop": {"dtype": "i64", "shape": [7], "in_dyn": [True], "steps": ["shr_u:y", "add:i", "shl:c65", "or:y", "popcnt"],
                "trips": 6, "trips_input": True, "form": "for"},
}


def _case(family: str) -> Case:
    spelling = next(s for s in spellings_for(family) if s.frontend == "stablehlo")
    return Case.make(family, spelled(get_family(family).load(CASES[family]), spelling))


def test_the_module_xla_compiles_calls_the_case_from_a_static_main():
    text = get_family("reduce").render(_case("reduce").params)
    wrapped = xla_judge.static_module(text, [((None, None), "f16")], [((None, 1), "f32")], [(4, 33)], [(4, 1)])
    assert "func.func private @shapefuzz_case(%input: tensor<?x?xf16>)" in wrapped
    assert "func.func @main(%a0: tensor<4x33xf16>) -> (tensor<4x1xf32>)" in wrapped
    assert "stablehlo.convert %a0 : (tensor<4x33xf16>) -> tensor<?x?xf16>" in wrapped
    assert "func.call @shapefuzz_case(%c0)" in wrapped and "stablehlo.convert %r#0 : (tensor<?x1xf32>) -> tensor<4x1xf32>" in wrapped
    with pytest.raises(ValueError, match="no func.func @main"):
        xla_judge.static_module("func.func @other() {\n}\n", [], [], [], [])


def test_without_jax_a_stablehlo_case_keeps_the_onnx_judge(monkeypatch):
    monkeypatch.setattr(xla_judge, "available", lambda: False)
    case = _case("reduce")
    inputs = get_family("reduce").make_inputs(case.params, 0)
    expected = get_family("reduce").reference(case.params, inputs)
    assert xla_judge.second_opinion(case, inputs, expected) is None
    second = case_expectation(case).second  # ONNX's reference judges the same computation
    assert second is not None and second.lane == onnx_judge.JUDGE_LANE and second.status == Status.OK


def test_the_campaign_counts_xla_as_its_own_lane_and_trusts_it_against_every_backend(tmp_path):
    from shapefuzz.campaign.iree import IreeTarget, with_judge
    from shapefuzz.campaign.report.summary import Row, Summary, judge_line
    from shapefuzz.iree.toolchain import find_toolchain
    from shapefuzz.model import Signature, Stage

    toolchain = find_toolchain(None)

    class Judged:
        second = SecondOpinion((np.zeros(2),), "", seconds=0.5, lane=xla_judge.JUDGE_LANE)

    signature = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values in sort via stablehlo")
    failure = Failure(signature, "indices: 8 of 16 elements differ")
    # every backend that ran it disagrees with NumPy: the reference is suspect unless a second judge agrees
    ran = Outcome(Verdict.FAIL, {"llvm-cpu": (Status.MISMATCH, 1.0), "vmvx": (Status.MISMATCH, 1.0)}, (failure,))
    outcome = with_judge(ran, Judged(), toolchain.probe)
    assert outcome.lanes[xla_judge.JUDGE_LANE] == (Status.OK, 0.5)
    case = _case("sort")
    candidate = Candidate(case.case_id, "sort", 1, (), case.params_json, render_case(case))
    target = IreeTarget(toolchain, tmp_path / "corpus")
    verdict, evidence = target.triage(candidate, failure, outcome)
    assert verdict == Triage.COMPILER_BUG and "XLA computes the same values as the NumPy reference" in evidence
    assert target.triage(candidate, failure, ran)[0] == Triage.OURS  # without the judge: the reference is suspect
    backends = {"llvm-cpu": Row(cases=5), xla_judge.JUDGE_LANE: Row(cases=4, failures=1, unsupported=1)}
    line = judge_line(Summary("c", "", 5, 60.0, 1.0, 2.0, {"pass": 4, "fail": 1}, {}, backends, [], [], {}, 1))
    assert line == ("second judge (XLA): 3 candidate(s) judged, 1 disagreement(s) with the NumPy reference "
                    "(triaged ours), 1 it could not run")


@needs_jax
@pytest.mark.parametrize("family", sorted(CASES))
def test_xla_agrees_with_the_numpy_reference(family):
    case = _case(family)
    fam = get_family(family)
    inputs = fam.make_inputs(case.params, 4)
    opinion = xla_judge.second_opinion(case, inputs, fam.reference(case.params, inputs))
    assert opinion is not None and opinion.lane == xla_judge.JUDGE_LANE
    assert opinion.status == Status.OK, opinion.note or opinion.disagreement


@needs_jax
def test_xla_is_the_judge_of_a_stablehlo_case_and_a_failure_of_it_is_said():
    case = _case("matmul")
    second = case_expectation(case).second
    assert second is not None and second.lane == xla_judge.JUDGE_LANE and second.status == Status.OK
    fam = get_family("matmul")
    inputs = fam.make_inputs(case.params, 0)
    wrong_sizes = [np.zeros((2, 2), np.int32)]  # results typed as the reference's: XLA's refinement refuses them
    failed = xla_judge.second_opinion(case, inputs, wrong_sizes)
    assert failed is not None and failed.status == Status.UNSUPPORTED and failed.note.startswith("XLA failed:")


@needs_jax
@pytest.mark.iree
def test_a_planted_disagreement_between_numpy_and_xla_is_ours(toolchain, monkeypatch):
    real = xla_judge.run_xla
    monkeypatch.setattr(xla_judge, "run_xla", lambda text, inputs, shapes: [r + 1 for r in real(text, inputs, shapes)])
    case = _case("gather")
    expectation = case_expectation(case)
    assert expectation.second.status == Status.MISMATCH and "XLA:" in expectation.second.disagreement
    (result,) = check_case(case, ("llvm-cpu",), toolchain, confirm=False).results
    assert result.status == Status.MISMATCH and result.signature.message == "references disagree in gather via stablehlo"
    assert "matches the NumPy reference" in result.detail  # the compiler was right
