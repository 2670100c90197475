"""Replaying an entry the shrinker cut down as plain text (shrink.case_stage, issue #43): its
header-less reproducer has no reference, so once it compiles again the generated case it was cut
from (`case.mlir`) is judged on the same lane against its family's NumPy reference. A fix that
leaves the computation wrong is CHANGED, never FIXED. Real IREE 3.13, llvm-cpu."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.case import Case
from shapefuzz.corpus import load_entry
from shapefuzz.corpus.entry import CASE_FORM, make_finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.families import render_case
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.replay import ReplayOutcome, replay_entry

# a reduce case as the campaign draws it (IreeTarget.generate("reduce", 3))
REDUCE = Case.make("reduce", {"acc": "", "big": False, "dims": [1, 2], "dtype": "f32", "form": "generic",
                              "in_dyn": [False, False, False], "index_dtype": "i32", "keepdims": False, "kind": "sum",
                              "shape": [4, 31, 5], "use": "both"})
# the text stage's result: a header-less module, recorded as failing to compile, that compiles now
CUT = """func.func @main(%input: tensor<4x31x5xf32>) -> tensor<4x31x5xf32> {
  return %input : tensor<4x31x5xf32>
}
"""
RECORDED = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "'linalg.generic' op a bug that has been fixed")


def _entry(tmp_path: Path, toolchain, case_form: str):
    finding = make_finding(RECORDED, CUT, toolchain, case_form=case_form, triage="compiler bug")
    folder, _ = save_finding(tmp_path / "corpus", finding)
    entry = load_entry(folder)
    assert entry.case is None and entry.meta["case_form"] == CASE_FORM
    return entry


@pytest.mark.iree
def test_a_fixed_reproducer_whose_case_computes_right_is_fixed(toolchain, tmp_path):
    result = replay_entry(_entry(tmp_path, toolchain, render_case(REDUCE)), toolchain, confirm=False)
    assert result.outcome == ReplayOutcome.FIXED, result
    assert "the case it was cut from (case.mlir) matches the reduce reference" in result.detail


@pytest.mark.iree
def test_a_fixed_reproducer_whose_case_computes_wrong_is_changed(toolchain, tmp_path):
    wrong = render_case(REDUCE).replace("arith.addf %in, %acc", "arith.maximumf %in, %acc")
    assert wrong != render_case(REDUCE)
    result = replay_entry(_entry(tmp_path, toolchain, wrong), toolchain, confirm=False)
    assert result.outcome == ReplayOutcome.CHANGED, result
    assert result.now is not None and result.now.stage == Stage.COMPARE and result.now.status == Status.MISMATCH
    assert "but the reduce case it was cut from (case.mlir) now fails: compare/mismatch" in result.detail


@pytest.mark.iree
def test_a_case_form_without_its_header_is_said_and_judges_nothing(toolchain, tmp_path):
    result = replay_entry(_entry(tmp_path, toolchain, render_case(REDUCE).split("\n", 1)[1]), toolchain,
                          confirm=False)
    assert result.outcome == ReplayOutcome.FIXED
    assert "its case (case.mlir) could not be judged: it has no shapefuzz-case header" in result.detail
