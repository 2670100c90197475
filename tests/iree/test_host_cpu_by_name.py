"""What an issue text tells a reader to pass to compile "as here" compiles as `--iree-llvmcpu-target-cpu=host`
does on this machine (issue #43 item 2: host-dependent lanes say their CPU). Measured on a virtual machine:
`host` resolves to the name "rocketlake" with AVX512-FP16 and AMX features a real Rocket Lake lacks, so the
name alone failed (an f16 max's `fmaxf` libcall) where `host` compiled; the name plus the features beyond
it compiles as `host` does. Real IREE 3.13, whatever this machine's CPU."""

from __future__ import annotations

import platform
import subprocess

import pytest

from shapefuzz.iree.host_cpu import HOST_FLAG, host_cpu, host_cpu_flags, host_features_beyond_name
from support.f16_max import FMAXF


def _executable_target(toolchain, tmp_path, *cpu_flags: str) -> str:
    source = tmp_path / "m.mlir"
    source.write_text(FMAXF)
    done = subprocess.run([str(toolchain.compile_bin), str(source), "--iree-hal-target-device=local",
                           "--iree-hal-local-target-device-backends=llvm-cpu", *cpu_flags,
                           "--compile-to=executable-targets"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def _effective(target_ir: str) -> set[str]:
    import re

    features = re.search(r'cpu_features = "([^"]*)"', target_ir)
    signs: dict[str, str] = {}
    for f in features.group(1).split(",") if features else ():
        if f[:1] in "+-":
            signs[f[1:]] = f[0]
    return {sign + name for name, sign in signs.items()}


@pytest.mark.skipif(platform.machine() != "x86_64", reason="x86 CPU names and features")
@pytest.mark.iree
def test_the_named_flags_give_the_hosts_features_and_verdict(toolchain, tmp_path):
    name = host_cpu(toolchain)
    assert name and name != "host"
    flags = host_cpu_flags(toolchain)
    assert flags[0] == f"--iree-llvmcpu-target-cpu={name}"
    assert (len(flags) == 2) == bool(host_features_beyond_name(toolchain))
    host_ir = _executable_target(toolchain, tmp_path, HOST_FLAG)
    named_ir = _executable_target(toolchain, tmp_path, *flags)
    wanted = {f for f in _effective(host_ir) if f.startswith("+")}
    assert wanted <= _effective(named_ir), sorted(wanted - _effective(named_ir))  # every host feature is on

    def compiles(*cpu: str) -> bool:
        source = tmp_path / "f.mlir"
        source.write_text(FMAXF)
        return subprocess.run([str(toolchain.compile_bin), str(source), "--iree-hal-target-device=local",
                               "--iree-hal-local-target-device-backends=llvm-cpu", *cpu, "-o", str(tmp_path / "m.vmfb")],
                              capture_output=True, timeout=300).returncode == 0

    assert compiles(*flags) == compiles(HOST_FLAG)  # the bug that depends on the CPU, as `host` gives it
