"""The oracle against the real IREE 3.13 compiler and runtime."""

from pathlib import Path

import numpy as np
import pytest

from shapefuzz.iree.mlirinfo import function_info, random_inputs
from shapefuzz.model import Stage, Status, Verdict
from shapefuzz.judge.oracle import Expectation, check_module

DATA = Path(__file__).resolve().parents[1] / "data"
pytestmark = pytest.mark.iree


def test_matmul_matches_on_every_executing_backend(toolchain):
    text = (DATA / "matmul.mlir").read_text()
    inputs = random_inputs(function_info(text), seed=1, dynamic_size=4)
    expected = [inputs[0] @ inputs[1]]
    backends = [b for b in ("llvm-cpu", "vmvx", "vulkan-spirv") if b != "vulkan-spirv" or toolchain.probe.has_device("vulkan")]
    report = check_module(text, backends + ["rocm-gfx942"], Expectation(inputs, expected), toolchain)
    assert report.verdict == Verdict.PASS, report.to_json()
    by_name = {r.backend: r for r in report.results}
    for name in backends:
        assert by_name[name].stage == Stage.COMPARE and by_name[name].status == Status.OK
    assert by_name["rocm-gfx942"].stage == Stage.COMPILE  # compile-only here


def test_known_compile_failure_has_a_stable_signature(toolchain):
    text = (DATA / "conv1d_stride3.mlir").read_text()
    report = check_module(text, ["llvm-cpu", "rocm-gfx942"], None, toolchain)
    assert report.verdict == Verdict.FAIL
    for result in report.results:
        assert (result.stage, result.status) == (Stage.COMPILE, Status.ERROR)
        assert not result.flaky  # confirmed by the re-run
        assert result.signature.message == (
            "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
        )


def test_wrong_reference_is_a_mismatch_naming_the_backend(toolchain):
    text = (DATA / "matmul.mlir").read_text()
    inputs = random_inputs(function_info(text), seed=1, dynamic_size=4)
    wrong = [inputs[0] @ inputs[1] + np.float32(1)]
    report = check_module(text, ["llvm-cpu"], Expectation(inputs, wrong), toolchain, confirm=False)
    (result,) = report.results
    assert (result.stage, result.status) == (Stage.COMPARE, Status.MISMATCH)
    assert str(result.signature) == "llvm-cpu/compare/mismatch: wrong values"


def test_input_that_does_not_verify_is_invalid_not_a_finding(toolchain):
    text = (DATA / "matmul.mlir").read_text().replace("-> tensor<4x3xf32> {", "-> tensor<4x5xf32> {")
    report = check_module(text, ["llvm-cpu"], None, toolchain)
    assert report.verdict == Verdict.INVALID and "doesn't match function result type" in report.verify_error


def test_f16_on_the_default_vulkan_profile_is_a_target_limit_not_a_bug(toolchain):
    if not toolchain.probe.has_device("vulkan"):
        pytest.skip("no Vulkan device")
    text = (DATA / "f16_add.mlir").read_text()
    inputs = [np.arange(8, dtype=np.float16) / 4]
    report = check_module(text, ["llvm-cpu", "vulkan-spirv", "vmvx"], Expectation(inputs, [inputs[0] + np.float16(1)]), toolchain, confirm=False)
    status = {r.backend: r.status for r in report.results}
    assert status == {"llvm-cpu": Status.OK, "vulkan-spirv": Status.UNSUPPORTED, "vmvx": Status.UNSUPPORTED}
    assert report.verdict == Verdict.PASS and "16-bit storage" in report.results[1].detail
