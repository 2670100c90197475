"""The metamorphic oracle: equivalent formulations of one computation must agree."""

from pathlib import Path

import pytest

from shapefuzz.case import case_from_mlir
from shapefuzz.model import Verdict
from shapefuzz.judge.oracle import check_forms, form_difference

DATA = Path(__file__).resolve().parents[1] / "data"


def test_form_difference_names_changed_keys():
    assert form_difference({"form": "topk", "k": 2}, {"form": "sort", "k": 2}) == "form='sort'"
    assert form_difference({"a": 1}, {"a": 1}) == "same form"


@pytest.mark.iree
def test_forms_that_disagree_on_a_backend_are_reported(toolchain):
    # conv_transpose with the filter flipped by a K-1-d map: fails to compile on llvm-cpu in 3.13,
    # while the forms that flip by linalg.index + tensor.extract compile and match the reference.
    case = case_from_mlir((DATA / "convt_flip_map.mlir").read_text())
    result = check_forms(case, ["llvm-cpu"], toolchain, confirm=False)
    assert result.verdict == Verdict.FAIL
    flips = {form.params["flip"]: report.verdict for form, report in result.reports}
    assert flips == {"map": Verdict.FAIL, "extract": Verdict.PASS}
    assert result.disagreements and all(line.startswith("llvm-cpu: form [") for line in result.disagreements)
    assert any("same form" in line for line in result.disagreements)
