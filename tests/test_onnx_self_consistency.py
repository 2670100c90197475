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
from shapefuzz.onnx_judge import case_contradiction

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
    from shapefuzz.oracle import case_expectation, check_module

    case = _case()
    text = render_case(case)
    report = check_module(text, ["llvm-cpu"], case_expectation(case, 0), toolchain, confirm=False)
    outcome = outcome_of(report, 0.0)
    (failure,) = outcome.failures  # IREE 3.13 fails it (the importer's types contradict each other)
    candidate = Candidate(case.case_id, "pool", 0, (), case.params_json, text)
    triage, why = IreeTarget(toolchain, tmp_path).triage(candidate, failure, outcome)
    assert triage == Triage.OURS and "ONNX disagrees with itself" in why
