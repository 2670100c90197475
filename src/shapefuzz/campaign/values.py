"""The small values the campaign's engine, pool and store speak (no IREE): a candidate, what
became of it (`Outcome`, its `Failure`s), what the engine needs from a domain (`Target`), what a
worker task is, where a bucket stands. String enums, so the store and JSON
write the same text they always did."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Protocol


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


@dataclass(frozen=True)
class ShrinkJob:
    """What one shrink task is asked to do: shrink the candidate while it still fails on
    `backend` with the bucket `signature` (its key text), within `seconds`."""

    backend: str
    signature: str
    seconds: float


@dataclass(frozen=True)
class Candidate:
    key: str  # content hash: equal candidates have equal keys
    group: str  # the op family
    seed: int  # the draw seed that regenerates it
    features: tuple[str, ...]
    payload: str  # what regenerates it without the seed (parameters as JSON)
    text: str  # the reproducer (MLIR)
    index: int = -1
    instrument: tuple[str, ...] = ()  # lanes to compile with the action log (coverage feedback)

    @property
    def length(self) -> int:
        """Characters, for display; which of two is smaller is the target's `size` order."""
        return len(self.text)


@dataclass(frozen=True)
class Failure:
    lane: str  # backend
    signature: str  # the bucket key, str(Signature)
    fields: dict[str, str]  # the structured signature
    detail: str = ""


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    lanes: dict[str, tuple[str, float]]  # lane -> (status, seconds)
    failures: tuple[Failure, ...] = ()
    tool_seconds: float = 0.0  # time spent inside compiler and runtime processes
    error: str = ""
    # set by a confirming re-run whose every backend disagreed with the reference: an equivalent
    # form that matches the reference ("form [...] matches ... on llvm-cpu"), so the reference is right
    reference_form: str = ""
    # lane -> (the (pass, pattern) items its instrumented compile reached, the pass a failed compile failed in)
    coverage: dict[str, tuple[tuple[tuple[str, str], ...], str]] = field(default_factory=dict)


class Target(Protocol):
    """What the engine needs from a domain. check/confirm/shrink run in worker processes (the
    target must pickle); generate/save run in the campaign process."""

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate: ...  # large: for compile-only lanes
    def worker_init(self) -> None: ...  # in each worker process, once, before its first task
    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str,
             triage: str = "", evidence: str = "") -> str: ...
    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]: ...
    def rename_cause(self, entry: str, cause: str) -> None: ...  # a saved entry's cause was merged
    def deadline(self, lanes: tuple[str, ...]) -> float: ...
    def corpus_count(self, failure: Failure) -> tuple[str, int]: ...
    def size(self, text: str) -> tuple[int, ...]: ...  # the one "smaller" order (shrinker, corpus, campaign)
    def shrink(self, candidate: Candidate, job: ShrinkJob) -> Any: ...  # (smaller text, corpus entry) or None
    # Optional, for coverage feedback (campaign/coverage.py; a target without them runs without it):
    # coverage_support() -> "" or why not; ineligible(candidate, lanes) -> lanes with a known limit;
    # neighbour(candidate, seed) -> a small change of it; from_payload(group, seed, payload) -> Candidate.
    # check() fills Outcome.coverage for the lanes in candidate.instrument.


def one_line(error: Any) -> str:
    """The last non-blank line of an error or traceback, cut to 300 characters."""
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else type(error).__name__)[:300]


__all__ = ["Verdict", "TaskKind", "BucketState", "Triage", "ShrinkState", "ShrinkJob", "Candidate", "Failure", "Outcome",
           "Target", "one_line"]
