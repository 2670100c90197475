"""A regression range over a campaign's few releases tries every one and shows the history as it is:
a bug fixed and broken again reads "fails in 3.0.0, passes in 3.12.0, fails in 3.13.0", never
"fails since 3.13.0" with the oldest release left untried (the torch-mlir avg-pool count regression
read reversed that way)."""

from __future__ import annotations

import pytest

from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.bisect import bisect_entry, history, history_text
from shapefuzz.recheck.regression import regression_range
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult

SIG = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values in pool")


@pytest.fixture
def entry(tmp_path):
    return load_entry(save_finding(tmp_path, Finding(SIG, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None,
                                                     0, None, None, "3.13.0", [], "wrong"))[0])


def _answers(bad, calls=None, unknown=()):
    def check(e, version):
        if calls is not None:
            calls.append(version)
        outcome = ReplayOutcome.NOT_RUNNABLE if version in unknown else \
            ReplayOutcome.STILL_FAILING if version in bad else ReplayOutcome.FIXED
        return ReplayResult(e.id, e.path, outcome, "failing", e.signature)
    return dict(check=check, installer=lambda v: v)


def test_a_regression_of_a_fixed_bug_is_shown_as_it_is(entry):
    record = regression_range(entry, ["3.0.0", "3.12.0", "3.13.0"], **_answers({"3.0.0", "3.13.0"}))
    assert record["text"] == "fails in 3.0.0, passes in 3.12.0, fails in 3.13.0: a regression of a fixed bug"
    assert record["first_failing"] == "3.13.0" and record["last_passing"] == "3.12.0"
    assert record["tried"] == "3.0.0, 3.12.0, 3.13.0" and "not monotone" in record["note"]
    assert record["history"] == "fails in 3.0.0, passes in 3.12.0, fails in 3.13.0"


def test_every_release_of_a_short_list_is_tried_and_a_monotone_history_reads_as_before(entry):
    calls: list[str] = []
    versions = ["3.0.0", "3.6.0", "3.12.0", "3.13.0"]
    record = regression_range(entry, versions, **_answers({"3.12.0", "3.13.0"}, calls))
    assert sorted(calls) == sorted(versions)
    assert record["text"] == "fails since 3.12.0, passes in 3.6.0"
    assert record["history"] == "passes in 3.0.0–3.6.0, fails in 3.12.0–3.13.0"
    fixed = regression_range(entry, versions, **_answers({"3.6.0", "3.12.0"}))
    assert fixed["first_fixed"] == "3.13.0" and "fixed in 3.13.0" in fixed["text"]


def test_a_release_that_cannot_tell_neither_splits_nor_joins_a_run(entry):
    result = bisect_entry(entry, ["3.0.0", "3.6.0", "3.12.0", "3.13.0"], exhaustive=True,
                          **_answers({"3.0.0", "3.12.0", "3.13.0"}, unknown={"3.6.0"}))
    assert history_text(history(result.probes)) == "fails in 3.0.0–3.13.0"
    assert result.first_failing == "3.0.0" and "3.6.0 cannot tell" in result.note


def test_a_long_list_is_still_bisected(entry):
    calls: list[str] = []
    versions = [f"3.{minor}.0" for minor in range(14)]
    record = regression_range(entry, versions, **_answers({"3.13.0"}, calls))
    assert len(calls) < len(versions) and record["text"].startswith("fails since 3.13.0, passes in 3.12.0; ")
    assert record["text"].endswith(" not tried (bisected)")  # what the bisect assumed is said
