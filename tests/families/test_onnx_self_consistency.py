"""ONNX self-consistency (issue 31, item 5): a model whose ONNX shape inference disagrees with
onnx.reference or its own declared outputs is ours or upstream ONNX's, never a compiler bug.
ONNX 1.23.2 types a ceil-mode AveragePool whose last window starts in the right pad one element
larger than onnx.reference and the spec; IREE 3.13's import of that model fails to compile."""

from __future__ import annotations

import pytest

from shapefuzz.campaign.engine import Candidate
from shapefuzz.campaign.iree import IreeTarget, outcome_of
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.judge.onnx_judge import case_contradiction

# H = 2, kernel 2, stride 2, pads 0/1, ceil_mode: ceil(1/2) + 1 = 2 windows, but the second starts in
# the right pad, so the spec (and onnx.reference) has 1; ONNX's shape inference says 2.
CEIL_POOL = dict(kind="avg", layout="nc", dtype="f32", n=1, c=1, spatial=[2, 1], kernel=[2, 1], strides=[2, 1],
                 dilations=[1, 1], pad_lo=[0, 0], pad_hi=[1, 0], ceil_mode=True, count_include_pad=False,
                 in_dyn=[False] * 4, form="named", frontend="onnx")


def _case(**changes) -> Case:
    return Case.make("pool", get_family("pool").load({**CEIL_POOL, **changes}))


def test_onnx_typing_one_output_two_ways_is_found():
    why = case_contradiction(_case())
    assert "[1, 1, 2, 1]" in why and "[1, 1, 1, 1]" in why
    assert case_contradiction(_case(pad_hi=[0, 0])) == ""  # no window in the pad: ONNX agrees with itself
    assert case_contradiction(_case(frontend="linalg")) == ""  # not an ONNX model


@pytest.mark.iree
def test_a_self_contradictory_onnx_ceil_mode_pool_is_not_a_compiler_bug(toolchain, tmp_path):
    from shapefuzz.judge.oracle import case_expectation, check_module

    case = _case()
    text = render_case(case)
    report = check_module(text, ["llvm-cpu"], case_expectation(case, 0), toolchain, confirm=False)
    outcome = outcome_of(report, 0.0)
    (failure,) = outcome.failures  # IREE 3.13 fails it (the importer's types contradict each other)
    candidate = Candidate(case.case_id, "pool", 0, (), case.params_json, text)
    triage, why = IreeTarget(toolchain, tmp_path).triage(candidate, failure, outcome)
    assert triage == Triage.OURS and "ONNX disagrees with itself" in why


def test_a_large_candidate_s_references_are_not_built_in_the_head_and_the_evidence_says_so(tmp_path, monkeypatch):
    """Triage runs in the campaign's head: above ONNX_CHECK_ELEMENTS declared tensor elements it asks
    ONNX's shape inference alone (the ceil-mode contradiction is still found there), makes no inputs,
    NumPy or ONNX reference, and the verdict's evidence says what was not checked; below it, as before."""
    from shapefuzz.campaign.onnx_contradiction import ONNX_CHECK_ELEMENTS, declared_elements, onnx_contradiction
    from shapefuzz.model import BackendResult, CheckReport, Signature, Stage, Status, Verdict
    from shapefuzz.iree.toolchain import find_toolchain

    def candidate(case: Case) -> Candidate:
        return Candidate(case.case_id, "pool", 0, (), case.params_json, render_case(case))

    def refuse(*args):
        raise AssertionError("a reference was built for a large candidate")

    small, made = candidate(_case()), []
    assert declared_elements(small) == 2 + 1  # its input 1x1x2x1 and its output 1x1x1x1
    why, unchecked = onnx_contradiction(small, lambda c: made.append(c) or None)
    assert made == [small] and "ONNX disagrees with itself" in why and unchecked == ""
    width = ONNX_CHECK_ELEMENTS // 2  # input 1x1x2xW and output 1x1x1xW: 3 W declared elements
    large = candidate(_case(spatial=[2, width]))
    assert declared_elements(large) == 3 * width > ONNX_CHECK_ELEMENTS
    why, unchecked = onnx_contradiction(large, refuse)
    assert "ONNX disagrees with itself" in why  # the model's declared shape against ONNX's inference
    assert unchecked == (f"onnx.reference's output shapes not checked: too large for the head "
                         f"({3 * width:,} declared tensor elements)")
    assert onnx_contradiction(candidate(_case(spatial=[2, width], pad_hi=[0, 0])), refuse)[0] == ""
    assert onnx_contradiction(large, lambda c: None, limit=10 * width) == (why, "")  # under the bound: checked

    # The verdict of a large, self-consistent ONNX case keeps its evidence and says what was skipped.
    plain = candidate(_case(spatial=[2, width], pad_hi=[0, 0]))
    sig = Signature("rocm-gfx942", Stage.COMPILE, Status.ERROR, "error: failed to distribute")
    report = CheckReport(Verdict.FAIL, (BackendResult("rocm-gfx942", Stage.COMPILE, Status.ERROR, "error: x", sig),))
    target = IreeTarget(find_toolchain(None), tmp_path)
    monkeypatch.setattr(IreeTarget, "_expectation", refuse)  # never asked for a large candidate
    triage, evidence = target.triage(plain, outcome_of(report, 0.0).failures[0], outcome_of(report, 0.0))
    assert triage == Triage.COMPILER_BUG and evidence.startswith("compile/error on rocm-gfx942 for input that verifies")
    assert evidence.endswith(f"; {unchecked}")


def test_the_onnx_spelling_is_never_drawn_where_onnx_types_the_model_two_ways():
    """The contradiction above is the generator's to avoid, not a campaign's to set apart (a fresh
    campaign's only "ours" causes were such pools): the ONNX spelling is not valid where a ceil-mode
    window is left out for starting in the right padding; the torch spelling of the same pool is."""
    pool = get_family("pool")
    assert not pool.is_valid(pool.load(CEIL_POOL))
    assert pool.is_valid(pool.load({**CEIL_POOL, "pad_hi": [0, 0]}))
    symmetric = {**CEIL_POOL, "spatial": [3, 1], "pad_lo": [1, 0], "pad_hi": [1, 0]}  # the 3rd window starts at 4
    assert not pool.is_valid(pool.load(symmetric))
    assert pool.is_valid(pool.load({**symmetric, "frontend": "torch"}))

