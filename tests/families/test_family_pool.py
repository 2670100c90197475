"""The pool family: the output-size and divisor rules PyTorch and ONNX define, hand-computed
references, and every form and spelling on llvm-cpu for a handful of draws."""

from __future__ import annotations

import numpy as np
import pytest

from support.family_testing import check_params
from shapefuzz.families import get_family
from shapefuzz.families.pool.params import out_size
from shapefuzz.model import Verdict

FAMILY = get_family("pool")


def _base(**changes):
    p = {"kind": "max", "layout": "nc", "dtype": "f32", "n": 1, "c": 1, "spatial": [5], "kernel": [2],
         "strides": [2], "dilations": [1], "pad_lo": [0], "pad_hi": [0], "ceil_mode": False,
         "count_include_pad": False, "in_dyn": [False, False, False]}
    p.update(changes)
    return FAMILY.load(p)


def test_output_size_rule_matches_pytorch():
    # torch.nn.MaxPool1d(2, 2)(x of 5) -> 2; ceil_mode -> 3 (the last window starts on x[4]).
    assert out_size(5, 2, 2, 1, 0, 0, False) == 2
    assert out_size(5, 2, 2, 1, 0, 0, True) == 3
    # kernel 2, stride 2, pad 1 over 5: ceil((5+2-2)/2)+1 = 4, but the 4th window would start at
    # padded index 6, the right padding (the input holds 1..5): dropped, as PyTorch and ONNX do.
    assert out_size(5, 2, 2, 1, 1, 1, True) == 3
    assert out_size(4, 3, 2, 1, 1, 1, True) == 3  # the 3rd window starts on x[3]: kept
    assert out_size(7, 3, 1, 2, 0, 0, False) == 3  # dilation 2: effective kernel 5


def test_avg_divisor_counts_padding_but_not_the_ceil_overhang():
    # x = [1, 2, 3, 4], kernel 3, stride 2, pad 1, ceil_mode: windows [pad,1,2], [2,3,4], [4,pad,overhang]
    x = np.array([[[1, 2, 3, 4]]], np.float32)
    p = _base(kind="avg", spatial=[4], kernel=[3], pad_lo=[1], pad_hi=[1], ceil_mode=True, count_include_pad=True)
    (y,) = FAMILY.reference(p, [x])
    # torch.nn.AvgPool1d(3, 2, 1, ceil_mode=True, count_include_pad=True)(x) = [1, 3, 2]: the last
    # window holds x[3] and one pad (divisor 2), its third tap is past the padding.
    assert y.tolist() == [[[1.0, 3.0, 2.0]]]
    (y,) = FAMILY.reference(p.replace(count_include_pad=False), [x])
    assert y.tolist() == [[[1.5, 3.0, 4.0]]]


def test_max_and_sum_channels_last_with_asymmetric_padding():
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 6, 1)  # [N, W, C]
    p = _base(layout="nl", spatial=[6], kernel=[3], strides=[2], pad_lo=[1], pad_hi=[0], in_dyn=[False, True, False])
    assert FAMILY.reference(p, [x])[0][0, :, 0].tolist() == [2.0, 4.0, 6.0]
    assert FAMILY.reference(p.replace(kind="sum"), [x])[0][0, :, 0].tolist() == [3.0, 9.0, 15.0]


def test_windows_missing_the_input_are_not_valid():
    # Dilation 3 over a single element with padding 1: the first window's taps are -1 and 2.
    assert not FAMILY.is_valid(_base(spatial=[1], kernel=[2], dilations=[3], pad_lo=[1], pad_hi=[1]).to_json())
    assert not FAMILY.is_valid(_base(pad_lo=[2], kernel=[3]).to_json())  # more than half the kernel


def test_inputs_are_exact_quarters():
    p = _base(kind="avg", dtype="f16", spatial=[7, 7], kernel=[3, 3], strides=[1, 1], dilations=[1, 1],
              pad_lo=[1, 1], pad_hi=[1, 1], in_dyn=[False] * 4)
    (x,) = FAMILY.make_inputs(p, 3)
    assert x.dtype == np.float16 and np.all(x * 4 == np.round(x * 4)) and np.abs(x).max() <= 2


# ----------------------------------------------------------------------------- real compiler (llvm-cpu)

# Each form and spelling once (a few compiles: the full cross product runs in campaigns).
INTEGRATION = [
    _base(kind="avg", spatial=[7, 6], kernel=[3, 2], strides=[2, 2], dilations=[1, 1], pad_lo=[1, 1], pad_hi=[1, 1],
          ceil_mode=True, count_include_pad=True, in_dyn=[False, True, False, True], frontend="torch"),
    _base(kind="max", spatial=[9], kernel=[3], strides=[2], dilations=[2], pad_lo=[1], pad_hi=[0], ceil_mode=True,
          c=3, frontend="onnx"),
    _base(kind="max", layout="nl", dtype="f16", spatial=[9], kernel=[3], strides=[2], dilations=[2], pad_lo=[1],
          pad_hi=[1], ceil_mode=True, in_dyn=[True, False, False], c=3),
    _base(kind="sum", dtype="i32", spatial=[4, 5, 3], kernel=[2, 2, 1], strides=[1, 2, 1], dilations=[1, 1, 1],
          pad_lo=[0, 1, 0], pad_hi=[1, 0, 0], in_dyn=[True, False, False, True, False], n=2, c=2, form="generic"),
    _base(kind="avg", layout="nl", spatial=[5, 5], kernel=[2, 3], strides=[1, 2], dilations=[1, 1], pad_lo=[1, 1],
          pad_hi=[0, 1], in_dyn=[False, True, True, False], compute_layout="nc"),
]

# IREE 3.13 bugs found by this family through ONNX: onnx.MaxPool with unequal begin/end pads
# between channels-last transposes fails to compile on llvm-cpu with a dynamic batch dim ("'linalg.generic' op write affecting
# operations on global resources are restricted to workgroup distributed contexts") and in f16
# ("failed to legalize operation 'util.initializer'"); all static f32 (INTEGRATION) is right,
# and so are the linalg forms and equal pads.
ONNX_ASYMMETRIC_DYNAMIC = INTEGRATION[1].replace(layout="nl", in_dyn=[True, False, False])


@pytest.mark.iree
def test_known_bug_onnx_maxpool_asymmetric_pads_dynamic_batch():
    report = check_params("pool", ONNX_ASYMMETRIC_DYNAMIC)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now compiles onnx.MaxPool with unequal pads and a dynamic batch: update this test")
    assert "global resources" in str(report.failures[0].signature)


def test_the_integration_cases_reach_every_form_and_spelling():
    drawn = {(p.frontend, p.kind, p.form, bool(p.compute_layout)) for p in INTEGRATION}
    assert {fe for fe, *_ in drawn} == {"linalg", "torch", "onnx"}
    assert {("generic", False), ("named", True)} <= {(form, moved) for fe, _, form, moved in drawn if fe == "linalg"}


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.kind}-{p.rank}d-{p.layout}-{p.dtype}")
def test_forms_and_spellings_match_the_reference_on_cpu(params):
    report = check_params("pool", params)
    assert report.verdict == Verdict.PASS, report.to_json()


# IREE 3.13 bug found by this family: a pool whose output spatial dims are all 1 while the window
# leaves the tail of the input unread (floor mode) fails to compile on llvm-cpu: unit-dim folding
# rewrites `o * s + k` to `k` and keeps the input's full size ("'linalg.generic' op inferred
# input/output operand #1 has shape's dimension #1 to be 5, but found 3"). torch.aten.max_pool3d
# hits it too; with stride 1 (output 3x2x2) it compiles and is right.
UNIT_OUTPUT_LEFTOVER = _base(spatial=[2, 5, 4], kernel=[2, 3, 3], strides=[2, 3, 3], dilations=[1, 1, 1],
                             pad_lo=[0, 0, 0], pad_hi=[0, 0, 0], in_dyn=[False] * 5, c=4, form="generic")


@pytest.mark.iree
def test_known_bug_unit_output_with_unread_input_tail():
    from shapefuzz.model import Stage

    report = check_params("pool", UNIT_OUTPUT_LEFTOVER)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now compiles the unit-output pool: the known bug is fixed, update this test")
    (failure,) = report.failures
    assert failure.stage == Stage.COMPILE and "inferred input/output operand" in failure.detail
    assert check_params("pool", UNIT_OUTPUT_LEFTOVER.replace(strides=[1, 1, 1])).verdict == Verdict.PASS


# IREE 3.13 bug: a sum over a strided window of a splat constant is evaluated at compile time
# (iree-consteval-jit-globals) as if each output took one element: the "ones" divisor of an average
# pool comes out 1, so the average equals the sum. The "index" divisor form of the same case is right.
ONES_DIVISOR = _base(kind="avg", spatial=[4], kernel=[2], strides=[2], divisor="ones", form="generic")


@pytest.mark.iree
def test_known_bug_constant_sum_pool_of_ones():
    report = check_params("pool", ONES_DIVISOR)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now folds the sum-pool of ones right: the known bug is fixed, update this test")
    assert "differ" in report.failures[0].detail  # the "index" divisor form is right (INTEGRATION)
