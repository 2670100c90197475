"""The reduce family: hand-computed references, arg-max ties judged by the value selected, the f16
accumulator rule, and each form and spelling on llvm-cpu for a handful of cases."""

from __future__ import annotations

import numpy as np
import pytest

from support.family_testing import check_params
from shapefuzz.families import get_family
from shapefuzz.model import MismatchKind, Verdict

FAMILY = get_family("reduce")


def _base(**changes):
    p = {"kind": "sum", "dtype": "f32", "shape": [2, 3], "in_dyn": [False, False], "dims": [1], "keepdims": False}
    p.update(changes)
    return FAMILY.load(p)


def test_reference_sum_keepdims_and_mixed_precision():
    x = np.array([[1, 2, 3], [4, 5, 6.5]], np.float16)
    (y,) = FAMILY.reference(_base(dtype="f16", acc="f32", keepdims=True), [x])
    assert y.dtype == np.float32 and y.tolist() == [[6.0], [15.5]]
    (y,) = FAMILY.reference(_base(kind="max", dims=[0, 1]), [x.astype(np.float32)])
    assert y.shape == () and y == 6.5


def test_argmax_ties_are_judged_by_the_value_selected():
    p = _base(kind="argmax", use="both")
    x = np.array([[3, 7, 7], [1, 1, 0]], np.float32)
    values, index = FAMILY.reference(p, [x])
    assert values.tolist() == [7, 1] and index.tolist() == [1, 0]
    assert FAMILY.compare(p, [x], [values, index], [values, np.array([2, 1], np.int32)]) is None
    wrong = FAMILY.compare(p, [x], [values, index], [values, np.array([0, 1], np.int32)])
    assert wrong.kind == MismatchKind.INDICES
    assert FAMILY.compare(p, [x], [values, index], [values, np.array([1, 3], np.int32)]).kind == MismatchKind.INDICES


def test_long_f16_sums_accumulate_in_f32():
    assert not FAMILY.is_valid(_base(dtype="f16", shape=[2, 129]).to_json())
    assert FAMILY.is_valid(_base(dtype="f16", shape=[2, 129], acc="f32").to_json())
    assert not FAMILY.is_valid(_base(kind="argmax", dims=[0, 1]).to_json())


INTEGRATION = [
    _base(shape=[3, 1025, 2], in_dyn=[False, True, False], dims=[0, 1], keepdims=True, form="chain"),
    _base(dtype="f16", acc="f32", shape=[4, 129], in_dyn=[True, False], form="reduce", frontend="torch"),
    _base(kind="argmin", dtype="i32", shape=[5, 33], in_dyn=[True, True], dims=[1], use="indices",
          index_dtype="i64", frontend="torch"),
    _base(kind="argmax", dtype="f16", shape=[7, 9, 2], in_dyn=[False, True, False], dims=[1], keepdims=True,
          index_dtype="i64", frontend="onnx"),
    _base(kind="argmax", shape=[2, 4097], in_dyn=[True, False], dims=[1], form="reduce"),
    _base(kind="min", dtype="i32", shape=[3, 4, 5], in_dyn=[True, False, True], dims=[0, 2], frontend="onnx"),
]


def test_the_integration_cases_are_valid():
    assert all(FAMILY.is_valid(p) for p in INTEGRATION)


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.kind}-{p.form}-{p.dtype}")
def test_forms_and_spellings_match_the_reference_on_cpu(params):
    report = check_params("reduce", params)
    assert report.verdict == Verdict.PASS, report.to_json()
