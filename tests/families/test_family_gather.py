"""The gather family: hand-computed references (permuted dimension_map, strided and transposed
index layouts), and each form and spelling on llvm-cpu for a handful of cases."""

from __future__ import annotations

import numpy as np
import pytest

from support.family_testing import check_params
from shapefuzz.families import get_family
from shapefuzz.model import Verdict

FAMILY = get_family("gather")


def _base(**changes):
    p = {"dtype": "f32", "src_shape": [4, 3], "src_dyn": [False, False], "depth": 1, "dimension_map": [0],
         "batch_shape": [2], "batch_dyn": [False], "implicit_depth": False, "index_dtype": "i32"}
    p.update(changes)
    return FAMILY.load(p)


def test_reference_with_a_permuted_map_reads_columns_in_map_order():
    p = _base(src_shape=[2, 3, 2], src_dyn=[False] * 3, depth=2, dimension_map=[1, 0])
    src = np.arange(12, dtype=np.float32).reshape(2, 3, 2)
    idx = np.array([[2, 1], [0, 0]], dtype=np.int32)  # column 0 addresses dim 1, column 1 dim 0
    (out,) = FAMILY.reference(p, [src, idx])
    assert out.tolist() == [src[1, 2].tolist(), src[0, 0].tolist()]


def test_strided_and_transposed_indices_read_the_rows_the_op_sees():
    p = _base(index_layout="strided", implicit_depth=True, batch_shape=[3])
    src, arg = FAMILY.make_inputs(p, 1)
    assert arg.shape == (5,) and (arg[1::2] == -7).all()  # the skipped rows are out of range
    (out,) = FAMILY.reference(p, [src, arg])
    assert np.array_equal(out, src[arg[0::2]])
    t = _base(index_layout="transposed", batch_shape=[3, 2], batch_dyn=[False, True])
    src, arg = FAMILY.make_inputs(t, 2)
    assert arg.shape == (1, 3, 2)
    assert np.array_equal(FAMILY.reference(t, [src, arg])[0], src[arg[0]])


def test_rank_0_result_stays_0_d():
    p = _base(src_shape=[3, 5], depth=2, dimension_map=[0, 1], batch_shape=[], batch_dyn=[])
    src, idx = FAMILY.make_inputs(p, 3)
    (out,) = FAMILY.reference(p, [src, idx])
    assert out.shape == () and out == src[idx[0], idx[1]]


INTEGRATION = [
    _base(src_shape=[7, 5], src_dyn=[True, False], batch_shape=[3, 2], batch_dyn=[False, True], implicit_depth=True,
          index_dtype="i64", frontend="torch"),  # torch.aten.embedding
    _base(src_shape=[5, 4, 3], src_dyn=[False, True, False], depth=2, dimension_map=[0, 1], batch_shape=[6], batch_dyn=[True],
          index_dtype="i64", index_layout="transposed", frontend="onnx"),  # onnx.GatherND
    _base(dtype="i8", src_shape=[9, 2, 4], src_dyn=[True, False, True], depth=2, dimension_map=[1, 0],
          batch_shape=[5], batch_dyn=[False], index_layout="strided", form="extract"),
    _base(dtype="f16", src_shape=[17], src_dyn=[True], batch_shape=[2, 3], batch_dyn=[True, True],
          index_dtype="i64", implicit_depth=True),
]


# IREE 3.13 bug found by this family: a gather whose result is rank 0 (no batch dims, every source
# dim gathered) fails to compile on llvm-cpu ("'tensor.collapse_shape' op expected collapsed rank
# (0) to equal the number of reassociation maps (1)"); the tensor.extract form is right.
RANK_0 = _base(dtype="i8", src_shape=[3, 13], depth=2, dimension_map=[0, 1], batch_shape=[], batch_dyn=[])


def test_the_integration_cases_are_valid():
    assert all(FAMILY.is_valid(p) for p in INTEGRATION + [RANK_0])


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.form}-{p.index_layout}")
def test_forms_and_spellings_match_the_reference_on_cpu(params):
    report = check_params("gather", params)
    assert report.verdict == Verdict.PASS, report.to_json()


@pytest.mark.iree
def test_known_bug_rank_0_gather():
    report = check_params("gather", RANK_0)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now compiles the rank-0 gather: the known bug is fixed, update this test")
    assert "collapse_shape" in report.failures[0].detail
    assert check_params("gather", RANK_0.replace(form="extract")).verdict == Verdict.PASS


# IREE 3.13 bug found by this family: the tensor.extract form reading 1-D indices taken every other
# row (a stride-2 tensor.extract_slice) fails to compile on llvm-cpu ("LLVM Translation failed for
# operation: builtin.unrealized_conversion_cast", a vector<15xi64> left unconverted); the same
# gather with plain indices, and the iree_linalg_ext.gather form, compile and are right.
STRIDED_EXTRACT = _base(src_shape=[9, 3], src_dyn=[True, False], batch_shape=[4], batch_dyn=[False],
                        implicit_depth=True, index_dtype="i64", index_layout="strided", form="extract")


@pytest.mark.iree
def test_known_bug_strided_indices_in_the_extract_form():
    report = check_params("gather", STRIDED_EXTRACT)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now compiles the strided extract gather: the known bug is fixed, update this test")
    assert "unrealized_conversion_cast" in str(report.failures[0].signature)
    assert check_params("gather", STRIDED_EXTRACT.replace(form="linalg_ext")).verdict == Verdict.PASS
