"""The values every shapefuzz module speaks: stages, statuses, per-backend results, signatures.

Compiler and runtime failures are data (a `BackendResult` with a non-OK status), never
exceptions; exceptions are for our own bugs and for user errors (see `errors.py`).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Stage(str, enum.Enum):
    """How far a candidate got on one backend. Ordered: a later stage implies the earlier passed."""

    VERIFY = "verify"
    COMPILE = "compile"
    RUN = "run"
    COMPARE = "compare"

    @property
    def rank(self) -> int:
        return list(Stage).index(self)


def text_of(value: str) -> str:
    """A stage's or status's text, given the enum or the text: in an f-string a str enum prints
    its name (`Stage.RUN`), so what formats one takes its text first."""
    return str(value.value) if isinstance(value, enum.Enum) else value


class Status(str, enum.Enum):
    """What happened at the stage reached."""

    OK = "ok"
    ERROR = "error"  # the tool reported an error and exited non-zero
    CRASH = "crash"  # killed by a signal, or an LLVM fatal error / assertion
    TIMEOUT = "timeout"
    OOM = "oom"  # hit the address-space cap
    MISMATCH = "mismatch"  # ran, but the numbers are wrong
    UNSUPPORTED = "unsupported"  # a documented limit of the target, not a bug
    SKIPPED = "skipped"  # compile-only backend, or no device here

    @property
    def is_failure(self) -> bool:
        return self not in (Status.OK, Status.SKIPPED, Status.UNSUPPORTED)


# Flaky means it passed: a failure is flaky only when the same input on the same lane passes on a
# re-run, and never when a re-run fails at all (another way too: that is the same bug's other face).
# A crash gets several re-runs before it may be called flaky: in an audit, all 5 causes set apart as
# flaky after one re-run were deterministic bugs (two SIGSEGVs of one pass whose message suffix
# differed per run; a SmallVector capacity read from the stack that the re-runs gave as a verifier error).
CRASH_RERUNS = 3


def reruns_for(status: Status) -> int:
    """How many re-runs of its lane a failure gets, at most, before it is called flaky (each stops
    early once one fails): a crash CRASH_RERUNS, anything else one (a blow-up's costs its full cap)."""
    return CRASH_RERUNS if status == Status.CRASH else 1


@dataclass(frozen=True)
class Signature:
    """A failure's bucket key: structured, normalized fields with a readable str()."""

    backend: str
    stage: Stage
    status: Status
    message: str  # the normalized first meaningful error line

    def __str__(self) -> str:
        return f"{self.backend}/{self.stage.value}/{self.status.value}: {self.message}"

    def to_json(self) -> dict[str, str]:
        return {
            "backend": self.backend,
            "stage": self.stage.value,
            "status": self.status.value,
            "message": self.message,
        }

    @staticmethod
    def from_json(data: dict[str, str]) -> "Signature":
        return Signature(
            backend=data["backend"],
            stage=Stage(data["stage"]),
            status=Status(data["status"]),
            message=data["message"],
        )


@dataclass(frozen=True)
class ProcessResult:
    """One sandboxed child process, finished or killed."""

    argv: tuple[str, ...]
    returncode: int | None  # None when we killed it
    signal: int | None  # the signal that ended it, if any
    timed_out: bool
    out_of_memory: bool
    stdout: str
    stderr: str
    seconds: float

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and not self.timed_out


@dataclass(frozen=True)
class BackendResult:
    """The outcome of one candidate on one backend."""

    backend: str
    stage: Stage
    status: Status
    detail: str = ""  # the raw error text (trimmed) or the mismatch description
    signature: Signature | None = None  # set when status is a failure
    seconds: float = 0.0
    compile_seconds: float = 0.0
    run_seconds: float = 0.0
    flaky: bool = False  # failed once, then passed on its re-runs (model.reruns_for): failing another way is not flaky
    # What the compile reached, when it was run with the action log (coverage.actionlog.CompileCoverage)
    coverage: Any = field(default=None, compare=False, repr=False)

    @property
    def failed(self) -> bool:
        return self.status.is_failure

    def to_json(self) -> dict[str, Any]:
        return {
            "backend": self.backend,
            "stage": self.stage.value,
            "status": self.status.value,
            "signature": str(self.signature) if self.signature else None,
            "signature_fields": self.signature.to_json() if self.signature else None,
            "detail": self.detail,
            "flaky": self.flaky,
            "compile_seconds": round(self.compile_seconds, 4),
            "run_seconds": round(self.run_seconds, 4),
        }


class Verdict(str, enum.Enum):
    """The judgement on a whole candidate across backends (a check report's, or a campaign
    task's: only a campaign says ERROR or LOST, the oracle never does)."""

    PASS = "pass"  # every selected backend succeeded and agreed with the reference
    FAIL = "fail"  # at least one backend failed on input that verifies
    INVALID = "invalid"  # the input does not verify: our bug, never a finding
    FLAKY = "flaky"  # failed once, then passed on its re-runs
    ERROR = "error"  # campaign: our own code raised on it (the traceback is kept)
    LOST = "lost"  # campaign: the worker died or ran past its deadline


class Triage(str, enum.Enum):
    """What a failure (a campaign's bucket, a corpus entry) is judged to be, with its evidence kept
    beside it (the rules: `triage/verdict.py`). Only compiler bugs count as findings; the rest are
    listed apart, never dropped."""

    COMPILER_BUG = "compiler bug"
    TARGET_LIMIT = "target limit"  # something the target does not support
    SUSPECTED_DRIVER = "suspected driver"  # wrong only on the software Vulkan device
    FLAKY = "flaky"  # passed on its re-runs and failed on none
    OURS = "ours"  # input that should not have verified, or a reference every backend disagrees with


@dataclass(frozen=True)
class CheckReport:
    """All backends' results for one MLIR module, plus the overall verdict."""

    verdict: Verdict
    results: tuple[BackendResult, ...]
    verify_error: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def failures(self) -> tuple[BackendResult, ...]:
        return tuple(r for r in self.results if r.failed)

    @property
    def signatures(self) -> tuple[Signature, ...]:
        return tuple(r.signature for r in self.failures if r.signature is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict.value,
            "verify_error": self.verify_error,
            "notes": list(self.notes),
            "backends": {r.backend: r.to_json() for r in self.results},
        }


class MismatchKind(str, enum.Enum):
    """How a run's results differ from the reference. The value is the text a mismatch's
    signature carries, so bucketing never greps the detail."""

    VALUES = "wrong values"
    SHAPE = "wrong result shape"
    DTYPE = "wrong result dtype"
    COUNT = "wrong number of results"
    INDICES = "wrong indices"


@dataclass(frozen=True)
class Mismatch:
    """A comparison's verdict when results are wrong: the kind (what the signature buckets on)
    and a short human-readable detail (where, what was expected)."""

    kind: MismatchKind
    detail: str

    def __str__(self) -> str:
        return self.detail
