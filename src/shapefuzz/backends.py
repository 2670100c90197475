"""The backend registry: small entries with a name, the flags to compile for it, and the runtime
device that executes it. Flags are chosen from what the toolchain's probe says it accepts, so
one registry serves releases 3.1 through 3.13."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from typing import Callable

from shapefuzz.errors import UsageError
from shapefuzz.toolchain import ToolchainProbe

FlagRule = Callable[[ToolchainProbe], tuple[str, ...] | None]  # None: this compiler cannot


@dataclass(frozen=True)
class Backend:
    name: str
    description: str
    flags: FlagRule
    driver: str | None  # runtime driver that executes it ("local-task", "vulkan", "cuda"); None: compile-only
    is_gpu: bool
    # Element types this target does not support: a failure on a module using one is a limit of
    # the target, not a bug (reported apart as "unsupported", never filed).
    dtype_limits: tuple[tuple[str, str], ...] = ()

    def limit_for(self, mlir_text: str) -> str | None:
        """Why a failure of this module here is a target limit, or None."""
        for dtype, reason in self.dtype_limits:
            if re.search(rf"\b{dtype}\b", mlir_text):
                return reason
        return None

    def compile_flags(self, probe: ToolchainProbe) -> tuple[str, ...] | None:
        return self.flags(probe)

    def compiles(self, probe: ToolchainProbe) -> bool:
        return self.flags(probe) is not None

    def executes(self, probe: ToolchainProbe) -> bool:
        return self.driver is not None and self.compiles(probe) and probe.has_device(self.driver)

    def availability(self, probe: ToolchainProbe) -> str:
        if not self.compiles(probe):
            return "not supported by this compiler"
        if self.driver is None:
            return "compile-only"
        if not probe.has_device(self.driver):
            hint = " (install Debian's mesa-vulkan-drivers)" if self.driver == "vulkan" else ""
            return f"compile-only here: no {self.driver} device{hint}"
        return "compiles and executes"


def _local(backend: str) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...]:
        if probe.has_flag("--iree-hal-local-target-device-backends"):
            base = ("--iree-hal-target-device=local", f"--iree-hal-local-target-device-backends={backend}")
        else:  # releases before the target-device flags
            base = (f"--iree-hal-target-backends={backend}",)
        if backend == "llvm-cpu" and probe.has_flag("--iree-llvmcpu-target-cpu"):
            base += ("--iree-llvmcpu-target-cpu=host",)
        return base

    return flags


def _target_device(device: str) -> tuple[str, ...]:
    return (f"--iree-hal-target-device={device}",)


def _vulkan(target: str | None) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...] | None:
        if target is None:
            return _target_device("vulkan") if probe.has_flag("--iree-hal-target-device") else (
                "--iree-hal-target-backends=vulkan-spirv",
            )
        if target == "llvmpipe" and not probe.llvmpipe_target:
            return None
        return _target_device("vulkan") + (f"--iree-vulkan-target={target}",)

    return flags


def _rocm(chip: str) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...] | None:
        # The flag was --iree-hip-target up to 3.10; 3.11 took both; 3.12+ only --iree-rocm-target.
        for flag in ("--iree-rocm-target", "--iree-hip-target"):
            if probe.has_flag(flag):
                return _target_device("hip") + (f"{flag}={chip}",)
        return None

    return flags


def _cuda(arch: str) -> FlagRule:
    def flags(probe: ToolchainProbe) -> tuple[str, ...] | None:
        if not probe.has_flag("--iree-cuda-target"):
            return None
        return _target_device("cuda") + (f"--iree-cuda-target={arch}",)

    return flags


BACKENDS: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend("llvm-cpu", "CPU through LLVM (reference backend)", _local("llvm-cpu"), "local-task", False),
        Backend("vmvx", "portable VM interpreter", _local("vmvx"), "local-sync", False,
                (("f16", "vmvx has no f16 support"),)),
        # Measured on 3.13: the default profile (no 8/16-bit storage) gives wrong f16 numbers even for
        # x + 1, where the llvmpipe target is right; so f16/i8 there are limits, kept apart from bugs.
        Backend("vulkan-spirv", "Vulkan/SPIR-V, default profile", _vulkan(None), "vulkan", True,
                (("f16", "the default Vulkan profile has no 16-bit storage"),
                 ("i8", "the default Vulkan profile has no 8-bit storage"))),
        Backend("vulkan-llvmpipe", "Vulkan/SPIR-V for Mesa's llvmpipe", _vulkan("llvmpipe"), "vulkan", True),
        Backend("rocm-gfx942", "AMD MI300 (compile-only)", _rocm("gfx942"), None, True),
        Backend("rocm-gfx90a", "AMD MI250 (compile-only)", _rocm("gfx90a"), None, True),
        Backend("rocm-gfx1100", "AMD RDNA3 (compile-only)", _rocm("gfx1100"), None, True),
        Backend("cuda-sm80", "NVIDIA Ampere (executes where a CUDA device exists)", _cuda("sm_80"), "cuda", True),
    )
}

REFERENCE_BACKEND = "llvm-cpu"
# Names a user may type for a set of backends.
ALIASES: dict[str, tuple[str, ...]] = {
    "cpu": ("llvm-cpu", "vmvx"),
    "vulkan": ("vulkan-spirv", "vulkan-llvmpipe"),
    "rocm": ("rocm-gfx942", "rocm-gfx90a", "rocm-gfx1100"),
    "cuda": ("cuda-sm80",),
    "all": tuple(BACKENDS),
}
DEFAULT_BACKENDS = ("llvm-cpu", "vmvx", "vulkan-spirv", "rocm-gfx942", "cuda-sm80")


def resolve_backends(names: str | list[str] | tuple[str, ...] | None) -> tuple[str, ...]:
    """Backend names from a comma-separated string or list; aliases expanded; unknown names
    rejected with the closest match suggested."""
    if names is None:
        return DEFAULT_BACKENDS
    if isinstance(names, str):
        names = [names]
    resolved: list[str] = []
    for chunk in names:
        for name in (part.strip() for part in chunk.split(",")):
            if not name:
                continue
            if name in ALIASES:
                resolved.extend(ALIASES[name])
            elif name in BACKENDS:
                resolved.append(name)
            else:
                close = difflib.get_close_matches(name, list(BACKENDS) + list(ALIASES), n=1)
                hint = f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(BACKENDS)}"
                raise UsageError(f"unknown backend {name!r}{hint}")
    if not resolved:
        raise UsageError("no backend selected")
    return tuple(dict.fromkeys(resolved))
