"""What `--iree-llvmcpu-target-cpu=host` means on this machine: the CPU name LLVM resolves it to
(`znver4`, `sapphirerapids`, ...), read from the executable target iree-compile writes for a tiny
module. A bug that depends on the host CPU (an `fmaxf` libcall the embedded linker cannot resolve
fails for x86-64-v3/v4 and passes for sapphirerapids) is only reproducible with that name beside it."""

from __future__ import annotations

import functools
import os
import re
import tempfile

from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.process.sandbox import GIB, Limits, run_sandboxed

HOST_FLAG = "--iree-llvmcpu-target-cpu=host"
_MODULE = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
_CPU = re.compile(r'\bcpu = "([^"]+)"')
_FEATURES = re.compile(r'\bcpu_features = "([^"]*)"')


@functools.cache
def _target(toolchain: Toolchain, cpu: str) -> tuple[str, frozenset[str]]:
    """(the CPU name, its features) of the executable target iree-compile writes for `cpu`; ("", {})
    when it cannot tell (no llvm-cpu target, the compile failed)."""
    with tempfile.TemporaryDirectory(prefix="shapefuzz-hostcpu-") as tmp:
        source = os.path.join(tmp, "m.mlir")
        with open(source, "w") as f:
            f.write(_MODULE)
        result = run_sandboxed([str(toolchain.compile_bin), source, "--iree-hal-target-device=local",
                                "--iree-hal-local-target-device-backends=llvm-cpu", f"--iree-llvmcpu-target-cpu={cpu}",
                                "--compile-to=executable-targets"],
                               Limits(timeout=60.0, memory_bytes=GIB))  # a tiny module: never a campaign-sized cap
    found = _CPU.search(result.stdout) if result.ok else None
    features = _FEATURES.search(result.stdout) if found else None
    signs: dict[str, str] = {}  # the last of "-pku,...,+pku" is what LLVM takes: both are written for a host
    for feature in features.group(1).split(",") if features else ():
        if feature[:1] in "+-" and len(feature) > 1:
            signs[feature[1:]] = feature[0]
    return found.group(1) if found else "", frozenset(sign + name for name, sign in signs.items())


def host_cpu(toolchain: Toolchain) -> str:
    """The name `host` resolves to with this iree-compile, or "" when it cannot tell."""
    name, _ = _target(toolchain, "host")
    return name if name != "host" else ""


def host_features_beyond_name(toolchain: Toolchain) -> str:
    """The features `host` has here that its CPU name does not give, and those the name gives that
    the host lacks ("+avx512fp16,+amx-bf16,-pku"), or "" where the name alone compiles as `host`.
    Measured: a virtual machine's Xeon resolves to "rocketlake" with AVX512-FP16 and AMX features
    (its CPUID model is not the hardware's), so `--iree-llvmcpu-target-cpu=rocketlake` alone failed
    where `host` compiled (an f16 max's fmaxf libcall)."""
    name = host_cpu(toolchain)
    if not name:
        return ""
    _, host = _target(toolchain, "host")
    _, named = _target(toolchain, name)
    if not named:
        return ""
    plus = sorted(f for f in host if f.startswith("+") and f not in named)
    minus = sorted("-" + f[1:] for f in named if f.startswith("+") and f not in host)
    return ",".join(plus + minus)


def host_cpu_flags(toolchain: Toolchain) -> tuple[str, ...]:
    """The flags that compile for this machine's CPU as `--iree-llvmcpu-target-cpu=host` does, by name."""
    name = host_cpu(toolchain)
    if not name:
        return ()
    extra = host_features_beyond_name(toolchain)
    return (f"--iree-llvmcpu-target-cpu={name}", *((f"--iree-llvmcpu-target-cpu-features={extra}",) if extra else ()))


def uses_host_cpu(flags: object) -> bool:
    return isinstance(flags, (list, tuple)) and HOST_FLAG in flags


__all__ = ["HOST_FLAG", "host_cpu", "host_cpu_flags", "host_features_beyond_name", "uses_host_cpu"]
