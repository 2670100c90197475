"""The norm family: references against hand-computed values (layer, group, instance, batch and
RMS norm, softmax, log-softmax; unit batch and channel dims; NCHW against NHWC), the tolerance
(within it for rounding, a wrong group or axis outside it), bad params (an axis out of range,
epsilon <= 0) refused as the user's error, each form and spelling against the reference on
llvm-cpu for a handful of cases, and a torch-mlir bug it found pinned."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.families.norm.reference import tolerance
from shapefuzz.model import MismatchKind, Verdict

FAMILY = get_family("norm")


def _p(kind, shape, **changes):
    p = {"kind": kind, "dtype": "f32", "shape": list(shape), "dyn": [False] * len(shape), "affine": False, "eps": 1e-12}
    if kind in ("group", "instance", "batch"):
        p["layout"] = "nchw"
    p.update(changes)
    return FAMILY.load(p)


def _ref(p, *arrays):
    return FAMILY.reference(p, [np.asarray(a, np.float32) for a in arrays])[0]


def test_layer_and_rms_norm_by_hand():
    x = [[1, 2, 3, 4], [2, 2, 2, 2]]
    y = _ref(_p("layer", [2, 4], axis=1), x)
    assert np.allclose(y[0], (np.array([1, 2, 3, 4]) - 2.5) / math.sqrt(1.25)) and np.all(y[1] == 0)
    y = _ref(_p("layer", [2, 4], axis=0, affine=True), x, np.full((2, 4), 2.0), np.ones((2, 4)))  # over every dim
    assert np.allclose(y, 2 * (np.array(x) - 2.25) / math.sqrt(0.6875) + 1)
    y = _ref(_p("rms", [1, 2], axis=1, affine=True), [[3, 4]], [[1, -1]])
    assert np.allclose(y, [[3 / math.sqrt(12.5), -4 / math.sqrt(12.5)]])


def test_group_instance_and_batch_norm_by_hand_with_unit_dims():
    x = np.array([1, 3, 10, 14], np.float32).reshape(1, 4, 1)  # unit batch, one spatial element
    y = _ref(_p("group", [1, 4, 1], groups=2), x)
    assert np.allclose(y.reshape(-1), [-1, 1, -1, 1])  # each group of two channels normalized alone
    y = _ref(_p("group", [1, 4, 1], groups=1), x)
    assert np.allclose(y.reshape(-1), (np.array([1, 3, 10, 14]) - 7) / math.sqrt(27.5))
    x = np.arange(12, dtype=np.float32).reshape(2, 1, 6)  # a unit channel dim
    y = _ref(_p("instance", [2, 1, 6], affine=True), x, [3], [1])
    assert np.allclose(y[1, 0], 3 * (np.arange(6) - 2.5) / math.sqrt(35 / 12) + 1)
    nhwc = _ref(_p("instance", [2, 6, 1], layout="nhwc", affine=True), x.transpose(0, 2, 1), [3], [1])
    assert np.allclose(nhwc.transpose(0, 2, 1), y)
    x = np.array([[1, 2], [3, 4]], np.float32)  # batch norm: given mean / var per channel
    y = _ref(_p("batch", [2, 2], eps=0.25), x, [2, 1], [0, 1], [1, 2], [0.75, 3.75])
    assert np.allclose(y, [[0, 1], [4, 2]])


def test_softmax_and_log_softmax_by_hand():
    x = [[0, math.log(3)], [5, 5]]
    assert np.allclose(_ref(_p("softmax", [2, 2], axis=1), x), [[0.25, 0.75], [0.5, 0.5]])
    assert np.allclose(_ref(_p("logsoftmax", [2, 2], axis=1), x), np.log([[0.25, 0.75], [0.5, 0.5]]))
    y = _ref(_p("softmax", [2, 2], axis=0), x)
    assert np.allclose(y.sum(axis=0), 1) and np.isclose(y[1, 0], 1 / (1 + math.exp(-5)))


def test_the_tolerance_takes_rounding_and_refuses_a_wrong_group_or_axis():
    p = _p("group", [2, 8, 33], groups=4, dtype="f16", affine=True, eps=1e-5)
    inputs = FAMILY.make_inputs(p, 3)
    (want,) = FAMILY.reference(p, inputs)
    bound = tolerance(p, inputs)
    assert np.all(bound > 0) and np.all(bound < 0.05 * np.abs(want).max())
    nudged = (want.astype(np.float64) + 0.5 * bound).astype(np.float16)  # half: rounding to f16 adds the rest
    assert FAMILY.compare(p, inputs, [want], [nudged]) is None
    (one_group,) = FAMILY.reference(p.replace(groups=1), inputs)
    assert FAMILY.compare(p, inputs, [want], [one_group]).kind == MismatchKind.VALUES
    s = _p("softmax", [5, 65], axis=1)
    ins = FAMILY.make_inputs(s, 4)
    (w,) = FAMILY.reference(s, ins)
    (other,) = FAMILY.reference(s.replace(axis=0), ins)
    assert FAMILY.compare(s, ins, [w], [other]).kind == MismatchKind.VALUES
    assert FAMILY.compare(s, ins, [w], [w * np.float32(1 + 2**-20)]) is None


@pytest.mark.parametrize("field,value,says", [("eps", 0.0, "eps 0.0 must be"), ("eps", -1e-05, "must be a finite number > 0"),
                                              ("axis", 3, "axis 3 is out of range")])
def test_bad_params_are_one_line_exit_2(tmp_path, field, value, says):
    good = _p("layer", [2, 3, 4], axis=1, eps=1e-05)
    text = render_case(Case.make("norm", good))
    old = f'"{field}":{good[field]!r}'
    assert old in text
    path = tmp_path / "case.mlir"
    path.write_text(text.replace(old, f'"{field}":{value!r}'))
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "llvm-cpu"],
                         capture_output=True, text=True, timeout=120)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2 and "Traceback" not in out.stderr and len(lines) == 1, out.stderr
    assert says in lines[0], lines[0]


# Each case in every form and both spellings (torch, and ONNX where it can write it).
INTEGRATION = [
    _p("layer", [2, 6, 3, 5], dyn=[True, False, False, True], axis=2, affine=True, dtype="f16", eps=1e-5),
    _p("group", [2, 6, 3, 5], dyn=[True, False, False, False], groups=3, affine=True, eps=1e-5),
    _p("batch", [1, 4, 3, 6], dyn=[False, True, True, False], layout="nhwc", dtype="f16", eps=1e-3),
    _p("rms", [3, 129], dyn=[False, True], axis=1, affine=True, eps=1e-6),
    _p("softmax", [4, 7, 9], dyn=[True, False, True], axis=1, dtype="f16"),
    _p("logsoftmax", [5, 33], axis=1, dyn=[False, True]),
]


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.kind}-{p.dtype}")
def test_forms_and_spellings_match_the_reference_on_cpu(params, toolchain):
    from shapefuzz.families.frontends import frontend_of
    from shapefuzz.families.onnx_forms import HAND_WRITTEN
    from shapefuzz.judge.oracle import check_forms

    result = check_forms(Case.make("norm", params), ["llvm-cpu"], toolchain, seed=2, confirm=False)
    spelled = {frontend_of(FAMILY.load(form.params)): form.params for form, _ in result.reports}
    assert {"linalg", "torch"} <= set(spelled) and ("onnx" in spelled) == (params.kind != "rms"), spelled
    assert "onnx" not in spelled or HAND_WRITTEN not in FAMILY.render(spelled["onnx"])  # a real model, imported
    assert result.verdict == Verdict.PASS and not result.disagreements, [r.to_json() for _, r in result.reports]


# A real IREE 3.13 wrong-value bug this family found: torch-mlir's instance_norm decomposition
# (which ONNX InstanceNormalization and the torch.onnx group norm also go through) counts a `?`
# spatial dim as -1, so the variance is divided by a negative count: every result NaN on every
# backend. A `?` batch or channel dim, and the linalg forms, are right.
INSTANCE_DYNAMIC_SPATIAL = _p("instance", [2, 6, 3, 5], dyn=[False, False, False, True], affine=True, eps=1e-5,
                              frontend="torch")


@pytest.mark.iree
def test_known_bug_instance_norm_over_a_dynamic_spatial_dim():
    from support.family_testing import check_params
    from shapefuzz.model import Status

    report = check_params("norm", INSTANCE_DYNAMIC_SPATIAL)
    if report.results[0].status == Status.OK:
        pytest.fail("IREE now computes this right: the known bug is fixed, update this test")
    assert report.results[0].status == Status.MISMATCH and "got nan" in report.results[0].detail, report.to_json()
    assert check_params("norm", INSTANCE_DYNAMIC_SPATIAL.replace(frontend="linalg")).verdict == Verdict.PASS
    assert check_params("norm", INSTANCE_DYNAMIC_SPATIAL.replace(dyn=[True, True, False, False])).verdict == Verdict.PASS


@pytest.mark.iree
def test_known_bug_instance_norm_without_scale_and_bias_does_not_compile():
    """torch-mlir's instance_norm decomposition unsqueezes the weight even when it is None (which
    `torch.nn.InstanceNorm2d(affine=False)` exports): a compile error in 3.13, not an unsupported op."""
    from support.family_testing import check_params
    from shapefuzz.model import Status

    report = check_params("norm", _p("instance", [2, 3, 4], affine=False, eps=1e-5, frontend="torch"))
    if report.results[0].status == Status.OK:
        pytest.fail("IREE now compiles this: the known bug is fixed, update this test")
    assert report.results[0].status == Status.ERROR and "torch.aten.unsqueeze" in report.results[0].detail, report.to_json()


# Two wrong-value bugs on Vulkan (Mesa's llvmpipe driver here, the only Vulkan device; llvm-cpu and
# vmvx are right, and so is each equivalent form named beside it):
# - softmax (and log-softmax) over a middle axis of a 4-D input with a batch of 2 or more: some sums
#   are lost (results inf); the unit batch is right.
SOFTMAX_MIDDLE_AXIS = _p("softmax", [2, 17, 3, 9], axis=1)
# - an f16 NHWC group norm spelled in torch (cast to f32, permuted to NCHW, group_norm, permuted
#   back, cast): wrong values (max error about 3); the same case in f32, and every linalg form, are
#   right. Likely the matmul family's "f16 widened, then transposed" SPIR-V bug again.
GROUP_NHWC_F16_TORCH = _p("group", [2, 2, 7, 8], groups=8, layout="nhwc", dtype="f16", frontend="torch", eps=1e-5)


@pytest.mark.iree
@pytest.mark.vulkan
@pytest.mark.parametrize("params,right", [
    (SOFTMAX_MIDDLE_AXIS, SOFTMAX_MIDDLE_AXIS.replace(shape=[1, 17, 3, 9])),
    (GROUP_NHWC_F16_TORCH, GROUP_NHWC_F16_TORCH.replace(dtype="f32")),
], ids=["softmax-middle-axis", "group-nhwc-f16-torch"])
def test_known_bugs_vulkan_llvmpipe(params, right, has_vulkan):
    from support.family_testing import assert_known_vulkan_llvmpipe_bug

    if not has_vulkan:
        pytest.skip("no Vulkan device")
    assert_known_vulkan_llvmpipe_bug("norm", params, right)
