"""Compiles a shrink need not run twice: what one text did on one lane, kept as a `Trial` and found
again by `TrialCache`. A campaign keeps every trial of its shrinks, and the check or confirming
re-run of each failing lane, in its head (by lane) and hands a shrink those of its lane: the
shrink's first check of its bucket's reproducer is the one the campaign already ran, and a text
another cause's shrink compiled on the same lane is not compiled again. The key is the text's hash,
the lane's compile flags (its name in one campaign: one toolchain) and the mode: a compile up to a
`--compile-to` phase, or a whole check (compile and run) with a given input seed.

Reuse is honest only where the run would end the same: a compile that finished (passed, or failed
with a diagnostic or a crash) within its limits ends the same under limits at least as wide
(`covers`); a blow-up (timeout, out of memory) says only what happens under its own limits, so it
stands for a run under the same limits alone."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable

from shapefuzz.model import Signature, Status

CHECK = "check"  # a whole check: verify, compile, run and judge (with the inputs of `seed`)
COMPILE = "compile"  # a compile alone, up to `phase` (None: the full compile)
# of a failing trial's output: its first lines (a trial is a cache entry; the bucket and the entry keep
# the whole output, and every shrink job on the lane carries its lane's trials)
DETAIL_CHARS = 600


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Trial:
    """One run of a text on a lane: its signature there (None: it passed), how long it took,
    under which limits, and its output when it failed."""

    text: str  # the text's digest
    lane: str
    mode: str  # CHECK or COMPILE
    phase: str | None  # COMPILE: --compile-to (None: the full compile); CHECK: None
    seed: int | None  # CHECK: the input seed; COMPILE: None
    signature: Signature | None
    seconds: float
    timeout: float  # the compile's time limit it ran under
    memory: int | None  # the address-space cap it ran under (None: none)
    detail: str = ""

    @property
    def key(self) -> tuple:
        return (self.text, self.lane, self.mode, self.phase, self.seed)

    def covers(self, timeout: float, memory: int | None) -> bool:
        """Whether a run under `timeout` and `memory` would end as this one did."""
        status = self.signature.status if self.signature is not None else Status.OK
        if status in (Status.TIMEOUT, Status.OOM):
            return abs(timeout - self.timeout) <= 0.01 * self.timeout and memory == self.memory
        wider = self.memory is None or (memory is not None and memory >= self.memory)
        return self.seconds < timeout and wider


class TrialCache:
    """Trials by key; `find` gives the one that stands for a new run, `add` keeps a new one (and
    `added` lists what this cache learned beyond what it was given)."""

    def __init__(self, trials: Iterable[Trial] = ()) -> None:
        self._trials = {t.key: t for t in trials}
        self.added: list[Trial] = []
        self.hits = 0
        self.saved_seconds = 0.0  # what the trials found here took when they ran

    def find(self, text: str, lane: str, mode: str, phase: str | None, seed: int | None, timeout: float,
             memory: int | None) -> Trial | None:
        trial = self._trials.get((digest(text), lane, mode, phase, seed))
        if trial is None or not trial.covers(timeout, memory):
            return None
        self.hits += 1
        self.saved_seconds += trial.seconds
        return trial

    def add(self, trial: Trial) -> None:
        if trial.key not in self._trials or not self._trials[trial.key].covers(trial.timeout, trial.memory):
            self._trials[trial.key] = trial
            self.added.append(trial)


def trial(text: str, lane: str, mode: str, signature: Signature | None, seconds: float, timeout: float,
          memory: int | None, detail: str = "", phase: str | None = None, seed: int | None = None) -> Trial:
    """A Trial of `text` (hashed here), its output kept only when it failed."""
    return Trial(digest(text), lane, mode, phase, seed, signature, round(seconds, 3), timeout, memory,
                 detail[:DETAIL_CHARS] if signature is not None else "")


__all__ = ["CHECK", "COMPILE", "Trial", "TrialCache", "digest", "trial"]
