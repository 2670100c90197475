"""Shared by the tests (moved out of test_campaign_economy.py, which other tests imported)."""

from __future__ import annotations

import hashlib
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path
import pytest
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.campaign.steering import Steering, SteeringKnobs
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import ShrinkState, TaskKind, Triage, Verdict
from shapefuzz.model import Signature, Stage, Status
from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.engines import build_engine  # noqa: E402


@dataclass(frozen=True)
class Target:
    """Candidates are numbers. n % hot_mod == 0 carries feature "hot" and fails on every lane in
    `same_on` with one message; shrink sleeps for its whole allowance (the worst case)."""

    corpus: str
    hot_mod: int = 4
    same_on: tuple[str, ...] = ("a",)
    check_seconds: float = 0.0
    shrink_sleep: float | None = None  # None: the allowance
    status: Status = Status.ERROR  # how a hot candidate fails

    def worker_init(self) -> None:
        pass

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % 5000
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        features = (f"mod3:{n % 3}", f"mod5:{n % 5}") + (("hot",) if n % self.hot_mod == 0 else ())
        return Candidate(key, group, seed, features, json.dumps({"n": n}), "x" * (10 + n % 50))

    def deadline(self, lanes) -> float:
        return 30.0

    def size(self, text: str) -> tuple[int, ...]:
        return (len(text),)

    def check(self, candidate: Candidate, lanes) -> Outcome:
        if self.check_seconds:
            time.sleep(self.check_seconds)
        hot = "hot" in candidate.features
        lane_results, failures = {}, []
        for lane in lanes:
            if hot and lane in self.same_on:
                failures.append(Failure(Signature(lane, Stage.COMPILE, self.status, "same")))
                lane_results[lane] = (self.status, 0.01)
            else:
                lane_results[lane] = (Status.OK, 0.01)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS, lane_results, tuple(failures), 0.0)

    confirm = check

    def shrink(self, candidate: Candidate, job):
        time.sleep(job.seconds if self.shrink_sleep is None else self.shrink_sleep)
        return None

    def corpus_count(self, failure: Failure):
        path = Path(self.corpus) / hashlib.sha256(failure.key.encode()).hexdigest()[:12]
        return str(path), int(path.read_text()) if path.exists() else 0

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        where, count = self.corpus_count(failure)
        Path(self.corpus).mkdir(exist_ok=True)
        Path(where).write_text(str(count + 1))
        return where

    def triage(self, candidate, failure, outcome):
        return Triage.COMPILER_BUG, "fake"

    def rename_cause(self, entry, cause):
        pass


def economy_engine(folder: Path, target, count, lanes=("a", "b"), jobs=1, **kw) -> Engine:
    return build_engine(target, CampaignStore(folder), ("g",), lanes, 11, jobs, Limits(count=count),
                        start_method="fork", **kw)
