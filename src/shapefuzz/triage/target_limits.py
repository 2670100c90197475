"""Documented gaps of a target: failures that are a limit of the target, never a bug of the case
that meets them, each with the evidence that put it there (the lane, the rule, the diagnostic line).

A rule holds only where its own evidence is in the failure: the lane is one of the rule's targets
(a variant lane counts as its base), the stage and status are the rule's, and the compiler's output
shows the gap (a diagnostic from the target's codegen on the op the gap is about). A crash is never
a limit (a gap is diagnosed, not crashed on), and the same op failing before the target's codegen
(torch-mlir's conversion of an attention, on every lane) is the bug it is.

A failure a rule matches gets its own signature message (`LIMIT_PREFIX` + the rule's name), so its
bucket never holds a compiler bug with the same generic message ("failed to run translation of
source executable ..."), and its identity is the rule's, so one gap is one cause across lanes.

Mesa llvmpipe's loop limit is a gap of the device, not of a compile: a wrong value, told by the
module and by the other Vulkan target on the same driver (`triage.driver.loop_limit_reached`,
decided with the twin's run in the campaign's Vulkan verdict); its rule here holds its evidence.

Measured on IREE 3.13 (December 2026): a 1x4x8 f32 `iree_linalg_ext.attention` fails on
vulkan-spirv and vulkan-llvmpipe with "'iree_linalg_ext.online_attention' op result #0 must be
variadic of ranked tensor ..., but got 'memref<...>'" inside `iree-spirv-lower-executable-target-pass`
(`SPIRVTileAndDistributePass`); f16 attention on llvmpipe fails in `iree-linalg-ext-to-loops` there
with only "failed to run translation of source executable"; the torch spelling fails the same ways;
llvm-cpu, vmvx, cuda-sm80 and rocm-gfx942 compile the same module."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from shapefuzz.triage.driver import MESA_LOOP_LIMIT
from shapefuzz.triage.failing_pass import enclosing_passes
from shapefuzz.triage.signature import first_error_line

LIMIT_PREFIX = "target limit: "  # a signature message that names a rule (`TargetLimit.message`)

_SPIRV_LANES = ("vulkan-spirv", "vulkan-llvmpipe")
_SPIRV_CODEGEN = "iree-spirv-lower-executable-target-pass"
# an attention op, as each spelling writes it (LinalgExt, its online form, torch, ONNX)
_ATTENTION = re.compile(r"\biree_linalg_ext\.(?:online_)?attention\b|\btorch\.aten\.scaled_dot_product_attention\b|"
                        r"\bonnx\.Attention\b")
_ERROR = re.compile(r"\berror: (?P<what>.*)$")


@dataclass(frozen=True)
class LimitMatch:
    """One failure a rule matched: what it says of it."""

    rule: "TargetLimit"
    lane: str
    diagnostic: str  # the compiler's line that shows the gap ("" for a device's limit told by the module)
    source: str  # the input line it is attached to, or what the module does

    @property
    def evidence(self) -> str:
        said = f"{self.lane}: target limit {self.rule.name} ({self.rule.gap}; {self.rule.documented})"
        if self.diagnostic:
            said += f"; the diagnostic: \"{self.diagnostic}\""
        if self.source:
            said += f" on `{self.source}`" if self.diagnostic else f"; {self.source}"
        return said


@dataclass(frozen=True)
class TargetLimit:
    """A documented gap: the lanes it holds for, the stage and statuses it shows at, what it is,
    where it is documented or measured, and `shows(output)`: the diagnostic line and the input line
    it is attached to when the output shows the gap, else None."""

    name: str
    lanes: tuple[str, ...]  # base lanes (their variants too)
    stage: str
    statuses: tuple[str, ...]
    gap: str
    documented: str
    shows: Callable[[str], tuple[str, str] | None] | None = None  # None: told by the module (see module doc)

    @property
    def message(self) -> str:
        return LIMIT_PREFIX + self.name


def _diagnostic(output: str) -> tuple[str, str]:
    """The first error line (its file and position dropped) and the input line the compiler echoes
    under it (the op it is attached to)."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        found = _ERROR.search(line.strip())
        if found and found.group("what").strip():
            echoed = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return found.group("what").strip(), echoed
    return first_error_line(output), ""


def _attention_in_spirv_codegen(output: str) -> tuple[str, str] | None:
    if _SPIRV_CODEGEN not in enclosing_passes(output):
        return None  # before the target's codegen (a frontend's conversion): not the gap
    what, echoed = _diagnostic(output)
    if not (_ATTENTION.search(what) or _ATTENTION.search(echoed)):
        return None  # another op's dispatch failed there: not this gap
    op = _ATTENTION.search(echoed) or _ATTENTION.search(what)
    assert op is not None
    return what[:300], op.group(0)


TARGET_LIMITS: tuple[TargetLimit, ...] = (
    TargetLimit(
        "spirv-attention", _SPIRV_LANES, "compile", ("error",),
        "IREE's SPIR-V codegen has no pipeline for attention: it reaches bufferization untiled, or is "
        "lowered to loops that fail",
        "IREE's own Vulkan e2e suite leaves attention.mlir out (tests/e2e/linalg_ext_ops, check_vulkan-spirv_vulkan); "
        "measured on 3.13: f32 and f16 attention fail on both Vulkan targets while llvm-cpu, vmvx, cuda and rocm "
        "compile them", _attention_in_spirv_codegen),
    TargetLimit(
        "llvmpipe-loop-limit", _SPIRV_LANES, "compare", ("mismatch",),
        f"one invocation of Mesa llvmpipe stops after {MESA_LOOP_LIMIT:,} loop iterations",
        "Mesa's gallivm loop limiter; measured on 3.13: a single-invocation sort of more than 256 elements "
        "comes out partly unsorted on both Vulkan targets, the top 60 of 1,025 right and the top 66 wrong"),
)
RULES = {rule.name: rule for rule in TARGET_LIMITS}


def _holds_for(rule: TargetLimit, lane: str) -> bool:
    from shapefuzz.iree.backends import BACKENDS

    backend = BACKENDS.get(lane)
    base = (backend.variant_of or lane) if backend is not None else lane
    return base in rule.lanes


def limit_in_output(lane: str, stage: str, status: str, output: str) -> LimitMatch | None:
    """The documented gap a failure's output shows on `lane`, or None (a bug, or nothing known)."""
    for rule in TARGET_LIMITS:
        if rule.shows is None or stage != rule.stage or status not in rule.statuses or not _holds_for(rule, lane):
            continue
        shown = rule.shows(output)
        if shown is not None:
            return LimitMatch(rule, lane, shown[0], shown[1])
    return None


def rule_of_message(message: str) -> TargetLimit | None:
    """The rule a signature message names (`LIMIT_PREFIX` + its name), or None."""
    return RULES.get(message[len(LIMIT_PREFIX):].strip()) if message.startswith(LIMIT_PREFIX) else None


def limit_of_failure(lane: str, stage: str, status: str, message: str, output: str) -> LimitMatch | None:
    """A failure's gap from its signature message and its kept output (the evidence read again
    from the output; the rule alone when the output kept no diagnostic), or None."""
    rule = rule_of_message(message)
    if rule is None:
        return None
    found = limit_in_output(lane, stage, status, output)
    return found if found is not None and found.rule is rule else LimitMatch(rule, lane, "", "")


def device_limit(name: str, lane: str, what: str) -> LimitMatch:
    """A device's documented limit (`llvmpipe-loop-limit`) with what the module does to meet it."""
    return LimitMatch(RULES[name], lane, "", what)


__all__ = ["LIMIT_PREFIX", "LimitMatch", "RULES", "TARGET_LIMITS", "TargetLimit", "device_limit", "limit_in_output",
           "limit_of_failure", "rule_of_message"]
