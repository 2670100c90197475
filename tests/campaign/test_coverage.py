"""Compiler-coverage feedback: the action-log parser on real logs of the pinned compiler and on
garbage; the failing pass of a real compile error and crash; and, with a fake target (the
engine's steering, not the compiler, is under test there), that a new pattern makes a candidate
frontier, that frontier neighbours are drawn, that the map survives resume, that a lane that
cannot take a candidate never takes a slot and a thinly covered one gets it; a compiler without
the action log turns coverage off with one line and the campaign goes on."""

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
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import json_text, markdown, summarize, text_lines
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.coverage.actionlog import (
    ActionLogReader, crash_pass, failing_pass, log_flags, read_action_log, strip_noise)

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.engine_fakes import InertTargetParts  # noqa: E402
from support.engines import build_engine  # noqa: E402
from support.coverage_target import CoveredTarget  # noqa: F401

DATA = Path(__file__).resolve().parents[1] / "data" / "coverage"
SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")
SINGLE = "llvm-cpu-single-dispatch"

# --- the parser ----------------------------------------------------------------------------------
LOG = b"""[thread iree-compile] begins (no breakpoint) Action `pass-execution` running `CSEPass` on Operation `util.func` (x)`
[thread iree-compile] begins (no breakpoint) Action `apply-pattern pattern: mlir::(anonymous namespace)::Fold<mlir::A, B> (%0 = "a.b"(%1) : (i32) ->
  i32)`
[thread iree-compile] completed `apply-pattern`
[thread iree-compile] begins (no breakpoint) Action `apply-pattern pattern:  ("cf.br"() : () -> ())`
[thread iree-compile] completed `pass-execution`
[thread iree-compile] begins (no breakpoint) Action `pass-execution` running `InnerPass` on Operation `func.func` (y)`
"""


def test_parser_reads_passes_patterns_with_their_pass_and_the_pass_left_open():
    reader = ActionLogReader()
    reader.feed(LOG)
    cov = reader.result()
    assert cov.passes == {"CSEPass", "InnerPass"}
    assert cov.patterns == {("CSEPass", "mlir::Fold<mlir::A, B>")}  # a nameless pattern is skipped
    assert cov.failing_pass == "InnerPass"  # begun and never completed
    assert ("CSEPass", "") in cov.items()


def test_parser_survives_garbage_torn_lines_and_a_huge_log(tmp_path):
    torn = (b"[thread a] begins (no breakpoint) Action `apply-pattern pattern: Foo%12 = \"x\"[thread b] "
            b"completed `pass-execution`\n\xff\xfe\x00garbage\n[thread ] completed `pass-execution`\n"
            b"[thread x] begins (no breakpoint) Action `pass-execution` running `Bad\"Name` on\n")
    path = tmp_path / "log"
    path.write_bytes(os.urandom(50_000) + b"\n" + torn + LOG * 2000)
    full = read_action_log(path)
    assert full is not None and not full.truncated and "CSEPass" in full.passes
    assert all('"' not in p and "%" not in p for _, p in full.patterns) and "?" in full.passes
    capped = read_action_log(path, max_bytes=60_000)
    assert capped.truncated and len(capped.passes) <= len(full.passes)
    assert read_action_log(tmp_path / "missing") is None
    assert strip_noise("ExecutionContext registered on the context\nerror: x\n") == "error: x\n"


def test_crash_pass_reads_the_innermost_pass_frame():
    dump = (" #4 0x00007f mlir::ShapedType::hasRank() const Types.cpp:0:0\n"
            " #5 0x00007f mlir::iree_compiler::Preprocessing::(anonymous namespace)::MakeSingleDispatchForFunctionPass"
            "::runOnOperation() MakeSingleDispatchForFunction.cpp:0:0\n"
            " #9 0x00007f mlir::iree_compiler::FooPass::runOnOperation() Foo.cpp:0:0\n")
    assert crash_pass(dump) == "MakeSingleDispatchForFunctionPass"
    assert failing_pass("timeout", dump, None) == "" and failing_pass("crash", "no frames", None) == ""


# --- the real compiler -----------------------------------------------------------------------------
def _compile_with_log(tmp_path, text: str, backend: str) -> tuple[subprocess.CompletedProcess, Path]:
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.iree.toolchain import find_toolchain

    toolchain = find_toolchain()
    src, log = tmp_path / "m.mlir", tmp_path / "actions.log"
    src.write_text(text)
    argv = [str(toolchain.compile_bin), str(src), *BACKENDS[backend].compile_flags(toolchain.probe),
            *log_flags(str(log)), "-o", str(tmp_path / "m.vmfb")]
    return subprocess.run(argv, capture_output=True, text=True, timeout=300), log


@pytest.mark.iree
def test_parser_on_a_real_action_log(tmp_path):
    text = "func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {\n" \
           "  %z = tensor.empty() : tensor<4x3xf32>\n  %c = arith.constant 0.0 : f32\n" \
           "  %f = linalg.fill ins(%c : f32) outs(%z : tensor<4x3xf32>) -> tensor<4x3xf32>\n" \
           "  %m = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>\n" \
           "  return %m : tensor<4x3xf32>\n}\n"
    done, log = _compile_with_log(tmp_path, text, "llvm-cpu")
    assert done.returncode == 0, done.stderr
    cov = read_action_log(log)
    assert cov is not None and not cov.truncated
    assert {"CSEPass", "ConvertToLLVMPass", "LLVMCPULowerExecutableTargetPass"} <= cov.passes
    assert len(cov.passes) > 100 and len(cov.patterns) > 200
    assert {p for p, _ in cov.patterns} <= cov.passes  # one thread: every pattern fired inside a pass
    names = {name for _, name in cov.patterns}
    assert all(name and "(anonymous namespace)" not in name and " (" not in name for name in names)


@pytest.mark.iree
def test_a_failing_and_a_crashing_compile_name_their_pass_and_keep_their_signature():
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    toolchain = find_toolchain()
    for name, status, pass_name in (("error_single_dispatch", "error", "TileAndDistributeToWorkgroupsUsingForallOpPass"),
                                     ("crash_single_dispatch", "crash", "MakeSingleDispatchForFunctionPass")):
        text = (DATA / f"{name}.mlir").read_text()
        plain = check_module(text, [SINGLE], None, toolchain, confirm=False).results[0]
        logged = check_module(text, [SINGLE], None, toolchain, confirm=False, instrument=(SINGLE,)).results[0]
        assert plain.status.value == logged.status.value == status
        assert plain.signature == logged.signature  # the log changes nothing a bucket is keyed on
        assert plain.coverage is None and logged.coverage.failing_pass == pass_name
        if status == "error":  # a crash loses the log's last block: its stack dump names the pass
            assert pass_name in logged.coverage.passes
        assert len(logged.coverage.passes) > 20  # the log a crash leaves (kept under a second name) is read


@pytest.mark.iree
def test_a_dynamic_result_is_a_known_limit_of_single_dispatch_lanes(tmp_path):
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.iree.toolchain import find_toolchain

    target = IreeTarget(find_toolchain(), tmp_path / "corpus")
    dynamic = Candidate("k", "conv", 0, (), "{}", "func.func @main(%a: tensor<?x4xf32>) -> tensor<?x4xf32> {")
    static = Candidate("k", "conv", 0, (), "{}", "func.func @main(%a: tensor<?x4xf32>) -> tensor<2x4xf32> {")
    lanes = ("llvm-cpu", SINGLE, "rocm-gfx942-single-dispatch", "vmvx")
    assert target.ineligible(dynamic, lanes) == {SINGLE, "rocm-gfx942-single-dispatch"}
    assert target.ineligible(static, lanes) == set()
    assert target.coverage_support() == ""


def _engine(folder: Path, count: int, share: float = 1.0, lanes=("ref", "wide", "narrow", "other"), **kw) -> Engine:
    target = CoveredTarget(str(folder / "corpus"))
    return build_engine(target, CampaignStore(folder / "camp"), ("g",), lanes, 3, 1, Limits(count=count),
                        start_method="fork", reference="ref", lanes_per_candidate=2,
                        coverage=CoverageKnobs(share=share, neighbours=0.5), confirm=False, **kw)


def test_new_patterns_make_frontier_candidates_and_their_neighbours_are_drawn(tmp_path):
    engine = _engine(tmp_path, 60)
    engine.run()
    book = engine.coverage.book
    new = dict(frontier_counts(engine.store))  # a lane's first compile (everything new) does not count
    firsts = {lane: key for lane, key, _ in engine.store.db.execute(
        "SELECT lane, candidate, MIN(finished) FROM covered GROUP BY lane")}
    payload = {r.key: json.loads(r.payload)["n"] for r in engine.store.candidates()}
    assert all(new[k] > 0 for k in new if payload[k] % 5 == 0 and k not in firsts.values())  # a rare pattern is new
    assert any(v == 0 for v in new.values())  # repeats of what was seen are not frontier
    where = frontier_lanes(engine.store)  # a compile that failed on its lane is not frontier there
    assert {f.candidate.key for f in book.frontier} == {k for k, v in new.items() if v > 0 and where[k]}
    assert not any(payload[f.candidate.key] % 11 == 0 for f in book.frontier)
    assert engine.coverage.neighbours_drawn > 0
    parents = {json.loads(f.candidate.payload)["n"] for f in book.frontier}
    tried = [json.loads(r.payload)["n"] for r in engine.store.candidates()]
    near = [n for n in tried if any(0 < n - p <= 3 for p in parents)]
    assert len(near) >= engine.coverage.neighbours_drawn // 2
    rows = coverage_rows(engine.store)
    first = {(r.lane, r.pass_name, r.pattern): r.first_candidate for r in rows}
    assert all(first[(lane, "Rare", pattern)] for lane, _, pattern in first if _ == "Rare")
    assert failing_passes(engine.store) and set(failing_passes(engine.store).values()) == {"FailPass"}


def test_a_frontier_neighbour_is_checked_where_its_parent_reached_something_new(tmp_path):
    engine = _engine(tmp_path, 80)
    drawn: dict[str, tuple[str, ...]] = {}
    plain = engine.coverage.neighbour

    def recording(index):
        candidate = plain(index)
        if candidate is not None:
            drawn[candidate.key] = engine.coverage.aimed[candidate.key]
        return candidate

    engine.coverage.neighbour = recording
    engine.run()
    checked = {r.key: r.backends for r in engine.store.candidates()}
    n = {r.key: json.loads(r.payload)["n"] for r in engine.store.candidates()}
    # the parent's lanes this neighbour can take ("narrow" takes no odd n; the reference is always there)
    takes = {k: set(lanes) - {"ref"} - ({"narrow"} if n[k] % 2 else set()) for k, lanes in drawn.items() if k in n}
    aimed = {k: lanes for k, lanes in takes.items() if lanes}
    assert len(aimed) >= 3
    assert all(set(checked[k]) & lanes for k, lanes in aimed.items()), (aimed, checked)
    assert all(len(checked[k]) == 2 for k in takes)  # with nothing to aim at, the slot is filled as usual


def test_an_ineligible_lane_never_takes_a_slot_and_no_eligible_lane_is_starved(tmp_path):
    engine = _engine(tmp_path, 60)
    engine.run()
    rows = list(engine.store.candidates())
    odd = [r for r in rows if json.loads(r.payload)["n"] % 2]
    assert odd and not any("narrow" in r.backends for r in odd)
    assert all(r.backends[0] == "ref" and len(r.backends) == 2 for r in rows)
    # every other lane keeps getting candidates (a lane's draw is from what it taught, times how
    # thinly it has checked the candidate's feature pairs): none is starved
    slots = [r.backends[1] for r in rows]
    assert min(slots.count(lane) for lane in ("wide", "narrow", "other")) >= 4, slots


class LessonTarget(CoveredTarget):
    """Lane "stuck" fails every candidate the same way (one known bucket, re-hit again and again),
    lane "lively" fails each candidate in a way of its own (a new bucket each time), lane "quiet"
    passes; nothing is instrumented. Only "lively" keeps teaching something."""

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        why = {"stuck": "always the same", "lively": f"new every time {n}"}
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, why[lane])) for lane in lanes if lane in why)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (Status.ERROR if lane in why else Status.OK, 0.01) for lane in lanes}, failures, 0.0)

    confirm = check


def _lesson_engine(folder: Path, count: int) -> Engine:
    return Engine(LessonTarget(str(folder / "corpus")), CampaignStore(folder / "camp"),
                  EngineConfig(("g",), ("ref", "stuck", "lively", "quiet"), 3, 1, Limits(count=count),
                               start_method="fork", reference="ref", lanes_per_candidate=2,
                               coverage=CoverageKnobs(share=1e-9, neighbours=0.0), confirm=False))


def test_a_lane_that_keeps_teaching_gets_the_slot_and_one_that_re_hits_a_known_bucket_gives_it_up(tmp_path):
    engine = _lesson_engine(tmp_path, 120)
    engine.run()
    rows = sorted(engine.store.candidates(), key=lambda r: r.idx)
    assert len(rows) == 120 and all(r.backends[0] == "ref" and len(r.backends) == 2 for r in rows)
    later = [r.backends[1] for r in rows[40:]]
    assert later.count("lively") > 2 * max(later.count("stuck"), later.count("quiet")), later
    assert later.count("stuck") + later.count("quiet") > 0  # the others still get a turn now and then
    book = engine.coverage.book
    assert book.lane_gains[("g", "stuck")] <= 1.0 < book.lane_gains[("g", "lively")]
    # plain rotation (coverage measured, not steered by) shares the slot out evenly
    flat = Engine(LessonTarget(str(tmp_path / "c2")), CampaignStore(tmp_path / "camp2"),
                  EngineConfig(("g",), ("ref", "stuck", "lively", "quiet"), 3, 1, Limits(count=60),
                               start_method="fork", reference="ref", lanes_per_candidate=2, confirm=False,
                               coverage=CoverageKnobs(share=1e-9, neighbours=0.0, steer=False)))
    flat.run()
    slots = [r.backends[1] for r in flat.store.candidates()]
    assert min(slots.count(lane) for lane in ("stuck", "lively", "quiet")) >= 15


def test_what_each_lane_and_feature_taught_survives_resume(tmp_path):
    first = _lesson_engine(tmp_path, 50)
    first.run()
    book = first.coverage.book
    trials, gains, seconds = dict(book.lane_trials), dict(book.lane_gains), dict(book.lane_seconds)
    yields = dict(book.trials), dict(book.gains)
    assert yields[1][("g", "group:g")] > 1.0  # "lively"'s new buckets count as finding something new
    first.store.close()
    again = _lesson_engine(tmp_path, 80).coverage.book
    assert all(again.trials[k] == pytest.approx(v) for k, v in yields[0].items())
    assert all(again.gains[k] == pytest.approx(v) for k, v in yields[1].items())
    assert set(again.lane_trials) == set(trials)
    assert all(again.lane_trials[k] == pytest.approx(v) for k, v in trials.items())
    assert all(again.lane_gains[k] == pytest.approx(v) for k, v in gains.items())
    assert all(again.lane_seconds[k] == pytest.approx(v) for k, v in seconds.items())


class CostTarget(CoveredTarget):
    """Lanes "cheap" and "dear" both find a new bucket with every check; a check on "dear" takes
    eight times as long (as the outcome says: the fake spends no real time)."""

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, f"new {n}")) for lane in lanes
                         if lane != "ref")
        seconds = {"ref": 1.0, "cheap": 1.0, "dear": 8.0}
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (Status.ERROR if lane != "ref" else Status.OK, seconds[lane]) for lane in lanes},
                       failures, 0.0)

    confirm = check


def test_of_two_lanes_that_teach_alike_the_cheaper_gets_more_slots(tmp_path):
    engine = Engine(CostTarget(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), ("ref", "cheap", "dear"), 3, 1, Limits(count=80), start_method="fork",
                                 reference="ref", lanes_per_candidate=2,
                                 coverage=CoverageKnobs(share=1e-9, neighbours=0.0), confirm=False))
    engine.run()
    slots = [r.backends[1] for r in sorted(engine.store.candidates(), key=lambda r: r.idx)]
    assert "dear" in slots  # tried, then priced
    assert slots[20:].count("cheap") > 2 * slots[20:].count("dear"), slots


def test_a_lanes_record_over_every_family_is_the_prior_of_a_family_new_to_it():
    book = CoverageBook(CoverageKnobs())
    for _ in range(20):
        book.taught("g", "lively", 1.0, 1.0)
        book.taught("g", "quiet", 0.0, 1.0)
    rng = random.Random(5)
    draws = {lane: statistics.fmean(book.lane_value("h", lane, rng, 0.0) for _ in range(400))
             for lane in ("lively", "quiet", "untried")}
    assert draws["lively"] > 0.6 > draws["untried"] > 0.4 > draws["quiet"], draws
    for _ in range(20):  # the family's own record outweighs the prior once it has one
        book.taught("h", "lively", 0.0, 1.0)
    assert statistics.fmean(book.lane_value("h", "lively", rng, 0.0) for _ in range(400)) < 0.3


class FamilyTarget(CoveredTarget):
    """Two families; each reaches patterns of its own ("P", "<group>-p<n % 7>") on every lane."""

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        coverage = {lane: ((("P", f"{candidate.group}-p{n % 7}"), ("P", "")), "") for lane in candidate.instrument}
        return Outcome(Verdict.PASS, {lane: (Status.OK, 0.01) for lane in lanes}, (), 0.0, coverage=coverage)

    confirm = check


def test_a_familys_first_compile_on_a_lane_is_no_frontier(tmp_path):
    engine = Engine(FamilyTarget(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g", "h"), ("ref", "a", "b"), 3, 1, Limits(count=40), start_method="fork",
                                 reference="ref", lanes_per_candidate=2,
                                 coverage=CoverageKnobs(share=1.0, neighbours=0.0), confirm=False))
    engine.run()
    family = {r.key: r.family for r in engine.store.candidates()}
    firsts = {}
    for key, lane in engine.store.db.execute("SELECT candidate, lane FROM covered ORDER BY finished, rowid"):
        firsts.setdefault((family[key], lane), key)
    assert {g for g, _ in firsts} == {"g", "h"}
    where = frontier_lanes(engine.store)  # new to the lane, but only the family's own items: no frontier there
    assert not any(lane in where[key] for (_, lane), key in firsts.items())
    frontier = {f.candidate.key: f.lanes for f in engine.coverage.book.frontier}
    assert frontier and not any(lane in frontier.get(key, ()) for (_, lane), key in firsts.items())
    assert frontier == {k: v for k, v in where.items() if v}


def test_steered_draws_on_rotation_lanes_swap_an_ineligible_lane_for_the_next(tmp_path):
    target = CoveredTarget(str(tmp_path / "corpus"))
    engine = Engine(target, CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), ("ref", "wide", "narrow", "other"), 3, 1, Limits(count=60),
                                 start_method="fork", reference="ref", lanes_per_candidate=2, confirm=False,
                                 coverage=CoverageKnobs(share=1.0, neighbours=0.0, lanes=False)))
    engine.run()
    rows = sorted(engine.store.candidates(), key=lambda r: r.idx)
    assert all(r.backends[0] == "ref" and len(r.backends) == 2 for r in rows)
    for r in rows:  # rotation's lane, or for an odd n where rotation said "narrow", the next one
        turn = engine.plan.lanes_for(r.idx)[1]
        odd = json.loads(r.payload)["n"] % 2
        assert r.backends[1] == ("other" if turn == "narrow" and odd else turn)


@pytest.mark.parametrize("knobs", [dict(share=0.0), dict(share=1e-9, steer=False)], ids=["no-coverage", "measured"])
def test_plain_rotation_swaps_an_ineligible_lane_for_the_next_without_steering(tmp_path, knobs):
    # At 3.3.0, 5 of 11 conv_transpose candidates given rocm-gfx942's single-dispatch lane were
    # refused by it (a dynamic result): without --steer the slot is now the next lane's too.
    engine = Engine(CoveredTarget(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), ("ref", "wide", "narrow", "other"), 3, 1, Limits(count=40),
                                 start_method="fork", reference="ref", lanes_per_candidate=2, confirm=False,
                                 coverage=CoverageKnobs(neighbours=0.0, **knobs)))
    engine.run()
    rows = sorted(engine.store.candidates(), key=lambda r: r.idx)
    odd = [r for r in rows if json.loads(r.payload)["n"] % 2]
    assert odd and not any("narrow" in r.backends for r in odd)
    assert any("narrow" in r.backends for r in rows)  # it keeps the even ones it is given
    for r in rows:
        turn = engine.plan.lanes_for(r.idx)[1]
        assert r.backends == ("ref", "other" if turn == "narrow" and json.loads(r.payload)["n"] % 2 else turn)
    assert engine.coverage.neighbours_drawn == 0


def test_the_coverage_map_survives_resume(tmp_path):
    first = _engine(tmp_path, 30)
    first.run()
    seen = {lane: set(items) for lane, items in first.coverage.book.seen.items()}
    frontier = {f.candidate.key for f in first.coverage.book.frontier}
    counts = {(r.lane, r.pass_name, r.pattern): r.count for r in coverage_rows(first.store)}
    first.store.close()
    again = _engine(tmp_path, 50)
    assert {lane: set(items) for lane, items in again.coverage.book.seen.items()} == seen
    assert {f.candidate.key for f in again.coverage.book.frontier} == frontier
    assert again.coverage.book.instrumented == first.coverage.book.instrumented
    again.run()
    later = {(r.lane, r.pass_name, r.pattern): r.count for r in coverage_rows(again.store)}
    assert all(later[k] >= v for k, v in counts.items()) and sum(later.values()) > sum(counts.values())
    summary = coverage_summary(again.store, {"rare stuff": ("Rare",), "never": ("NoSuchPass",)})
    assert "never" in summary["never_reached"] and "rare stuff" not in summary["never_reached"]
    report = summarize(again.store)  # the campaign report shows it, and each bucket's failing pass
    text, md = "\n".join(text_lines(report)), markdown(report)
    assert "compiler coverage:" in text and "## Compiler coverage" in md and "failing pass: FailPass" in text
    assert json.loads(json_text(report))["coverage"]["instrumented"]


def test_an_old_store_gains_the_coverage_tables(tmp_path):
    store = CampaignStore(tmp_path / "camp")
    store.db.executescript("DROP TABLE coverage; DROP TABLE covered; DROP TABLE failing_passes;")
    store.close()
    store = CampaignStore(tmp_path / "camp")
    assert coverage_rows(store) == [] and coverage_summary(store) == {}
    tables = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"coverage", "covered", "failing_passes"} <= tables


def test_a_compiler_without_the_action_log_turns_coverage_off_and_the_campaign_goes_on(tmp_path):
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz", "--campaign",
            str(tmp_path / "camp"), "--count", "3", "--ops", "topk", "--backends", "rocm-gfx942", "--jobs", "1",
            "--json"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, env=fake_env(tmp_path, "ok"),
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stderr.splitlines() if "coverage" in line]
    assert len(lines) == 1 and "no --log-actions-to" in lines[0], done.stderr
    assert json.loads(done.stdout)["candidates"] == 3
    bad = subprocess.run([SHAPEFUZZ, "fuzz", "--coverage", "1.5", "--campaign", str(tmp_path / "c2")],
                         capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1 and "--coverage 1.5" in bad.stderr


def test_a_compiler_without_the_action_log_is_never_given_the_flag(tmp_path, monkeypatch):
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_IREE_MODE", "ok")
    monkeypatch.setenv("FAKE_IREE_LOG", str(tmp_path / "calls"))
    toolchain = find_toolchain(make_fake_iree(tmp_path / "bin"))
    text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    result = check_module(text, ["rocm-gfx942"], None, toolchain, confirm=False, instrument=("rocm-gfx942",)).results[0]
    assert result.status.value == "ok" and result.coverage is None
    calls = (tmp_path / "calls").read_text()
    assert "log-actions-to" not in calls and "gfx942" in calls


def test_a_campaign_measures_coverage_and_steers_by_it_only_when_asked(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from shapefuzz.campaign import run
    from shapefuzz.cli import cli

    asked = []
    monkeypatch.setattr(run, "run_campaign", lambda request, toolchain, progress=None: asked.append(request) or 1 / 0)
    for extra in ([], ["--steer"], ["--coverage", "0.3"], ["--coverage", "0", "--steer"]):
        CliRunner().invoke(cli, ["fuzz", "--count", "1", "--plain", "--campaign", str(tmp_path / "c"), *extra])
    assert [r.coverage_steer for r in asked] == [False, True, False, True]
    # the map costs at most 3% of candidates/min unless it steers (bench/bench_action_log.py)
    shares = [run.build_config(r, None).coverage for r in asked]
    assert shares == [0.05, 0.15, 0.3, 0.0]


def test_a_family_that_costs_more_a_candidate_is_drawn_less_unless_it_teaches_more():
    from shapefuzz.campaign.steering import Steering
    book, steering = CoverageBook(CoverageKnobs()), Steering(("cheap", "dear"))

    def checked(times: int, dear_buckets: int) -> list[str]:
        """`times` candidates of each family, a dear one four times as long; the draws that follow."""
        for _ in range(times):
            steering.add("cheap", (), 1.0)
            steering.add("dear", (), 4.0)
            book.learn("cheap", (), 0, 0)
            book.learn("dear", (), 0, dear_buckets)
        return [book.pick_group(random.Random(i), steering) for i in range(2000)]

    picks = checked(20, 0)  # alike but for the seconds a candidate takes
    assert picks.count("cheap") > 2 * picks.count("dear") > 0, picks.count("dear")
    picks = checked(10, 1)  # now every dear candidate finds a new bucket
    assert picks.count("dear") > 2 * picks.count("cheap") > 0, picks.count("cheap")
