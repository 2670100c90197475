"""The failing lane's program as `triage.localize` searches it on real IREE: its IR after each
phase, finished by a lane and run on the entry's inputs, its phases replayed with iree-opt, and its
codegen lowered again pass by pass (`judge.codegen_probe.CodegenReplay`). Every call goes through
the sandbox with its own limits; a compile or run that fails is "unusable" evidence, never an
exception."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from shapefuzz.iree.backends import BACKENDS, Backend
from shapefuzz.judge.codegen_probe import CodegenReplay
from shapefuzz.invoke.execute import run_module, run_sandboxed
from shapefuzz.process.sandbox import Limits
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.localize import NO_CONST_EVAL, Values

CALL = Limits(timeout=60.0)
_DUMP = Limits(timeout=60.0, output_bytes=64 * 1024 * 1024)  # the module after every pass of a phase
_DEVICE_GLOBAL = re.compile(r"^\s*util\.global private @__device_0 = .*: !hal\.device$", re.M)

Compare = Callable[[list[np.ndarray], list[np.ndarray]], object]  # (expected, actual) -> mismatch or None


def _plain_compare(expected: list[np.ndarray], actual: list[np.ndarray]) -> object:
    same = len(expected) == len(actual) and all(
        e.shape == a.shape and np.allclose(e, a, rtol=1e-5, atol=1e-6, equal_nan=True) for e, a in zip(expected, actual))
    return None if same else "differs"


class IreeProbe(CodegenReplay):
    """The failing lane's program at each phase, finished by a lane and run on the entry's inputs;
    its codegen replayed pass by pass (`CodegenReplay`)."""

    def __init__(self, text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                 toolchain: Toolchain, workdir: str, compare: Compare | None = None, extra: tuple[str, ...] = ()) -> None:
        self.text, self.lane, self.toolchain, self.workdir = text, lane, toolchain, workdir
        self.inputs, self.expected = list(inputs), list(expected)
        self.compare = compare or _plain_compare
        self.extra = extra  # flags every compile of this probe adds
        self._devices: dict[str, str | None] = {}
        self._n = 0

    def without_const_eval(self) -> "IreeProbe":
        """The same program, every compile with const-eval off (its files in a folder of their own)."""
        workdir = os.path.join(self.workdir, "no-const-eval")
        os.makedirs(workdir, exist_ok=True)
        return IreeProbe(self.text, self.lane, self.inputs, self.expected, self.toolchain, workdir, self.compare,
                         (*self.extra, NO_CONST_EVAL))

    def for_lane(self, lane: str) -> "IreeProbe | None":
        """The same program and flags on another lane (its files in a folder of their own); None
        when that lane does not execute here."""
        if lane not in BACKENDS or not BACKENDS[lane].executes(self.toolchain.probe):
            return None
        workdir = os.path.join(self.workdir, lane)
        os.makedirs(workdir, exist_ok=True)
        return IreeProbe(self.text, lane, self.inputs, self.expected, self.toolchain, workdir, self.compare, self.extra)

    def _path(self, suffix: str, text: str | None = None) -> str:
        self._n += 1
        path = os.path.join(self.workdir, f"{self._n}{suffix}")
        if text is not None:
            Path(path).write_text(text)
        return path

    def _flags(self, lane: str) -> tuple[str, ...]:
        backend: Backend = BACKENDS[lane]
        return (*(backend.compile_flags(self.toolchain.probe) or ()), *self.extra)

    def _compile(self, source: str, lane: str, *flags: str, limits: Limits = CALL):
        out = self._path(".out")
        argv = [str(self.toolchain.compile_bin), source, *self._flags(lane), *flags, "-o", out]
        return run_sandboxed(argv, limits), out

    def phase_ir(self, phase: str) -> str | None:
        if phase == "start":
            return self.text
        result, out = self._compile(self._path(".mlir", self.text), self.lane, f"--compile-to={phase}")
        return Path(out).read_text() if result.ok else None

    def _device_line(self, lane: str) -> str | None:
        """`lane`'s device global, as its own compile of the program declares it."""
        if lane not in self._devices:
            result, out = self._compile(self._path(".mlir", self.text), lane, "--compile-to=preprocessing")
            found = _DEVICE_GLOBAL.search(Path(out).read_text()) if result.ok else None
            self._devices[lane] = found.group(0) if found else None
        return self._devices[lane]

    def finish(self, ir: str, phase: str, lane: str) -> Values:
        if lane != self.lane and _DEVICE_GLOBAL.search(ir):
            line = self._device_line(lane)
            if line is None:
                return Values.UNUSABLE
            ir = _DEVICE_GLOBAL.sub(lambda _: line, ir, count=1)
        result, vmfb = self._compile(self._path(".mlir", ir), lane, f"--compile-from={phase}")
        return self._judge(vmfb, lane) if result.ok else Values.UNUSABLE

    def _judge(self, vmfb: str, lane: str) -> Values:
        """A compiled module run on `lane`'s device against the expected values."""
        ran, outputs = run_module(self.toolchain, BACKENDS[lane], vmfb, self.inputs, len(self.expected), self.workdir,
                                  limits=CALL)
        if outputs is None:
            return Values.WRONG if not ran.timed_out else Values.UNUSABLE  # the run-time failure reproduces
        return Values.RIGHT if self.compare(self.expected, outputs) is None else Values.WRONG

    def phase_dump(self, ir: str, after: str, phase: str) -> str:
        flags = [f"--compile-to={phase}", "--mlir-print-ir-after-all", "--mlir-print-ir-module-scope",
                 "--mlir-disable-threading"]
        if after != "start":
            flags.insert(0, f"--compile-from={after}")
        result, _ = self._compile(self._path(".mlir", ir), self.lane, *flags, limits=_DUMP)
        return result.stderr if result.ok else ""

    def replay(self, ir: str, pipeline: str) -> str | None:
        if self.toolchain.opt_bin is None:
            return None
        out = self._path(".mlir")
        argv = [str(self.toolchain.opt_bin), self._path(".mlir", ir), f"--pass-pipeline={pipeline}", "-o", out]
        return Path(out).read_text() if run_sandboxed(argv, CALL).ok else None


__all__ = ["CALL", "Compare", "IreeProbe"]
