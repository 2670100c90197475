"""The sort family: hand-computed references, tie handling (stable: exact; unstable: by the values
selected), and each form and spelling on llvm-cpu for a handful of cases."""

from __future__ import annotations

import numpy as np
import pytest

from support.family_testing import check_params
from shapefuzz.families import get_family
from shapefuzz.model import MismatchKind, Verdict

FAMILY = get_family("sort")


def _base(**changes):
    p = {"dtype": "f32", "shape": [6], "in_dyn": [False], "dim": 0, "descending": False, "payload": "iota",
         "use": "both", "stable": False}
    p.update(changes)
    return FAMILY.load(p)


def test_reference_stable_descending_keeps_tie_order():
    p = _base(descending=True, stable=True)
    x = np.array([4, 7, 4, 7, 1, 4], np.float32)
    values, indices = FAMILY.reference(p, [x])
    assert values.tolist() == [7, 7, 4, 4, 4, 1] and indices.tolist() == [1, 3, 0, 2, 5, 4]
    swapped = indices.copy()
    swapped[[0, 1]] = swapped[[1, 0]]
    assert FAMILY.compare(p, [x], [values, indices], [values, swapped]).kind == MismatchKind.INDICES


def test_unstable_ties_are_judged_by_the_values_selected():
    p = _base(descending=True)
    x = np.array([4, 7, 4, 7, 1, 4], np.float32)
    expected = FAMILY.reference(p, [x])
    values = expected[0]
    for idx in ([3, 1, 5, 2, 0, 4], [1, 3, 0, 2, 5, 4]):
        assert FAMILY.compare(p, [x], expected, [values, np.array(idx, np.int32)]) is None
    for idx in ([1, 1, 0, 2, 5, 4], [1, 3, 0, 2, 4, 5], [1, 3, 0, 2, 5, 6]):
        assert FAMILY.compare(p, [x], expected, [values, np.array(idx, np.int32)]).kind == MismatchKind.INDICES


def test_labels_are_returned_not_positions():
    p = _base(payload="arg", use="indices", shape=[2, 3], in_dyn=[False, True], dim=1, index_dtype="i64")
    x, labels = FAMILY.make_inputs(p, 2)
    assert labels.dtype == np.int64 and labels.min() >= 1000
    (want,) = FAMILY.reference(p, [x, labels])
    positions = np.argsort(x, axis=1, kind="stable")
    assert FAMILY.compare(p, [x, labels], [want], [positions]).kind == MismatchKind.INDICES


def test_indices_need_a_payload_and_stability_needs_the_iota():
    assert not FAMILY.is_valid(_base(payload="none", use="indices").to_json())
    assert not FAMILY.is_valid(_base(payload="arg", stable=True).to_json())
    assert not FAMILY.is_valid(_base(stable=True, form="topk").to_json())


INTEGRATION = [
    _base(shape=[3, 33], in_dyn=[True, False], dim=1, values="ties", frontend="torch", index_dtype="i64"),
    _base(shape=[5, 4], in_dyn=[False, True], dim=0, payload="arg", use="indices", index_dtype="i64",
          frontend="torch"),
    _base(dtype="f16", shape=[2, 17], dim=1, in_dyn=[True, True], descending=True, values="ties", use="values",
          frontend="onnx", index_dtype="i64"),
    _base(dtype="i8", shape=[65], in_dyn=[True], stable=True, descending=True, values="ties"),
    _base(dtype="i32", shape=[4, 9, 2], in_dyn=[False, True, False], dim=1, payload="arg", form="topk",
          index_dtype="i64", transpose=True),
    _base(shape=[7, 256], in_dyn=[False, False], dim=1, payload="none", use="values"),
]


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.form}-{p.dtype}-{p.use}")
def test_forms_and_spellings_match_the_reference_on_cpu(params):
    report = check_params("sort", params)
    assert report.verdict == Verdict.PASS, report.to_json()


def test_exported_tests_judge_unstable_ties_like_the_oracle():
    from shapefuzz.export_checks import compare

    p = _base(descending=True)
    x = np.array([4, 7, 4, 7, 1, 4], np.float32)
    expected = FAMILY.reference(p, [x])
    rule = FAMILY.comparison_rule(p)
    assert compare(rule, [x], expected, [expected[0], np.array([3, 1, 5, 2, 0, 4], np.int32)]) is None
    assert compare(rule, [x], expected, [expected[0], np.array([3, 1, 5, 2, 4, 0], np.int32)]) is not None
