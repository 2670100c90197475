"""The campaign's shrink schedule with fake targets: every cause gets one shrink before any gets a
second, the most severe first and new before known, a cause's linalg spelling on its cheapest
lane is the bucket shrunk, and the report counts the compiler-bug causes with a shrunk example."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from shapefuzz.campaign.bucket_book import new_bucket
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import markdown, summarize, text_lines
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, Triage, Verdict
from shapefuzz.model import Signature, Stage, Status

from support.economy import Target  # noqa: F401

LINALG = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n  return %a : tensor<2xf32>\n}\n"
TORCH = ("func.func @main(%a: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> {\n"
         "  return %a : !torch.vtensor<[2],f32>\n}\n")


def _engine(tmp_path: Path) -> Engine:
    engine = Engine(Target(str(tmp_path / "corpus")), CampaignStore(tmp_path / "c"),
                    EngineConfig(("g",), ("a", "b"), 11, 1, Limits(count=0), shrink=True))
    engine.shrinks.known_before = 100.0  # buckets first seen before this are known (from an earlier session)
    return engine


def _bucket(engine: Engine, lane: str, stage: Stage, status: Status, message: str, first_seen: float,
            text: str = LINALG, triage: Triage = Triage.COMPILER_BUG, identity: str = "",
            shrink: ShrinkState = ShrinkState.PENDING) -> tuple[str, Candidate]:
    """A saved bucket with its candidate, as the bucket book holds it."""
    failure = Failure(Signature(lane, stage, status, message), identity=identity, strong=bool(identity))
    candidate = Candidate(f"k{len(engine.buckets)}", "g", len(engine.buckets), (), json.dumps({}), text)
    bucket = new_bucket(failure, candidate, first_seen, 0.0, BucketState.CONFIRMED, triage, "fake", shrink)
    engine.buckets[failure.key] = replace(bucket, corpus_entry=f"/corpus/{len(engine.buckets)}")
    engine.causes.add(failure.key, failure.fields())
    if shrink == ShrinkState.PENDING:
        engine.shrinks.queue[failure.key] = candidate
    return failure.key, candidate


def _shrink_order(engine: Engine) -> list[str]:
    """Pops every pending shrink as the engine would, each finishing before the next starts."""
    order = []
    while (taken := engine.shrinks.pop()) is not None:
        sig = taken[1].sig
        order.append(sig)
        engine.buckets[sig] = replace(engine.buckets[sig], shrink=ShrinkState.DONE.value)
    return order


def test_shrinks_go_most_severe_first_new_before_known_one_per_cause_before_any_second(tmp_path):
    engine = _engine(tmp_path)
    compile_error, _ = _bucket(engine, "a", Stage.COMPILE, Status.ERROR, "err", 150)
    limit, _ = _bucket(engine, "a", Stage.COMPILE, Status.ERROR, "out of shared memory", 130)
    driver, _ = _bucket(engine, "b", Stage.COMPARE, Status.MISMATCH, "drv", 110, triage=Triage.SUSPECTED_DRIVER)
    old_crash, _ = _bucket(engine, "a", Stage.COMPILE, Status.CRASH, "boom", 50)
    new_crash, _ = _bucket(engine, "a", Stage.COMPILE, Status.CRASH, "bang", 160)
    wrong_a, _ = _bucket(engine, "a", Stage.COMPARE, Status.MISMATCH, "wrong", 170)
    wrong_b, _ = _bucket(engine, "b", Stage.COMPARE, Status.MISMATCH, "wrong", 180)
    assert engine.causes.tie([wrong_a, wrong_b])  # one candidate hit both: one cause, two pending shrinks
    engine.shrinks.costs.update({wrong_a: 2.0, wrong_b: 1.0})
    assert _shrink_order(engine) == [wrong_b, new_crash, old_crash, compile_error, limit, driver, wrong_a]


def test_a_causes_linalg_spelling_on_its_cheapest_lane_is_the_one_shrunk(tmp_path):
    engine = _engine(tmp_path)
    kw = dict(identity="pass X: bad", shrink=ShrinkState.NONE)
    torch, torch_candidate = _bucket(engine, "a", Stage.COMPILE, Status.ERROR, "bad", 110, TORCH, **kw)
    engine.shrinks.plan([torch], torch_candidate, Outcome(Verdict.FAIL, {"a": (Status.ERROR, 0.5)}))
    assert engine.buckets[torch].shrink == ShrinkState.PENDING  # no linalg spelling yet: the torch one
    slow, slow_candidate = _bucket(engine, "a", Stage.COMPILE, Status.ERROR, "bad 2", 120, **kw)
    fast, fast_candidate = _bucket(engine, "b", Stage.COMPILE, Status.ERROR, "bad", 130, **kw)
    engine.shrinks.plan([slow], slow_candidate, Outcome(Verdict.FAIL, {"a": (Status.ERROR, 9.0)}))
    engine.shrinks.plan([fast], fast_candidate, Outcome(Verdict.FAIL, {"b": (Status.ERROR, 3.0)}))
    states = {sig: engine.buckets[sig].shrink for sig in (torch, slow, fast)}
    assert states == {torch: ShrinkState.SKIPPED, slow: ShrinkState.SKIPPED, fast: ShrinkState.PENDING}
    assert list(engine.shrinks.queue) == [fast]
    assert _shrink_order(engine) == [fast]
    stored = {b.sig: b.shrink for b in engine.store.buckets()}  # the plan is in the store (resume)
    assert stored == states


def test_the_report_counts_the_compiler_bug_causes_with_a_shrunk_example(tmp_path):
    for shrink, count in ((False, 0), (True, 1)):
        target = Target(str(tmp_path / f"corpus{count}"), shrink_sleep=0.01)
        engine = Engine(target, CampaignStore(tmp_path / f"c{count}"),
                        EngineConfig(("g",), ("a",), 11, 1, Limits(count=12), start_method="fork", shrink=shrink,
                                     shrink_share=0.0, min_shrink_seconds=0.01, final_shrink_seconds=5.0))
        engine.run()
        summary = summarize(engine.store)
        assert len(summary.findings) == 1
        assert f"shrunk: {count} of 1 compiler-bug causes" in text_lines(summary)
        assert f"- shrunk: {count} of 1 compiler-bug causes" in markdown(summary).splitlines()
        assert summary.to_json()["shrunk_findings"] == count
        assert summary.to_json()["causes"][0]["shrunk"] is bool(count)


@dataclass(frozen=True)
class KindsTarget(Target):
    """Candidate n fails on lane a by n % 4: a compile error, a crash, wrong values, or passes;
    each shrink appends its bucket to `log` (shrinks run in worker processes)."""

    log: str = ""

    def check(self, candidate: Candidate, lanes) -> Outcome:
        kind = json.loads(candidate.payload)["n"] % 4
        stage, status, message = [(Stage.COMPILE, Status.ERROR, "err"), (Stage.COMPILE, Status.CRASH, "boom"),
                                  (Stage.COMPARE, Status.MISMATCH, "wrong"), (None, Status.OK, "")][kind]
        failures = tuple(Failure(Signature(lane, stage, status, message)) for lane in lanes if stage is not None)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS, {lane: (status, 0.01) for lane in lanes}, failures)

    confirm = check

    def shrink(self, candidate: Candidate, job):
        with open(self.log, "a") as out:
            out.write(job.key.split(": ", 1)[1] + "\n")
        return None


def test_pending_shrinks_run_on_resume_most_severe_first(tmp_path):
    target = KindsTarget(str(tmp_path / "corpus"), log=str(tmp_path / "shrinks.log"))
    kw = dict(lanes=("a",), start_method="fork", shrink=True, shrink_share=0.0, min_shrink_seconds=0.01)
    first = Engine(target, CampaignStore(tmp_path / "c"),
                   EngineConfig(("g",), seed=11, jobs=1, limits=Limits(count=20), **kw))
    first.run()  # no share: every shrink stays pending in the store
    assert sorted(b.shrink for b in first.store.buckets()) == [ShrinkState.PENDING] * 3
    first.store.close()
    again = Engine(target, CampaignStore(tmp_path / "c"),
                   EngineConfig(("g",), seed=11, jobs=1, limits=Limits(count=20), final_shrink_seconds=10.0, **kw))
    again.run()
    assert Path(target.log).read_text().split() == ["wrong", "boom", "err"]
    assert summarize(again.store).to_json()["shrunk_findings"] == 3
