"""The small values the campaign's engine, pool and store speak (no IREE): a candidate, what
became of it (`Outcome`, its `Failure`s, each with its typed `model.Signature`), what the engine
needs from a domain (`Target`, and `CoverageTarget` for coverage feedback), what a worker task
is, where a bucket stands. String enums, so the store and JSON write the same text they always
did."""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, overload, runtime_checkable

from shapefuzz.model import Signature, Status, Triage, Verdict  # one Verdict: the oracle's, with ERROR and LOST

INPUT_SEED_MODULUS = 1 << 31  # a candidate's inputs are drawn with its seed modulo this (NumPy and the corpus take it)


class TaskKind(str, enum.Enum):
    """A worker task: check and confirm take lanes, shrink takes a `ShrinkJob`."""

    CHECK = "check"
    CONFIRM = "confirm"
    SHRINK = "shrink"


class BucketState(str, enum.Enum):
    PENDING = "pending"  # awaiting its re-run (a crash: up to three)
    CONFIRMED = "confirmed"  # failed on a re-run (the same way, or another: its other face), or never passed one
    FLAKY = "flaky"  # passed on its re-runs and failed on none
    UNCONFIRMED = "unconfirmed"  # confirmation turned off


class ShrinkState(str, enum.Enum):
    NONE = ""  # not asked for
    PENDING = "pending"  # wanted, not done yet (kept in the store: shrunk on resume or in the final phase)
    DONE = "done"
    FAILED = "failed"  # did not reproduce in isolation, or stopped
    SKIPPED = "skipped"  # another bucket of its cause is the one shrunk


@dataclass(frozen=True)
class ShrinkJob:
    """What one shrink task is asked to do: shrink the candidate while it still fails on
    `backend` with exactly `signature` (its bucket), within `seconds`, every trial run with the
    candidate's inputs (`input_seed`)."""

    backend: str
    signature: Signature
    seconds: float
    input_seed: int
    trials: tuple[Any, ...] = ()  # runs on its lane the campaign already made (Outcome.trials): not repeated
    # the lanes that may judge a wrong value's text steps (shrink.voted_stage): the campaign's own, so
    # `--backends` pins the shrink too; () lets the shrinker choose among its reference lanes
    references: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.backend != self.signature.backend:  # our bug: a job that could only fail to reproduce
            raise ValueError(f"shrink job on {self.backend} for a bucket of {self.signature.backend}")

    @property
    def key(self) -> str:
        """Its bucket's key (str(signature))."""
        return str(self.signature)


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
    # a confirming re-run also asks whether an equivalent form matches the reference where every lane
    # it ran disagrees with it; the bucket book turns this off unless a bucket it confirms is `ours`
    # (the reference in doubt). Not part of what the candidate is.
    forms: bool = field(default=True, compare=False)

    @property
    def length(self) -> int:
        """Characters, for display; which of two is smaller is the target's `size` order."""
        return len(self.text)

    @property
    def input_seed(self) -> int:
        """The seed its input arrays are drawn with (every check, confirmation and shrink of it)."""
        return self.seed % INPUT_SEED_MODULUS


@dataclass(frozen=True)
class Failure:
    """One failing lane of a candidate. Its bucket key is `str(signature)`, the text the store and
    the corpus name the bucket by; the identity (triage.identity) is what causes are tied by."""

    signature: Signature
    detail: str = ""
    identity: str = ""  # the bug identity; "" where the target computes none
    strong: bool = False  # the identity says where the compiler failed: equal ones are one cause at once
    failing_pass: str = ""

    @property
    def lane(self) -> str:
        return self.signature.backend

    @property
    def key(self) -> str:
        return str(self.signature)

    def fields(self) -> dict[str, str]:
        """As the store keeps it (a bucket's sig_json) and causes read it: the signature's fields
        and the identity's."""
        return {**self.signature.to_json(), "identity": self.identity, "strong": "1" if self.strong else "",
                "failing_pass": self.failing_pass}

    @staticmethod
    def from_fields(fields: dict[str, Any], detail: str = "") -> "Failure":
        """The failure a stored bucket holds (its sig_json and detail)."""
        return Failure(Signature.from_json(fields), detail, str(fields.get("identity") or ""),
                       bool(fields.get("strong")), str(fields.get("failing_pass") or ""))


@dataclass(frozen=True)
class ShrinkOutcome:
    """What a shrink task gave the campaign (a check's is its `Outcome`): the corpus entry's
    reproducer once a smaller text was saved into it, and that entry (both None when nothing was
    saved), and the new failures met while shrinking, each with the candidate it came as, for the
    engine's buckets (nothing is written into the corpus behind the campaign's back)."""

    text: str | None = None
    entry: str | None = None
    found: tuple[tuple[Candidate, Failure], ...] = ()
    facts: dict[str, Any] = field(default_factory=dict)  # the shrinker's figures, for the task log
    trials: tuple[Any, ...] = ()  # the compiles it ran (as Outcome.trials), for later shrinks on the lane


@dataclass(frozen=True)
class Outcome:
    verdict: Verdict
    lanes: dict[str, tuple[Status, float]]  # lane -> (status, seconds)
    failures: tuple[Failure, ...] = ()
    tool_seconds: float = 0.0  # time spent inside compiler and runtime processes
    error: str = ""
    # set by a confirming re-run whose every backend disagreed with the reference: an equivalent
    # form that matches the reference ("form [...] matches ... on llvm-cpu"), so the reference is right
    reference_form: str = ""
    # lane -> (the (pass, pattern) items its instrumented compile reached, the pass a failed compile failed in)
    coverage: dict[str, tuple[tuple[tuple[str, str], ...], str]] = field(default_factory=dict)
    # set when a confirming re-run is judged again: lane -> what the first check said there (wrong
    # values that change from run to run on one driver are a race in the generated code)
    earlier: dict[str, str] = field(default_factory=dict)
    # the worker's seconds outside compiler and runtime, by part (worktime.PARTS), for the report
    split: dict[str, float] = field(default_factory=dict)
    # its failing lanes as runs a shrink of the candidate need not repeat (the target's own records,
    # each with a `lane` and a `key`: shrink.trials), kept by the campaign's TrialBook
    trials: tuple[Any, ...] = ()


@dataclass(frozen=True)
class EnvironmentCondition:
    """A task our machine failed, not the candidate (the target raised `errors.EnvironmentFault`: a
    full TMPDIR, an I/O error), carried on the finished task as a value: the task is retried later,
    never recorded as the candidate's outcome. `text` is the condition ("iree-compile: No space left
    on device")."""

    text: str

    @staticmethod
    def of(fault: BaseException) -> "EnvironmentCondition":
        return EnvironmentCondition(one_line(fault).split(" (our environment")[0].strip())


# How an Outcome's error begins when a candidate does not verify because the toolchain's release
# cannot parse its form (known ahead, families/gates.py): the release's limit, not a generator bug.
NOT_FOR_RELEASE = "not for this release: "
# How an Outcome's error begins when a candidate's NumPy reference is undefined (errors.UndefinedReference):
# the generator's slip; the candidate is discarded, not judged.
UNDEFINED_REFERENCE = "undefined reference: "


class Target(Protocol):
    """What the engine and the pool need from a domain. worker_init/check/confirm/shrink run in
    worker processes (the target must pickle); the rest run in the campaign process."""

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate: ...  # large: for compile-only lanes
    def worker_init(self) -> None: ...  # in each worker process, once, before its first task
    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome: ...
    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str,
             triage: Triage | None = None, evidence: str = "") -> str: ...
    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]: ...
    def rename_cause(self, entry: str, cause: str) -> None: ...  # a saved entry's cause was merged
    def deadline(self, lanes: tuple[str, ...]) -> float: ...
    def corpus_count(self, failure: Failure) -> tuple[str, int]: ...
    def size(self, text: str) -> tuple[int, ...]: ...  # the one "smaller" order (shrinker, corpus, campaign)
    def shrink(self, candidate: Candidate, job: ShrinkJob) -> ShrinkOutcome | None: ...  # None: nothing to tell


@runtime_checkable
class LaneRules(Protocol):
    """A target that tells, before anything is compiled, which lanes cannot take a candidate (a
    known limit of the target, or a variant that changes nothing for it). In every campaign such
    a lane gives its slot to the next lane that can; a target without it lets every lane take any."""

    def ineligible(self, candidate: Candidate, lanes: tuple[str, ...]) -> set[str]: ...


@runtime_checkable
class CoverageTarget(Protocol):
    """A target that can report compiler coverage (campaign/coverage_steering.py); one without these runs
    without coverage feedback. Its check() fills Outcome.coverage for the lanes in
    candidate.instrument."""

    def coverage_support(self) -> str: ...  # "" or why not
    def ineligible(self, candidate: Candidate, lanes: tuple[str, ...]) -> set[str]: ...  # lanes with a known limit
    def neighbour(self, candidate: Candidate, seed: int) -> Candidate | None: ...  # a small change of it
    def from_payload(self, group: str, seed: int, payload: str) -> Candidate: ...  # a drawn neighbour, revived


@runtime_checkable
class ShapedTarget(Protocol):
    """A target that draws a candidate of the shape the campaign's allocation asks for
    (campaign/allocation.py): inside a chain or not, with some chain ops left out for a swarm
    epoch. One without it draws chains at its own share."""

    def chain_ops(self) -> tuple[tuple[str, ...], ...]: ...  # the chain ops by side; () when its share is pinned
    def generate_shaped(self, group: str, seed: int, large: bool, chain: bool,
                        left_out: tuple[str, ...]) -> Candidate: ...


@runtime_checkable
class SplitShrinkTarget(Protocol):
    """A target whose shrink runs in two halves on a cluster: the search on a node, returned as a
    value (`shrink_only`), and the corpus write on the head (`save_shrunk`); `shrink` is both."""

    def shrink_only(self, candidate: Candidate, job: ShrinkJob) -> Any: ...  # the shrinker's own result, or None
    def save_shrunk(self, result: Any) -> ShrinkOutcome | None: ...


@overload
def perform(target: Target, kind: TaskKind | str, candidate: Candidate, argument: ShrinkJob) -> ShrinkOutcome | None: ...
@overload
def perform(target: Target, kind: TaskKind | str, candidate: Candidate, argument: tuple[str, ...]) -> Outcome: ...
@overload
def perform(target: Target, kind: TaskKind | str, candidate: Candidate,
            argument: tuple[str, ...] | ShrinkJob) -> Outcome | ShrinkOutcome | None: ...


def perform(target: Target, kind: TaskKind | str, candidate: Candidate,
            argument: tuple[str, ...] | ShrinkJob) -> Outcome | ShrinkOutcome | None:
    """What the target returns for one task (in a worker process, or on a cluster node): a check's
    or a confirm's `Outcome`, a shrink's `ShrinkOutcome` or None."""
    if TaskKind(kind) == TaskKind.SHRINK:
        if not isinstance(argument, ShrinkJob):
            raise TypeError(f"a shrink task takes a ShrinkJob, not {type(argument).__name__}")
        return target.shrink(candidate, argument)
    if isinstance(argument, ShrinkJob):
        raise TypeError(f"a {TaskKind(kind).value} task takes lanes, not a ShrinkJob")
    if TaskKind(kind) == TaskKind.CONFIRM:
        return target.confirm(candidate, argument)
    return target.check(candidate, argument)


def lane_rules(target: Target) -> LaneRules | None:
    """The target as `LaneRules`, or None when it has no lane rules (the one place that asks)."""
    return target if isinstance(target, LaneRules) else None


def shaped_target(target: Target) -> ShapedTarget | None:
    """The target as a `ShapedTarget` that draws chains as asked, or None (the one place that asks)."""
    return target if isinstance(target, ShapedTarget) and target.chain_ops() else None


def coverage_target(target: Target) -> CoverageTarget | None:
    """The target as a `CoverageTarget`, or None when it reports no coverage (the one place
    that asks)."""
    return target if isinstance(target, CoverageTarget) else None


def one_line(error: Any) -> str:
    """The last non-blank line of an error or traceback, cut to 300 characters."""
    text = str(error).strip()
    lines = [line for line in text.splitlines() if line.strip()]
    return (lines[-1] if lines else type(error).__name__)[:300]


@dataclass
class Stats:
    """A session's counters and messages, for the progress display and the summary (the engine
    keeps them; the drawing, the bucket book and the retries count into them)."""

    session_done: int = 0
    session_start: float = field(default_factory=time.monotonic)
    newest: str = ""
    lost: int = 0
    errors: int = 0
    duplicates: int = 0
    steered_away: int = 0  # draws dropped for carrying a saturated bucket's trigger
    environment_faults: int = 0  # tasks our machine failed (full disk, I/O error): retried, never filed
    conditions: set[str] = field(default_factory=set)
    messages: list[str] = field(default_factory=list)


__all__ = ["NOT_FOR_RELEASE", "UNDEFINED_REFERENCE", "EnvironmentCondition", "Verdict", "TaskKind", "BucketState", "Triage", "ShrinkState", "ShrinkJob", "Candidate", "Failure", "Outcome", "ShrinkOutcome",
           "Target", "LaneRules", "CoverageTarget", "ShapedTarget", "SplitShrinkTarget", "coverage_target", "lane_rules",
           "perform", "shaped_target",
           "one_line", "Stats"]
