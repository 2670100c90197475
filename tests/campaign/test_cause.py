"""A cause is a typed value (campaign/causes/cause.py) whose JSON is what `report --json` and `triage
--json` always printed; a bucket's triage verdict and shrink state are enums, text only in the
store; an environment fault reaches the engine as a value on the finished task, never found by
searching traceback text (issue 32, item 2)."""

from __future__ import annotations

import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.causes.cause import Cause, Symptom
from shapefuzz.campaign.cluster.node import ToolchainSpec, run_task
from shapefuzz.campaign.worker_pool import Task, WorkerPool
from shapefuzz.campaign.report.summary import json_text, summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import (
    BucketState, Candidate, EnvironmentCondition, Outcome, ShrinkState, TaskKind, Triage, Verdict,
)
from shapefuzz.errors import EnvironmentFault
from shapefuzz.model import Signature

# The keys of a cause in `report --json` / `triage --json`, in their order (as printed before the Cause value).
CAUSE_KEYS = ["identity", "failing_pass", "component", "scope", "lanes", "severity", "severity_rank", "localized",
              "reported", "known", "regression", "cause", "triage", "evidence", "backends", "stage", "status",
              "message", "buckets", "count", "first_seen", "new", "rehits", "rehit_seconds", "corpus_entries",
              "symptoms", "merged", "shrunk"]


def _bucket(lane: str, stage: str, status: str, message: str, first: float, triage: Triage | None,
            state: BucketState = BucketState.CONFIRMED) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": stage, "status": status, "message": message})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage=stage, status=status, family="pool",
                     count=2, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0, state=state,
                     repro_key=f"k-{lane}", repro_size=10, repro_text="x", detail="", corpus_entry="", shrunk_size=None,
                     cause=f"cause-{lane}", triage=triage)


def _store(folder: Path) -> CampaignStore:
    store = CampaignStore(folder)
    store.start_session([])
    for row in (_bucket("llvm-cpu", "compare", "mismatch", "wrong values in pool", 1.0, Triage.COMPILER_BUG),
                _bucket("vulkan-spirv", "compile", "error", "failed to legalize", 2.0, Triage.TARGET_LIMIT),
                _bucket("vmvx", "run", "crash", "SIGSEGV", 3.0, None, BucketState.FLAKY)):
        store.put_bucket(row)
    return store


def test_causes_are_typed_values_and_their_json_keeps_the_report_s_keys(tmp_path):
    store = _store(tmp_path / "c")
    summary = summarize(store)
    causes = summary.causes
    assert all(isinstance(c, Cause) for c in causes)
    assert [(c.name, c.triage) for c in causes] == [("cause-llvm-cpu", Triage.COMPILER_BUG),  # findings first,
                                                   ("cause-vmvx", Triage.FLAKY),  # then by severity (a crash)
                                                   ("cause-vulkan-spirv", Triage.TARGET_LIMIT)]
    wrong = causes[0]
    assert wrong.is_finding and summary.findings == [wrong] and summary.set_apart == {"target limit": 1, "flaky": 1}
    assert wrong.symptoms == (Symptom(stage="compare", status="mismatch", message="wrong values in pool",
                                      lanes=("llvm-cpu",), severity="wrong values"),)
    printed = json.loads(json_text(summary))["causes"]
    # a compiler bug with no shrunk example says why (its key only then)
    assert [list(c) for c in printed] == [CAUSE_KEYS + ["not_shrunk"], CAUSE_KEYS, CAUSE_KEYS]
    assert printed[0]["not_shrunk"] == "no reproducer of it was saved"
    assert [c["triage"] for c in printed] == ["compiler bug", "flaky", "target limit"]  # the text, not the enum
    assert printed[0]["symptoms"] == [{"stage": "compare", "status": "mismatch", "message": "wrong values in pool",
                                       "lanes": ["llvm-cpu"], "severity": "wrong values"}]
    with pytest.raises(AttributeError):
        wrong.new = False  # frozen: the one summary's value, read by report, dashboard and corpus alike
    store.close()


def test_triage_json_prints_the_report_s_causes(tmp_path, monkeypatch, capsys):
    from shapefuzz.cli import main

    _store(tmp_path / "c").close()
    printed = {}
    for what, argv in (("report", ["report", str(tmp_path / "c"), "--json"]),
                       ("triage", ["triage", str(tmp_path / "c"), "--json"])):
        monkeypatch.setattr(sys, "argv", ["shapefuzz", *argv])
        try:
            main()
        except SystemExit as stop:
            assert not stop.code, capsys.readouterr().err
        printed[what] = json.loads(capsys.readouterr().out)
    assert printed["triage"]["causes"] == printed["report"]["causes"] and len(printed["report"]["causes"]) == 3


def test_a_bucket_s_verdict_and_shrink_state_are_enums_and_text_in_the_store(tmp_path):
    store = CampaignStore(tmp_path / "c")
    judged = _bucket("llvm-cpu", "compare", "mismatch", "m", 1.0, Triage.SUSPECTED_DRIVER)
    old = _bucket("vmvx", "compile", "error", "e", 2.0, None)  # a bucket from before triage
    store.put_bucket(BucketRow(**{**judged.__dict__, "shrink": ShrinkState.DONE}))
    store.put_bucket(old)
    raw = dict(((sig, (t, s)) for sig, t, s in store.db.execute("SELECT sig, triage, shrink FROM buckets")))
    assert raw == {judged.sig: ("suspected driver", "done"), old.sig: ("", "")}
    back = store.bucket(judged.sig)
    assert back.triage is Triage.SUSPECTED_DRIVER and back.shrink is ShrinkState.DONE
    assert store.bucket(old.sig).triage is None and store.bucket(old.sig).shrink is ShrinkState.NONE
    with pytest.raises(TypeError):  # rows are built by keyword: 24 positional fields were one slip from a swap
        BucketRow(judged.sig, judged.sig_json)  # noqa
    store.close()


# --- an environment fault is a value on the finished task -------------------------------------------
NO_SPACE = "iree-compile: No space left on device"


@dataclass(frozen=True)
class _Faulty:
    """A target whose check of candidate "env" meets a full disk, and of "text" fails with an error
    that only mentions one (our bug, whatever its words)."""

    def worker_init(self) -> None:
        pass

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        if candidate.key == "env":
            raise EnvironmentFault(f"{NO_SPACE} (our environment, not the compiler: free space in TMPDIR)")
        if candidate.key == "text":
            raise ValueError("EnvironmentFault: a message that only says so")
        return Outcome(Verdict.PASS, {})


def _candidate(key: str) -> Candidate:
    return Candidate(key, "g", 0, (), "{}", "text")


def test_an_environment_fault_reaches_the_engine_as_a_value_not_as_traceback_text(monkeypatch):
    pool = WorkerPool(_Faulty(), 1, start_method="fork")
    try:
        done = []
        for i, key in enumerate(("env", "text", "fine")):
            pool.submit(Task(i, TaskKind.CHECK, _candidate(key), ("a",), 60.0))
            end = time.monotonic() + 60
            while len(done) == i and time.monotonic() < end:
                done += pool.wait(1.0)
    finally:
        pool.close()
    by_key = {d.task.candidate.key: d for d in done}
    assert by_key["env"].environment == EnvironmentCondition(NO_SPACE) and by_key["env"].value is None
    assert by_key["text"].environment is None and "EnvironmentFault" in by_key["text"].error  # an error, not ours
    assert by_key["fine"].environment is None and by_key["fine"].value.verdict == Verdict.PASS
    # the same on a cluster node (campaign.cluster.node, what a Ray task runs; here without Ray)
    monkeypatch.setattr("shapefuzz.campaign.cluster.node._node_id", lambda: "node")
    spec = ToolchainSpec()
    assert run_task(_Faulty(), spec, "check", _candidate("env"), ("a",)).environment == EnvironmentCondition(NO_SPACE)
    assert run_task(_Faulty(), spec, "check", _candidate("text"), ("a",)).environment is None
