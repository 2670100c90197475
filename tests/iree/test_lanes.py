"""The lane registry: target limits decided before compiling or from the error text, pipeline
variants probed per release, which lanes are in the default set and which execute here."""

from pathlib import Path

import numpy as np
import pytest

from shapefuzz.iree.backends import ALIASES, BACKENDS, DEFAULT_BACKENDS, VARIANTS, executing_backends
from shapefuzz.iree.mlirinfo import element_types, module_traits
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.iree.toolchain import find_toolchain
from support.fakes import make_fake_toolchain
from support.lanes import CONV, conv_expectation  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "data"


def test_module_traits_name_types_and_dynamic_dims_not_names():
    text = "func.func @conv_f16(%i8: tensor<?x4xi8>, %b: tensor<2xsi64>) { %c = arith.constant 1.0 : bf16 }"
    assert element_types(text) == {"i8", "si64", "bf16"}
    assert module_traits(text) == {"i8", "si64", "bf16", "dynamic-dims"}
    assert "dynamic-dims" not in module_traits("tensor<4x3xf32>")
    assert "dynamic-dims" in module_traits("!torch.vtensor<[2,?],f32>")


def test_known_limits_are_decided_from_the_case_traits():
    assert BACKENDS["vulkan-spirv"].limit_for({"f32", "f16"}) == "the default Vulkan profile has no 16-bit storage"
    assert BACKENDS["vmvx"].limit_for({"f16"}) == "vmvx has no f16 support"
    assert BACKENDS["vmvx"].limit_for({"bf16"}) == "vmvx has no bf16 support"  # measured on 3.13: no VM lowering
    # i8 is emulated on the default Vulkan profile in 3.13, not missing: judged by the outcome.
    assert BACKENDS["vulkan-spirv"].limit_for({"i8", "i32"}) is None
    assert BACKENDS["vulkan-llvmpipe"].limit_for({"f16", "i8"}) is None
    assert BACKENDS["llvm-cpu"].limit_for({"f16", "i8", "dynamic-dims"}) is None


def test_error_limits_are_decided_from_the_error_text():
    spirv = BACKENDS["vulkan-spirv"]
    assert spirv.limit_in_error("error: missing capability Int8 required by ...") is not None
    assert spirv.limit_in_error("'spirv.Load' op requires StorageBuffer8BitAccess") is not None
    # A module that merely uses i8 and fails for another reason is a finding, not a limit.
    assert spirv.limit_in_error("error: 'linalg.generic' op inferred input/output operand #0 (i8)") is None
    assert BACKENDS["cuda-sm80"].limit_in_error("error: missing GPU target in #hal.executable.target") is not None
    assert BACKENDS["rocm-gfx942"].limit_in_error("error: missing GPU target") is None
    assert BACKENDS["llvm-cpu-single-dispatch"].limit_in_error(
        "error: unhandled dynamic dimensions for created dispatch region") is not None
    assert BACKENDS["llvm-cpu"].limit_in_error("error: unhandled dynamic dimensions for created dispatch region") is None


def test_variants_inherit_the_target_and_are_listed():
    sd = BACKENDS["rocm-gfx942-single-dispatch"]
    assert sd.variant_of == "rocm-gfx942" and sd.driver == "hip" and sd.needs_passes  # executes where gfx942 ran
    assert "rocm-gfx942-single-dispatch" in VARIANTS["rocm-gfx942"]
    assert BACKENDS["vulkan-llvmpipe-im2col"].error_limits == BACKENDS["vulkan-llvmpipe"].error_limits
    assert set(ALIASES["variants"]) == {b.name for b in BACKENDS.values() if b.variant_of}
    assert "vulkan-llvmpipe" in DEFAULT_BACKENDS and "rocm-gfx942-single-dispatch" in DEFAULT_BACKENDS
    assert DEFAULT_BACKENDS[0] == "llvm-cpu" and ALIASES["default"] == DEFAULT_BACKENDS


def test_a_lane_whose_flag_the_release_lacks_is_unavailable_not_an_error(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = make_fake_toolchain(tmp_path / "bin", "ok", version="3.4.0",
                                 flags=["--iree-hal-target-device", "--iree-hal-local-target-device-backends",
                                        "--iree-llvmcpu-target-cpu", "--iree-preprocessing-pass-pipeline"])
    probe = find_toolchain(folder).probe
    im2col = BACKENDS["llvm-cpu-im2col"]
    assert not im2col.compiles(probe) and im2col.compile_flags(probe) is None
    assert im2col.availability(probe) == "this compiler has no --iree-global-opt-use-im2col-for-convs"
    assert BACKENDS["llvm-cpu"].compiles(probe)
    # The fake folder links the real 3.13 iree-opt, whose pass list has make-single-dispatch.
    assert BACKENDS["llvm-cpu-single-dispatch"].compiles(probe)


@pytest.mark.iree
def test_pinned_release_builds_every_lane_and_says_which_execute(toolchain):
    probe = toolchain.probe
    assert probe.has_pass("iree-preprocessing-make-single-dispatch")
    picked = ("cuda-native",) if not probe.has_device("cuda") else ()  # needs a GPU to pick its target
    assert all(b.compiles(probe) for b in BACKENDS.values() if b.name not in picked), [
        (b.name, b.availability(probe)) for b in BACKENDS.values()]
    here = executing_backends(probe, BACKENDS)
    assert "llvm-cpu-im2col" in here and "rocm-gfx942-no-igemm" not in here
    flags = BACKENDS["rocm-gfx942-single-dispatch"].compile_flags(probe)
    assert flags[:2] == BACKENDS["rocm-gfx942"].compile_flags(probe)
    assert flags[-1].endswith("(util.func(iree-preprocessing-make-single-dispatch))")


@pytest.mark.iree
def test_every_variant_lane_compiles_a_conv_and_executing_ones_match_the_reference(toolchain):
    names = [name for names in VARIANTS.values() for name in names]
    names = [n for n in names if BACKENDS[n].driver != "vulkan" or toolchain.probe.has_device("vulkan")]
    # 3.13's pad-to-intrinsics fails this conv (its output width 4 is padded, the input's batch dim
    # instead of its width: "dimension #2 to be greater than or equal to 18, but found 6"), a bug
    # the lane is there to find; it compiles a conv of output width 16 (test_release_lanes.py).
    names.remove("rocm-gfx942-pad-to-intrinsics")
    report = check_module(CONV, names, conv_expectation(), toolchain, confirm=False)
    for result in report.results:
        want = Stage.COMPARE if BACKENDS[result.backend].executes(toolchain.probe) else Stage.COMPILE
        assert (result.stage, result.status) == (want, Status.OK), (result.backend, result.detail[:300])


@pytest.mark.iree
def test_i8_on_the_default_vulkan_profile_is_judged_by_its_outcome(toolchain):
    if not toolchain.probe.has_device("vulkan"):
        pytest.skip("no Vulkan device")
    # 7 elements: not a whole number of the 32-bit words the default profile packs i8 into.
    text = ((DATA / "f16_add.mlir").read_text().replace("8xf16", "7xi8").replace("f16", "i8")
            .replace("1.0 : i8", "3 : i8").replace("addf", "addi"))
    inputs = [np.arange(-3, 4, dtype=np.int8) * 30]
    report = check_module(text, ["vulkan-spirv", "vulkan-llvmpipe"], Expectation(inputs, [inputs[0] + np.int8(3)]),
                          toolchain, confirm=False)
    spirv, llvmpipe = report.results
    assert (llvmpipe.stage, llvmpipe.status) == (Stage.COMPARE, Status.OK), llvmpipe.detail
    # Right or wrong, a run that was compared: never set aside because the module mentions i8
    # (measured on 3.13 with Mesa: the last, partial word reads as zeros, a mismatch).
    assert spirv.stage == Stage.COMPARE and spirv.status in (Status.OK, Status.MISMATCH), spirv.detail


@pytest.mark.iree
def test_a_known_limit_is_not_compiled(toolchain):
    text = (DATA / "f16_add.mlir").read_text()
    report = check_module(text, ["vmvx"], Expectation([np.zeros(8, np.float16)], [np.ones(8, np.float16)]),
                          toolchain, confirm=False)
    (result,) = report.results
    assert result.status == Status.UNSUPPORTED and result.compile_seconds == 0.0
    assert result.detail == "target limit (vmvx has no f16 support): not compiled"
