"""How bad a cause is, by its impact on a user, in the order a maintainer reads them: wrong values,
a shape computed wrong that fails at run time (OUT_OF_RANGE from compiled code), crashes (at run
time, then in the compiler; a compile that hangs on a small module ranks with them, just below a
crash: a few KiB never need minutes), sizing bugs (an absurd size from a few KiB of input: a buffer of 2^40
bytes or more, the 2^53-1 bound of a dynamic dim reaching an allocation, a compile that blows up on
a small module), compile errors, then resource limits (a real size past a real limit).

Scope ("only with <flag>") is a column of its own (`triage.component.scope_of`), never a severity:
a crash that needs a flag is still a crash."""

from __future__ import annotations

import enum
import re


class Severity(enum.IntEnum):
    WRONG_VALUES = 0
    MISCOMPILED_SHAPE = 1  # a run-time failure from a shape the compiled code computed wrong
    RUNTIME_CRASH = 2
    COMPILER_CRASH = 3
    COMPILER_HANG = 4  # a compile timeout on a small module: a loop that does not end, not a limit
    SIZING_BUG = 5  # an absurd size for a small input: ranked above compile errors
    COMPILE_ERROR = 6
    RESOURCE_LIMIT = 7

    @property
    def label(self) -> str:
        return self.name.lower().replace("_", " ")


_RESOURCE = re.compile(r"stack allocation|shared memory|out of memory|exceeded .*limit|allocation size|"
                       r"RESOURCE_EXHAUSTED|too large|overflows", re.IGNORECASE)

# A run-time failure that the runtime raises about the compiled code's own shapes and ranges (our
# inputs are valid, so a range or a count it computed is wrong): not a runtime or HAL bug.
_BAD_SHAPE = re.compile(r"element count overflows device size|OUT_OF_RANGE|out of bounds|out-of-bounds|"
                        r"negative (?:dim|size|shape|extent)|shape mismatch|dimension mismatch", re.IGNORECASE)

# A size no small input can need: the 2^53-1 bound IREE assumes for a dynamic dim without a better
# one ("unbounded" allocations at 3.2, "overflows 64 bits" at 3.13), or a count of 2^40 bytes or more.
_UNBOUNDED = re.compile(r"unbounded|overflows (?:\d+|N) bits|9007199254740991|\b[1-9]\d* [PE]i?B\b", re.IGNORECASE)
# a count of 13 digits or more (2^40 has 13), alone or as a dim of a shaped type (`memref<1x36028797018963960xf32>`):
# a dim after `Nx` is followed by another `x`, so a hexadecimal address (`0x0005555555555555` in a stack) is none
_NUMBER = re.compile(r"(?:(?<![\w.])(\d{13,})(?![\d.])|(?<=[\d?]x)([1-9]\d{12,})(?=x))")
ABSURD_BYTES = 2**40
SMALL_INPUT_ELEMENTS = 1 << 16  # a module whose tensors hold no more than this is "a few KiB"


# MLIR's dynamic-size sentinel (ShapedType::kDynamic, INT64_MIN, printed in `static_sizes` and the
# like of every dumped op with a `?`) and INT64/UINT64_MAX: markers in IR, never a size asked for.
_SENTINELS = {2**63, 2**63 - 1, 2**64 - 1}


def _numbers(text: str) -> list[int]:
    return [int(alone or dim) for alone, dim in _NUMBER.findall(text)]


def looks_like_pointer(n: int) -> bool:
    """Whether a number is a user-space address rather than a size: between 2^46 and 2^48
    (x86-64's heap 0x55..., its stack 0x7ff..., aarch64's 0xffff...), not a power of two. A crash
    that reads garbage prints one as a size ("SmallVector unable to grow. Requested capacity
    (140734460404672)", the stack's 0x7fff...): its re-runs give the bug's other face, an ordinary
    verifier error; nothing computed that size."""
    return 2**46 <= n < 2**48 and n & (n - 1) != 0


def absurd_size(text: str) -> bool:
    """Whether an output names a size no small input needs (see `_UNBOUNDED`, `ABSURD_BYTES`), or a
    size made from the dynamic-dim bound that wrapped around int64 (`wrapped_bound_product`); an
    address printed as a size is none (`looks_like_pointer`)."""
    return bool(_UNBOUNDED.search(text)) or any(
        n >= ABSURD_BYTES and n not in _SENTINELS and not looks_like_pointer(n) for n in _numbers(text)) or \
        wrapped_bound_product(text) is not None


# IREE's bound for a dynamic dim without a better one: a scratch buffer sized from it names the
# bound itself or a small multiple of it (x4 bytes of f32, x32 for a workgroup's copies: 2^55, 2^58 - 32)
DYNAMIC_DIM_BOUND = 2**53 - 1


# a negative dim of a shaped type (`memref<-131072xf32>`, `tensor<4x-8x?xf32>`): no size, a product that wrapped
_NEGATIVE_DIM = re.compile(r"(?<=[<x])(-[1-9]\d*)(?=x)")
_WORD = 2**64
_BOUND_INVERSE = pow(DYNAMIC_DIM_BOUND, -1, _WORD)  # the bound is odd: every int64 is (2^53 - 1)·k for one k
MAX_FACTOR = ABSURD_BYTES  # the most a wrapped product's other factor (the static dims it was multiplied by) is


def wrapped_bound_product(text: str) -> tuple[int, int] | None:
    """(n, k) for the first size in `text` that is (2^53 - 1)·k wrapped around int64 for a plausible k
    (2..2^40: the product of static dims it was multiplied by), or None. Measured on 3.13 (vmvx,
    audit C): bufferize made a `memref<9007199254740991x32x64x64xf32>` scratch alloca and
    FlattenMemRefSubspan multiplied it out in int64, 2^70 - 2^17 = -131072, building the invalid
    `memref<-131072xf32>` that fails as "incorrect number of dynamic sizes": one bound bug, and an
    overflow check missing where it wrapped. Checked: a negative dim of a shaped type, or a count of
    2^40 or more that is no multiple of the bound (those `from_dynamic_dim_bound` reads as they are)."""
    found = [int(m.group(1)) for m in _NEGATIVE_DIM.finditer(text)] + [
        n for n in _numbers(text) if n < 2**63 and n % DYNAMIC_DIM_BOUND and not looks_like_pointer(n)]
    for n in found:
        k = n * _BOUND_INVERSE % _WORD
        if 2 <= k <= MAX_FACTOR:
            return n, k
    return None


def overflow_note(detail: str) -> str:
    """A second defect a bound bug's symptom shows: a size made from the dynamic-dim bound that
    wrapped around int64 where it was multiplied out (`wrapped_bound_product`),
    named by the pass the output fails in; "" when none."""
    from shapefuzz.triage.failing_pass import failing_pass

    wrapped = wrapped_bound_product(detail)
    if wrapped is None:
        return ""
    where = failing_pass(detail)
    return (f"its size {wrapped[0]} is (2^53 - 1)·{wrapped[1]} wrapped around int64: "
            f"{where or 'the pass that failed'} multiplies out the bound's size without an overflow check "
            "(a second defect, beside the bound)")


def from_dynamic_dim_bound(text: str) -> bool:
    """Whether an output names a size made from the dynamic-dim bound: "unbounded" (3.2's words),
    or a count that is a multiple (up to 4096) of 2^53 - 1 or of 2^53 (one bug, many messages: the
    message depends on rank, target and release), give or take a frame's few other bytes (ROCm's
    "stack frame size (18014398509481988)" is 2 * 2^53 + 4: a 2-byte element's buffer and its
    neighbours), or such a product wrapped around int64 (`wrapped_bound_product`)."""
    if re.search(r"\bunbounded\b", text, re.IGNORECASE) or wrapped_bound_product(text) is not None:
        return True
    for n in _numbers(text):
        if n >= DYNAMIC_DIM_BOUND and n not in _SENTINELS and any(
                n % base <= _FRAME_SLACK and n // base <= 4096 for base in (DYNAMIC_DIM_BOUND, DYNAMIC_DIM_BOUND + 1)):
            return True
    return False


_FRAME_SLACK = 4096  # bytes a stack frame or a buffer's padding may add to a bound-sized size


def miscompiled_shape(stage: str, text: str) -> bool:
    """Whether a run-time failure comes from sizes or shapes the compiled code computed wrong
    (OUT_OF_RANGE, an element count overflowing the device, an absurd allocation)."""
    return stage == "run" and bool(_BAD_SHAPE.search(text) or absurd_size(text))


def severity_of(stage: str, status: str, message: str, detail: str = "", elements: int | None = None) -> Severity:
    """The severity of a failure from its stage, status, signature message and the tool's own
    output (`detail`: the numbers a normalized message drops); `elements`, the reproducer's tensor
    elements, tells a blow-up on a small module (a sizing bug) from one on a large one."""
    text = f"{message}\n{detail}"
    if stage == "compare":
        return Severity.WRONG_VALUES
    if stage == "run" and _BAD_SHAPE.search(text):
        return Severity.MISCOMPILED_SHAPE  # (an absurd allocation at run time: a sizing bug, below)
    if stage == "compile" and status == "timeout":
        # (before the sizes: a hang's detail is its stack, whose addresses are no sizes)
        small = elements is not None and elements <= SMALL_INPUT_ELEMENTS
        return Severity.COMPILER_HANG if small else Severity.RESOURCE_LIMIT
    if absurd_size(text):
        return Severity.SIZING_BUG
    if status in ("timeout", "oom"):
        if stage == "compile" and elements is not None and elements <= SMALL_INPUT_ELEMENTS:
            # a compile that grows without bound on a few KiB (an 8-element scatter) is a bug, not a limit
            return Severity.SIZING_BUG
        if stage == "run" and status == "oom" and elements is not None and elements <= SMALL_INPUT_ELEMENTS:
            return Severity.SIZING_BUG  # a 1x1 top-k on vmvx asking the heap for the 2^53-1 bound's scratch
        return Severity.RESOURCE_LIMIT
    if _RESOURCE.search(message):
        return Severity.RESOURCE_LIMIT
    if stage == "run":
        return Severity.RUNTIME_CRASH
    if status == "crash":
        return Severity.COMPILER_CRASH
    return Severity.COMPILE_ERROR


def severity_rank(label: str) -> int:
    """The order of a severity label as written in meta.json (unknown labels, and the old
    "needs flag", last)."""
    for severity in Severity:
        if severity.label == label:
            return int(severity)
    return len(Severity)


__all__ = ["ABSURD_BYTES", "Severity", "absurd_size", "looks_like_pointer", "miscompiled_shape", "severity_of",
           "overflow_note", "severity_rank", "wrapped_bound_product"]
