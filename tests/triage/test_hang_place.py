"""A compile past its timeout is stopped with SIGABRT first, so LLVM's handler prints where it hangs
(issue 31, items 1 and 6): the failure is placed at the pass on that stack, two hangs in one pass
are one cause whatever frame they were stopped in, two passes are two; a compiler that ignores
SIGABRT is killed and still reported (pass unknown); a hang on a small module ranks with crashes,
on a big one it stays a resource limit. Fake compilers (fault handling), timeouts of 1 s."""

from __future__ import annotations

import time

from shapefuzz.invoke.execute import COMPILE_ABORT_GRACE, Budget
from shapefuzz.model import Stage, Status
from shapefuzz.process.sandbox import GIB, Limits
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.record import bug_record
from shapefuzz.triage.severity import Severity, severity_of

from support.fakes import process_alive
from support.faults import MATMUL, faulty_check  # noqa: F401

TIMEOUT = 1.0
BUDGET = Budget(compile=Limits(timeout=TIMEOUT, memory_bytes=GIB // 2))
LOWER = "mlir::iree_compiler::(anonymous namespace)::LLVMCPULowerExecutableTargetPass"
FORM = "mlir::iree_compiler::DispatchCreation::(anonymous namespace)::FormDispatchRegionsPass"
FOLD_TOP = "mlir::DenseElementsAttr::get(mlir::ShapedType, llvm::ArrayRef<llvm::APInt>) BuiltinAttributes.cpp:0:0"
HASH_TOP = "llvm::hash_combine_range(char const*, char const*) Hashing.cpp:0:0"


def _hang(tmp_path, monkeypatch, name, pass_class, top, behaviour="hang-with-stack"):
    monkeypatch.setenv("FAKE_HANG_PASS", pass_class)
    monkeypatch.setenv("FAKE_HANG_TOP", top)
    start = time.monotonic()
    result = faulty_check(tmp_path / name, monkeypatch, behaviour, BUDGET)
    seconds = time.monotonic() - start
    assert (result.stage, result.status) == (Stage.COMPILE, Status.TIMEOUT), result.detail[:300]
    time.sleep(0.1)
    assert not process_alive(int((tmp_path / name / "pids").read_text()))
    return result, seconds


def _identity(result):
    return identity_of(result.stage.value, result.status.value, result.signature.message, result.detail)


def test_a_hang_is_placed_by_its_stack_and_two_hangs_in_one_pass_are_one_cause(tmp_path, monkeypatch):
    first, _ = _hang(tmp_path, monkeypatch, "a", LOWER, FOLD_TOP)
    where = "Canonicalizer in LLVMCPULowerExecutableTargetPass"  # canonicalize, named by the pass it ran in
    assert first.signature.message == f"timeout in {where}"
    assert "stopped with SIGABRT" in first.detail and "InsertStridedSliceConstantFolder" in first.detail
    ident = _identity(first)
    assert ident.failing_pass == where and ident.strong
    # stopped elsewhere in the same loop: the same bucket and the same cause
    again, _ = _hang(tmp_path, monkeypatch, "b", LOWER, HASH_TOP)
    assert again.signature == first.signature and _identity(again).key == ident.key
    # a hang in another pass is another cause
    other, _ = _hang(tmp_path, monkeypatch, "c", FORM, FOLD_TOP)
    assert _identity(other).failing_pass == "Canonicalizer in FormDispatchRegionsPass"
    assert other.signature != first.signature and _identity(other).key != ident.key

    sig = {**first.signature.to_json(), "stage": "compile", "status": "timeout"}
    bug = bug_record(sig, first.detail, ["llvm-cpu"], MATMUL)
    assert bug["failing_pass"] == where and bug["component"] == "codegen for llvm-cpu"
    assert bug["severity"] == Severity.COMPILER_HANG.label and bug["frames"]
    meta = {"status": "timeout", "detail": first.detail, "bug": bug}
    title = issue_title(meta, "llvm-cpu", "compile", "timeout", first.signature.message)
    assert title == f"[codegen for llvm-cpu] hangs in {where}, applying InsertStridedSliceConstantFolder"


def test_a_compiler_that_ignores_sigabrt_is_killed_and_still_reported(tmp_path, monkeypatch):
    result, seconds = _hang(tmp_path, monkeypatch, "i", LOWER, FOLD_TOP, "hang-ignoring-abort")
    assert result.signature.message == "timeout" and "SIGABRT" not in result.detail
    assert seconds < TIMEOUT + COMPILE_ABORT_GRACE + 8  # the grace, then SIGKILL: never waits for it
    ident = _identity(result)
    assert ident.failing_pass == "" and not ident.strong
    bug = bug_record({**result.signature.to_json(), "stage": "compile", "status": "timeout"}, result.detail,
                     ["llvm-cpu"], MATMUL)
    assert bug["component"] == "compiler, pass unknown (timeout) for llvm-cpu"
    title = issue_title({"status": "timeout", "detail": result.detail, "bug": bug}, "llvm-cpu", "compile", "timeout",
                        "timeout")
    assert "compile does not finish (pass unknown)" in title


def test_a_hang_on_a_small_module_ranks_with_crashes_on_a_big_one_it_is_a_resource_limit():
    stack = " #4 0x0005555555555555 (anonymous namespace)::Canonicalizer::runOnOperation() Canonicalizer.cpp:0:0"
    small = severity_of("compile", "timeout", "timeout in Canonicalizer", stack, elements=24)
    big = severity_of("compile", "timeout", "timeout in Canonicalizer", stack, elements=1 << 26)
    assert (small, big) == (Severity.COMPILER_HANG, Severity.RESOURCE_LIMIT)
    crash = severity_of("compile", "crash", "SIGSEGV")
    error = severity_of("compile", "error", "failed to legalize operation 'arith.constant'")
    assert crash < small < error  # with the crashes, above every compile error and sizing bug
    assert severity_of("compile", "timeout", "timeout", "compile timed out after 120s") == Severity.RESOURCE_LIMIT


def test_a_compile_that_hangs_again_elsewhere_is_confirmed_not_flaky(tmp_path, monkeypatch):
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    from support.fakes import make_fake_toolchain

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    monkeypatch.setenv("FAKE_HANG_PASS", f"{LOWER}|{FORM}")  # the re-run is stopped in another pass
    monkeypatch.setenv("FAKE_HANG_TOP", FOLD_TOP)
    toolchain = find_toolchain(make_fake_toolchain(tmp_path / "bin", "hang-with-stack"))
    report = check_module(MATMUL, ["llvm-cpu"], None, toolchain, BUDGET, confirm=True)
    (result,) = report.results
    assert result.status == Status.TIMEOUT and not result.flaky, result.detail[:300]
    assert (tmp_path / "pids.runs").read_text() == "xx"  # it did run twice


def test_the_campaign_confirms_a_hang_whose_re_run_stops_in_another_pass(tmp_path):
    from dataclasses import dataclass, replace

    from support.fake_campaign import SEEN, FakeTarget, campaign_engine, seen  # noqa: F401

    @dataclass(frozen=True)
    class HangsElsewhereOnItsReRun(FakeTarget):
        def check(self, candidate, lanes):
            outcome = FakeTarget.check(self, candidate, lanes)
            where = "FormDispatchRegionsPass" if seen("hang:" + candidate.key) else "LLVMCPULowerExecutableTargetPass"
            return replace(outcome, failures=tuple(
                replace(f, signature=replace(f.signature, message=f"timeout in {where}"))
                if f.signature.status == Status.TIMEOUT else f for f in outcome.failures))

        confirm = check

    SEEN.clear()
    engine = campaign_engine(tmp_path, HangsElsewhereOnItsReRun(str(tmp_path / "corpus"), space=50, hang_lane="b"),
                     count=3, jobs=1)
    engine.run()
    hangs = [b for b in engine.store.buckets() if b.status == "timeout"]
    assert hangs and all(b.state == "confirmed" for b in hangs), [(b.sig, b.state) for b in hangs]


def test_the_abort_grace_is_a_bounded_limit_kept_across_a_new_timeout():
    import pytest

    from shapefuzz.errors import UsageError

    assert Limits(timeout=5.0, abort_grace=2.0).with_timeout(9.0).abort_grace == 2.0
    for bad in (-1.0, 60.0, float("nan")):
        with pytest.raises(UsageError):
            Limits(timeout=5.0, abort_grace=bad)
