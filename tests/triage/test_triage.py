"""From causes to bugs (issue 17): bug identity from the compiler's own output (the failing pass
named by `--mlir-print-ir-after-failure`, a crash's top frames), component and severity, our own
environment never filed, reported bugs known, shrink-time findings in the store, the issue export
of a crash, regression ranges over cached releases. Outputs below are copied from IREE 3.13."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.causes.cause_ties import Causes
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits
from shapefuzz.campaign.iree import failure_of
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkOutcome, Triage
from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.errors import EnvironmentFault
from shapefuzz.model import ProcessResult, Signature, Stage, Status
from shapefuzz.triage.signature import signature_for
from shapefuzz.triage.component import FRONTEND_TORCH, component_of, scope_of
from shapefuzz.triage.environment import environment_fault
from shapefuzz.triage.excerpt import excerpt
from shapefuzz.triage.failing_pass import crash_frames, failing_pass, strip_ir_dumps
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.severity import Severity, severity_of

from support.campaign_fakes import fake_env, make_fake_iree
from support.fake_campaign import FakeTarget  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]
SHAPEFUZZ = str(Path(sys.executable).with_name("shapefuzz"))


def _error_output(op: str, passname: str, cls: str = "VerifyWorkgroupDistributionPass") -> str:
    return (
        f"m.mlir:11:13: error: '{op}' op write affecting operations on global resources are restricted to "
        "workgroup distributed contexts.\n"
        f"m.mlir:11:13: note: see current operation: %3 = \"{op}\"(%1) : (tensor<4x?xf32>) -> tensor<4x?xf32>\n"
        f"// -----// IR Dump After {cls} Failed: {passname} //----- //\n"
        "func.func @main_dispatch_0() {\n  %c0 = arith.constant 0 : index\n}\n"
        "// -----// IR Dump After mlir::iree_compiler::detail::OpPipelineAdaptorPass Failed: "
        "iree-op-pipeline-adaptor //----- //\nmodule {\n}\n"
    )


CRASH = """Please report issues to https://github.com/iree-org/iree/issues and include the crash backtrace.
Stack dump:
0.	Program arguments: /x/iree-compile p1.mlir --iree-hal-target-device=local -o /dev/null
 #0 0x00007fb61035a0ab llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0
 #1 0x00007fb6103571fe llvm::sys::RunSignalHandlers() Signals.cpp:0:0
 #2 0x00007fb61035ac10 SignalHandler(int, siginfo_t*, void*) Signals.cpp:0:0
 #3 0x00007fb60a45a050 (/lib/x86_64-linux-gnu/libc.so.6+0x3c050)
 #4 0x00007fb610450dee mlir::detail::constant_op_binder<mlir::Attribute>::match(mlir::Operation*) Operation.cpp:0:0
 #5 0x00007fb6101c1a3b mlir::WalkResult mlir::detail::walk<mlir::ForwardIterator>(mlir::Operation*, llvm::function_ref<mlir::WalkResult (mlir::Operation*)>, mlir::WalkOrder) IR.cpp:0:0
 #6 0x00007fb6153a3e32 mlir::applyPatternsGreedily(mlir::Region&, mlir::FrozenRewritePatternSet const&, mlir::GreedyRewriteConfig, bool*) GreedyPatternRewriteDriver.cpp:0:0
 #7 0x00007fb6121ff475 mlir::iree_compiler::IREE::Flow::(anonymous namespace)::CanonicalizePass::runOnOperation() Canonicalize.cpp:0:0
 #8 0x00007fb610909731 mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, unsigned int) Pass.cpp:0:0
"""


def _result(stderr: str, returncode: int | None = 1, signal: int | None = None) -> ProcessResult:
    return ProcessResult(("iree-compile",), returncode, signal, False, False, "", stderr, 0.1)


def _failure(lane: str, stderr: str, status: Status = Status.ERROR, signal: int | None = None) -> Failure:
    sig = signature_for(lane, Stage.COMPILE, status, _result(stderr, None if signal else 1, signal))
    detail = strip_ir_dumps(stderr)
    return failure_of(sig, detail)


def test_failing_pass_is_the_innermost_dump_header_and_dumps_are_dropped(tmp_path):
    out = _error_output("linalg.generic", "iree-codegen-verify-workgroup-distribution")
    assert failing_pass(out) == "iree-codegen-verify-workgroup-distribution"
    kept = strip_ir_dumps(out)
    assert "arith.constant" not in kept and "IR Dump After VerifyWorkgroupDistributionPass Failed" in kept
    assert failing_pass(kept) == "iree-codegen-verify-workgroup-distribution"
    # the second source: the coverage helper's action log, the pass still open when it failed
    log = tmp_path / "actions.log"
    log.write_text("[thread iree-compile] begins (no breakpoint) Action `pass-execution` running `CSEPass` on "
                   "Operation `util.func` (x)`\n[thread iree-compile] completed `pass-execution`\n"
                   "[thread iree-compile] begins (no breakpoint) Action `pass-execution` running "
                   "`ConvertTorchToLinalg` on Operation `func.func` (x)`\n")
    assert failing_pass("error: failed to legalize", log) == "ConvertTorchToLinalg"
    assert failing_pass(out, log) == "iree-codegen-verify-workgroup-distribution"  # its own output first
    # a long error (ROCm prints the whole function) keeps the innermost header when it is cut
    long = "error: x\n" + "  %1 = op\n" * 800 + kept + "  %2 = op\n" * 800
    assert len(excerpt(long, 4000)) < 5000
    assert failing_pass(excerpt(long, 4000)) == "iree-codegen-verify-workgroup-distribution"


def test_two_lanes_failing_in_one_pass_with_different_op_names_make_one_cause():
    causes = Causes()
    a = _failure("llvm-cpu", _error_output("linalg.generic", "iree-codegen-verify-workgroup-distribution"))
    b = _failure("llvm-cpu-single-dispatch",
                 _error_output("iree_linalg_ext.scatter", "iree-codegen-verify-workgroup-distribution"))
    assert a.signature != b.signature  # two buckets (the message names another op) ...
    causes.add(a.key, a.fields())
    causes.add(b.key, b.fields())
    assert len(causes.members()) == 1  # ... one cause, with no candidate tying them


def test_one_message_from_two_passes_makes_two_causes_without_a_split_suffix():
    causes = Causes()
    a = _failure("llvm-cpu", _error_output("linalg.generic", "iree-codegen-verify-workgroup-distribution"))
    b = _failure("rocm-gfx942", _error_output("linalg.generic", "iree-llvmgpu-lower-executable-target",
                                              "LLVMGPULowerExecutableTargetPass"))
    causes.add(a.key, a.fields())
    causes.add(b.key, b.fields())
    causes.tie([a.key, b.key])  # even a candidate hitting both does not merge two passes
    names = causes.members()
    assert len(names) == 2 and not any(name.endswith("-2") for name in names)


def test_crash_identity_comes_from_its_top_frames():
    moved = CRASH.replace("0x00007fb6", "0x00005a11").replace("p1.mlir", "other.mlir")
    other = CRASH.replace("constant_op_binder<mlir::Attribute>::match", "foldCollapseIntoStore")
    one, two, three = (identity_of("compile", "crash", "x", text) for text in (CRASH, moved, other))
    assert one.frames[0] == "mlir::detail::constant_op_binder<mlir::Attribute>::match"
    assert one.key == two.key and one.key != three.key and one.strong
    assert one.failing_pass == "CanonicalizePass" and "Please report" not in one.key
    assert crash_frames(CRASH)[3].endswith("CanonicalizePass::runOnOperation")
    assert component_of("compile", "crash", one.failing_pass, one.frames + tuple(crash_frames(CRASH)),
                        ["llvm-cpu"]) == "IREE dispatch creation"
    sig = signature_for("llvm-cpu", Stage.COMPILE, Status.CRASH, _result(CRASH, None, 11))
    assert "Please report" not in sig.message


def test_crash_identity_stops_at_the_pass_manager():
    # One crash seen on two lanes of a 20-minute campaign: below the pass, MLIR's pass manager
    # was reached directly on one and through an llvm::function_ref callback on the other.
    head = (" #0 0x00007fd467e04000 llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0\n"
            " #1 0x00007fd467e04001 SignalHandler(int) Signals.cpp:0:0\n"
            " #4 0x00007fd467e041d7 mlir::ShapedType::hasRank() const BuiltinTypeInterfaces.cpp:0:0\n"
            " #5 0x00007fd469be162a mlir::iree_compiler::Preprocessing::(anonymous namespace)::"
            "MakeSingleDispatchForFunctionPass::runOnOperation() MakeSingleDispatchForFunction.cpp:0:0\n")
    direct = head + (" #6 0x00007fd468309731 mlir::detail::OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, "
                     "mlir::AnalysisManager, bool, unsigned int) Pass.cpp:0:0\n")
    threaded = head + (" #6 0x00007f8cbcb0e56a void llvm::function_ref<void ()>::callback_fn<mlir::detail::"
                       "OpToOpPassAdaptor::run(mlir::Pass*, mlir::Operation*, mlir::AnalysisManager, bool, "
                       "unsigned int)::$_1>(long) Pass.cpp:0:0\n")
    one, two = (identity_of("compile", "crash", "x", text) for text in (direct, threaded))
    assert one.key == two.key and one.failing_pass == "MakeSingleDispatchForFunctionPass"
    assert one.frames[-1].endswith("MakeSingleDispatchForFunctionPass::runOnOperation")


def test_identity_drops_shapes_numbers_and_host_cpu_but_keeps_op_and_pass_names():
    a = identity_of("compile", "error", "'memref.alloca' op expected no unbounded stack allocations of memref<1x9007199254740991xf16>",
                    "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: iree-llvmcpu-check-ir-before-llvm-conversion //----- //\n")
    b = identity_of("compile", "error", "'memref.alloca' op expected no unbounded stack allocations of memref<4x?x8xi32>",
                    "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: iree-llvmcpu-check-ir-before-llvm-conversion //----- //\n")
    assert a.key == b.key and "iree-llvmcpu-check-ir-before-llvm-conversion" in a.key
    host = signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR,
                         _result('error: failed for backend #hal.executable.target<"llvm-cpu", {cpu = "znver4", '
                                 'cpu_features = "+avx,+avx2"}>'))
    assert "znver4" not in host.message and "avx" not in host.message


def test_a_pass_run_function_by_function_is_the_pass_in_an_identity():
    # the context bench's concat -> pool: "...-for-func" on rocm single-dispatch, the pass itself on llvm-cpu
    message = "'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2"
    header = "// -----// IR Dump After {} Failed: {} //----- //\n"
    per_func = identity_of("compile", "error", message, header.format(
        "FoldUnitExtentDimsForFuncPass", "iree-dispatch-creation-fold-unit-extent-dims-for-func"))
    whole = identity_of("compile", "error", message, header.format(
        "FoldUnitExtentDimsPass", "iree-dispatch-creation-fold-unit-extent-dims"))
    assert per_func.key == whole.key and "[iree-dispatch-creation-fold-unit-extent-dims]" in whole.key
    assert per_func.failing_pass == "iree-dispatch-creation-fold-unit-extent-dims-for-func"  # where it failed stays
    frames = " #0 0x1 llvm::sys::PrintStackTrace(llvm::raw_ostream&)\n #1 0x2 mlir::{}::runOnOperation()\n"
    oom = [identity_of("compile", "oom", "out of memory", frames.format(c))
           for c in ("FoldUnitExtentDimsForFuncPass", "FoldUnitExtentDimsPass")]
    assert oom[0].key == oom[1].key
    other = identity_of("compile", "error", message, header.format("FusionPreprocessingPass",
                                                                    "iree-dispatch-creation-fusion-preprocessing"))
    assert other.key != whole.key


def test_component_scope_and_severity():
    assert component_of("compile", "error", "convert-torch-to-tmtensor", (), ["llvm-cpu"]) == FRONTEND_TORCH
    assert component_of("compile", "error", "iree-dispatch-creation-fusion-preprocessing", (), ["llvm-cpu"]) \
        == "IREE dispatch creation"
    assert component_of("compile", "error", "iree-codegen-verify-workgroup-distribution", (),
                        ["rocm-gfx942"]).startswith("codegen for ROCm")
    assert scope_of(["llvm-cpu", "llvm-cpu-single-dispatch"]) == "default pipeline"
    assert "iree-preprocessing-make-single-dispatch" in scope_of(["llvm-cpu-single-dispatch"])
    # a frontend conversion runs before any pass a variant's flags change: seen on a variant lane
    # alone (a shrink's finding), it still needs no flag
    assert scope_of(["llvm-cpu-conv-data-tiling"], FRONTEND_TORCH) == "default pipeline"
    assert "data-tiling" in scope_of(["llvm-cpu-conv-data-tiling"], "codegen for llvm-cpu")
    assert severity_of("run", "error", "OUT_OF_RANGE; shape element count overflows device size at dimension N"
                       ).label == "miscompiled shape"  # a shape computed wrong, not a resource limit
    order = [severity_of("compare", "mismatch", "wrong values in conv"),
             severity_of("run", "crash", "SIGSEGV"), severity_of("compile", "crash", "SIGSEGV"),
             severity_of("compile", "error", "failed to legalize"),
             severity_of("compile", "error", "'memref.alloca' op exceeded stack allocation limit")]
    assert order == sorted(order) and order[0] == Severity.WRONG_VALUES and order[-1] == Severity.RESOURCE_LIMIT


@pytest.mark.iree
def test_real_torch_conversion_failure_is_attributed_to_the_frontend(tmp_path):
    """IREE 3.13 lowers torch.aten.index_put with 0-d indices into an invalid tm_tensor.scatter; the
    compiler's own dump header names convert-torch-to-tmtensor (torch-mlir), never IREE codegen."""
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    text = """func.func @main(%a: !torch.vtensor<[4,3],f32>, %i: !torch.vtensor<[],si64>, %v: !torch.vtensor<[3],f32>) -> !torch.vtensor<[4,3],f32> {
  %false = torch.constant.bool false
  %l = torch.prim.ListConstruct %i : (!torch.vtensor<[],si64>) -> !torch.list<optional<vtensor>>
  %r = torch.aten.index_put %a, %l, %v, %false : !torch.vtensor<[4,3],f32>, !torch.list<optional<vtensor>>, !torch.vtensor<[3],f32>, !torch.bool -> !torch.vtensor<[4,3],f32>
  return %r : !torch.vtensor<[4,3],f32>
}
"""
    report = check_module(text, ["llvm-cpu"], None, find_toolchain(None), confirm=False)
    (failure,) = report.failures
    typed = failure_of(failure.signature, failure.detail)
    assert typed.failing_pass == "convert-torch-to-tmtensor" and typed.strong
    assert "func.func" not in failure.detail  # the dumped IR is not kept, its header is
    entry, _ = save_finding(tmp_path, Finding(failure.signature, text, ("llvm-cpu",), None, 0, None, None, "3.13.0",
                                              ["iree-compile"], failure.detail))
    bug = load_entry(entry).meta["bug"]
    assert bug["component"] == FRONTEND_TORCH and bug["failing_pass"] == "convert-torch-to-tmtensor"
    assert "tm_tensor.scatter" in bug["first_lines"][0]


# --- our environment is never a finding --------------------------------------------------------
def test_environment_fault_is_told_apart():
    assert environment_fault("LLVM ERROR: IO failure on output stream: No space left on device")
    assert environment_fault("error opening input file: cannot open input file '/tmp/sf-x/module.mlir': No such "
                             "file or directory", ["/tmp/sf-x/module.mlir"])
    assert environment_fault("error: cannot open 'foo.mlir': No such file or directory", ["/tmp/a/b.mlir"]) is None
    assert environment_fault("'linalg.generic' op write affecting operations on global resources") is None


def test_check_with_a_full_disk_is_one_line_exit_2(tmp_path):
    src = tmp_path / "m.mlir"
    src.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    result = subprocess.run([SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "check", str(src),
                             "--backends", "llvm-cpu"], capture_output=True, text=True, timeout=120,
                            env=fake_env(tmp_path, "enospc"))
    assert result.returncode == 2, result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "No space left on device" in result.stderr


@pytest.mark.parametrize("kind", ["check", "confirm"])
def test_a_full_tmpdir_during_a_campaign_files_nothing_and_is_retried(tmp_path, monkeypatch, kind):
    """Each task fails once for our environment: it is retried, never bucketed, and the campaign
    says why; the retried candidates are then judged as usual."""
    monkeypatch.setattr("shapefuzz.campaign.retries.ENVIRONMENT_RETRY_SECONDS", 0.2)
    marks = tmp_path / "marks"
    marks.mkdir()
    # crashes: a compile error's confirm would not run its lane, and a confirm must run for "confirm"
    target = DiskFullOnce(str(tmp_path / "corpus"), marks=str(marks), kind=kind, status=Status.CRASH)
    engine = Engine(target, CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g1",), ("a",), 7, 2, Limits(count=12), start_method="fork"))
    engine.run()
    buckets = engine.store.buckets()
    assert all("space" not in b.sig for b in buckets)
    assert engine.store.candidate_count() == 12 and engine.stats.environment_faults >= 1
    assert any("our environment, not the compiler: iree-compile: No space left on device" in m
               for m in engine.stats.messages)
    assert all(b.state != BucketState.FLAKY for b in buckets)  # a full disk never makes a bucket flaky
    from shapefuzz.campaign.report.summary import text_lines

    said = text_lines(summarize(engine.store, "budget spent", engine.stats.messages))
    assert sum("our environment, not the compiler" in line for line in said) == 1  # reported, once


@dataclass(frozen=True)
class DiskFullOnce(FakeTarget):
    marks: str = ""
    kind: str = "check"  # which task our environment fails once per candidate

    def _once(self, candidate: Candidate, what: str) -> None:
        mark = Path(self.marks) / f"{what}-{candidate.key}"
        if what == self.kind and not mark.exists():
            mark.write_text("")
            raise EnvironmentFault("iree-compile: No space left on device (our environment, not the compiler)")

    def check(self, candidate, lanes):
        self._once(candidate, "check")
        return FakeTarget.check(self, candidate, lanes)

    def confirm(self, candidate, lanes):
        self._once(candidate, "confirm")
        return FakeTarget.check(self, candidate, lanes)


# --- known bugs, one truth, the issue export -----------------------------------------------------
def _bucket(sig: Signature, detail: str, entry: str, cause: str, first_seen: float = 0.0) -> BucketRow:
    return BucketRow(sig=str(sig), sig_json=failure_of(sig, detail).fields(), backend=sig.backend,
                     stage=sig.stage.value, status=sig.status.value, family="conv", count=1, first_seen=first_seen,
                     last_seen=first_seen, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k",
                     repro_size=10, repro_text="x", detail=detail, corpus_entry=entry, shrunk_size=None, cause=cause,
                     triage=Triage.COMPILER_BUG)


def test_an_entry_marked_reported_is_known_on_the_next_campaign(tmp_path):
    out = _error_output("linalg.generic", "iree-codegen-verify-workgroup-distribution")
    sig = signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, _result(out))
    corpus = tmp_path / "corpus"
    entry, _ = save_finding(corpus, Finding(sig, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None, 0, None,
                                            None, "3.13.0", ["iree-compile"], strip_ir_dumps(out)))
    bad = subprocess.run([SHAPEFUZZ, "corpus", "mark", entry.name, "--reported", "not a url", "--corpus", str(corpus)],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    url = "https://github.com/iree-org/iree/issues/12345"
    marked = subprocess.run([SHAPEFUZZ, "corpus", "mark", entry.name, "--reported", url, "--corpus", str(corpus)],
                            capture_output=True, text=True, timeout=60)
    assert marked.returncode == 0, marked.stderr
    # the next campaign hits the same bug on another lane: a new bucket, a new campaign, a known cause
    other = signature_for("llvm-cpu-single-dispatch", Stage.COMPILE, Status.ERROR,
                          _result(_error_output("iree_linalg_ext.scatter", "iree-codegen-verify-workgroup-distribution")))
    store = CampaignStore(tmp_path / "next")
    store.set_meta("config", json.dumps({"corpus": str(corpus)}))
    store.start_session([])
    store.put_bucket(_bucket(other, strip_ir_dumps(out), "", "cause-x", first_seen=5.0))
    summary = summarize(store)
    (cause,) = summary.causes
    assert cause.reported == url and not cause.new and summary.findings and not summary.new_findings
    assert summary.nodes == [] and isinstance(summary.coverage, dict)  # (the coverage summary once landed in nodes)


def test_a_shrink_time_finding_is_a_bucket_with_a_triage_verdict(tmp_path):
    target = ShrinkFinds(str(tmp_path / "corpus"))
    engine = Engine(target, CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g1",), ("a",), 7, 1, Limits(count=12), start_method="fork", shrink=True,
                                 min_shrink_seconds=0.0, shrink_share=1.0))
    engine.run()
    found = [b for b in engine.store.buckets() if "found-while-shrinking" in b.sig]
    assert len(found) == 1
    (b,) = found
    assert b.triage == Triage.COMPILER_BUG.value and "found while shrinking" in b.evidence
    assert b.cause and b.corpus_entry and Path(b.corpus_entry).exists()


@dataclass(frozen=True)
class ShrinkFinds(FakeTarget):
    def shrink(self, candidate, lanes):
        new = Candidate("shrunk-1", candidate.group, candidate.seed, (), candidate.payload, "y" * 5)
        sig = Signature("a", Stage.COMPILE, Status.ERROR, "found-while-shrinking")
        return ShrinkOutcome(found=((new, Failure(sig, "error: found-while-shrinking")),))


def test_issue_export_of_a_crash_holds_the_crashing_frame(tmp_path):
    from shapefuzz.export import IssueContext, plan, to_issue
    from shapefuzz.iree.toolchain import find_toolchain

    sig = signature_for("llvm-cpu", Stage.COMPILE, Status.CRASH, _result(CRASH, None, 11))
    mlir = ('// shapefuzz-case: {"family": "x"}\nfunc.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n'
            "  return %a : tensor<4xf32>\n}\n")
    entry, _ = save_finding(tmp_path, Finding(sig, mlir, ("llvm-cpu",), None, 0, None, None, "3.13.0",
                                              ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], CRASH))
    e = load_entry(entry)
    text = to_issue(plan(e, find_toolchain(None)), IssueContext("IREE compiler version 3.13.0", ("llvm-cpu: crashes",)),
                    "x.files")
    title = text.splitlines()[0]
    assert "Please report" not in title and "CanonicalizePass" in title and "IREE dispatch creation" in title
    assert "mlir::detail::constant_op_binder<mlir::Attribute>::match(mlir::Operation*) Operation.cpp:0:0" in text
    assert "CanonicalizePass::runOnOperation() Canonicalize.cpp:0:0" in text  # whole frames, down to the pass
    assert "shapefuzz-case" not in text.split("### Steps to reproduce")[1].split("```sh")[0]
    assert "iree-compile reproducer.mlir -o module.vmfb" in text  # the entry's own command


# --- regression ranges ---------------------------------------------------------------------------
def test_regression_range_text(tmp_path):
    from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult
    from shapefuzz.recheck.regression import regression_range

    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom")
    entry = load_entry(save_finding(tmp_path, Finding(sig, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None,
                                                      0, None, None, "3.13.0", [], "error: boom"))[0])
    versions = ["3.8.0", "3.11.0", "3.13.0"]

    def fake(bad):
        return dict(installer=lambda v: v, check=lambda e, v: ReplayResult(
            e.id, e.path, ReplayOutcome.STILL_FAILING if v in bad else ReplayOutcome.FIXED, "failing", sig))

    assert regression_range(entry, versions, **fake({"3.11.0", "3.13.0"}))["text"] == \
        "fails since 3.11.0, passes in 3.8.0"
    assert regression_range(entry, versions, **fake(set(versions)))["text"] == "present in every release tried (3.8.0–3.13.0)"


def test_triage_bad_input_is_one_line_exit_2(tmp_path):
    not_campaign = subprocess.run([SHAPEFUZZ, "triage", str(ROOT / "corpus")], capture_output=True, text=True,
                                  timeout=60)
    assert not_campaign.returncode == 2 and len(not_campaign.stderr.strip().splitlines()) == 1
    CampaignStore(tmp_path / "camp").close()
    env = fake_env(tmp_path, "ok")  # an empty toolchain cache: no release to bisect over
    no_cache = subprocess.run([SHAPEFUZZ, "triage", str(tmp_path / "camp"), "--bisect"], capture_output=True,
                              text=True, timeout=60, env=env)
    assert no_cache.returncode == 2 and "toolchain cache" in no_cache.stderr
    assert len(no_cache.stderr.strip().splitlines()) == 1


def test_a_timeout_is_filed_only_if_it_holds_at_the_longer_limit(tmp_path):
    """A compile that takes 1.4 s, past a check's limit (half of --compile-timeout 2: 1 s), finishes
    at the confirming re-run's full 2 s: flaky, set apart, never a finding."""
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz", "--count", "1", "--backends",
            "rocm-gfx942", "--compile-timeout", "2", "--campaign", str(tmp_path / "camp"), "--corpus",
            str(tmp_path / "corpus"), "--no-shrink", "--no-bisect", "--jobs", "1", "--json"]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=tmp_path,
                            env=fake_env(tmp_path, "ok", FAKE_IREE_DELAY="1.4"))
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["findings"] == 0
    timeouts = [b for b in summary["buckets"] if b["status"] == "timeout"]
    assert timeouts and all(b["state"] == "flaky" for b in timeouts)


def test_wrong_values_say_how_many_how_far_and_where():
    import numpy as np

    from shapefuzz.families.common import values_mismatch

    want = np.arange(12, dtype=np.float32).reshape(3, 4)
    got = want.copy()
    got[0, 2], got[1, 2], got[2, 3] = 4.0, 12.0, 11.5
    detail = values_mismatch(0, want, got, rtol=1e-5, atol=1e-5).detail
    assert detail.startswith("result 0: 3 of 12 elements differ; first at [0, 2]: got 4.0, expected 2.0")
    assert "max abs error 6, max rel error 1" in detail and "[2, 3]: got 11.5, expected 11.0" in detail


def test_identity_folds_the_target_configuration_a_message_prints():
    # vulkan-spirv and vulkan-llvmpipe print one translation failure with their own target attribute
    spirv = ('failed to run translation of source executable to target executable for backend '
             '#hal.executable.target<"vulkan-spirv", "vulkan-spirv-fb", {iree_codegen.target_info = #iree_gpu.target<'
             'arch = "", features = "spirv:v1.3,cap:Shader"')
    llvmpipe = spirv.replace('features = "spirv:v1.3,cap:Shader"', 'features = "spirv:v1.6,cap:Shader,cap:Int8"')
    log = "// -----// IR Dump After LinalgExtToLoopsPass Failed: iree-linalg-ext-to-loops //----- //\n"
    one, two = (identity_of("compile", "error", m, log) for m in (spirv, llvmpipe))
    assert one.key == two.key and one.failing_pass == "iree-linalg-ext-to-loops"
