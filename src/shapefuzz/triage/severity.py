"""How bad a cause is, in the order a maintainer reads them: wrong values on a default lane,
runtime crashes, compiler crashes, compile errors, resource limits (memory, shared memory, stack,
time), then whatever needs a non-default pipeline flag."""

from __future__ import annotations

import enum
import re


class Severity(enum.IntEnum):
    WRONG_VALUES = 0
    RUNTIME_CRASH = 1
    COMPILER_CRASH = 2
    COMPILE_ERROR = 3
    RESOURCE_LIMIT = 4
    NEEDS_FLAG = 5

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


_RESOURCE = re.compile(r"stack allocation|shared memory|out of memory|exceeded .*limit|allocation size|"
                       r"RESOURCE_EXHAUSTED|too large|overflows", re.IGNORECASE)


# our inputs are small: a buffer whose element count overflows the device size at run time has a
# shape computed wrong (an ONNX MaxPool with asymmetric pads and dynamic dims: a negative dim), not a
# resource limit
_BAD_SHAPE = re.compile(r"element count overflows device size", re.IGNORECASE)


def severity_of(stage: str, status: str, message: str, needs_flag: bool) -> Severity:
    """The severity of a cause from its lead bucket's stage, status and message, and whether it
    reproduces only under a non-default flag."""
    if needs_flag:
        return Severity.NEEDS_FLAG
    if stage == "run" and _BAD_SHAPE.search(message):
        return Severity.RUNTIME_CRASH
    if status in ("timeout", "oom") or _RESOURCE.search(message):
        return Severity.RESOURCE_LIMIT
    if stage == "compare":
        return Severity.WRONG_VALUES
    if stage == "run":
        return Severity.RUNTIME_CRASH
    if status == "crash":
        return Severity.COMPILER_CRASH
    return Severity.COMPILE_ERROR


def severity_rank(label: str) -> int:
    """The order of a severity label as written in meta.json (unknown labels last)."""
    for severity in Severity:
        if severity.label == label:
            return int(severity)
    return len(Severity)


__all__ = ["Severity", "severity_of", "severity_rank"]
