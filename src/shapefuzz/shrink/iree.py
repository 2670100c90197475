"""The IREE side of shrinking: which failure we keep, the "same signature" predicate, the
batched verifier used as prefilter, and an iree-opt round-trip pass. The engine never imports
this module; `run.py` wires it in."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Iterator, Sequence

from shapefuzz.checkfile import check_file
from shapefuzz.execute import DEFAULT_BUDGET, Budget, verify_many
from shapefuzz.model import CheckReport, Signature, Stage
from shapefuzz.oracle import check_module
from shapefuzz.sandbox import Limits, run_sandboxed
from shapefuzz.shrink.measure import sort_key
from shapefuzz.toolchain import Toolchain

MIN_TIMEOUT = 5.0
TIMEOUT_FACTOR = 5.0


@dataclass(frozen=True)
class Target:
    """The failure to keep: a signature on each of one or more backends."""

    signatures: dict[str, Signature]  # backend -> signature
    check_backends: tuple[str, ...]  # backends a trial runs on
    compile_timeout: float  # calibrated from the first run

    @property
    def compile_only(self) -> bool:
        return all(s.stage in (Stage.COMPILE, Stage.VERIFY) for s in self.signatures.values())


def calibrate(first_seconds: float, user_timeout: float, timeout_signature: bool) -> float:
    """A trial's compile timeout: 5x the first compile, at least 5 s, never above the user's."""
    if timeout_signature:
        return user_timeout
    return min(user_timeout, max(MIN_TIMEOUT, TIMEOUT_FACTOR * first_seconds))


def matches(signature: Signature, text: str) -> bool:
    """Does a user's --signature TEXT name this signature? Whole text, message alone, or a part."""
    text = text.strip()
    return text in (str(signature), signature.message) or (len(text) >= 8 and text in str(signature))


@dataclass
class SameSignature:
    """is_interesting(text): does the candidate still fail with the target signature(s)?

    Candidates that fail with another signature are kept aside (smallest text per signature)
    as new findings."""

    toolchain: Toolchain
    target: Target
    known: frozenset[Signature]  # signatures of the original file: not new
    findings: dict[Signature, tuple[str, CheckReport]] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def report(self, text: str) -> CheckReport:
        budget = Budget(DEFAULT_BUDGET.verify, Limits(timeout=self.target.compile_timeout), DEFAULT_BUDGET.run)
        if self.target.compile_only:
            backends = list(self.target.signatures)
            return check_module(text, backends, None, self.toolchain, budget, confirm=False)
        report, _ = check_file(
            text, self.target.check_backends, self.toolchain,
            compile_timeout=self.target.compile_timeout, confirm=False,
        )
        return report

    def __call__(self, text: str) -> bool:
        report = self.report(text)
        got = {r.backend: r.signature for r in report.failures}
        for backend, signature in got.items():
            if signature is not None and signature not in self.known and signature != self.target.signatures.get(backend):
                self._note(signature, text, report)
        return all(got.get(b) == s for b, s in self.target.signatures.items())

    def _note(self, signature: Signature, text: str, report: CheckReport) -> None:
        with self._lock:
            old = self.findings.get(signature)
            if old is None or sort_key(text) < sort_key(old[0]):
                self.findings[signature] = (text, report)


@dataclass
class Verifier:
    """prefilter(texts) -> [verifies?] with one iree-opt process per batch."""

    toolchain: Toolchain
    calls: int = 0

    def __call__(self, texts: Sequence[str]) -> list[bool]:
        self.calls += 1
        return [v is None for v in verify_many(list(texts), self.toolchain, DEFAULT_BUDGET.verify)]


def roundtrip_pass(toolchain: Toolchain):
    """A pass: the text as iree-opt prints it (short SSA names, no comments), and canonicalized."""

    def roundtrip(text: str) -> Iterator[str]:
        if toolchain.opt_bin is None:
            return
        for extra in ((), ("--canonicalize",)):
            result = run_sandboxed([str(toolchain.opt_bin), "-", *extra], Limits(timeout=30.0), stdin_text=text)
            if result.ok and result.stdout.strip():
                yield result.stdout

    return roundtrip


def describe(report: CheckReport) -> str:
    """One line: what each backend did."""
    parts = []
    for r in report.results:
        parts.append(f"{r.backend}: {r.stage.value} {r.status.value}" + (" (flaky)" if r.flaky else ""))
    return "; ".join(parts) or "no backend ran"
