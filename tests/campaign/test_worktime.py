"""Where a worker's time goes outside the compiler and runtime (worktime.py): each task hands back
its own parts and a worker's start-up with its first; a real check splits its time; the store keeps
the split across a resume and the report shows it beside the share in compiler and runtime; compiled
templates are kept between processes, and a cache that cannot be used is no cache."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from shapefuzz.process import worktime
from shapefuzz.campaign.report.summary import markdown, summarize, text_lines
from shapefuzz.campaign.rows import CorruptStoreError
from shapefuzz.campaign.database import CampaignStore, CandidateRow
from shapefuzz.campaign.outcomes import Verdict


def test_each_task_hands_back_its_own_parts_and_the_start_up_with_the_first():
    worktime.take()  # whatever this process spent before
    worktime.add("start-up", 2.0)
    with worktime.timed("reference"):
        time.sleep(0.02)
    first = worktime.take()
    assert first["start-up"] == 2.0 and 0.02 <= first["reference"] < 1.0
    assert worktime.take() == {}  # nothing spent since
    worktime.add("start-up", 1.0)  # a replaced worker's start-up, then a shrink (not split)
    worktime.add("judge", 5.0)
    worktime.skip()
    worktime.add("files", 0.5)
    assert worktime.take() == {"start-up": 1.0, "files": 0.5}  # the shrink's judge is not the next task's
    worktime.add_untimed("processes", 0.25)
    with worktime.timed("start-up"):
        worktime.add_untimed("processes", 4.0)  # inside a timed block: that block's time already
    spent = worktime.take()
    assert spent["processes"] == 0.25 and spent.get("start-up", 0.0) < 1.0


@pytest.mark.iree
def test_a_real_check_splits_its_time_outside_the_compiler(tmp_path):
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.iree.toolchain import find_toolchain

    target = IreeTarget(find_toolchain(), tmp_path / "corpus")
    candidate = target.generate("reduce", 3)
    worktime.take()
    start = time.perf_counter()
    outcome = target.check(candidate, ("llvm-cpu",))
    wall = time.perf_counter() - start
    assert outcome.lanes["llvm-cpu"][0].value == "ok", outcome
    assert {"reference", "files", "inputs", "processes"} <= set(outcome.split) <= set(worktime.PARTS), outcome.split
    assert 0 < outcome.tool_seconds and outcome.tool_seconds + sum(outcome.split.values()) <= wall + 1e-3


@pytest.fixture
def compile_only(tmp_path, monkeypatch):
    """A campaign target, a lane that only compiles here, and the keys whose inputs and NumPy
    reference were built."""
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.iree.toolchain import find_toolchain

    toolchain = find_toolchain()
    target = IreeTarget(toolchain, tmp_path / "corpus")
    lane = next(name for name in ("rocm-gfx942", "cuda-sm80") if not BACKENDS[name].executes(toolchain.probe))
    from shapefuzz.judge import campaign_check

    asked: list[str] = []  # (a candidate's key is its case's id)
    real = campaign_check.case_expectation
    monkeypatch.setattr(campaign_check, "case_expectation", lambda case, seed: asked.append(case.case_id) or real(case, seed))
    return target, lane, asked


@pytest.mark.iree
def test_a_compile_only_check_builds_no_inputs_or_reference(compile_only):
    """No lane that runs the module, no NumPy reference: a large attention's (17 GB of scores) took the
    worker with it, on lanes that only compile here."""
    target, lane, asked = compile_only
    candidate = target.generate("reduce", 3)
    worktime.take()  # what this worker's earlier tests spent (xdist runs many to a process)
    outcome = target.check(candidate, (lane,))
    assert outcome.lanes[lane][0].value == "ok" and asked == [], outcome
    assert "reference" not in outcome.split
    outcome = target.check(candidate, ("llvm-cpu", lane))  # one lane runs it: judged as before
    assert outcome.lanes["llvm-cpu"][0].value == "ok" and asked == [candidate.key]


@pytest.mark.iree
def test_a_compile_failure_on_a_lane_that_only_compiles_is_saved_without_arrays(compile_only):
    """The campaign's own process saves the entry: no NumPy reference for a lane that never runs it."""
    from shapefuzz.campaign.iree import failure_of
    from shapefuzz.corpus import load_entry
    from shapefuzz.model import Signature, Stage, Status

    target, lane, asked = compile_only
    candidate = target.generate("reduce", 3)
    failure = failure_of(Signature(lane, Stage.COMPILE, Status.ERROR, "error: a made-up failure"), "error: made up")
    entry = load_entry(target.save(candidate, failure, False))
    assert asked == [] and entry.inputs is None and entry.expected is None
    runs = failure_of(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "error: another made-up failure"), "error")
    entry = load_entry(target.save(candidate, runs, False))  # a lane that runs it: its arrays, as before
    assert asked == [candidate.key] and entry.inputs is not None


def _row(key: str, tool: float, task: float) -> CandidateRow:
    return CandidateRow(key=key, idx=0, seed=0, family="g", features=(), backends=("a",), verdict=Verdict.PASS,
                        outcome={"a": ["ok", tool]}, payload="{}", size=1, tool_seconds=tool, task_seconds=task,
                        finished=1.0)


def test_the_split_survives_a_resume_and_the_report_shows_it(tmp_path):
    store = CampaignStore(tmp_path)
    session = store.start_session([])
    store.record(_row("k1", 8.0, 9.0), [], session, 1.0, split={"start-up": 1.0, "reference": 0.5})
    store.record(_row("k2", 9.0, 10.0), [], session, 2.0, split={"reference": 0.25, "judge": 0.25})
    store.add_extra_time(4.0, 5.0, {"files": 0.5})  # a confirming re-run
    store.close()
    store = CampaignStore(tmp_path)  # as a resume opens it
    assert store.worker_split() == {"start-up": 1.0, "reference": 0.75, "judge": 0.25, "files": 0.5}
    s = summarize(store)
    assert s.task_seconds == pytest.approx(25.0)  # 9 + 10 + 5 of tasks, and the start-up
    line = next(x for x in text_lines(s) if x.startswith("time in compiler and runtime"))
    assert line == ("time in compiler and runtime: 84.0% of worker time (outside: start-up 4.0%, reference 3.0%, "
                    "judge 1.0%, files 2.0%, other 6.0%)")
    assert line in markdown(s)
    assert s.to_json()["outside_tools"] == {"start-up": 0.04, "reference": 0.03, "judge": 0.01, "files": 0.02,
                                            "other": 0.06}
    store.db.execute("UPDATE meta SET value=? WHERE key='worker_split'", (json.dumps({"judge": "x"}),))
    with pytest.raises(CorruptStoreError, match="row 'worker_split'.*expected a number of seconds"):
        store.check_rows()


def test_an_older_store_without_a_split_reports_all_of_the_rest_as_other(tmp_path):
    store = CampaignStore(tmp_path)
    store.record(_row("k1", 9.0, 10.0), [], store.start_session([]), 1.0)
    s = summarize(store)
    assert s.split == {} and s.to_json()["outside_tools"] == {"other": 0.1}


def test_compiled_templates_are_kept_between_processes_and_a_broken_cache_is_no_cache(tmp_path, monkeypatch):
    from shapefuzz import templates
    from shapefuzz.families import get_family
    from shapefuzz.families.generate import draw_params

    family = get_family("reduce")
    params = family.load(draw_params("reduce", 1, regime="small", swarm=False))

    def fresh_render() -> str:
        templates._environment.cache_clear()  # as a new process starts
        return family.render(params)

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    want = fresh_render()
    kept = list((tmp_path / "cache" / "shapefuzz" / "templates").iterdir())
    assert kept, "the compiled template was not kept"
    assert fresh_render() == want  # read back
    for path in kept:
        path.write_bytes(b"\x00garbage")
    assert fresh_render() == want  # a broken entry is compiled again
    (tmp_path / "file").write_text("")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))  # no folder can be made there
    assert fresh_render() == want
    templates._environment.cache_clear()


class _EnvTarget:
    """A target whose check answers with the environment its worker was started with."""

    def worker_init(self) -> None:
        pass

    def check(self, candidate, lanes):
        import os

        return os.environ.get("OPENBLAS_NUM_THREADS"), os.environ.get("HYPOTHESIS_NO_PLUGINS")


def test_a_worker_starts_with_one_blas_thread_and_no_hypothesis_plugins_unless_the_user_chose(monkeypatch):
    import os

    from shapefuzz.campaign.worker_pool import Task, WorkerPool
    from shapefuzz.campaign.outcomes import TaskKind

    def answer() -> tuple[str | None, str | None]:
        pool = WorkerPool(_EnvTarget(), 1, start_method="fork")
        try:
            pool.submit(Task(1, TaskKind.CHECK, None, (), 30.0))
            done = []
            while not done:
                done = pool.wait(5.0)
            return done[0].value
        finally:
            pool.close()

    monkeypatch.delenv("OPENBLAS_NUM_THREADS", raising=False)
    monkeypatch.delenv("HYPOTHESIS_NO_PLUGINS", raising=False)
    assert answer() == ("1", "1")
    # the campaign's own environment is left as it was
    assert "OPENBLAS_NUM_THREADS" not in os.environ and "HYPOTHESIS_NO_PLUGINS" not in os.environ
    monkeypatch.setenv("OPENBLAS_NUM_THREADS", "4")
    monkeypatch.setenv("HYPOTHESIS_NO_PLUGINS", "")
    assert answer() == ("4", "")


_BIG_CONV_TRANSPOSE = {  # from a 2-minute campaign, where onnx.reference took 12 s of a worker's confirm
    "ci": 32, "co": 32, "dilations": [1, 1], "dtype": "f32", "flip": "map", "form": "named", "fwd_layout": [0, 1, 2, 3],
    "groups": 1, "input_dyn": [False, False, True, False], "kernel": [3, 2], "n": 3, "out_pad": [0, 0],
    "pad_hi": [0, 0], "pad_lo": [0, 0], "pad_mode": "insert", "rank": 2, "spatial": [32, 64], "strides": [1, 1],
    "w_layout": [2, 3, 1, 0], "w_order": "fused", "x_expand": "late", "x_layout": "nc"}


def test_onnx_reference_is_not_asked_for_a_conv_transpose_it_would_spend_seconds_on():
    from shapefuzz.case import Case
    from shapefuzz.judge.oracle import case_expectation

    big = case_expectation(Case.make("conv_transpose", _BIG_CONV_TRANSPOSE), 0)
    # This process's CPU time (the reference would run here): a loaded machine stretches the wall clock only.
    start = time.process_time()
    second = big.second
    assert second is not None and second.results is None and "not asked for 37,748,736 multiply-adds" in second.note
    assert time.process_time() - start < 2.0
    small = case_expectation(Case.make("conv_transpose", {**_BIG_CONV_TRANSPOSE, "n": 1, "ci": 2, "co": 3,
                                                          "spatial": [5, 4]}), 0).second
    assert small is not None and small.results is not None and not small.disagreement  # still judged


def test_a_worker_imports_neither_the_engine_nor_the_store():
    """A worker unpickles the IREE target and runs the pool's loop: the engine, the store and the
    steering the `campaign` package names are the head's, loaded only when asked for."""
    import subprocess
    import sys

    code = ("import sys, shapefuzz.campaign.iree, shapefuzz.campaign.worker_pool; "
            "print(sorted(m for m in sys.modules if m in ('shapefuzz.campaign.engine', 'shapefuzz.campaign.database')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
    from shapefuzz.campaign import Engine, parse_duration  # still there, on first use

    assert Engine.__name__ == "Engine" and parse_duration("2m") == 120
