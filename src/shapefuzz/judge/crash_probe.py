"""A compiler crash whose stack names no pass (a use-after-free ends at a garbage address; a release
build's frames may carry no pass class) placed at the pass that was running: the compile is run
twice with threading off, writing the IR before every pass, then after every pass, to
`--mlir-print-ir-tree-dir` folders. The pass that was begun and never finished is the one it
crashed in: of the dumps "before" that have no "after" at the same place (the crashing pass and the
pipelines around it), the last one run. Measured on IREE 3.13: under a second each on a shrunk
reproducer; the audit's SIGSEGV with no frame was named EliminateEmptyTensorsPass this way, as by
hand. MLIR's own crash reproducer (`--mlir-pass-pipeline-crash-reproducer`) crashed again printing
the corrupted IR, so it is not used."""

from __future__ import annotations

import re
import time
from dataclasses import replace
from pathlib import Path

from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.judge.iree_probe import CALL, IreeProbe
from shapefuzz.judge.localize_probe import phase_of_dump, within
from shapefuzz.model import Status
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.triage.codegen_pass import trimmed
from shapefuzz.triage.culprit import Dump, dumps_in
from shapefuzz.triage.localize import CODEGEN, Localization
from shapefuzz.triage.signature import classify

_HEADER = re.compile(r"// -----// IR Dump Before (\w+)")  # the dump's first line names the pass's class
_THREADS_OFF = "--mlir-disable-threading"  # one pass at a time: the last one begun is the crashing one


def place_crash(text: str, lane: str, toolchain: Toolchain, seconds: float) -> Localization:
    """Where a compile crash with no pass named breaks (module doc); not localized when it does not
    crash again, or crashes after its last pass finished (serializing, linking)."""
    return within(seconds, lambda: _place_crash(text, lane, toolchain, seconds))


def _place_crash(text: str, lane: str, toolchain: Toolchain, seconds: float) -> Localization:
    start = time.monotonic()
    limits = replace(CALL, timeout=max(1.0, min(CALL.timeout, seconds / 2)))
    with temp_dir("crash") as tmp:
        probe = IreeProbe(text, lane, (), (), toolchain, tmp)
        source = probe._path(".mlir", text)
        trees: dict[str, list[Dump]] = {}
        for when in ("before", "after"):
            tree = Path(tmp) / when
            result, _ = probe._compile(source, lane, f"--mlir-print-ir-{when}-all", _THREADS_OFF,
                                       f"--mlir-print-ir-tree-dir={tree}", limits=limits)
            status = classify(result)
            if status != Status.CRASH:
                return Localization(evidence=f"not localized: printing the IR {when} every pass, the compile "
                                             f"did not crash ({status.value})", seconds=time.monotonic() - start)
            trees[when] = dumps_in(tree)
        crashing = crashing_dump(trees["before"], trees["after"], tmp)
        if crashing is None:
            return Localization(evidence="not localized: every pass begun finished; it crashes after the last one",
                                seconds=time.monotonic() - start)
        # (a pass every phase runs, canonicalize, is in the phase of the last earlier pass that names one)
        earlier = [d for d in trees["before"] if d.order < crashing.order]
        phase = phase_of_dump(crashing) or next((p for d in reversed(earlier) if (p := phase_of_dump(d))), "")
        if not phase:
            return Localization(evidence=f"not localized: it crashes in {crashing.pass_name}, which no phase names",
                                seconds=time.monotonic() - start)
        try:
            ir = crashing.path.read_text(errors="replace")
        except OSError:
            ir = ""
        where = f" on {crashing.path.parent.name}" if phase == CODEGEN else ""
        header = _HEADER.match(ir)
        return Localization(phase, crashing.pass_name, header.group(1) if header else "", certain=True,
                            seconds=time.monotonic() - start, ir_before=trimmed(ir), evidence=(
                                f"it crashes inside {crashing.pass_name}{where}: compiled with threading off, the IR "
                                f"printed before every pass and after every pass, {crashing.pass_name} is the last "
                                "pass begun that never finished"))


def crashing_dump(before: list[Dump], after: list[Dump], root: str | Path) -> Dump | None:
    """The last pass whose "before" dump has no "after" dump at the same place (its folder, order and
    name, relative to each tree): the pass the compile crashed in (None: every pass begun finished).
    A pipeline around it lacks an "after" too, but ran earlier (its children's orders extend its own)."""
    def place(d: Dump) -> tuple:
        return (d.path.parent.relative_to(Path(root)).parts[1:], d.order, d.pass_name)

    finished = {place(d) for d in after}
    unfinished = [d for d in before if place(d) not in finished]
    return max(unfinished, key=lambda d: d.order) if unfinished else None


__all__ = ["crashing_dump", "place_crash"]
