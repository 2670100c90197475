"""Campaign economy with fake targets: saturation steering, the memory cap and its full-cap
confirmation, no compile for a known target limit, the shrink share, pending shrinks across a
SIGKILL, causes across backends, triage verdicts, --fail-on new, and the knobs' bad input."""

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
from support.economy import Target, economy_engine  # noqa: F401

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")


def _hot_share_after_saturation(engine: Engine) -> float:
    rows = list(engine.store.candidates())
    hot = [i for i, r in enumerate(rows) if "hot" in r.features]
    later = rows[hot[2] + 1:]  # after the third hit saturates the bucket
    return sum("hot" in r.features for r in later) / len(later)


def test_saturation_lowers_the_draw_rate_of_a_buckets_features(tmp_path):
    target = Target(str(tmp_path / "corpus"))
    off = economy_engine(tmp_path / "off", target, 120, knobs=SteeringKnobs(saturate_after=10**6))
    off.run()
    on = economy_engine(tmp_path / "on", target, 120, knobs=SteeringKnobs(saturate_after=3, explore=0.05))
    on.run()
    without, with_ = _hot_share_after_saturation(off), _hot_share_after_saturation(on)
    assert without > 0.15 and with_ < without / 2, (without, with_)
    assert on.stats.steered_away > 0
    bucket = on.store.buckets()[0]
    assert bucket.rehits >= 1 and bucket.rehit_seconds > 0  # re-hits and their cost are kept
    assert summarize(on.store).causes[0].rehits == bucket.rehits


def test_keep_chance_falls_with_rehits_and_their_cost_but_keeps_an_exploration_share():
    s = Steering(("g",), SteeringKnobs(saturate_after=2, explore=0.1))
    for _ in range(10):
        s.add("g", ("x",), 1.0)
    s.hit("b", "g", ("hot", "x"), 1.0)
    s.hit("b", "g", ("hot", "y"), 1.0)
    assert s.trigger["b"] == {"group:g", "hot"}
    first = s.keep_chance("g", ("hot",))
    assert first < 1.0 and s.keep_chance("g", ("cold",)) > first
    s.hit("b", "g", ("hot",), 1.0)
    cheap = s.keep_chance("g", ("hot",))
    s.hit("b", "g", ("hot",), 60.0)  # an expensive re-hit (a blow-up) steers harder
    assert s.keep_chance("g", ("hot",)) < cheap < first
    for _ in range(50):
        s.hit("b", "g", ("hot",), 60.0)
    assert s.keep_chance("g", ("hot",)) == pytest.approx(0.1)


def test_two_backends_failing_the_same_way_make_one_cause(tmp_path):
    target = Target(str(tmp_path / "corpus"), same_on=("a", "b"))
    engine = economy_engine(tmp_path / "c", target, 20)
    engine.run()
    buckets = engine.store.buckets()
    assert {b.backend for b in buckets} == {"a", "b"} and len({b.cause for b in buckets}) == 1
    summary = summarize(engine.store)
    assert len(summary.causes) == 1 and summary.causes[0].backends == ("a", "b")
    assert engine.snapshot().causes == 1 and engine.snapshot().buckets == 2
    # one shrink per cause: the other bucket is skipped, not shrunk again
    assert sorted(b.shrink for b in buckets) == ["", ""]  # shrinking off in this engine


def test_rotating_lanes_still_tie_one_bug_on_two_lanes_into_one_cause(tmp_path):
    # each candidate sees ref plus one of x, y: no check ever runs x and y together, so only the
    # confirming re-run (which also runs the lane of the known same-message bucket) can tie them
    target = Target(str(tmp_path / "corpus"), same_on=("x", "y"), hot_mod=2)
    engine = economy_engine(tmp_path / "c", target, 12, lanes=("ref", "x", "y"), reference="ref", lanes_per_candidate=2)
    engine.run()
    buckets = engine.store.buckets()
    assert {b.backend for b in buckets} == {"x", "y"} and len({b.cause for b in buckets}) == 1
    assert all(len(r.backends) == 2 for r in engine.store.candidates())
    # the tie is stored: a resumed campaign has one cause too
    again = economy_engine(tmp_path / "c", target, 12, lanes=("ref", "x", "y"), reference="ref", lanes_per_candidate=2)
    assert again.snapshot().causes == 1
    # without the sibling lanes the same run keeps two causes apart (what the re-run fixes)
    apart = economy_engine(tmp_path / "d", target, 12, lanes=("ref", "x", "y"), reference="ref", lanes_per_candidate=2)
    apart.book._sibling_lanes = lambda outcome, checked: []
    apart.run()
    assert len({b.cause for b in apart.store.buckets()}) == 2


def test_a_blow_up_is_not_re_run_on_sibling_lanes(tmp_path):
    # out of memory on x and on y: re-running y's known blow-up under the full caps to tie x's
    # new one would cost a blow-up per lane, so the confirming re-run runs x alone
    target = Target(str(tmp_path / "corpus"), same_on=("x", "y"), hot_mod=2, status=Status.OOM)
    engine = economy_engine(tmp_path / "c", target, 12, lanes=("ref", "x", "y"), reference="ref", lanes_per_candidate=2)
    engine.run()
    buckets = engine.store.buckets()
    assert {b.backend for b in buckets} == {"x", "y"} and len({b.cause for b in buckets}) == 2


def test_rotating_lanes_give_every_lane_its_turn(tmp_path):
    target = Target(str(tmp_path / "corpus"), hot_mod=10**9)
    engine = economy_engine(tmp_path / "c", target, 12, lanes=("ref", "x", "y", "z"), reference="ref",
                     lanes_per_candidate=2)
    engine.run()
    seen = [r.backends for r in engine.store.candidates()]
    assert all(b[0] == "ref" and len(b) == 2 for b in seen)
    assert {b[1] for b in seen} == {"x", "y", "z"}
    forced = economy_engine(tmp_path / "f", target, 3, lanes=("ref", "x", "y"), reference="ref", lanes_per_candidate=None)
    forced.run()
    assert all(r.backends == ("ref", "x", "y") for r in forced.store.candidates())


@dataclass(frozen=True)
class SizedTarget(Target):
    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        c = super().generate(group, seed)
        return Candidate(c.key + ("L" if large else ""), group, seed, c.features + (("large",) if large else ()),
                         c.payload, c.text)


def test_large_rounds_go_to_the_compile_only_lanes_alone(tmp_path):
    target = SizedTarget(str(tmp_path / "corpus"), hot_mod=10**9)
    engine = economy_engine(tmp_path / "c", target, 24, lanes=("ref", "x", "gpu1", "gpu2"), reference="ref",
                     lanes_per_candidate=2, compile_only=("gpu1", "gpu2"), large_every=4)
    engine.run()
    rows = list(engine.store.candidates())
    large = [r for r in rows if "large" in r.features]
    assert len(large) == 6 and all(r.idx % 4 == 3 for r in large)
    assert all(set(r.backends) <= {"gpu1", "gpu2"} for r in large)
    assert all(r.backends[0] == "ref" for r in rows if "large" not in r.features)


def test_shrinking_never_takes_more_than_its_share(tmp_path):
    target = Target(str(tmp_path / "corpus"), hot_mod=3, same_on=("a",), check_seconds=0.05)
    share = 0.25
    engine = economy_engine(tmp_path / "c", target, 80, lanes=("a",), jobs=2, shrink=True, shrink_share=share,
                     min_shrink_seconds=0.1, knobs=SteeringKnobs(saturate_after=10**6))
    start = time.monotonic()
    engine.run()
    elapsed = time.monotonic() - start
    shrink_time = engine.store.worker_time(TaskKind.SHRINK.value)
    assert shrink_time > 0  # it did shrink
    assert shrink_time <= share * 2 * elapsed * 1.05 + 0.3, (shrink_time, elapsed)
    by_family = engine.store.worker_time_by_family(TaskKind.SHRINK.value)  # where it went
    assert by_family and abs(sum(by_family.values()) - shrink_time) < 1e-6


def _run_until_killed(folder: str, corpus: str) -> None:  # a child process: a campaign to SIGKILL
    target = Target(corpus, same_on=("a", "b"), check_seconds=0.05)
    engine = economy_engine(Path(folder), target, 10**6, shrink=True, shrink_share=0.0)
    engine.run()


def test_a_pending_shrink_survives_sigkill_and_resume(tmp_path):
    folder, corpus = tmp_path / "c", str(tmp_path / "corpus")
    child = multiprocessing.get_context("fork").Process(target=_run_until_killed, args=(str(folder), corpus))
    child.start()
    deadline = time.monotonic() + 60
    pending = []
    while time.monotonic() < deadline and not pending:
        time.sleep(0.2)
        if (folder / "campaign.sqlite").exists():
            store = CampaignStore(folder)
            pending = [b for b in store.buckets() if b.shrink == ShrinkState.PENDING]
            store.close()
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    assert pending, "no shrink was planned"
    done_before = CampaignStore(folder).candidate_count()
    target = Target(corpus, same_on=("a", "b"), shrink_sleep=0.05)
    resumed = economy_engine(folder, target, done_before + 40, shrink=True, shrink_share=1.0, min_shrink_seconds=0.01)
    resumed.run()
    states = {b.sig: b.shrink for b in resumed.store.buckets()}
    assert states[pending[0].sig] == ShrinkState.DONE
    assert sorted(states.values()) == [ShrinkState.DONE, ShrinkState.SKIPPED]  # one per cause


def test_pending_shrinks_run_in_a_final_phase(tmp_path):
    target = Target(str(tmp_path / "corpus"), shrink_sleep=0.05)
    engine = economy_engine(tmp_path / "c", target, 12, shrink=True, shrink_share=0.0, min_shrink_seconds=0.01,
                     final_shrink_seconds=5.0)
    engine.run()
    assert [b.shrink for b in engine.store.buckets()] == [ShrinkState.DONE]


# --- the IREE target, with a fake iree-compile that logs its calls --------------------------------
def _fake_toolchain(tmp_path, monkeypatch, mode="ok"):
    from shapefuzz.iree.toolchain import find_toolchain

    log = tmp_path / "calls.log"
    for key, value in fake_env(tmp_path, mode, FAKE_IREE_LOG=str(log)).items():
        monkeypatch.setenv(key, value)
    return find_toolchain(make_fake_iree(tmp_path / "bin")), log


F16 = """// shapefuzz-case: {}
func.func @main(%a: tensor<4xf16>) -> tensor<4xf16> {
  return %a : tensor<4xf16>
}
"""


def test_a_limited_lane_is_never_compiled(tmp_path, monkeypatch):
    from shapefuzz.campaign.iree import IreeTarget

    toolchain, log = _fake_toolchain(tmp_path, monkeypatch)
    target = IreeTarget(toolchain, tmp_path / "corpus")
    candidate = Candidate("k", "topk", 1, (), "{}", F16)
    monkeypatch.setattr("shapefuzz.judge.campaign_check.case_expectation", lambda case, seed: None)
    outcome = target.check(candidate, ("llvm-cpu", "vmvx"))
    calls = log.read_text()
    assert "backends=llvm-cpu" in calls and "vmvx" not in calls  # f16 on vmvx: not compiled at all
    assert outcome.lanes["vmvx"] == (Status.UNSUPPORTED, 0.0)


def test_suspected_driver_and_ours_verdicts():
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.iree.toolchain import find_toolchain

    target = IreeTarget(find_toolchain(), Path("/nonexistent"))
    candidate = Candidate("k", "topk", 1, (), "{}", "func.func @main() { return }")
    def wrong(lane: str) -> Failure:
        return Failure(Signature(lane, Stage.COMPARE, Status.MISMATCH, "wrong values in sort"))

    ok, mismatch = (Status.OK, 1.0), (Status.MISMATCH, 1.0)
    failure = wrong("vulkan-spirv")
    lanes = {"llvm-cpu": ok, "vmvx": ok, "vulkan-spirv": mismatch}
    verdict, evidence = target.triage(candidate, failure, Outcome(Verdict.FAIL, lanes, (failure,)))
    assert verdict == Triage.SUSPECTED_DRIVER
    assert "llvm-cpu" in evidence and "hardware GPU" in evidence
    lanes = {"llvm-cpu": mismatch, "vmvx": mismatch, "vulkan-spirv": mismatch}
    for lane in ("llvm-cpu", "vulkan-spirv"):
        f = wrong(lane)
        assert target.triage(candidate, f, Outcome(Verdict.FAIL, lanes, (f,)))[0] == Triage.OURS
    # ...unless an equivalent form of the same computation matches the reference: then it is right
    lanes = {"llvm-cpu": mismatch, "vmvx": mismatch}
    f = wrong("llvm-cpu")
    shown = Outcome(Verdict.FAIL, lanes, (f,), reference_form="form [form='named'] ... matches it on llvm-cpu")
    verdict, evidence = target.triage(candidate, f, shown)
    assert verdict == Triage.COMPILER_BUG and "reference is right" in evidence and "form='named'" in evidence
    # ...or ONNX's own reference computes the same values as NumPy's (its judge lane is ok)
    from shapefuzz.judge.onnx_judge import JUDGE_LANE

    judged = {"llvm-cpu": mismatch, "vmvx": mismatch}
    verdict, evidence = target.triage(candidate, f, Outcome(Verdict.FAIL, {**judged, JUDGE_LANE: ok}, (f,)))
    assert verdict == Triage.COMPILER_BUG and "onnx.reference computes the same values" in evidence
    unsure = Outcome(Verdict.FAIL, {**judged, JUDGE_LANE: (Status.UNSUPPORTED, 0.0)}, (f,))
    assert target.triage(candidate, f, unsure)[0] == Triage.OURS
    lanes = {"llvm-cpu": mismatch, "vmvx": ok, "vulkan-spirv": mismatch}
    f = wrong("llvm-cpu")
    assert target.triage(candidate, f, Outcome(Verdict.FAIL, lanes, (f,)))[0] == Triage.COMPILER_BUG


@dataclass(frozen=True)
class SharedBugTarget(Target):
    """Every lane gives wrong numbers (a bug shared by every backend, or a wrong reference): the
    check says "ours"; the confirming re-run finds a form that matches the reference when
    `form_matches`."""

    form_matches: bool = True

    def triage(self, candidate, failure, outcome):
        if outcome.reference_form:
            return Triage.COMPILER_BUG, outcome.reference_form
        return Triage.OURS, "every backend disagrees"

    def confirm(self, candidate, lanes):
        return replace(self.check(candidate, lanes), reference_form="form [x] matches it" if self.form_matches else "")


def test_a_confirming_rerun_that_shows_the_reference_right_turns_ours_into_a_compiler_bug(tmp_path):
    engine = economy_engine(tmp_path / "c", SharedBugTarget(str(tmp_path / "corpus"), same_on=("a", "b")), 8)
    engine.run()
    assert {(b.triage, b.evidence) for b in engine.store.buckets()} == {("compiler bug", "form [x] matches it")}
    kept = economy_engine(tmp_path / "d", SharedBugTarget(str(tmp_path / "corpus2"), same_on=("a", "b"), form_matches=False), 8)
    kept.run()
    assert {b.triage for b in kept.store.buckets()} == {"ours"}


# --- end to end through the CLI -----------------------------------------------------------------
def _fuzz(tmp_path, *args, mode="ok", env_extra=None):
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz",
            "--campaign", str(tmp_path / "camp"), "--corpus", str(tmp_path / "corpus"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=240,
                          env=fake_env(tmp_path, mode, **(env_extra or {})))


def test_a_blowup_is_cut_at_the_campaign_cap_and_confirmed_once_at_the_full_cap(tmp_path):
    log = tmp_path / "calls.log"
    result = _fuzz(tmp_path, "--count", "3", "--ops", "topk", "--backends", "llvm-cpu", "--jobs", "1",
                   "--no-shrink", "--json", mode="oom", env_extra={"FAKE_IREE_LOG": str(log)})
    assert result.returncode == 0, result.stderr
    caps = [int(line.split()[0]) for line in log.read_text().splitlines()]
    assert caps.count(2 << 20) == 3  # every check under the 2 GiB campaign cap (ulimit -v is KiB)
    assert caps.count(8 << 20) == 1  # the new oom bucket's one confirmation, under the full cap
    summary = json.loads(result.stdout)
    assert [b["status"] for b in summary["buckets"]] == ["oom"] and summary["buckets"][0]["state"] == "confirmed"


def test_fail_on_new_exits_1_only_when_asked(tmp_path):
    args = ("--count", "3", "--ops", "topk", "--backends", "llvm-cpu", "--jobs", "1", "--no-shrink", "--json")
    result = _fuzz(tmp_path, *args, "--fail-on", "new", mode="words")
    assert result.returncode == 1, result.stderr
    summary = json.loads(result.stdout)
    assert summary["findings"] >= 1 and summary["new_findings"] == summary["findings"]
    # resumed, nothing new: default exit 0 (its new run-error cause neither shrunk nor localized: seconds)
    again = _fuzz(tmp_path, "--count", "4", "--json", "--no-shrink", "--no-localize", mode="ok")
    assert again.returncode == 0, again.stderr
    index = (tmp_path / "corpus" / "INDEX.md").read_text()  # refreshed by the campaign
    causes = {json.loads(entry.read_text())["cause"] for entry in (tmp_path / "corpus").glob("*/meta.json")}
    assert causes and all(c.startswith("cause-") for c in causes)  # each entry names its cause
    assert f"{len(causes)} causes" in index and all(c in index for c in causes)


@pytest.mark.parametrize("args,message", [
    (["--shrink-time", "soon"], "--shrink-time 'soon'"),
    (["--memory-cap", "lots"], "--memory-cap 'lots': not a size"),
    (["--memory-cap", "1k"], "--memory-cap '1k': give at least 64MiB"),
    (["--explore", "2"], "--explore 2.0: give a fraction"),
    (["--shrink-share", "-1"], "--shrink-share -1.0: give a fraction"),
    (["--saturate-after", "0"], "--saturate-after 0: give at least 1"),
    (["--lanes-per-candidate", "0"], "--lanes-per-candidate 0: give at least 1"),
    (["--fail-on", "sometimes"], "--fail-on 'sometimes': choose from never, new"),
])
def test_economy_knobs_bad_input_one_line_exit_2(tmp_path, args, message):
    result = _fuzz(tmp_path, "--count", "1", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "camp").exists()


@pytest.mark.iree
def test_a_bug_every_backend_shares_is_a_compiler_bug_once_a_form_matches_the_reference(tmp_path):
    """A strided conv_transpose that every CPU backend of 3.13 gets wrong in the padded form (the
    strided insert + pad bug class): the confirming re-run finds that the zero-insertion form
    matches the NumPy reference on llvm-cpu, so the verdict is compiler bug, not ours."""
    from shapefuzz.campaign.iree import IreeTarget, statuses
    from shapefuzz.case import Case
    from shapefuzz.families import get_family, render_case
    from shapefuzz.iree.toolchain import find_toolchain
    from shapefuzz.triage.verdict import every_run_mismatches

    params = {"ci": 2, "co": 1, "dilations": [1], "dtype": "f32", "input_dyn": [True, False, False],
              "flip": "extract", "form": "named", "fwd_layout": [0, 1, 2], "groups": 1, "spatial": [3],
              "kernel": [1], "n": 1, "out_pad": [1], "pad_hi": [0], "pad_lo": [0], "pad_mode": "pad", "rank": 1,
              "strides": [2], "w_layout": [0, 1, 2], "w_order": "fused", "x_expand": "late"}
    case = Case.make("conv_transpose", get_family("conv_transpose").load(params))
    target = IreeTarget(find_toolchain(), tmp_path / "corpus")
    candidate = Candidate(case.case_id, "conv_transpose", 0, (), case.params_json, render_case(case))
    outcome = target.confirm(candidate, ("llvm-cpu", "vmvx"))
    assert every_run_mismatches(statuses(outcome), target.toolchain.probe) == ["llvm-cpu", "vmvx"]
    assert "matches it on llvm-cpu" in outcome.reference_form
    verdict, evidence = target.triage(candidate, outcome.failures[0], outcome)
    assert verdict == Triage.COMPILER_BUG and "the reference is right" in evidence


@pytest.mark.parametrize("fails_on_plain", [True, False])
def test_a_new_bucket_on_a_variant_lane_is_re_run_on_its_plain_lane(tmp_path, fails_on_plain):
    # a lane sees one candidate in ten: a default-pipeline bug met first on a variant lane was
    # filed as needing the variant's flags; the confirming re-run now tries the plain lane too
    variant = "llvm-cpu-single-dispatch"
    same_on = (variant, "llvm-cpu") if fails_on_plain else (variant,)
    target = Target(str(tmp_path / "corpus"), hot_mod=1, same_on=same_on)
    engine = economy_engine(tmp_path / "c", target, 1, lanes=("vmvx", variant, "llvm-cpu"), reference="vmvx",
                     lanes_per_candidate=2)
    engine.run()
    assert [r.backends for r in engine.store.candidates()] == [("vmvx", variant)]  # never checked on llvm-cpu
    buckets = engine.store.buckets()
    findings = summarize(engine.store).findings
    assert len(findings) == 1
    if fails_on_plain:
        assert {b.backend for b in buckets} == {variant, "llvm-cpu"} and len({b.cause for b in buckets}) == 1
        assert findings[0].scope == "default pipeline"
    else:
        assert {b.backend for b in buckets} == {variant}
        assert findings[0].scope.startswith("only with")
