"""Quantized matmul (issue 45): zero points per tensor, per row of A and per column of B across
the whole i8 / u8 range, an operand read as u8, and the qdq form (both operands through IREE's
affine dequantize into an f32 contraction: what 3.13's QDQ-to-integer-math rewrite matches), in
linalg, torch (PT2E's dequantize ops) and ONNX (MatMulInteger's vectors, DequantizeLinear); the
exact integer reference; the release gates of the new forms; each judged on llvm-cpu and on the
twin lane with the rewrite off."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.gates import Closed, Gated
from shapefuzz.families.matmul.params import QDQ_MAX_K, forms_for, zero_points
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import module_traits
from shapefuzz.judge.oracle import check_case
from shapefuzz.model import Stage, Status, Verdict

FAMILY = get_family("matmul")
TWIN = "llvm-cpu-no-qdq-rewrite"


def _q(**changes):
    p = {"dtype": "i8", "out": "i32", "batch": [], "batch_dyn": [], "m": 4, "n": 5, "k": 6, "m_dyn": False,
         "n_dyn": False, "k_dyn": False, "form": "generic"}
    p.update(changes)
    return FAMILY.load(p)


def _by_loops(a: np.ndarray, b: np.ndarray, a_zps: list[int], b_zps: list[int]) -> np.ndarray:
    """sum_k (a[m, k] - a_zp[m]) * (b[k, n] - b_zp[n]), one element at a time."""
    m, k = a.shape
    n = b.shape[1]
    out = np.zeros((m, n), np.int64)
    for i in range(m):
        for j in range(n):
            out[i, j] = sum((int(a[i, t]) - a_zps[i % len(a_zps)]) * (int(b[t, j]) - b_zps[j % len(b_zps)])
                            for t in range(k))
    return out


def test_zero_points_per_row_and_column_cycle_through_the_extremes():
    p = _q(a_zp=5, a_zp_per="row", b_zp=200, b_unsigned=True, b_zp_per="col", m=7)
    assert zero_points(p, "a") == [5, -128, 127, 0, -1, 1, 5]
    assert zero_points(p, "b") == [200, 0, 255, 128, 1]
    assert zero_points(_q(a_zp=-128), "a") == [-128]
    assert {"zp:row", "zp:col", "u8", "zp:extreme"} <= set(FAMILY.features(p.replace(a_zp=-128)))


def test_the_reference_subtracts_per_row_and_per_column_zero_points_from_u8_and_i8_operands():
    p = _q(a_zp=-128, a_zp_per="row", b_zp=255, b_unsigned=True, b_zp_per="col")
    a, b = FAMILY.make_inputs(p, 7)
    assert a.dtype == np.int8 and b.dtype == np.uint8 and b.max() == 255 and a.min() == -128
    (c,) = FAMILY.reference(p, [a, b])
    assert c.dtype == np.int32
    assert c.tolist() == _by_loops(a, b, zero_points(p, "a"), zero_points(p, "b")).tolist()
    # stored transposed: the zero points still run along M and N
    at, bt = a.T.copy(), b.T.copy()
    (ct,) = FAMILY.reference(p.replace(trans_a=True, trans_b=True), [at, bt])
    assert ct.tolist() == c.tolist()
    # the qdq form computes the same integers
    assert FAMILY.reference(p.replace(form="qdq"), [a, b])[0].tolist() == c.tolist()


def test_which_forms_take_which_zero_points():
    assert "qdq" in forms_for(_q(a_zp_per="row")) and "quantized" not in forms_for(_q(a_zp_per="row"))
    assert "qdq" not in forms_for(_q(k=QDQ_MAX_K + 1))  # an f32 partial sum past 2^24 would round
    assert "quantized" in forms_for(_q(a_zp=-128, b_zp=127))
    assert not FAMILY.is_valid(_q(batch=[2], batch_dyn=[False], a_zp_per="row").to_json())  # 2-D only
    assert not FAMILY.is_valid(_q(b_zp_per="row").to_json()) and not FAMILY.is_valid(_q(a_zp_per="col").to_json())
    assert FAMILY.is_valid(_q(a_unsigned=True, a_zp=255).to_json())


@pytest.mark.parametrize("changes, message", [
    ({"b_unsigned": True, "b_zp": 256}, "b_zp 256 is not a u8 value"),
    ({"b_unsigned": True, "b_zp": -1}, "b_zp -1 is not a u8 value"),
    ({"a_zp_per": "col"}, "a_zp_per is tensor or row"),
    ({"a_zp_per": "row", "vec": "vecmat", "m": 1}, "per-row / per-column zero points only on a plain 2-D i8 case"),
])
def test_bad_quantization_params_are_one_line_exit_2(tmp_path, changes, message):
    good = _q(b_zp=5)
    data = good.to_json() | changes
    text = render_case(Case.make("matmul", good)).splitlines()
    header = json.loads(text[0].split(":", 1)[1])
    header["params"] = data
    path = tmp_path / "case.mlir"
    path.write_text("// shapefuzz-case: " + json.dumps(header) + "\n" + "\n".join(text[1:]) + "\n")
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "rocm-gfx942"],
                         capture_output=True, text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(lines) == 1, out.stderr
    assert message in lines[0], lines[0]


def test_the_qdq_form_is_what_the_twin_lane_takes_and_the_integer_forms_are_not():
    qdq = FAMILY.render(_q(form="qdq", a_zp_per="row"))
    assert "iree_linalg_ext.dequantize_affine" in qdq and "arith.fptosi" in qdq
    assert BACKENDS[TWIN].ineligible_for(module_traits(qdq)) is None
    for form in ("generic", "named", "quantized"):
        assert BACKENDS[TWIN].ineligible_for(module_traits(FAMILY.render(_q(form=form)))) is not None
    torch = FAMILY.render(_q(form="qdq", b_zp_per="col", frontend="torch"))
    assert "torch.quantized_decomposed.dequantize_per_channel" in torch and "qdq" in module_traits(torch)
    onnx = FAMILY.render(_q(form="qdq", a_unsigned=True, a_zp=255, frontend="onnx"))
    assert "onnx.DequantizeLinear" in onnx and "ui8" in onnx and "qdq" in module_traits(onnx)


def test_a_release_without_the_affine_dequantize_draws_the_generic_form():
    gated = Gated((Closed("matmul", "form qdq", "no dequantize_affine", True),
                   Closed("matmul", "torch qdq spelling", "no PT2E ops", True)))
    p = _q(form="qdq", a_zp_per="row")
    assert gated.params("matmul", p) == p.replace(form="generic")
    torch = _q(form="qdq", frontend="torch")
    assert gated.params("matmul", torch) == torch.replace(form="generic")
    onnx = _q(form="qdq", frontend="onnx")  # DequantizeLinear is an ONNX node: any release parses it
    assert gated.params("matmul", onnx) == onnx
    for q in (gated.params("matmul", p), gated.params("matmul", torch)):
        assert FAMILY.is_valid(q) and "dequantize" not in FAMILY.render(q)


def test_onnx_references_per_row_matmul_integer_gap_is_not_a_judge():
    from shapefuzz.judge.onnx_judge import second_opinion

    p = _q(a_zp=3, a_zp_per="row", m=4, k=4)
    case = Case.make("matmul", p)
    inputs = FAMILY.make_inputs(p, 0)
    opinion = second_opinion(case, inputs, FAMILY.reference(p, inputs))
    assert opinion is not None and opinion.results is None and "per-row a_zero_point" in opinion.note
    column = _q(b_zp=-128, b_zp_per="col")
    inputs = FAMILY.make_inputs(column, 0)
    opinion = second_opinion(Case.make("matmul", column), inputs, FAMILY.reference(column, inputs))
    assert opinion is not None and opinion.results is not None and not opinion.disagreement


# Extreme zero points against extreme values, per row / per column, u8 operands, in each spelling.
REAL = [
    _q(form="qdq", a_zp=-128, a_zp_per="row", b_zp=127, b_zp_per="col", trans_b=True, m_dyn=True),
    _q(form="qdq", a_unsigned=True, a_zp=255, b_zp=-128, k=33, k_dyn=True),
    _q(form="qdq", batch=[2], batch_dyn=[True], bcast="b", a_zp=127, b_zp=-128),
    _q(form="qdq", a_zp=-128, a_zp_per="row", b_zp=127, frontend="torch"),
    _q(form="qdq", a_unsigned=True, a_zp=0, b_zp=127, b_zp_per="col", frontend="onnx"),
    _q(form="named", a_zp=127, a_zp_per="row", b_unsigned=True, b_zp=255, b_zp_per="col", trans_a=True),
    _q(a_zp=-128, b_zp=127, b_zp_per="col", frontend="onnx"),
]


@pytest.mark.iree
@pytest.mark.parametrize("index", range(len(REAL)))
def test_quantized_matmuls_match_their_reference_on_llvm_cpu_and_on_the_twin(toolchain, index):
    p = REAL[index]
    report = check_case(Case.make("matmul", p), ["llvm-cpu", TWIN], toolchain, confirm=False)
    results = {r.backend: r for r in report.results}
    assert report.verdict == Verdict.PASS, [(r.backend, r.detail[:300]) for r in report.results]
    assert results["llvm-cpu"].stage == Stage.COMPARE and results["llvm-cpu"].status == Status.OK
    qdq = "qdq" in module_traits(FAMILY.render(p))
    assert qdq == (p.form == "qdq")
    assert results[TWIN].stage == Stage.COMPARE and results[TWIN].status == Status.OK


def test_a_u8_operands_saved_inputs_are_taken_back_for_its_signless_i8_argument():
    from shapefuzz.errors import InvalidInputError
    from shapefuzz.iree.mlirinfo import check_given_inputs, function_info

    p = _q(a_unsigned=True, a_zp=255)
    info = function_info(FAMILY.render(p))
    check_given_inputs(info, FAMILY.make_inputs(p, 0))  # uint8 for A, int8 for B
    with pytest.raises(InvalidInputError, match="int16"):
        check_given_inputs(info, [np.zeros((4, 6), np.int16), np.zeros((6, 5), np.int8)])
    onnx = function_info(FAMILY.render(p.replace(frontend="onnx")))
    assert onnx.args[0].element == "ui8"
    check_given_inputs(onnx, FAMILY.make_inputs(p, 0))
    with pytest.raises(InvalidInputError):
        check_given_inputs(onnx, [np.zeros((4, 6), np.int8), np.zeros((6, 5), np.int8)])
