"""The matmul family: references against hand-computed values (transposes, broadcast and unit
batches, vector edges, i8 zero points past i16, the Gemm epilogue, bf16 rounding), the f16
tolerance, a zero point of the wrong type refused as the user's error, and each form and spelling
against the reference on llvm-cpu for a handful of cases."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.matmul.reference import round_bf16, tolerance
from shapefuzz.model import MismatchKind, Verdict

FAMILY = get_family("matmul")


def _base(**changes):
    p = {"dtype": "f32", "out": "f32", "batch": [], "batch_dyn": [], "m": 2, "n": 2, "k": 3, "m_dyn": False,
         "n_dyn": False, "k_dyn": False, "form": "generic"}
    p.update(changes)
    return FAMILY.load(p)


A = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
B = np.array([[1, 0], [0, 1], [1, -1]], np.float32)
AB = [[4, -1], [10, -1]]


def test_reference_plain_and_transposed_operands():
    (c,) = FAMILY.reference(_base(), [A, B])
    assert c.dtype == np.float32 and c.tolist() == AB
    (c,) = FAMILY.reference(_base(trans_a=True, trans_b=True), [A.T.copy(), B.T.copy()])
    assert c.tolist() == AB


def test_reference_broadcast_unit_batch_and_vector_edges():
    (c,) = FAMILY.reference(_base(batch=[1], batch_dyn=[True], bcast="b"), [A[None], B])
    assert c.shape == (1, 2, 2) and c[0].tolist() == AB
    (c,) = FAMILY.reference(_base(batch=[2], batch_dyn=[False], bcast="a"), [A, np.stack([B, 2 * B])])
    assert c.tolist() == [AB, [[8, -2], [20, -2]]]
    x = np.array([1, 1, 2], np.float32)
    (c,) = FAMILY.reference(_base(n=1, vec="matvec"), [A, x])
    assert c.tolist() == [9, 21]
    (c,) = FAMILY.reference(_base(m=1, vec="vecmat", trans_b=True), [x, B.T.copy()])
    assert c.tolist() == [3, -1]


def test_reference_i8_zero_points_are_exact_past_i16_and_i32_sums_do_not_saturate():
    p = _base(dtype="i8", out="i32", m=1, n=1, k=2, a_zp=127, b_zp=127)
    a = np.array([[-128, -128]], np.int8)
    b = np.array([[-128], [-128]], np.int8)
    (c,) = FAMILY.reference(p, [a, b])
    assert c.dtype == np.int32 and c.tolist() == [[2 * 255 * 255]]  # 130050: past i16, and (a - zp) past i8
    (c,) = FAMILY.reference(p.replace(a_zp=0, b_zp=0), [a, b])
    assert c.tolist() == [[32768]]  # (-128) * (-128) * 2: one past i16's max
    (c,) = FAMILY.reference(p.replace(a_zp=-128, b_zp=127), [np.array([[127, -128]], np.int8), b])
    assert c.tolist() == [[255 * -255 + 0]]
    # the longest K the strategy draws cannot overflow i32 at the extreme products
    from shapefuzz.families.matmul.strategy import _K, _LARGE

    assert max(_K + _LARGE) * 255 * 255 < 2**31


def test_reference_gemm_epilogue_and_bf16_rounding():
    p = _base(alpha=0.5, beta=2.0, bias="row")
    (c,) = FAMILY.reference(p, [A, B, np.array([1, -1], np.float32)])
    assert c.tolist() == [[4.0, -2.5], [7.0, -2.5]]
    assert round_bf16(np.array([1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-9], np.float32)).tolist() == [1.0, 1 + 2**-6, 1.0]
    q = _base(dtype="bf16", out="bf16", k=2, m=1, n=1)
    (c,) = FAMILY.reference(q, [np.array([[1.0, 0.25]], np.float32), np.array([[257.0 / 256], [1.0]], np.float32)])
    assert c.dtype == np.float32 and c.tolist() == [[1.25]]  # 1.25390625 rounded to bf16


def test_narrow_results_are_judged_within_a_k_derived_bound():
    p = _base(dtype="f16", out="f16", k=64, m=3, n=2)
    inputs = FAMILY.make_inputs(p, 4)
    (want,) = FAMILY.reference(p, inputs)
    bound = tolerance(p, inputs)
    assert np.all(bound > 0) and np.all(bound < 0.25 * np.abs(want).max() + 1)
    nudged = (want.astype(np.float64) + 0.9 * bound).astype(np.float16)
    assert FAMILY.compare(p, inputs, [want], [nudged]) is None
    wrong = want.copy()
    wrong[0, 0] += np.float16(4)
    assert FAMILY.compare(p, inputs, [want], [wrong]).kind == MismatchKind.VALUES
    exact = _base(dtype="f16", k=64, m=3, n=2)  # an f32 result of f16 operands: exact
    ins = FAMILY.make_inputs(exact, 4)
    (w,) = FAMILY.reference(exact, ins)
    assert tolerance(exact, ins) == 0 and FAMILY.compare(exact, ins, [w], [w + np.float32(2**-6)]) is not None


def test_forms_follow_the_case():
    from shapefuzz.families.matmul.params import forms_for

    assert forms_for(_base(dtype="i8", out="i32")) == ("named", "generic", "contract", "quantized", "qdq")
    assert "materialized" in forms_for(_base(trans_b=True)) and "quantized" in forms_for(_base(dtype="i8", out="i32", trans_a=True))
    assert "quantized" not in forms_for(_base(dtype="i8", out="i32", a_unsigned=True))  # the named op sign-extends
    assert "named" not in forms_for(_base(batch=[2, 3], batch_dyn=[False, False]))
    assert "named" not in forms_for(_base(batch=[2], batch_dyn=[False], bcast="a", trans_a=True))  # batch_matmul refuses it
    assert not FAMILY.is_valid(_base(a_zp=3).to_json())  # zero points only with i8


@pytest.mark.parametrize("zp", [200, -129])
def test_a_zero_point_of_the_wrong_type_is_one_line_exit_2(tmp_path, zp):
    good = _base(dtype="i8", out="i32", a_zp=5)
    text = render_case(Case.make("matmul", good)).replace('"a_zp":5', f'"a_zp":{zp}')
    assert f'"a_zp":{zp}' in text
    path = tmp_path / "case.mlir"
    path.write_text(text)
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "rocm-gfx942"],
                         capture_output=True, text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(lines) == 1, out.stderr
    assert "is not an i8 value" in lines[0] and "a_zp" in lines[0], lines[0]


# Each case is checked in every form and both spellings (torch, and ONNX where it can write it):
# MatMulInteger and the quantized op, a batched vector through Unsqueeze / Squeeze, bf16 with a
# broadcast operand (named maps and materialized), torch.matmul over two batch dims, Gemm / addmm.
INTEGRATION = [
    _base(dtype="i8", out="i32", m=5, n=3, k=33, m_dyn=True, k_dyn=True, a_zp=-128, b_zp=7, form="quantized"),
    _base(dtype="i8", out="i32", batch=[2], batch_dyn=[True], m=1, n=7, k=17, vec="vecmat", trans_b=True, b_zp=127,
          frontend="onnx"),
    _base(dtype="bf16", out="bf16", batch=[3], batch_dyn=[False], bcast="a", m=4, n=5, k=65, k_dyn=True, form="named"),
    _base(dtype="f32", batch=[2, 1], batch_dyn=[True, False], m=3, n=4, k=9, trans_b=True, n_dyn=True, frontend="torch"),
    _base(dtype="f16", m=7, n=5, k=129, trans_a=True, trans_b=True, alpha=2.0, bias="full", beta=0.5, frontend="onnx"),
]


def test_the_integration_cases_are_valid():
    assert all(FAMILY.is_valid(p) for p in INTEGRATION)


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.form}-{p.dtype}-{p.vec or 'mat'}")
def test_forms_and_spellings_match_the_reference_on_cpu(params, toolchain):
    from shapefuzz.judge.oracle import check_forms

    from shapefuzz.families.frontends import frontend_of
    from shapefuzz.families.onnx_forms import HAND_WRITTEN

    result = check_forms(Case.make("matmul", params), ["llvm-cpu"], toolchain, seed=2, confirm=False)
    spelled = {frontend_of(FAMILY.load(form.params)): form.params for form, _ in result.reports}
    assert {"linalg", "torch"} <= set(spelled) and ("onnx" in spelled) == (params.dtype != "bf16"), spelled
    assert "onnx" not in spelled or HAND_WRITTEN not in FAMILY.render(spelled["onnx"])  # a real model, imported
    # the StableHLO spelling of a dynamic case may meet 3.13's DotGeneralToDot bug (pinned in
    # test_stablehlo_spellings.py): the other spellings and every linalg form must pass
    reports = [r for form, r in result.reports if frontend_of(form.params) != "stablehlo"]
    assert all(r.verdict == Verdict.PASS for r in reports), [r.to_json() for r in reports]


# Two real IREE 3.13 wrong-value bugs this family found on Vulkan (Mesa's llvmpipe driver here; the
# same driver runs the equivalent forms right, and llvm-cpu and vmvx are right):
# - f16 operands widened to f32 by an elementwise op, both transposed, then an f32 matmul (the torch
#   spelling of an f32 result of f16 operands, and ONNX's Cast + Gemm(transA, transB)) gives wrong
#   values on the llvmpipe target; one transpose, f32 operands, or the widening inside the matmul
#   (every linalg form) are right. Plain linalg reproduces it (extf generics with transposed maps).
F16_WIDENED_TRANSPOSED = _base(dtype="f16", m=4, n=4, k=4, trans_a=True, trans_b=True, frontend="torch")
# - i8 zero points subtracted by an elementwise producer (i8 -> i32) feeding a batched contraction
#   (batch_matvec; batch_matmul at K = 127, not 16; linalg.contract; the torch and ONNX spellings):
#   wrong values on both Vulkan targets; without zero points, without the batch dim, or with the
#   subtraction inside one linalg.generic: right.
I8_SHIFTED_BATCHED = _base(dtype="i8", out="i32", batch=[2], batch_dyn=[False], m=8, n=1, k=16, a_zp=1, b_zp=1,
                           vec="matvec", form="named")


@pytest.mark.iree
@pytest.mark.vulkan
@pytest.mark.parametrize("params,right", [
    (F16_WIDENED_TRANSPOSED, F16_WIDENED_TRANSPOSED.replace(frontend="linalg", form="named")),
    (I8_SHIFTED_BATCHED, I8_SHIFTED_BATCHED.replace(form="generic")),
], ids=["f16-widened-transposed", "i8-zero-points-batched"])
def test_known_bugs_vulkan_llvmpipe(params, right, has_vulkan):
    from support.family_testing import assert_known_vulkan_llvmpipe_bug

    if not has_vulkan:
        pytest.skip("no Vulkan device")
    assert_known_vulkan_llvmpipe_bug("matmul", params, right)
