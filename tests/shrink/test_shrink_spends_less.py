"""A shrink pays only for what it does not know (issue 44, item 3): a compile another shrink ran on
the same lane, or the campaign's own check of the bucket, is found in the trial cache and not run
again; the final re-check takes the accepted trial as its first run; a hang's shrink, whose every
step costs the full limit, stops within its step budget; and a shrink whose last trials shrank
nothing stops. iree-compile is replaced by a fake whose compiles cost chosen seconds."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from shapefuzz.model import BackendResult, CheckReport, ProcessResult, Signature, Stage, Status, Verdict
from shapefuzz.shrink import iree as shrink_iree
from shapefuzz.shrink import run as shrink_run
from shapefuzz.shrink.engine import Pass, Problem
from shapefuzz.shrink.iree import Target, compile_signatures
from shapefuzz.shrink.trials import CHECK, COMPILE, TrialCache, trial
from shapefuzz.size import sort_key

DATA = Path(__file__).resolve().parents[1] / "data"
LANE = "llvm-cpu"
ERROR = Signature(LANE, Stage.COMPILE, Status.ERROR, "boom")
HANG = Signature(LANE, Stage.COMPILE, Status.TIMEOUT, "timeout")
GIB8 = 8 * 1024 ** 3


class FakeCompiler:
    """compile_module's stand-in: every compile fails as `status`, taking `seconds` (a timeout takes
    its whole limit); counts the compiles of each text."""

    def __init__(self, status: Status, seconds: float = 0.0) -> None:
        self.status, self.seconds, self.compiled = status, seconds, []

    def __call__(self, toolchain, backend, path, out, limits, extra_flags=()):
        self.compiled.append(Path(path).read_text())
        if extra_flags:  # --compile-to a phase: the failure shows only in the whole compile
            return ProcessResult((), 0, None, False, False, "", "", self.seconds)
        took = limits.timeout if self.status == Status.TIMEOUT else self.seconds
        time.sleep(took)
        return ProcessResult((), 1 if self.status == Status.ERROR else None, None, self.status == Status.TIMEOUT,
                             False, "", "error: boom\n" if self.status == Status.ERROR else "", took)


def test_a_compile_another_shrink_ran_on_the_lane_is_not_run_again(monkeypatch):
    fake = FakeCompiler(Status.ERROR)
    monkeypatch.setattr(shrink_iree, "compile_module", fake)
    first = TrialCache()
    assert compile_signatures("module A", None, [LANE], 10.0, None, first) == {LANE: ERROR}
    assert compile_signatures("module A", None, [LANE], 10.0, None, first) == {LANE: ERROR}
    assert len(fake.compiled) == 1 and first.hits == 1  # within one shrink
    second = TrialCache(first.added)  # another cause's shrink on the lane, handed what the campaign kept
    assert compile_signatures("module A", None, [LANE], 10.0, None, second) == {LANE: ERROR}
    assert len(fake.compiled) == 1 and second.hits == 1
    # another phase, or a limit the recorded compile does not cover, is another compile
    assert compile_signatures("module A", None, [LANE], 10.0, "flow", second) == {LANE: None}
    assert len(fake.compiled) == 2
    hang = TrialCache([trial("module B", LANE, COMPILE, HANG, 60.0, 60.0, GIB8)])
    compile_signatures("module B", None, [LANE], 0.2, None, hang)  # timed out at 60 s: says nothing of 0.2 s
    assert len(fake.compiled) == 3 and hang.hits == 0


def test_the_first_check_of_a_campaign_bucket_is_the_campaigns_own(monkeypatch):
    def no_check(*args, **kwargs):
        raise AssertionError("checked again")

    monkeypatch.setattr(shrink_run, "check_file", no_check)
    # the campaign's check ran it at half the limit and a quarter of the memory: an error that ended
    # there ends the same under the full ones
    cache = TrialCache([trial("module A", LANE, CHECK, ERROR, 1.5, 60.0, 2 * 1024 ** 3, "error: boom", seed=7)])
    target, report = shrink_run.find_target("module A", "a.mlir", None, (LANE,), signature=ERROR, seed=7,
                                            recheck=False, cache=cache)
    assert target.signatures == {LANE: ERROR} and report.signatures == (ERROR,) and cache.hits == 1
    assert target.compile_timeout == 7.5  # calibrated from the campaign's 1.5 s, as from a check of its own
    # a hang that hung again at the full limit, its stop landing in another pass, is the same hang
    placed = Signature(LANE, Stage.COMPILE, Status.TIMEOUT, "timeout in ConvertConvToChannelsLastPass")
    again = TrialCache([trial("module C", LANE, CHECK, placed, 122.0, 120.0, GIB8, seed=7)])
    target, report = shrink_run.find_target("module C", "c.mlir", None, (LANE,), signature=HANG, seed=7,
                                            compile_timeout=120.0, recheck=False, cache=again)
    assert target.signatures == {LANE: HANG} and report.signatures == (HANG,)
    # a hang the check cut at half the limit is not a hang at the full one: checked again
    half = TrialCache([trial("module B", LANE, CHECK, HANG, 60.0, 60.0, GIB8, seed=7)])
    with pytest.raises(AssertionError, match="checked again"):
        shrink_run.find_target("module B", "b.mlir", None, (LANE,), signature=HANG, seed=7, recheck=False,
                               cache=half)


def _hang_case() -> str:
    from shapefuzz.case import Case
    from shapefuzz.families import get_family, render_case
    from shapefuzz.families.generate import draw_params

    family = get_family("conv")
    return render_case(Case.make("conv", draw_params("conv", 3)))


def _fake_checks(monkeypatch, fake: FakeCompiler) -> list[str]:
    """check_file as the fake compiler answers it (a compile failure ends a check); the texts checked."""
    checked: list[str] = []

    def check_file(text, backends, toolchain, compile_timeout=120.0, confirm=True, seed=0, **kwargs):
        checked.extend([text] * (1 + (1 if confirm else 0)))  # (instantly: what is measured is the trials)
        sig = HANG if fake.status == Status.TIMEOUT else ERROR
        results = tuple(BackendResult(b, Stage.COMPILE, fake.status, "", sig, compile_timeout, compile_timeout)
                        for b in backends)
        return CheckReport(Verdict.FAIL, results), []

    monkeypatch.setattr(shrink_run, "check_file", check_file)
    monkeypatch.setattr(shrink_run, "Verifier", lambda toolchain: (lambda texts: [True] * len(texts)))
    monkeypatch.setattr(shrink_run, "compile_command", lambda *args: ["iree-compile"])  # (no toolchain here)
    return checked


def test_a_hangs_shrink_stops_within_its_step_budget(monkeypatch, tmp_path):
    limit = 0.3  # the full limit: every trial that hangs costs it
    fake = FakeCompiler(Status.TIMEOUT)
    monkeypatch.setattr(shrink_iree, "compile_module", fake)
    checked = _fake_checks(monkeypatch, fake)
    text = _hang_case()
    confirm = trial(text, LANE, CHECK, HANG, limit, limit, GIB8, seed=0)  # its confirm's run at the full limit
    result = shrink_run.shrink_file("c.mlir", text, None, (LANE,), out=str(tmp_path / "min.mlir"), signature=HANG,
                                    time_limit=30.0, compile_timeout=limit, recheck=False, trials=[confirm],
                                    blowup_trials=1)
    # its first check was the confirm's run; one trial reached the limit (it hung: a step), and the run
    # stopped there, well within its 30 s; the final re-check runs twice (at its 30 s floor, which a
    # hang at 0.3 s says nothing of)
    assert len(fake.compiled) == 1 and result.stopped_because == shrink_run.BLOWUPS_SPENT
    assert result.stats.accepted == 1 and checked == [result.minimized] * 2 and result.confirmed
    assert result.timings["first check"] < 0.1 and result.timings["trials"] < 5 * limit
    # with no room for a trial at the full limit and the final re-check, no trial starts at all
    fake.compiled.clear()
    result = shrink_run.shrink_file("c.mlir", text, None, (LANE,), out=str(tmp_path / "min2.mlir"), signature=HANG,
                                    time_limit=2.5 * limit, compile_timeout=limit, recheck=False, trials=[confirm],
                                    blowup_trials=1)
    assert fake.compiled == [] and result.stopped_because == shrink_run.NO_ROOM and result.minimized == text


def test_the_final_recheck_takes_the_accepted_trial_as_its_first_run(monkeypatch, tmp_path):
    fake = FakeCompiler(Status.ERROR, seconds=0.01)
    monkeypatch.setattr(shrink_iree, "compile_module", fake)
    checked = _fake_checks(monkeypatch, fake)
    text = _hang_case()
    check = trial(text, LANE, CHECK, ERROR, 0.01, 60.0, GIB8, "error: boom", seed=0)
    result = shrink_run.shrink_file("c.mlir", text, None, (LANE,), out=str(tmp_path / "min.mlir"), signature=ERROR,
                                    time_limit=60.0, compile_timeout=10.0, recheck=False, trials=[check],
                                    stall_trials=3)
    assert result.minimized != text and result.confirmed and result.target.phase is None
    assert checked == [result.minimized]  # one re-run: the accepted trial was the first


def test_a_hang_the_accepted_trial_showed_at_the_full_limit_is_re_checked_once(monkeypatch):
    checked = _fake_checks(monkeypatch, FakeCompiler(Status.TIMEOUT))
    target = Target({LANE: HANG}, (LANE,), 120.0)
    cache = TrialCache([trial("module A", LANE, COMPILE, HANG, 120.0, 120.0, GIB8)])
    assert shrink_run._confirm("module A", None, target, cache)[0] and checked == ["module A"]
    checked.clear()  # a hang at 60 s says nothing of 120 s: both runs
    cache = TrialCache([trial("module A", LANE, COMPILE, HANG, 60.0, 60.0, GIB8)])
    assert shrink_run._confirm("module A", None, target, cache)[0] and checked == ["module A"] * 2


def test_a_shrink_whose_last_trials_shrank_nothing_stops():
    def propose(current: str) -> list[str]:  # ten texts one character shorter
        return [current[:-2] + ch for ch in "abcdefghij"]

    def interesting(text: str) -> bool:  # the third of each ten, down to 15 characters
        return text.endswith("c") and len(text) >= 15

    problem = Problem("s" * 20, interesting, lambda t: (len(t), t), stall_trials=5)
    best = problem.run([[Pass("shorter", propose)]])
    # five steps of three trials each (the count starts again at each step), then five that shrank nothing
    assert len(best) == 15 and problem.stats.accepted == 5 and problem.stats.gaps == [3] * 5
    assert problem.stopped_because == "stalled" and problem.stats.trials == 20
    unbounded = Problem("s" * 20, interesting, lambda t: (len(t), t))
    assert unbounded.run([[Pass("shorter", propose)]]) == best and unbounded.stats.trials == 25
