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


@functools.cache
def host_cpu(toolchain: Toolchain) -> str:
    """The name `host` resolves to with this iree-compile, or "" when it cannot tell (no llvm-cpu
    target, the compile failed)."""
    with tempfile.TemporaryDirectory(prefix="shapefuzz-hostcpu-") as tmp:
        source = os.path.join(tmp, "m.mlir")
        with open(source, "w") as f:
            f.write(_MODULE)
        result = run_sandboxed([str(toolchain.compile_bin), source, "--iree-hal-target-device=local",
                                "--iree-hal-local-target-device-backends=llvm-cpu", HOST_FLAG,
                                "--compile-to=executable-targets"],
                               Limits(timeout=60.0, memory_bytes=GIB))  # a tiny module: never a campaign-sized cap
    found = _CPU.search(result.stdout) if result.ok else None
    return found.group(1) if found and found.group(1) != "host" else ""


def uses_host_cpu(flags: object) -> bool:
    return isinstance(flags, (list, tuple)) and HOST_FLAG in flags


__all__ = ["HOST_FLAG", "host_cpu", "uses_host_cpu"]
