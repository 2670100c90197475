"""Flaky means it passed (issue 43, item 1): a failure is flaky only when the same input on the same
lane passes on a re-run and fails on none (a crash gets three re-runs); a re-run that fails another
way is the same bug's other face, which ties the two causes; an address printed as a size
("SmallVector unable to grow. Requested capacity (140734460404672)") is no size and splits nothing.
In an audit all 5 causes set apart as flaky were deterministic bugs. Fake compilers and a fake
campaign target (fault handling: a compiler that fails differently on each run, or crashes then passes)."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.outcomes import BucketState, TaskKind, Verdict
from shapefuzz.campaign.worker_pool import Done
from shapefuzz.model import CRASH_RERUNS, ProcessResult, Signature, Stage, Status
from shapefuzz.triage.signature import signature_for
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.severity import Severity, severity_of

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.engine_fakes import InertTargetParts  # noqa: E402
import support.fakes as fakes  # noqa: E402

FRAMES = (" #0 0x00007f0000000001 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0\n"
          " #1 0x00007f0000000002 SignalHandler(int, siginfo_t*, void*) Signals.cpp:0:0\n"
          " #2 0x00007f0000000003 mlir::spirv::(anonymous namespace)::Deserializer::processType(unsigned int) "
          "Deserializer.cpp:0:0\n"
          " #3 0x00007f0000000004 mlir::iree_compiler::(anonymous namespace)::SPIRVEmitPass::runOnOperation() "
          "SPIRVEmit.cpp:0:0\n")
SMALLVECTOR = ("LLVM ERROR: SmallVector unable to grow. Requested capacity ({}) is larger than maximum value for "
               "size type (4294967295)")
VERIFIER = "error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 4, but found 8"


# --- the oracle's re-runs, with a fake iree-compile that follows a plan, one step a run ------------
# FAKE_PLAN: "crash:<first line>|error:<line>|pass", the last step repeated; FAKE_RUNS counts the runs
PLANNED = """
runs = os.environ['FAKE_RUNS']
n = len(open(runs).read()) if os.path.exists(runs) else 0
open(runs, 'a').write('x')
plan = os.environ['FAKE_PLAN'].split('|')
kind, _, said = plan[min(n, len(plan) - 1)].partition(':')
if kind == 'pass':
    open(out, 'w').write('vmfb')
    sys.exit(0)
sys.stderr.write(said + '\\n')
if kind == 'error':
    sys.exit(1)
sys.stderr.write('Please report issues to https://github.com/iree-org/iree/issues\\nStack dump:\\n' + os.environ['FAKE_FRAMES'])
sys.stderr.flush()
import signal
os.kill(os.getpid(), signal.SIGSEGV)
"""


def _check(tmp_path: Path, monkeypatch, plan: list[str]):
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    monkeypatch.setitem(fakes.BEHAVIOURS, "planned", PLANNED)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("FAKE_PLAN", "|".join(plan))
    monkeypatch.setenv("FAKE_FRAMES", FRAMES)
    toolchain = find_toolchain(fakes.make_fake_toolchain(tmp_path / "bin", "planned"))
    (tmp_path / "runs").unlink(missing_ok=True)  # the toolchain's own probe compiled nothing of ours
    text = (Path(__file__).resolve().parents[1] / "data" / "matmul.mlir").read_text()
    report = check_module(text, ["llvm-cpu"], None, toolchain, confirm=True)
    return report, len((tmp_path / "runs").read_text())


def test_a_crash_whose_message_changes_on_each_run_is_not_flaky(tmp_path, monkeypatch):
    plan = [f"crash:error: unknown type id {w}" for w in ("1a", "2b", "3c")]
    report, runs = _check(tmp_path, monkeypatch, plan)
    (result,) = report.results
    assert result.status == Status.CRASH and not result.flaky and report.verdict == Verdict.FAIL
    assert runs == 2 and "other face" in " ".join(report.notes)  # one re-run failing at all settles it


def test_a_crash_whose_re_run_gives_a_verifier_error_is_not_flaky(tmp_path, monkeypatch):
    report, runs = _check(tmp_path, monkeypatch, ["crash:" + SMALLVECTOR.format(140734460404672), "error:" + VERIFIER])
    (result,) = report.results
    assert result.status == Status.CRASH and not result.flaky and runs == 2
    assert any("llvm-cpu/compile/error" in note for note in report.notes), report.notes


def test_a_crash_that_passes_on_every_re_run_is_flaky_and_one_that_comes_back_is_not(tmp_path, monkeypatch):
    report, runs = _check(tmp_path, monkeypatch, ["crash:error: x", "pass"])
    assert report.results[0].flaky and report.verdict == Verdict.FLAKY and runs == 1 + CRASH_RERUNS
    report, runs = _check(tmp_path / "again", monkeypatch, ["crash:error: x", "pass", "crash:error: x"])
    assert not report.results[0].flaky and runs == 3  # passed once, then crashed again: a bug


# --- the campaign's confirming re-runs, driven task by task (no workers, no compiler) -------------
@dataclass(frozen=True)
class Book(InertTargetParts):
    corpus: str

    def generate(self, group: str, seed: int) -> Candidate:
        return _candidate(seed)


def _engine(tmp_path: Path) -> Engine:
    return Engine(Book(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                  EngineConfig(("g",), ("ref", "x"), 1, 1, Limits(count=10), start_method="fork", reference="ref",
                               lanes_per_candidate=2))


def _candidate(n: int) -> Candidate:
    return Candidate(hashlib.sha256(str(n).encode()).hexdigest()[:16], "g", n, (), "{}", "x" * (20 + n), n)


def _outcome(lanes: tuple[str, ...], failing: dict[str, tuple[Stage, Status, str]]) -> Outcome:
    failures = tuple(Failure(Signature(lane, *failing[lane]), "detail") for lane in lanes if lane in failing)
    return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                   {lane: (failing[lane][1] if lane in failing else Status.OK, 0.5) for lane in lanes}, failures)


def _finish(engine: Engine, kind: TaskKind, c: Candidate, lanes: tuple[str, ...], outcome: Outcome | None) -> None:
    engine.book.finish(Done(engine.inflight.make(kind, c, lanes), outcome, 0.5, lost=outcome is None))


CRASH = (Stage.COMPILE, Status.CRASH)


def _causes(tmp_path: Path, engine: Engine) -> tuple[set[str], set[str]]:
    """The causes of the buckets as the campaign has them, and as a resumed campaign names them."""
    now = {b.cause for b in engine.store.buckets()}
    engine.store.close()
    resumed = _engine(tmp_path)
    return now, set(resumed.book.causes.name_of().values())


def test_campaign_a_re_run_failing_another_way_ties_the_causes_and_is_not_flaky(tmp_path):
    engine = _engine(tmp_path)
    c = _candidate(1)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": (*CRASH, "SIGSEGV read 1a")}))
    assert engine.book.next_confirm() == (c, ("x",))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {"x": (*CRASH, "SIGSEGV read 2b")}))
    buckets = engine.store.buckets()
    assert len(buckets) == 2 and all(b.state == BucketState.CONFIRMED for b in buckets)
    assert engine.book.next_confirm() is None and all(b.corpus_entry for b in buckets)
    now, resumed = _causes(tmp_path, engine)
    assert len(now) == 1 and resumed == now  # one bug, and still one when the campaign resumes


def test_campaign_a_crash_whose_re_run_is_a_verifier_error_is_one_cause(tmp_path):
    engine = _engine(tmp_path)
    c = _candidate(2)
    crash = SMALLVECTOR.format(140734460404672)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": (*CRASH, crash)}))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {"x": (Stage.COMPILE, Status.ERROR, VERIFIER)}))
    by_status = {b.status: b for b in engine.store.buckets()}
    assert set(by_status) == {"crash", "error"} and {b.state for b in by_status.values()} == {BucketState.CONFIRMED}
    assert "other face" in by_status["error"].evidence
    now, resumed = _causes(tmp_path, engine)
    assert len(now) == 1 and resumed == now


def test_campaign_a_crash_is_flaky_only_once_it_passed_its_three_re_runs(tmp_path):
    engine = _engine(tmp_path)
    c = _candidate(3)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": (*CRASH, "SIGSEGV")}))
    for run in range(CRASH_RERUNS):
        assert engine.book.next_confirm() == (c, ("x",)), run
        assert engine.store.buckets()[0].state == BucketState.PENDING
        _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {}))
    (bucket,) = engine.store.buckets()
    assert bucket.state == BucketState.FLAKY and engine.book.next_confirm() is None
    assert bucket.evidence == "passed on 3 of its 3 re-runs and failed on none"
    # passing once, then crashing the same way again: a bug
    c = _candidate(4)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": (*CRASH, "SIGABRT")}))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {}))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), _outcome(("x",), {"x": (*CRASH, "SIGABRT")}))
    assert next(b for b in engine.store.buckets() if "SIGABRT" in b.sig).state == BucketState.CONFIRMED


def test_campaign_a_lost_re_run_is_no_pass(tmp_path):
    engine = _engine(tmp_path)
    c = _candidate(5)
    _finish(engine, TaskKind.CHECK, c, ("ref", "x"), _outcome(("ref", "x"), {"x": (Stage.COMPARE, Status.MISMATCH,
                                                                                     "wrong values")}))
    _finish(engine, TaskKind.CONFIRM, c, ("x",), None)  # the worker died: it neither passed nor failed
    (bucket,) = engine.store.buckets()
    assert bucket.state == BucketState.CONFIRMED


# --- an address printed as a size ----------------------------------------------------------------
def _crash(capacity: int) -> tuple[Signature, str]:
    output = SMALLVECTOR.format(capacity) + "\nStack dump:\n" + FRAMES
    return signature_for("rocm-gfx942", Stage.COMPILE, Status.CRASH,
                         ProcessResult(("iree-compile",), None, 6, False, False, "", output, 0.1)), output


def test_a_pointer_read_as_a_capacity_splits_nothing_and_is_no_sizing_bug():
    stack, other, heap = (_crash(n) for n in (140734460404672, 140721234567890, 94558234567890))
    assert stack[0] == other[0] == heap[0]  # one signature
    keys = {identity_of("compile", "crash", sig.message, out).key for sig, out in (stack, other, heap)}
    assert len(keys) == 1  # one identity: a 14-digit address no longer moves the cut of its message
    assert severity_of("compile", "crash", stack[0].message, stack[1], elements=64) == Severity.COMPILER_CRASH
    # a size computed from the dynamic-dim bound is still one
    bound = "error: 'memref.alloca' op allocation size 36028797018963960 bytes exceeds the stack limit"
    assert severity_of("compile", "error", bound, bound, elements=64) == Severity.SIZING_BUG


# --- a whole campaign, the real target and a fake compiler whose re-run gives the other face ------
FACES = r"""#!/bin/sh
case "$1" in
  --version) echo "IREE compiler version 3.13.0"; exit 0 ;;
  --help*) printf '  --iree-hal-target-device=<string>\n  --iree-rocm-target=<string>\n'; exit 0 ;;
esac
in="$1"
[ -f "$in" ] || exit 0
count="$FAKE_RUNS_DIR/$(cksum < "$in" | cut -d' ' -f1)"
n=$(cat "$count" 2>/dev/null || echo 0)
echo $((n + 1)) > "$count"
if [ "$n" = 0 ]; then
  echo "LLVM ERROR: SmallVector unable to grow. Requested capacity (140734460404672) is larger than maximum value for size type (4294967295)" >&2
  printf 'Stack dump:\n #0 0x00007f01 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0\n #1 0x00007f02 llvm::SmallVectorBase<unsigned int>::grow_pod(void*, unsigned long, unsigned long) SmallVector.cpp:0:0\n #2 0x00007f03 mlir::iree_compiler::(anonymous namespace)::ROCDLAnnotateKernelForTranslationPass::runOnOperation() X.cpp:0:0\n' >&2
  kill -ABRT $$
fi
echo "$in:3:5: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 4, but found 8" >&2
exit 1
"""


def test_a_campaign_files_a_crash_and_its_verifier_error_face_as_one_confirmed_cause(tmp_path):
    folder = make_fake_iree(tmp_path / "bin")
    (folder / "iree-compile").write_text(FACES)
    (tmp_path / "runs").mkdir()
    argv = [str(Path(sys.executable).parent / "shapefuzz"), "--iree-bin", str(folder), "fuzz", "--count", "1",
            "--ops", "topk", "--backends", "rocm-gfx942", "--campaign", str(tmp_path / "camp"), "--corpus",
            str(tmp_path / "corpus"), "--no-shrink", "--no-bisect", "--no-localize", "--jobs", "1", "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env=fake_env(tmp_path, "ok", FAKE_RUNS_DIR=str(tmp_path / "runs")))
    assert result.returncode == 0, result.stderr
    buckets = json.loads(result.stdout)["buckets"]
    assert {b["status"] for b in buckets} == {"crash", "error"}, buckets
    assert all(b["state"] == "confirmed" for b in buckets) and len({b["cause"] for b in buckets}) == 1, buckets


@pytest.mark.parametrize("n", [2**46, 2**47, 2**50])
def test_a_power_of_two_or_a_size_past_addresses_is_still_a_size(n):
    text = f"error: allocation of {n} bytes"
    assert severity_of("compile", "error", text, text, elements=64) == Severity.SIZING_BUG
