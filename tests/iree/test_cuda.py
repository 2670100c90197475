"""CUDA execution where a device exists. The device-detection logic is tested against a fake
runtime listing (a fake iree-compile, iree-run-module and nvidia-smi: the only way to have a GPU
on a machine without one); the `cuda`-marked test runs a real conv where a CUDA device is listed
and is skipped, saying why, elsewhere."""

import os
import sys
from pathlib import Path

import numpy as np
import pytest

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.iree.toolchain import cuda_arch_from_smi, find_toolchain
from support.lanes import CONV, conv_expectation  # noqa: F401

_COMPILE = """#!{python}
import os, sys
argv = sys.argv[1:]
if '--version' in argv:
    print('IREE compiler version 3.13.0 @ fake'); sys.exit(0)
if '--help-hidden' in argv or '--help' in argv:
    print('  --iree-hal-target-device=<string>\\n  --iree-cuda-target=<string>\\n'
          '  --iree-hal-local-target-device-backends=<string>'); sys.exit(0)
target = next((a.split('=', 1)[1] for a in argv if a.startswith('--iree-cuda-target=')), None)
if target in os.environ.get('FAKE_REJECT', '').split(','):
    sys.stderr.write('trial.mlir:2:8: error: missing GPU target in #hal.executable.target\\n'); sys.exit(1)
out = argv[argv.index('-o') + 1] if '-o' in argv else os.devnull
open(out, 'w').write(f'fake module for {{target}}')
"""

_RUN = """#!{python}
import os, sys
import numpy as np
argv = sys.argv[1:]
open(os.environ['FAKE_RUN_LOG'], 'a').write(' '.join(argv) + '\\n')
if argv == ['--list_devices']:
    print('local-task://')
    if os.environ.get('FAKE_CUDA_DEVICE'):
        print('cuda://GPU-00000000-0000-0000-0000-000000000000')
    sys.exit(0)
if argv and argv[0].startswith('--list_devices'):
    sys.exit(0)
module = open(next(a for a in argv if a.startswith('--module='))[9:]).read()
if module.split()[-1] not in os.environ.get('FAKE_RUNS', '').split(','):
    sys.stderr.write('CUDA_ERROR_INVALID_PTX: a PTX JIT compilation failed\\n'); sys.exit(1)
inputs = [a[len('--input='):] for a in argv if a.startswith('--input=')]
if inputs[0].startswith('@'):  # the oracle: x + x from .npy to .npy
    x = np.load(inputs[0][1:])
    np.save(next(a for a in argv if a.startswith('--output='))[len('--output=@'):], x + x)
else:  # the probe's trial: 4xf32=1 2 3 4
    print('EXEC @main\\nresult[0]: hal.buffer_view\\n4xf32=2 4 6 8')
"""

ADD = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


@pytest.fixture
def fake_gpu(tmp_path, monkeypatch):
    """A toolchain folder whose runtime lists a CUDA device, and an nvidia-smi naming its arch."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_RUN_LOG", str(tmp_path / "run.log"))
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, body in (("iree-compile", _COMPILE), ("iree-run-module", _RUN)):
        (folder / name).write_text(body.format(python=sys.executable))
        (folder / name).chmod(0o755)
    smi_dir = tmp_path / "smi"
    smi_dir.mkdir()

    def make(arch: str | None, reject: str = "", runs: str = "", device: bool = True):
        if arch is not None:
            (smi_dir / "nvidia-smi").write_text(f"#!/bin/sh\necho {arch}\n")
            (smi_dir / "nvidia-smi").chmod(0o755)
        monkeypatch.setenv("PATH", f"{smi_dir}{os.pathsep}{os.environ['PATH']}")
        monkeypatch.setenv("FAKE_REJECT", reject)
        monkeypatch.setenv("FAKE_RUNS", runs)
        monkeypatch.setenv("FAKE_CUDA_DEVICE", "1" if device else "")
        return find_toolchain(folder)

    return make


def test_smi_compute_capability_names_the_arch():
    assert cuda_arch_from_smi("9.0\n9.0\n") == "sm_90"
    assert cuda_arch_from_smi("8.6") == "sm_86"
    assert cuda_arch_from_smi("No devices were found") is None


def test_on_an_h100_the_probe_says_sm_90_is_missing_and_falls_back_to_sm_80(fake_gpu, tmp_path):
    toolchain = fake_gpu("9.0", reject="sm_90,sm_90a,sm_100", runs="sm_80")
    probe = toolchain.probe
    assert probe.cuda_arch == "sm_90" and probe.cuda_runs == ("sm_80",) and probe.cuda_target == "sm_80"
    assert "sm_90: rejected by this compiler (error: missing GPU target" in probe.cuda_note
    assert "sm_80: runs here (PTX JIT-compiled by the driver)" in probe.cuda_note
    sm80, native = BACKENDS["cuda-sm80"], BACKENDS["cuda-native"]
    assert sm80.executes(probe) and sm80.availability(probe) == "compiles and executes"
    assert native.compile_flags(probe)[-1] == "--iree-cuda-target=sm_80" and native.executes(probe)
    # The oracle runs the cuda lane with --device=cuda and judges it against the reference.
    x = np.arange(4, dtype=np.float32)
    report = check_module(ADD, ["cuda-sm80"], Expectation([x], [x + x]), toolchain, confirm=False)
    (result,) = report.results
    assert (result.stage, result.status) == (Stage.COMPARE, Status.OK), result.detail
    assert any("--device=cuda" in line and "--input=@" in line for line in (tmp_path / "run.log").read_text().splitlines())


def test_a_gpu_whose_own_arch_the_compiler_has_gets_it(fake_gpu):
    probe = fake_gpu("8.6", runs="sm_86,sm_80").probe
    assert probe.cuda_runs == ("sm_86", "sm_80")
    assert BACKENDS["cuda-native"].compile_flags(probe)[-1] == "--iree-cuda-target=sm_86"
    assert BACKENDS["cuda-sm80"].executes(probe)


def test_a_listed_gpu_where_nothing_runs_is_compile_only_and_says_why(fake_gpu):
    probe = fake_gpu("9.0", reject="sm_90", runs="").probe
    assert probe.has_device("cuda") and probe.cuda_runs == ()
    sm80 = BACKENDS["cuda-sm80"]
    assert sm80.compiles(probe) and not sm80.executes(probe)
    assert sm80.availability(probe).startswith("compile-only here: GPU sm_90; sm_90: rejected")
    assert "CUDA_ERROR_INVALID_PTX" in sm80.availability(probe)
    assert BACKENDS["cuda-native"].availability(probe).startswith("no target runs on the CUDA device here")


def test_without_a_cuda_device_the_lane_is_compile_only(fake_gpu, tmp_path):
    probe = fake_gpu(None, device=False).probe
    assert not probe.has_device("cuda") and probe.cuda_note == ""
    assert BACKENDS["cuda-sm80"].availability(probe) == "compile-only here: no cuda device"
    assert BACKENDS["cuda-native"].availability(probe) == "no CUDA device here to pick a target for"
    # No trial compile or run was spent on a GPU that is not there.
    assert "--device=cuda" not in (tmp_path / "run.log").read_text()


def _no_cuda_reason(toolchain) -> str | None:
    probe = toolchain.probe
    if not probe.has_device("cuda"):
        return f"no CUDA device: iree-run-module --list_devices lists {', '.join(probe.devices) or 'none'}"
    if not probe.runs_on("cuda", "sm_80"):
        return f"the CUDA device here runs no sm_80 code: {probe.cuda_note}"
    return None


@pytest.mark.iree
@pytest.mark.cuda
def test_conv_on_the_cuda_device_matches_its_reference(toolchain):
    reason = _no_cuda_reason(toolchain)
    if reason is not None:
        pytest.skip(reason)
    names = ["cuda-sm80"] + (["cuda-native"] if BACKENDS["cuda-native"].executes(toolchain.probe) else [])
    report = check_module(CONV, names, conv_expectation(), toolchain, confirm=False)
    for result in report.results:
        assert (result.stage, result.status) == (Stage.COMPARE, Status.OK), (result.backend, result.detail[:500])


def test_rocm_lanes_execute_only_where_their_chip_ran():
    """A HIP device runs only the chip it is: a rocm lane executes where the probe's trial of
    that chip ran right, and compiles only elsewhere (never judged by a run that cannot load)."""
    from dataclasses import replace as _replace

    from shapefuzz.iree.toolchain import ToolchainProbe

    base = ToolchainProbe("3.13.0", (3, 13), frozenset({"--iree-rocm-target", "--iree-hal-target-device",
                                                       "--iree-codegen-llvmgpu-use-igemm"}),
                          ("local-task://",), False)
    mi300 = _replace(base, devices=base.devices + ("hip://GPU-0",), hip_runs=("gfx942",), hip_note="gfx942 run here")
    assert BACKENDS["rocm-gfx942"].executes(mi300) and BACKENDS["rocm-gfx942-no-igemm"].executes(mi300)
    assert not BACKENDS["rocm-gfx90a"].executes(mi300)
    assert BACKENDS["rocm-gfx90a"].availability(mi300) == "compile-only here: gfx942 run here"
    assert BACKENDS["rocm-gfx942"].availability(base) == "compile-only here: no hip device"
    assert ToolchainProbe.from_json(mi300.to_json()) == mi300
