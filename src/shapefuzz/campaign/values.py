"""The small values the campaign's engine, pool and store speak (no IREE): what became of a
candidate, what a worker task is, where a bucket stands. String enums, so the store and JSON
write the same text they always did."""

from __future__ import annotations

import enum


class Verdict(str, enum.Enum):
    """What became of one candidate (or one re-run)."""

    PASS = "pass"  # every lane succeeded (or hit a known target limit)
    FAIL = "fail"  # at least one lane failed on input that verifies
    INVALID = "invalid"  # the input does not verify: the generator's bug, never a finding
    FLAKY = "flaky"  # failed once, then not again
    ERROR = "error"  # our own code raised on it (the traceback is kept)
    LOST = "lost"  # the worker died or ran past its deadline


class TaskKind(str, enum.Enum):
    """A worker task; the value is the name of the target's method the worker calls."""

    CHECK = "check"
    CONFIRM = "confirm"
    SHRINK = "shrink"


class BucketState(str, enum.Enum):
    PENDING = "pending"  # awaiting its re-run
    CONFIRMED = "confirmed"  # came back on its re-run
    FLAKY = "flaky"  # did not come back
    UNCONFIRMED = "unconfirmed"  # confirmation turned off


class Triage(str, enum.Enum):
    """What a bucket is judged to be, with its evidence kept beside it. Only compiler bugs count
    as findings; the rest are listed apart, never dropped."""

    COMPILER_BUG = "compiler bug"
    TARGET_LIMIT = "target limit"  # something the target does not support
    SUSPECTED_DRIVER = "suspected driver"  # wrong only on the software Vulkan device
    FLAKY = "flaky"  # did not come back on its re-run
    OURS = "ours"  # input that should not have verified, or a reference every backend disagrees with


class ShrinkState(str, enum.Enum):
    NONE = ""  # not asked for
    PENDING = "pending"  # wanted, not done yet (kept in the store: shrunk on resume or in the final phase)
    DONE = "done"
    FAILED = "failed"  # did not reproduce in isolation, or stopped
    SKIPPED = "skipped"  # another bucket of its cause is the one shrunk


__all__ = ["Verdict", "TaskKind", "BucketState", "Triage", "ShrinkState"]
