"""Shared by the tests (moved out of test_coverage.py, which other tests imported)."""

from __future__ import annotations

import hashlib
import json
import os
import random
import statistics
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
import pytest
from shapefuzz.campaign.coverage_map import CoverageBook, CoverageKnobs, frontier_counts, frontier_lanes
from shapefuzz.campaign.report.coverage_summary import coverage_rows, coverage_summary, failing_passes
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import json_text, markdown, summarize, text_lines
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.coverage.actionlog import (
    ActionLogReader, crash_pass, failing_pass, log_flags, read_action_log, strip_noise)
from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.engine_fakes import InertTargetParts  # noqa: E402


# --- the campaign, with a fake target --------------------------------------------------------------
@dataclass(frozen=True)
class CoveredTarget(InertTargetParts):
    """Candidates are numbers n. An instrumented lane "reaches" pattern p{n % 7} and, for n a
    multiple of 5, a rare pattern of its own (frontier). Lane "narrow" cannot take odd n."""

    corpus: str

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        return self._make(group, seed, seed % 5000)

    def _make(self, group: str, seed: int, n: int) -> Candidate:
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"mod3:{n % 3}", f"odd:{n % 2}"), json.dumps({"n": n}), "x" * (10 + n % 40))

    def from_payload(self, group: str, seed: int, payload: str) -> Candidate:
        return self._make(group, seed, json.loads(payload)["n"])

    def neighbour(self, candidate: Candidate, seed: int) -> Candidate:
        return self._make(candidate.group, seed, json.loads(candidate.payload)["n"] + 1 + seed % 3)

    def coverage_support(self) -> str:
        return ""

    def ineligible(self, candidate: Candidate, lanes) -> set[str]:
        return {"narrow"} if json.loads(candidate.payload)["n"] % 2 else set()

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        coverage = {lane: ((("P", f"p{n % 7}"), ("P", "")) + ((("Rare", f"r{n}"),) if n % 5 == 0 else ()),
                           "FailPass" if n % 11 == 0 else "")
                    for lane in candidate.instrument}
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, "eleven")) for lane in lanes if n % 11 == 0)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (Status.ERROR if failures else Status.OK, 0.01) for lane in lanes}, failures, 0.0,
                       coverage=coverage)

    confirm = check
