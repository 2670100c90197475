"""Quantized convolution (issue 45): i8 input and filter zero points across the whole range (the
padding's value taken before they come off), through the `_q` named ops, a generic's body, or
shifted operands before a named op without a `_q` twin; the qdq form (both dequantized by IREE's
affine dequantize into an f32 conv, the pattern 3.13's QDQ rewrite matches), in torch as PT2E
writes it and in ONNX as ConvInteger or DequantizeLinear; the exact integer reference; the release
gates of the new forms; each judged on llvm-cpu and on the twin lane with the rewrite off."""

from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.conv.params import LAYOUTS, QDQ_MAX_REDUCTION, QUANTIZED_OPS, filter_labels, input_labels
from shapefuzz.families.gates import Closed, Gated
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import module_traits
from shapefuzz.judge.oracle import check_case
from shapefuzz.model import Stage, Status, Verdict

FAMILY = get_family("conv")
TWIN = "llvm-cpu-no-qdq-rewrite"


def _q(layout: str = "nchw_fchw", **changes):
    lay = LAYOUTS[layout]
    d = {"rank": lay.rank, "kind": lay.kind, "layout": layout, "compute_layout": layout, "form": "named",
         "loop_perm": [], "dtype": "i8", "acc": "i32", "n": 2, "g": 2 if lay.kind == "grouped" else 1, "c": 3,
         "f": 2 if lay.kind in ("regular", "grouped") else 1, "m": 2 if lay.kind == "depthwise_m" else 1,
         "spatial": [5] * lay.rank, "kernel": [2] * lay.rank, "strides": [1] * lay.rank, "dilations": [1] * lay.rank,
         "pad_lo": [1] * lay.rank, "pad_hi": [1] * lay.rank, "pad_form": "pad", "pad_value": -128,
         "input_dyn": [i == 0 for i, _ in enumerate(input_labels(lay))], "filter_dyn": [False] * len(filter_labels(lay)),
         "bias": "none", "epilogue": "none", "big": False, "input_zp": -128, "filter_zp": 127}
    d.update(changes)
    return FAMILY.load(d)


def _naive_nchw(x: np.ndarray, w: np.ndarray, pad: int, pad_value: int, x_zp: int, w_zp: int) -> np.ndarray:
    """A stride-1 NCHW convolution one output at a time: every input value (padding included)
    minus the input's zero point, times every filter value minus the filter's."""
    n, c, h, wd = x.shape
    f, _, kh, kw = w.shape
    padded = np.full((n, c, h + 2 * pad, wd + 2 * pad), pad_value, np.int64)
    padded[:, :, pad:pad + h, pad:pad + wd] = x
    out = np.zeros((n, f, h + 2 * pad - kh + 1, wd + 2 * pad - kw + 1), np.int64)
    for b, o, i, j in itertools.product(*map(range, out.shape)):
        out[b, o, i, j] = sum((int(padded[b, ch, i + a, j + e]) - x_zp) * (int(w[o, ch, a, e]) - w_zp)
                              for ch in range(c) for a in range(kh) for e in range(kw))
    return out


def test_the_reference_takes_zero_points_off_every_value_padding_included():
    p = _q(pad_value=5)
    x, w = FAMILY.make_inputs(p, 3)
    assert x.dtype == np.int8 and {-128, 127} <= set(x.ravel().tolist())  # the whole range, its ends
    (ref,) = FAMILY.reference(p, [x, w])
    assert ref.dtype == np.int32
    assert ref.tolist() == _naive_nchw(x, w, 1, 5, -128, 127).tolist()
    for form in FAMILY.equivalent_forms(p):  # the generic, other layouts, the insert padding, qdq
        assert FAMILY.reference(form, [x, w])[0].tolist() == ref.tolist()
    assert any(form.qdq for form in FAMILY.equivalent_forms(p))


def test_named_quantized_cases_use_the_q_op_where_linalg_has_one():
    for layout, op in QUANTIZED_OPS.items():
        text = FAMILY.render(_q(layout))
        assert f"linalg.{op} " in text and "%input_zp, %filter_zp" in text, layout
    shifted = FAMILY.render(_q("nchw_chw"))  # no depthwise NCHW _q op: operands shifted first
    assert "_q " not in shifted and "%input_shifted" in shifted and "arith.subi %w, %input_zp" in shifted
    generic = FAMILY.render(_q(form="generic", loop_perm=list(range(7))))
    assert "arith.subi %ae, %input_zp" in generic and "arith.subi %be, %filter_zp" in generic
    plain = FAMILY.render(_q(input_zp=0, filter_zp=0))  # an i8 case without zero points: as before
    assert "_q " not in plain and "input_zp" not in plain
    assert "named:q" in FAMILY.features(_q()) and "zp:extreme" in FAMILY.features(_q())


def test_the_twin_takes_a_qdq_conv_and_never_a_plain_f32_one():
    qdq = FAMILY.render(_q(qdq=True))
    assert "iree_linalg_ext.dequantize_affine" in qdq and "arith.fptosi" in qdq
    assert BACKENDS[TWIN].ineligible_for(module_traits(qdq)) is None
    f32 = FAMILY.render(_q(dtype="f32", acc="f32", input_zp=0, filter_zp=0, pad_value=0))
    assert BACKENDS[TWIN].ineligible_for(module_traits(f32)) is not None
    assert BACKENDS[TWIN].ineligible_for(module_traits(FAMILY.render(_q()))) is not None  # the _q op: unchanged


def test_which_quantized_cases_are_valid():
    assert FAMILY.is_valid(_q(qdq=True, bias="epilogue"))
    assert not FAMILY.is_valid(_q(qdq=True, bias="init"))  # the rewrite wants a zero-filled accumulator
    assert not FAMILY.is_valid(_q(qdq=True, c=QDQ_MAX_REDUCTION))  # f32 sums past 2^24 would round
    assert not FAMILY.is_valid(_q(dtype="f32", acc="f32", pad_value=0))  # zero points only for i8
    assert FAMILY.is_valid(_q(input_zp=0, filter_zp=0, qdq=True))


@pytest.mark.parametrize("changes, message", [
    ({"input_zp": 128}, "input_zp 128 is not an i8 value (-128..127)"),
    ({"qdq": True, "bias": "init"}, "qdq: an i8 case without a bias in the accumulator"),
    ({"dtype": "f32", "acc": "f32", "pad_value": 0}, "input_zp: zero points only with i8 operands"),
])
def test_bad_quantization_params_are_one_line_exit_2(tmp_path, changes, message):
    good = _q()
    lines = render_case(Case.make("conv", good)).splitlines()
    header = json.loads(lines[0].split(":", 1)[1])
    header["params"] = good.to_json() | changes
    path = tmp_path / "case.mlir"
    path.write_text("// shapefuzz-case: " + json.dumps(header) + "\n" + "\n".join(lines[1:]) + "\n")
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "rocm-gfx942"],
                         capture_output=True, text=True, timeout=120)
    err = out.stderr.strip().splitlines()
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(err) == 1, out.stderr
    assert message in err[0], err[0]


def test_a_release_without_the_quantized_forms_draws_the_same_integers_another_way():
    gated = Gated(tuple(Closed("conv", what, "not parsed", True)
                        for what in ("form named _q", "form qdq", "torch qdq spelling")))
    for p in (_q(), _q(qdq=True), _q(qdq=True, frontend="torch")):
        q = gated.params("conv", p)
        assert q is not None and FAMILY.is_valid(q) and gated.accepts("conv", q)
        text = FAMILY.render(q)
        assert "dequantize" not in text and "_q " not in text
        x, w = FAMILY.make_inputs(p, 0)
        assert FAMILY.reference(q, [x, w])[0].tolist() == FAMILY.reference(p, [x, w])[0].tolist()
    onnx = _q(qdq=True, frontend="onnx")  # DequantizeLinear is an ONNX node: any release parses it
    assert gated.params("conv", onnx) == onnx


# Extreme zero points against extreme values and a padding at the other extreme, in each form.
REAL = [
    _q(),  # conv_2d_nchw_fchw_q, padding -128 with the input's zero point -128: real zeros
    _q("nhwc_hwcm", pad_value=127, input_zp=127, filter_zp=-128, strides=[2, 1], dilations=[1, 2]),
    _q("nchw_chw", pad_value=127),  # no _q twin: shifted operands before the named op
    _q(form="generic", loop_perm=list(range(7)), pad_value=127, bias="epilogue", epilogue="relu"),
    _q(qdq=True, pad_value=127, bias="epilogue"),
    _q("ndhwc_dhwcf", qdq=True, form="generic", loop_perm=list(range(9)), pad_lo=[1, 0, 0], pad_hi=[0, 0, 1]),
    _q(qdq=True, frontend="torch", epilogue="relu"),
    _q(frontend="onnx"),  # ConvInteger
    _q("nhwc_hwc", qdq=True, pad_lo=[1, 0], pad_hi=[0, 1], frontend="onnx"),  # DequantizeLinear, depthwise
]


@pytest.mark.iree
@pytest.mark.parametrize("index", range(len(REAL)))
def test_quantized_convs_match_their_reference_on_llvm_cpu_and_on_the_twin(toolchain, index):
    p = REAL[index]
    assert FAMILY.is_valid(p)
    report = check_case(Case.make("conv", p), ["llvm-cpu", TWIN], toolchain, confirm=False)
    assert report.verdict == Verdict.PASS, [(r.backend, r.detail[:300]) for r in report.results]
    for result in report.results:
        assert (result.stage, result.status) == (Stage.COMPARE, Status.OK), (result.backend, result.detail[:300])
    assert ("qdq" in module_traits(FAMILY.render(p))) == p.qdq
