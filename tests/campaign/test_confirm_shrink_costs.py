"""Confirm and shrink for less (issue 44, item 3), as the bucket book drives them task by task (no
workers, no compiler): a crash is still re-run three times before it is called flaky; a sibling
lane whose bucket is in the new bucket's cause already is not re-run (it could tie nothing), so a
compile error with nothing else in doubt is confirmed by its check alone; a shrink is handed what
its lane already ran (the check's failing lane, earlier shrinks' trials there) and nothing of other
lanes; and each confirm and shrink leaves a row saying where its seconds went."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.outcomes import BucketState, ShrinkOutcome, TaskKind, Verdict
from shapefuzz.campaign.task_log import breakdown, task_rows
from shapefuzz.campaign.worker_pool import Done
from shapefuzz.model import CRASH_RERUNS, Signature, Stage, Status
from shapefuzz.shrink.trials import CHECK, COMPILE, trial

from support.engine_fakes import InertTargetParts  # noqa: E402

LANES = ("ref", "x", "y")
CRASH = (Stage.COMPILE, Status.CRASH, "SIGSEGV in mlir::ShapedType::hasRank")
ERROR = (Stage.COMPILE, Status.ERROR, "'tensor.expand_shape' op expected N dims")


@dataclass(frozen=True)
class Book(InertTargetParts):
    corpus: str

    def generate(self, group: str, seed: int) -> Candidate:
        return _candidate(seed)


def _engine(tmp_path: Path) -> Engine:
    return Engine(Book(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                  EngineConfig(("g",), LANES, 1, 1, Limits(count=10), start_method="fork", reference="ref",
                               lanes_per_candidate=2, shrink=True))


def _candidate(n: int) -> Candidate:
    return Candidate(hashlib.sha256(str(n).encode()).hexdigest()[:16], "g", n, (), "{}", "x" * (20 + n), n)


def _outcome(lanes: tuple[str, ...], failing: dict[str, tuple[Stage, Status, str]], strong: bool = False,
             trials: tuple = ()) -> Outcome:
    failures = tuple(Failure(Signature(lane, *failing[lane]), "", "expand_shape in FoldUnitExtentDims", strong)
                     for lane in lanes if lane in failing)
    return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                   {lane: (failing[lane][1] if lane in failing else Status.OK, 0.5) for lane in lanes}, failures,
                   trials=trials)


def _finish(engine: Engine, kind: TaskKind, candidate: Candidate, lanes: tuple[str, ...], value) -> None:
    engine.book.finish(Done(engine.inflight.make(kind, candidate, lanes), value, 0.5))


def _crash_reruns(tmp_path: Path, passes: int) -> tuple[BucketState, int]:
    """A new crash bucket whose re-runs pass `passes` times, then fail: its state and the re-runs it got."""
    engine = _engine(tmp_path)
    c = _candidate(1)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": CRASH}))
    reruns = 0
    while (confirm := engine.book.next_confirm()) is not None:
        assert confirm == (c, ("x",))  # its own lane, once more each time
        reruns += 1
        _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {} if reruns <= passes else {"x": CRASH}))
    (bucket,) = engine.store.buckets()
    return bucket.state, reruns


def test_a_crash_is_still_re_run_three_times_before_it_is_flaky(tmp_path):
    assert _crash_reruns(tmp_path / "a", passes=CRASH_RERUNS) == (BucketState.FLAKY, 3)
    # failing again on its third re-run: a real crash, no more re-runs than that
    assert _crash_reruns(tmp_path / "b", passes=2) == (BucketState.CONFIRMED, 3)
    assert _crash_reruns(tmp_path / "c", passes=0) == (BucketState.CONFIRMED, 1)


def test_a_sibling_already_in_the_cause_is_not_re_run(tmp_path):
    for strong, expected in ((True, None), (False, ("x",))):
        engine = _engine(tmp_path / str(strong))
        _finish(engine, TaskKind.CHECK, _candidate(1), ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}, strong))
        c = _candidate(2)  # the same identity on y
        _finish(engine, TaskKind.CHECK, c, ("ref", "y"), _outcome(("ref", "y"), {"y": ERROR}, strong))
        confirm = engine.book.next_confirm()
        # strong (it says where the compiler failed): one cause at once, nothing in doubt, no confirm task;
        # weak: x is re-run, to tie the two if the candidate fails there too
        assert (confirm[1] if confirm else None) == expected
        y = next(b for b in engine.store.buckets() if b.backend == "y")
        assert y.state == (BucketState.CONFIRMED if strong else BucketState.PENDING)


def test_a_shrink_is_handed_what_its_lane_already_ran(tmp_path):
    engine = _engine(tmp_path)
    c = _candidate(1)
    gib = 1024 ** 3
    checked = trial(c.text, "x", CHECK, Signature("x", *ERROR), 0.5, 60.0, 2 * gib, "error", seed=c.input_seed)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}, trials=(checked,)))
    bigger = _candidate(9)  # re-hits the bucket; its reproducer stays the smaller one: no shrink starts there
    rehit = trial(bigger.text, "x", CHECK, Signature("x", *ERROR), 0.5, 60.0, 2 * gib, "error", seed=bigger.input_seed)
    _finish(engine, TaskKind.CHECK, bigger, ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}, trials=(rehit,)))
    task = engine._next_shrink(30.0)
    assert task is not None and task.job is not None and task.job.trials == (checked,)
    shrunk = trial("smaller text", "x", COMPILE, None, 0.2, 5.0, 8 * gib)
    engine.book.finish(Done(task, ShrinkOutcome(trials=(shrunk,), facts={"trials": 1, "seconds": {"trials": 0.2}}),
                            2.0))
    assert engine.book.trials.on("x") == (checked, shrunk) and engine.book.trials.on("y") == ()
    tasks = breakdown(task_rows(engine.store))
    assert tasks["shrink"]["by what"] == {"compile/error": 2.0} and tasks["shrink"]["by part"] == {"trials": 0.2}


def test_a_confirm_leaves_a_row_with_each_lanes_role(tmp_path):
    engine = _engine(tmp_path)
    _finish(engine, TaskKind.CHECK, _candidate(1), ("ref", "x"), _outcome(("ref", "x"), {"x": ERROR}))
    c = _candidate(2)
    _finish(engine, TaskKind.CHECK, c, ("ref", "y"), _outcome(("ref", "y"), {"y": CRASH}))
    lanes = engine.book.next_confirm()[1]
    _finish(engine, TaskKind.CONFIRM, c, lanes, _outcome(lanes, {"y": CRASH}))
    (row,) = task_rows(engine.store)
    assert row.kind == "confirm" and row.what == "compile/crash" and row.result == "confirmed"
    assert row.lanes == {"y": ["own", 0.5], "x": ["sibling", 0.5]}  # x: a known bucket of its identity


@dataclass(frozen=True)
class OursBook(Book):
    """Triage by message: `ours` for a message that starts with "ours", else a compiler bug."""

    def triage(self, candidate, failure, outcome):
        from shapefuzz.campaign.outcomes import Triage

        return (Triage.OURS if failure.signature.message.startswith("ours") else Triage.COMPILER_BUG), "fake"


def test_only_a_confirm_of_an_ours_bucket_asks_for_the_equivalent_forms(tmp_path):
    for message, forms in (("ours: every backend disagrees", True), ("wrong values in topk", False)):
        engine = Engine(OursBook(str(tmp_path / "corpus")), CampaignStore(tmp_path / message[:4]),
                        EngineConfig(("g",), LANES, 1, 1, Limits(count=10), start_method="fork", reference="ref",
                                     lanes_per_candidate=2))
        c = _candidate(1)
        _finish(engine, TaskKind.CHECK, c, ("ref", "x"),
                _outcome(("ref", "x"), {"x": (Stage.COMPARE, Status.MISMATCH, message)}))
        candidate, lanes = engine.book.next_confirm()
        assert candidate == c and lanes == ("x",) and candidate.forms is forms


@pytest.mark.iree
def test_the_confirm_searches_the_forms_only_when_asked(toolchain, tmp_path, monkeypatch):
    from dataclasses import replace

    from shapefuzz.campaign import iree as campaign_iree

    wrong = Outcome(Verdict.FAIL, {"llvm-cpu": (Status.MISMATCH, 0.1), "vmvx": (Status.MISMATCH, 0.1)}, ())
    searched: list[str] = []
    target = campaign_iree.IreeTarget(toolchain, tmp_path / "corpus")
    monkeypatch.setattr(campaign_iree.IreeTarget, "_check", lambda self, candidate, lanes, budget: wrong)
    monkeypatch.setattr(campaign_iree, "case_of_candidate", lambda candidate: None)
    monkeypatch.setattr(campaign_iree, "form_matching_reference",
                        lambda case, toolchain, seed, budget: searched.append("forms") or "form [x] matches")
    c = _candidate(1)
    assert target.confirm(replace(c, forms=False), ("llvm-cpu", "vmvx")).reference_form == "" and searched == []
    assert target.confirm(c, ("llvm-cpu", "vmvx")).reference_form == "form [x] matches"  # asked (the default)
    assert searched == ["forms"]
