"""The reduction engine: a `Problem` owns acceptance, passes only propose.

Knows nothing of MLIR or IREE: it takes a plain `is_interesting(text) -> bool` callable, an
optional `prefilter(texts) -> list[bool]` (cheap validity check run on a batch before any
trial), a `key(text)` ordering and an optional `admissible(text)` bound. A candidate replaces the
current text only when it is admissible, passes the prefilter, is interesting, and has a strictly
smaller key.

Determinism: a pass's candidates are sorted by key and tried in that order, `jobs` at a time;
the winner is the lowest-key interesting candidate of the first batch that has one -- which is
the first interesting candidate in key order whatever `jobs` is. So, for a deterministic
predicate, the result does not depend on the number of jobs or on which trial finishes first.

A pass that raises or takes longer than `pass_timeout` to propose is set aside for the rest of
the run (and reported); a predicate that raises counts as "not interesting". Ctrl-C, the time
limit, `stop()` and `stall_trials` trials in a row that shrank nothing end the run with the best
text so far.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

Predicate = Callable[[str], bool]
Prefilter = Callable[[Sequence[str]], Sequence[bool]]
Key = Callable[[str], tuple]


@dataclass(frozen=True)
class Pass:
    """A named proposer: current text -> candidate texts (most promising first; order does not matter)."""

    name: str
    propose: Callable[[str], Iterable[str]]


@dataclass(frozen=True)
class Accepted:
    """One accepted step, for progress display."""

    pass_name: str
    seconds: float
    text: str


@dataclass
class Stats:
    trials: int = 0  # predicate calls
    invalid: int = 0  # candidates the prefilter rejected
    accepted: int = 0
    proposed: int = 0
    per_pass: dict[str, list[int]] = field(default_factory=dict)  # name -> [proposed, tried, accepted]
    set_aside: dict[str, str] = field(default_factory=dict)  # pass name -> why
    predicate_errors: list[str] = field(default_factory=list)
    # when the last step was accepted: trials so far then, and seconds into the run (what the run
    # spent after it shrank nothing)
    trials_at_accept: int = 0
    accepted_at: float = 0.0
    gaps: list[int] = field(default_factory=list)  # the trials each accepted step took since the one before


class _Stop(Exception):
    pass


class Problem:
    """The current best text and the rule that replaces it."""

    def __init__(
        self,
        initial: str,
        is_interesting: Predicate,
        key: Key,
        prefilter: Prefilter | None = None,
        jobs: int = 1,
        time_limit: float | None = None,
        pass_timeout: float = 60.0,
        max_candidates: int = 4000,
        verify_chunk: int = 48,
        on_accept: Callable[[Accepted], None] | None = None,
        admissible: Callable[[str], bool] | None = None,
        stall_trials: int | None = None,
    ) -> None:
        self.current = initial
        # stop ("stalled") once this many trials in a row, since the start or the last accepted step,
        # shrank nothing (None: run to the fixpoint)
        self.stall_trials = stall_trials
        # a bound no accepted text may pass, beside the key (e.g. never more bytes than the start)
        self.admissible = admissible
        self.current_key = key(initial)
        self.is_interesting = is_interesting
        self.key = key
        self.prefilter = prefilter
        self.jobs = max(1, jobs)
        self.start = time.monotonic()
        self.deadline = None if time_limit is None else self.start + time_limit
        self.pass_timeout = pass_timeout
        self.max_candidates = max_candidates
        self.verify_chunk = max(verify_chunk, self.jobs)
        self.on_accept = on_accept
        self.stats = Stats()
        self.stopped_because: str | None = None  # "time limit", "interrupted", "stopped"
        self._seen: set[str] = {initial}
        self._stop = threading.Event()
        self._pool = concurrent.futures.ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None

    def rebase(self, text: str, admissible: Callable[[str], bool] | None,
               is_interesting: Predicate | None = None) -> None:
        """Go on (`run` again) from `text`, another form of the current text that is not tried
        (the caller keeps what it started from), under a new `admissible` (and a new predicate, where
        given: another judge of the new form); stats and deadline carry on."""
        self.current, self.current_key, self.admissible = text, self.key(text), admissible
        if is_interesting is not None:
            self.is_interesting = is_interesting
        self._seen.add(text)
        if self.jobs > 1 and self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.jobs)

    def extend(self, seconds: float) -> None:
        """Go on (`run` again) after the deadline stopped a run, for `seconds` more."""
        if self.deadline is not None:
            self.deadline = max(self.deadline, time.monotonic()) + seconds
        self.stopped_because = None
        if self.jobs > 1 and self._pool is None:
            self._pool = concurrent.futures.ThreadPoolExecutor(self.jobs)

    # -- control ---------------------------------------------------------------------------
    def stop(self) -> None:
        self._stop.set()

    def elapsed(self) -> float:
        return time.monotonic() - self.start

    def _check(self) -> None:
        if self._stop.is_set():
            self.stopped_because = self.stopped_because or "stopped"
            raise _Stop
        if self.deadline is not None and time.monotonic() >= self.deadline:
            self.stopped_because = "time limit"
            raise _Stop

    # -- proposing -------------------------------------------------------------------------
    def _propose(self, p: Pass) -> list[str]:
        """The pass's candidates, produced in a daemon thread so a hanging pass can be abandoned."""
        box: dict[str, Any] = {}  # "out": the candidates (list[str]), or "error": why not

        def work() -> None:
            try:
                out = []
                for candidate in p.propose(self.current):
                    out.append(candidate)
                    if len(out) >= self.max_candidates or self._stop.is_set():
                        break
                box["out"] = out
            except Exception as error:  # a pass's bug must not end the run
                box["error"] = f"{type(error).__name__}: {error}"

        thread = threading.Thread(target=work, name=f"pass-{p.name}", daemon=True)
        thread.start()
        waited = 0.0
        while thread.is_alive() and waited < self.pass_timeout:
            thread.join(0.1)
            waited += 0.1
            self._check()
        if thread.is_alive():
            self.stats.set_aside[p.name] = f"proposing took over {self.pass_timeout:.0f}s"
            return []
        if "error" in box:
            self.stats.set_aside[p.name] = f"raised {box['error']}"
            return []
        return list(box["out"])

    # -- trying ----------------------------------------------------------------------------
    def _trial(self, text: str) -> bool:
        try:
            return bool(self.is_interesting(text))
        except Exception as error:
            if len(self.stats.predicate_errors) < 20:
                self.stats.predicate_errors.append(f"{type(error).__name__}: {error}")
            return False

    def _evaluate(self, batch: list[str]) -> list[bool]:
        self.stats.trials += len(batch)
        if self._pool is None or len(batch) == 1:
            results = []
            for text in batch:
                self._check()
                results.append(self._trial(text))
            return results
        futures = [self._pool.submit(self._trial, text) for text in batch]
        while True:  # wait in slices so Ctrl-C and the deadline are noticed
            done, pending = concurrent.futures.wait(futures, timeout=0.2)
            if not pending:
                break
            self._check()
        return [f.result() for f in futures]

    def try_candidates(self, candidates: Iterable[str], pass_name: str = "?") -> bool:
        """Accept the lowest-key interesting candidate smaller than the current text, if any."""
        keyed = {}
        for text in candidates:
            if text in self._seen or text in keyed:
                continue
            k = self.key(text)
            if k < self.current_key and (self.admissible is None or self.admissible(text)):
                keyed[text] = k
        ordered = sorted(keyed, key=keyed.__getitem__)
        counts = self.stats.per_pass.setdefault(pass_name, [0, 0, 0])
        counts[0] += len(ordered)
        self.stats.proposed += len(ordered)
        for start in range(0, len(ordered), self.verify_chunk):
            self._check()
            window = ordered[start : start + self.verify_chunk]
            if self.prefilter is not None:
                flags = list(self.prefilter(window))
                valid = [t for t, ok in zip(window, flags) if ok]
                self._seen.update(t for t, ok in zip(window, flags) if not ok)
                self.stats.invalid += len(window) - len(valid)
            else:
                valid = window
            for b in range(0, len(valid), self.jobs):
                batch = valid[b : b + self.jobs]
                counts[1] += len(batch)
                self._seen.update(batch)
                verdicts = self._evaluate(batch)
                winners = [t for t, ok in zip(batch, verdicts) if ok]
                if not winners and self.stall_trials is not None \
                        and self.stats.trials - self.stats.trials_at_accept >= self.stall_trials:
                    self.stopped_because = "stalled"
                    raise _Stop
                if winners:
                    best = min(winners, key=keyed.__getitem__)
                    self.current, self.current_key = best, keyed[best]
                    self.stats.accepted += 1
                    self.stats.gaps.append(self.stats.trials - self.stats.trials_at_accept)
                    self.stats.trials_at_accept, self.stats.accepted_at = self.stats.trials, self.elapsed()
                    counts[2] += 1
                    if self.on_accept is not None:
                        self.on_accept(Accepted(pass_name, self.elapsed(), best))
                    return True
        return False

    def run_pass(self, p: Pass) -> bool:
        if p.name in self.stats.set_aside:
            return False
        return self.try_candidates(self._propose(p), p.name)

    # -- the loop --------------------------------------------------------------------------
    def run(self, tiers: Sequence[Sequence[Pass]]) -> str:
        """Run the tiers to a fixpoint (or until stopped); returns the best text."""
        try:
            progress = True
            while progress:
                progress = False
                for tier in tiers:
                    tier_progress = True
                    while tier_progress:
                        tier_progress = False
                        for p in tier:
                            while self.run_pass(p):
                                tier_progress = progress = True
        except _Stop:
            pass
        except KeyboardInterrupt:
            self.stopped_because = "interrupted"
        finally:
            self.close()
        return self.current

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
