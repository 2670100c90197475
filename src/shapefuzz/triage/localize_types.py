"""The values a localization speaks (shared by `triage.localize` and `triage.codegen_pass`): how a
finished compile came out, and one pass as a `--mlir-print-ir-after-all` dump shows it ran."""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Values(str, enum.Enum):
    RIGHT = "right"
    WRONG = "wrong"  # wrong values, or the same run-time failure
    UNUSABLE = "unusable"  # the IR did not compile or run to an answer: no evidence either way


@dataclass(frozen=True)
class PassRun:
    cls: str  # the pass's class name, e.g. FoldUnitExtentDimsPass
    arg: str  # its argument with options, e.g. iree-dispatch-creation-fold-unit-extent-dims
    anchor: str  # the op it ran on: builtin.module, util.func, func.func
    func: str = ""  # the function it ran on (function passes)
    changed: bool = True  # it changed the module when the phase ran (a pass that did not cannot be the bug)

    @property
    def name(self) -> str:
        return self.arg.split("{", 1)[0]


__all__ = ["PassRun", "Values"]
