"""The IREE side of the codegen pass search (`triage.codegen_pass`): the failing lane's IR after
`executable-configurations`, its executables lowered once more with every pass's IR written out
(`--mlir-print-ir-tree-dir`), and that IR compiled on with one dispatch's translation_info
changed. A mixin of `judge.iree_probe.IreeProbe`: it uses the probe's compile, files and
judgement; every compile is sandboxed and a failed one is "unusable", never an exception."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Sequence

from shapefuzz.model import ProcessResult
from shapefuzz.process.sandbox import Limits
from shapefuzz.triage.codegen_pass import Lowering, lowerings_in, with_translation
from shapefuzz.triage.localize_types import Values

CONFIGURED = "executable-configurations"
_TREE = Limits(timeout=60.0)
_TARGET = re.compile(r"hal\.executable\.variant \S+ @\S+ target\(<\"([\w-]+)\"|#hal\.executable\.target<\"([\w-]+)\"")


class CodegenReplay:
    """Needs from its host: `lane`, `text`, `_compile(source, lane, *flags, limits=...)`,
    `_path(suffix, text)`, `_judge(vmfb, lane)` (see `IreeProbe`)."""

    lane: str
    text: str
    workdir: str
    _configured: str | None
    _lowerings: list[Lowering] | None

    def _compile(self, source: str, lane: str, *flags: str, limits: Limits = ...) -> tuple[ProcessResult, str]:
        raise NotImplementedError

    def _path(self, suffix: str, text: str | None = None) -> str:
        raise NotImplementedError

    def _judge(self, vmfb: str, lane: str) -> Values:
        raise NotImplementedError

    def configured_ir(self) -> str | None:
        if not hasattr(self, "_configured"):
            result, out = self._compile(self._path(".mlir", self.text), self.lane, f"--compile-to={CONFIGURED}")
            self._configured = Path(out).read_text() if result.ok else None
        return self._configured

    def lowerings(self) -> list[Lowering] | None:
        if not hasattr(self, "_lowerings"):
            self._lowerings = None
            configured = self.configured_ir()
            if configured is not None:
                tree = Path(self._path(".tree"))
                result, _ = self._compile(self._path(".mlir", configured), self.lane, f"--compile-from={CONFIGURED}",
                                          "--compile-to=executable-targets", "--mlir-print-ir-after-all",
                                          f"--mlir-print-ir-tree-dir={tree}", "--mlir-disable-threading", limits=_TREE)
                if result.ok:
                    before = self._before_files(configured, tree)
                    self._lowerings = [_with_before(low, before.get(low.function)) for low in lowerings_in(tree)]
        return self._lowerings

    def _before_files(self, configured: str, tree: Path) -> dict[str, Path]:
        """Each dispatch function's IR as configured (what its first pass started from), one file each."""
        out: dict[str, Path] = {}
        for m in re.finditer(r"^( *)func\.func (?:\w+ )?@([\w$.-]+)\(.*$", configured, re.M):
            end = configured.find(f"\n{m.group(1)}}}\n", m.end())
            if end > 0:
                path = tree / f"configured-{len(out)}.mlir"
                path.write_text("\n".join(line[len(m.group(1)):] for line in
                                          configured[m.start():end + len(m.group(1)) + 2].splitlines()) + "\n")
                out[m.group(2)] = path
        return out

    def lower(self, function: str, passes: Sequence[str] | None = None, pipeline: str = "",
              workgroup: Sequence[int] = ()) -> Values:
        configured = self.configured_ir()
        changed = with_translation(configured, function, passes, pipeline, workgroup) if configured else None
        if changed is None:
            return Values.UNUSABLE
        result, vmfb = self._compile(self._path(".mlir", changed), self.lane, f"--compile-from={CONFIGURED}")
        return self._judge(vmfb, self.lane) if result.ok else Values.UNUSABLE

    def replayed_ir(self, function: str, passes: Sequence[str]) -> str | None:
        """`function`'s IR after its lowering pass when its translation_info is the pass list `passes`."""
        configured = self.configured_ir()
        changed = with_translation(configured, function, passes) if configured else None
        if changed is None:
            return None
        tree = Path(self._path(".tree"))
        result, _ = self._compile(self._path(".mlir", changed), self.lane, f"--compile-from={CONFIGURED}",
                                  "--compile-to=executable-targets", "--mlir-print-ir-after-all",
                                  f"--mlir-print-ir-tree-dir={tree}", "--mlir-disable-threading", limits=_TREE)
        found = next((low for low in lowerings_in(tree) if low.function == function), None) if result.ok else None
        return found.after.read_text(errors="replace") if found is not None and found.after is not None else None

    def with_flags(self, flags: Sequence[str]) -> Values:
        result, vmfb = self._compile(self._path(".mlir", self.text), self.lane, *flags)
        return self._judge(vmfb, self.lane) if result.ok else Values.UNUSABLE

    def target_backend(self) -> str:
        m = _TARGET.search(self.configured_ir() or "")
        return (m.group(1) or m.group(2)) if m else ""


def _with_before(lowering: Lowering, before: Path | None) -> Lowering:
    from dataclasses import replace

    return replace(lowering, before=before) if before is not None else lowering


__all__ = ["CONFIGURED", "CodegenReplay"]
