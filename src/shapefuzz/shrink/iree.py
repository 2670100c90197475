"""The IREE side of shrinking: which failure we keep, the "same signature" predicate, the
batched verifier used as prefilter, and an iree-opt round-trip pass. The engine never imports
this module; `run.py` wires it in."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Sequence

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.files import write_text
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.judge.modulecheck import check_file
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget, compile_module, verify_many
from shapefuzz.model import CheckReport, Signature, Stage, Status
from shapefuzz.judge.oracle import check_module
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.triage.signature import classify, signature_for
from shapefuzz.size import sort_key
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.identity import placed_timeout
from shapefuzz.shrink.trials import CHECK, COMPILE, TrialCache, trial

BLOWUPS = (Status.TIMEOUT, Status.OOM)  # failures at a limit: each trial that reaches one costs the limit
FINDINGS_CHECKED = 8  # new failures met while shrinking that are re-checked (the smallest first)
MIN_TIMEOUT = 5.0
TIMEOUT_FACTOR = 5.0
# iree-compile --compile-to phases, in pipeline order ("end" is the full compile).
PHASES = (
    "input", "abi", "preprocessing", "global-optimization", "dispatch-creation", "flow", "stream",
    "executable-sources", "executable-configurations", "executable-targets", "hal", "vm",
)


@dataclass(frozen=True)
class Target:
    """The failure to keep: a signature on each of one or more backends."""

    signatures: dict[str, Signature]  # backend -> signature
    check_backends: tuple[str, ...]  # backends a trial runs on
    compile_timeout: float  # calibrated from the first run
    phase: str | None = None  # compile only this far in trials (where the failure already shows)
    seed: int = 0  # the input seed every trial runs with (a campaign candidate's own)

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


def compile_signatures(text: str, toolchain: Toolchain, backends: Sequence[str], timeout: float,
                       phase: str | None = None, cache: TrialCache | None = None) -> dict[str, Signature | None]:
    """Compile (up to `phase`) on each backend: backend -> the failure's signature, None when it compiled.
    The text must already verify (the shrinker's prefilter did that). With `cache`, a compile it holds
    (the same text, lane and phase, under limits that end it the same: shrink.trials) is not run
    again, and each one run is added to it."""
    out: dict[str, Signature | None] = {}
    limits = Limits(timeout=timeout)
    todo = []
    for name in backends:
        known = cache.find(text, name, COMPILE, phase, None, timeout, limits.memory_bytes) if cache else None
        if known is not None:
            out[name] = known.signature
        else:
            todo.append(name)
    if not todo:
        return out
    extra = (f"--compile-to={phase}",) if phase else ()
    with temp_dir("shrink") as tmp:
        path = os.path.join(tmp, "candidate.mlir")
        write_text(path, text)
        for name in todo:
            result = compile_module(toolchain, BACKENDS[name], path, os.path.join(tmp, "out"), limits,
                                    extra_flags=extra)
            status = classify(result)
            out[name] = placed_timeout(signature_for(name, Stage.COMPILE, status, result),
                                       result.stderr + result.stdout) if status != Status.OK else None
            if cache is not None:
                cache.add(trial(text, name, COMPILE, out[name], result.seconds, timeout, limits.memory_bytes,
                                phase=phase))
    return out


def earliest_phase(text: str, toolchain: Toolchain, target: Target, cache: TrialCache | None = None) -> str | None:
    """The first --compile-to phase at which the target failure already shows (binary search,
    assuming once it shows it stays); None when only the full compile shows it."""
    if not all(s.stage == Stage.COMPILE and s.status in (Status.ERROR, Status.CRASH)
               for s in target.signatures.values()):
        return None

    def shows(phase: str) -> bool:
        got = compile_signatures(text, toolchain, list(target.signatures), target.compile_timeout, phase, cache)
        return all(got.get(b) == s for b, s in target.signatures.items())

    lo, hi = 0, len(PHASES)  # answer in [lo, hi]; hi means "end"
    if not shows(PHASES[-1]):
        return None
    hi = len(PHASES) - 1
    while lo < hi:
        mid = (lo + hi) // 2
        if shows(PHASES[mid]):
            hi = mid
        else:
            lo = mid + 1
    return PHASES[hi]


@dataclass
class SameSignature:
    """is_interesting(text): does the candidate still fail with the target signature(s)?

    Candidates that fail with another signature are kept aside (smallest text per signature)
    as possible new findings; `confirmed_findings` re-checks them before they are reported."""

    toolchain: Toolchain
    target: Target
    known: frozenset[Signature]  # signatures of the original file: not new
    findings: dict[Signature, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    cache: TrialCache | None = None  # compiles already run (shrink.trials): found there, not run again
    # a blow-up target (a hang, out of memory): `stop()` once this many trials ran into the blow-up
    # (each costs the full limit); None: no such bound
    blowup_trials: int | None = None
    stop: Callable[[], None] = lambda: None
    blowups: int = 0
    on_finding: Callable[[], None] = lambda: None  # a new failure noted, for confirmed_findings to re-check

    def signatures(self, text: str) -> dict[str, Signature | None]:
        if self.target.compile_only:
            return compile_signatures(text, self.toolchain, list(self.target.signatures),
                                      self.target.compile_timeout, self.target.phase, self.cache)
        return check_signatures(text, self.toolchain, self.target.check_backends, self.target.compile_timeout,
                                self.target.seed, self.cache)

    def __call__(self, text: str) -> bool:
        got = self.signatures(text)
        blown = any(s.status in BLOWUPS and (g := got.get(b)) is not None and g.status == s.status
                    for b, s in self.target.signatures.items())
        if blown and self.blowup_trials is not None:
            with self._lock:
                self.blowups += 1
                if self.blowups >= self.blowup_trials:
                    self.stop()
        for backend, signature in got.items():
            if signature is not None and signature not in self.known and signature != self.target.signatures.get(backend):
                if signature.status not in (Status.TIMEOUT, Status.OOM):  # limits of our budget, not new bugs
                    self._note(signature, text)
        return all(got.get(b) == s for b, s in self.target.signatures.items())

    def _note(self, signature: Signature, text: str) -> None:
        with self._lock:
            old = self.findings.get(signature)
            if old is None or sort_key(text) < sort_key(old):
                self.findings[signature] = text
            if old is None and len(self.findings) <= FINDINGS_CHECKED:
                self.on_finding()  # its re-checks will take time after the trials: keep room for them

    def confirmed_findings(self, limit: int = FINDINGS_CHECKED) -> list[tuple[Signature, str, CheckReport]]:
        """Re-check the smallest new failures with a full compile (twice): only those that fail
        for real, and not as a documented target limit, are reported."""
        out: list[tuple[Signature, str, CheckReport]] = []
        seen = set(self.known) | set(self.target.signatures.values())
        budget = Budget(DEFAULT_BUDGET.verify, Limits(timeout=max(self.target.compile_timeout, 30.0)), DEFAULT_BUDGET.run)
        ordered = sorted(self.findings.items(), key=lambda kv: sort_key(kv[1]))[:limit]
        for signature, text in ordered:
            report = check_module(text, [signature.backend], None, self.toolchain, budget, confirm=True)
            for r in report.failures:
                if not r.flaky and r.signature is not None and r.signature not in seen:
                    seen.add(r.signature)
                    out.append((r.signature, text, report))
        return sorted(out, key=lambda item: str(item[0]))


def check_signatures(text: str, toolchain: Toolchain, backends: Sequence[str], timeout: float, seed: int,
                     cache: TrialCache | None = None) -> dict[str, Signature | None]:
    """A whole check of `text` on `backends` (inputs of `seed`): backend -> its failure's signature,
    None when it passed; with `cache`, as `compile_signatures` uses it."""
    memory = Limits(timeout=timeout).memory_bytes
    known = {b: cache.find(text, b, CHECK, None, seed, timeout, memory) for b in backends} if cache else {}
    if known and all(t is not None for t in known.values()):
        return {b: t.signature for b, t in known.items() if t is not None}
    report, _ = check_file(text, backends, toolchain, compile_timeout=timeout, confirm=False, seed=seed)
    if cache is not None:
        for r in report.results:
            cache.add(trial(text, r.backend, CHECK, r.signature, r.seconds, timeout, memory, r.detail, seed=seed))
    return {r.backend: r.signature for r in report.results}


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
