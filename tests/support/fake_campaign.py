"""Shared by the tests (moved out of test_campaign.py, which other tests imported)."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
import pytest
from shapefuzz.campaign.config import format_duration, parse_duration, resolve_names
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome, Steering
from shapefuzz.campaign.outcomes import Triage, Verdict
from shapefuzz.campaign.report.summary import sparkline, summarize, svg_plot, write_report
from shapefuzz.campaign.database import FORMAT_VERSION, CampaignStore
from shapefuzz.errors import CorpusError, UsageError
from shapefuzz.model import Signature, Stage, Status

from support.engines import build_engine


# --- a fake domain: candidates are numbers; behaviour is chosen by the number ------------------
@dataclass(frozen=True)
class FakeTarget:
    corpus: str
    space: int = 1000  # distinct candidates per group
    flaky_mod: int = 0  # n % flaky_mod == 1: fails only the first time (per worker process)
    die_on: int = -1  # the worker kills itself on this candidate
    sleep_on: int = -1  # the worker sleeps past its deadline on this candidate
    hang_lane: str = ""  # this lane always times out
    status: Status = Status.ERROR  # how n % 10 == 0 fails (a compile error's confirm does not re-run its lane)

    def worker_init(self) -> None:
        pass

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % self.space
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"mod3:{n % 3}", f"mod7:{n % 7}"), json.dumps({"n": n}),
                         "x" * (10 + n % 50))

    def deadline(self, lanes) -> float:
        return 3.0

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        if n == self.die_on:
            os.kill(os.getpid(), signal.SIGKILL)
        if n == self.sleep_on:
            time.sleep(30)
        lane_results, failures = {}, []
        for lane in lanes:
            if lane == self.hang_lane:
                lane_results[lane] = (Status.TIMEOUT, 1.0)
                failures.append(Failure(Signature(lane, Stage.COMPILE, Status.TIMEOUT, "timeout")))
            elif n % 10 == 0 or (self.flaky_mod and n % self.flaky_mod == 1 and not seen(candidate.key)):
                kind = "flaky" if self.flaky_mod and n % self.flaky_mod == 1 else f"kind{n % 4}"
                # the flaky one a crash: a compile error is never re-run on its lane (settled_by_check)
                status = Status.CRASH if kind == "flaky" else self.status
                lane_results[lane] = (status, 0.01)
                failures.append(Failure(Signature(lane, Stage.COMPILE, status, kind), "detail"))
            else:
                lane_results[lane] = (Status.OK, 0.01)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS, lane_results, tuple(failures), 0.02)

    confirm = check

    def size(self, text: str) -> tuple[int, ...]:
        return (len(text),)

    def corpus_count(self, failure: Failure):
        path = Path(self.corpus) / _slug(failure.key)
        return str(path), int(path.read_text()) if path.exists() else 0

    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str = "", triage: str = "",
             evidence: str = "") -> str:
        where, count = self.corpus_count(failure)
        Path(self.corpus).mkdir(exist_ok=True)
        Path(where).write_text(str(count + 1))
        return where

    def triage(self, candidate, failure, outcome):
        return Triage.COMPILER_BUG, ""

    def rename_cause(self, entry: str, cause: str) -> None:
        pass


SEEN: set[str] = set()


def seen(key: str) -> bool:
    seen = key in SEEN
    SEEN.add(key)
    return seen


def _slug(sig: str) -> str:
    return hashlib.sha256(sig.encode()).hexdigest()[:12]


def campaign_engine(tmp_path, target, count=40, lanes=("a", "b"), jobs=2, **kw) -> Engine:
    store = CampaignStore(tmp_path / "camp")
    return build_engine(target, store, ("g1", "g2"), lanes, 7, jobs, Limits(count=count), start_method="fork", **kw)
