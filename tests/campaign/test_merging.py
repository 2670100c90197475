"""One bug, one cause: a crash named by its frames inside the failing pass whatever an excerpt cut
(the frames and the output are IREE 3.13's own), byte-identical saved reproducers of one failure
merged whatever their messages, and a wrong value or run-time failure localized to a pass merged
with the other symptoms of that pass (same op family, or a reproducer that cross-triggers) — never
two compile errors by their pass alone, never two places."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from shapefuzz.campaign.report.issue_texts import one_bug_lines
from shapefuzz.campaign.localizing import LOCALIZE_META
from shapefuzz.campaign.report.summary import json_text, markdown, summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.model import Signature
from shapefuzz.triage.excerpt import excerpt
from shapefuzz.triage.failing_pass import crash_frames
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.severity import Severity

DATA = Path(__file__).resolve().parents[1] / "data" / "coverage"
FOLD = Localization("dispatch-creation", "iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass",
                    "every lane tried computes it wrong; omitting it fixes it", certain=True)


def _row(lane: str, stage: str, status: str, message: str, family: str, first: float, cause: str,
         detail: str = "", entry: str = "", repro_key: str = "") -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": stage, "status": status, "message": message})
    ident = identity_of(stage, status, message, detail)
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1" if ident.strong else ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage=stage, status=status, family=family, count=1,
                     first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED,
                     repro_key=repro_key or f"cand-{cause}", repro_size=10, repro_text="x", detail=detail,
                     corpus_entry=entry, shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG)


def _entry_dir(corpus: Path, lane: str, stage: str, status: str, message: str) -> Path:
    """A bucket's own corpus entry folder, named as the corpus names it (by its signature)."""
    from shapefuzz.corpus.entry import entry_id

    sig = Signature.from_json({"backend": lane, "stage": stage, "status": status, "message": message})
    entry = corpus / entry_id(sig)
    entry.mkdir(parents=True)
    return entry


def _dump(arg: str, cls: str) -> str:
    return (f"m.mlir:6:10: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to "
            f"be 4, but found 3\n// -----// IR Dump After {cls} Failed: {arg} //----- //\n")


def _store(tmp_path: Path, rows: list[BucketRow], located: dict[str, Localization] = {},
           hits: list[tuple[str, str, str]] = ()) -> CampaignStore:
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in rows:
        store.put_bucket(row)
    for sig, loc in located.items():
        store.set_meta(LOCALIZE_META + sig, json.dumps(loc.to_json()))
    for candidate, sig, lane in hits:
        store.add_hits(candidate, [(sig, lane)])
    return store


# --- crashes: frames inside the pass, immune to truncation -----------------------------------------
@pytest.fixture(scope="module")
def real_crash(toolchain) -> str:
    """IREE 3.13's whole output for a crash inside MakeSingleDispatchForFunctionPass."""
    from shapefuzz.judge.oracle import check_module

    text = (DATA / "crash_single_dispatch.mlir").read_text()
    result = check_module(text, ["llvm-cpu-single-dispatch"], None, toolchain, confirm=False).results[0]
    assert result.status.value == "crash" and "characters cut" not in result.detail, result.detail
    return result.detail


def _cut(text: str, keep_head_frames: int, tail_from: int) -> str:
    """The output as an older excerpt kept it: the head down to frame #keep_head_frames-1, the cut,
    then the tail from frame #tail_from."""
    lines = text.splitlines()
    head_end = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f"#{keep_head_frames} "))
    tail_start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(f"#{tail_from} "))
    cut = sum(len(line) + 1 for line in lines[head_end:tail_start])
    return "\n".join([*lines[:head_end], f"[... {cut} characters cut ...]", *lines[tail_start:]])


@pytest.mark.iree
def test_a_crash_is_named_by_its_frames_inside_the_pass_whatever_an_excerpt_cut(real_crash):
    whole = identity_of("compile", "crash", "SIGSEGV in mlir::ShapedType::hasRank", real_crash)
    assert whole.failing_pass == "MakeSingleDispatchForFunctionPass"
    assert whole.frames[0] == "mlir::ShapedType::hasRank" and whole.frames[-1].endswith("::runOnOperation")
    # two older excerpts of this one crash, cut after the pass frame at different places
    one, two = _cut(real_crash, 6, 11), _cut(real_crash, 7, 12)
    assert crash_frames(one, 3) != crash_frames(two, 3)  # read across the cut, the top frames differed
    keys = {identity_of("compile", "crash", "SIGSEGV in mlir::ShapedType::hasRank", t).key for t in (one, two)}
    assert keys == {whole.key}
    # cut above the pass frame: only what is left above the cut, never a frame from after it
    assert identity_of("compile", "crash", "x", _cut(real_crash, 5, 12)).frames == whole.frames[:1]
    # an excerpt now keeps the frames down to the pass, however long the output before them
    long = "warning: x\n" * 300 + real_crash
    kept = excerpt(long, 2000)
    assert len(kept) <= 2100 and "characters cut" in kept
    assert identity_of("compile", "crash", "x", kept).frames == whole.frames


def test_a_fatal_errors_tail_and_an_excerpts_cut_are_not_its_identity():
    frames = (" #4 0x00007f0000000001 llvm::report_fatal_error(llvm::Twine const&, bool) ErrorHandling.cpp:0:0\n"
              " #5 0x00007f0000000002 mlir::iree_compiler::(anonymous namespace)::GPUDistributeSharedMemoryCopyPass::"
              "runOnOperation() GPUDistributeSharedMemoryCopy.cpp:0:0\n")
    a = identity_of("compile", "crash", "x", "LLVM ERROR: failed to distribute: %12 = memref.copy ... tensor<4x8xf16>\n" + frames)
    b = identity_of("compile", "crash", "x", "LLVM ERROR: failed to distribute: %3 = vector.transfer_read\n"
                    "[... 812 characters cut ...]\n" + frames)
    assert a.key == b.key and a.frames == ("mlir::iree_compiler::(anonymous namespace)::GPUDistributeSharedMemoryCopyPass"
                                           "::runOnOperation",)
    assert "failed to distribute" in a.message and "memref" not in a.message


@pytest.mark.iree
def test_two_byte_identical_reproducers_with_different_truncated_backtraces_are_one_cause(tmp_path, real_crash):
    corpus = tmp_path / "corpus"
    program = (DATA / "crash_single_dispatch.mlir").read_text()
    rows = []
    # the two buckets of the 20-minute campaign: one program, saved twice, each saved with its own
    # header; their kept outputs cut at different frames, so their messages and engine causes differ
    for i, (text, header) in enumerate(((_cut(real_crash, 6, 11), '{"family":"one_hot","params":{"a":1}}'),
                                        (_cut(real_crash, 5, 12), '{"family":"one_hot","params":{"a":2}}'))):
        entry = _entry_dir(corpus, "llvm-cpu-single-dispatch", "compile", "crash", f"SIGSEGV in frame{i}")
        (entry / "reproducer.mlir").write_text(f"// shapefuzz-case: {header}\n{program}")
        rows.append(_row("llvm-cpu-single-dispatch", "compile", "crash", f"SIGSEGV in frame{i}", "one_hot", 1.0 + i,
                         f"cause-{i}", text, str(entry)))
    other = _entry_dir(corpus, "llvm-cpu-single-dispatch", "compile", "crash", "SIGSEGV elsewhere")
    (other / "reproducer.mlir").write_text(program.replace("tensor<13xi32>", "tensor<14xi32>"))
    rows.append(_row("llvm-cpu-single-dispatch", "compile", "crash", "SIGSEGV elsewhere", "one_hot", 3.0, "cause-other",
                     "no backtrace", str(other)))
    store = _store(tmp_path, rows)
    causes = summarize(store).causes
    assert sorted(len(c.buckets) for c in causes) == [1, 2], [c.buckets for c in causes]
    merged = next(c for c in causes if len(c.buckets) == 2)
    assert merged.name == "cause-0" and merged.merged == ("cause-1",)
    store.close()


# --- one pass, several symptoms -------------------------------------------------------------------
def test_a_run_time_failure_localized_to_a_pass_merges_with_its_compile_error_only_on_evidence(tmp_path):
    run = _row("vmvx", "run", "error", "OUT_OF_RANGE; index out of range", "scatter", 1.0, "cause-run", repro_key="cand-run")
    error = _row("vulkan-spirv", "compile", "error", "'linalg.generic' op inferred operand", "pool", 2.0, "cause-error",
                 _dump("iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass"))
    # two families, no candidate tying them: two causes
    store = _store(tmp_path / "a", [run, error], {run.sig: FOLD})
    assert len(summarize(store).causes) == 2
    store.close()
    # the run-time failure's reproducer, run on vulkan-spirv, gave the compile error: one bug
    store = _store(tmp_path / "b", [run, error], {run.sig: FOLD}, hits=[("cand-run", error.sig, "vulkan-spirv")])
    (cause,) = summarize(store).causes
    assert cause.name == "cause-run" and cause.merged == ("cause-error",)
    assert cause.stage == "run" and cause.severity == Severity.MISCOMPILED_SHAPE  # the worst symptom leads (OUT_OF_RANGE from compiled code: a miscompiled shape)
    assert [(s.severity, s.lanes) for s in cause.symptoms] == [("miscompiled shape", ("vmvx",)),
                                                               ("compile error", ("vulkan-spirv",))]
    summary = summarize(store)
    assert "miscompiled shape on vmvx; compile error on vulkan-spirv; merged: cause-error" in markdown(summary)
    assert json.loads(json_text(summary))["causes"][0]["symptoms"][1]["lanes"] == ["vulkan-spirv"]
    issue = one_bug_lines(cause)  # the issue text's lines about the campaign
    assert issue[0].startswith("one bug, 2 symptoms: miscompiled shape on vmvx") and "`cause-error`" in issue[1]
    store.close()


def test_two_compile_errors_in_one_pass_and_wrong_values_in_two_passes_stay_apart(tmp_path):
    a = _row("llvm-cpu", "compile", "error", "'memref.alloca' op expected no unbounded stack allocations", "pool", 1.0,
             "cause-a", _dump("iree-llvmcpu-check-ir-before-llvm-conversion", "LLVMCPUCheckIRBeforeLLVMConversionPass"))
    b = _row("llvm-cpu", "compile", "error", "'scf.for' op exceeded stack allocation limit", "pool", 2.0, "cause-b",
             _dump("iree-llvmcpu-check-ir-before-llvm-conversion", "LLVMCPUCheckIRBeforeLLVMConversionPass"))
    wrong = _row("llvm-cpu", "compare", "mismatch", "wrong values in pool", "pool", 3.0, "cause-w")
    error = _row("vmvx", "compile", "error", "'linalg.generic' op inferred operand", "pool", 4.0, "cause-e",
                 _dump("iree-dispatch-creation-fusion-preprocessing", "FusionPreprocessingPass"))
    store = _store(tmp_path, [a, b, wrong, error], {wrong.sig: FOLD}, hits=[("cand-cause-w", error.sig, "vmvx")])
    assert len(summarize(store).causes) == 4  # one pass but no localized symptom; a cross hit but two passes
    store.close()
    # an uncertain localization ("needs FoldUnitExtentDimsPass") says nothing about where it breaks
    store = _store(tmp_path / "u", [wrong, dataclasses.replace(
        error, detail=_dump("iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass"))],
        {wrong.sig: dataclasses.replace(FOLD, certain=False)})
    assert len(summarize(store).causes) == 2
    store.close()


def test_one_program_wrong_in_a_pass_on_one_lane_and_in_codegen_on_another_stays_two_bugs(tmp_path):
    entry = tmp_path / "corpus" / "entry"
    entry.mkdir(parents=True)
    (entry / "reproducer.mlir").write_text("// shapefuzz-case: {}\nfunc.func @main() {\n  return\n}\n")
    # one candidate, saved once per lane (one reproducer); the engine tied its three lanes into one cause
    rows = [_row(lane, "compare", "mismatch", "wrong values in conv_transpose", "conv_transpose", first, "cause-one",
                 entry=str(entry)) for lane, first in (("llvm-cpu", 1.0), ("vulkan-spirv", 2.0), ("vmvx", 3.0))]
    codegen = Localization("codegen", evidence="finished by llvm-cpu from stream: right", certain=True)
    store = _store(tmp_path, rows, {rows[0].sig: FOLD, rows[1].sig: codegen})
    causes = summarize(store).causes
    assert sorted(c.backends for c in causes) == [("llvm-cpu", "vmvx"), ("vulkan-spirv",)]
    assert all(not c.merged for c in causes)
    store.close()


# --- one bound: sizes made from the dynamic-dim bound, whatever pass refuses them ------------------
def test_sizes_from_the_dynamic_dim_bound_are_one_bug_and_a_real_limit_stays_apart(tmp_path):
    """IREE sizes scratch buffers of a dynamic dim from its 2^53 - 1 bound: the CPU's stack check
    says "overflows 64 bits" or "exceeded stack allocation limit", a GPU's says it uses 32 x
    (2^53 - 1) bytes of shared memory; one bug. A static topk over 64 KiB of shared memory is a
    limit of its own and stays apart."""
    from shapefuzz.triage.severity import from_dynamic_dim_bound

    stack = _row("llvm-cpu", "compile", "error", "'memref.alloca' op stack allocation size overflows N bits", "pool",
                 1.0, "cause-stack", "error: 'memref.alloca' op stack allocation size overflows 64 bits "
                 "(memref<9007199254740991xf32>)\n// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass "
                 "Failed: iree-llvmcpu-check-ir-before-llvm-conversion //----- //")
    shared = _row("vulkan-llvmpipe", "compile", "error", "function 'dispatch' uses N bytes of shared memory; "
                  "exceeded the limit of N bytes", "scatter", 2.0, "cause-shared",
                  "error: function 'dispatch' uses 288230376151711712 bytes of shared memory; exceeded the limit "
                  "of 65536 bytes")
    topk = _row("rocm-gfx942", "compile", "error", "function 'dispatch' uses N bytes of shared memory; exceeded the "
                "limit of N bytes", "topk", 3.0, "cause-topk",
                "error: function 'dispatch' uses 70400 bytes of shared memory; exceeded the limit of 65536 bytes")
    assert from_dynamic_dim_bound(stack.detail) and from_dynamic_dim_bound(shared.detail)
    assert not from_dynamic_dim_bound(topk.detail) and not from_dynamic_dim_bound("[1, -9223372036854775808]")
    store = _store(tmp_path, [stack, shared, topk])
    causes = {c.name: c for c in summarize(store).causes}
    assert set(causes) == {"cause-stack", "cause-topk"}
    assert causes["cause-stack"].merged == ("cause-shared",)
    assert [s.lanes for s in causes["cause-stack"].symptoms] == [("llvm-cpu",), ("vulkan-llvmpipe",)]
    store.close()


def test_one_limit_message_from_the_bound_and_from_a_real_size_is_two_bugs(tmp_path):
    """The 20-minute campaign's engine cause "uses N bytes of shared memory" held a sort at
    2^58 bytes (the bound) and at 262,160 bytes (a real size); the bound part joins the bound's
    bug, the real sizes stay a limit of their own."""
    message = "function 'dispatch' uses N bytes of shared memory; exceeded the limit of N bytes"
    bound = _row("vulkan-llvmpipe", "compile", "error", message, "sort", 1.0, "cause-shared",
                 "error: function 'main$dispatch' uses 288230376151711712 bytes of shared memory; exceeded the "
                 "limit of 32768 bytes")
    real = _row("cuda-sm80", "compile", "error", message, "sort", 2.0, "cause-shared",
                "error: function 'dispatch' uses 262160 bytes of shared memory; exceeded the limit of 166912 bytes")
    stack = _row("llvm-cpu", "compile", "error", "'memref.alloca' op stack allocation size overflows N bits", "topk",
                 0.5, "cause-stack", "error: 'memref.alloca' op stack allocation size overflows 64 bits "
                 "(memref<9007199254740991xf32>)")
    store = _store(tmp_path, [bound, real, stack])
    causes = {c.name: c for c in summarize(store).causes}
    assert set(causes) == {"cause-stack", "cause-shared.limit"}, list(causes)
    assert sorted(causes["cause-stack"].buckets) == sorted([stack.sig, bound.sig])
    assert causes["cause-shared.limit"].buckets == (real.sig,) and causes["cause-shared.limit"].severity == \
        Severity.RESOURCE_LIMIT
    store.close()


def test_a_bucket_naming_another_buckets_entry_is_not_its_program_and_a_for_func_pass_is_its_pass(tmp_path):
    corpus = tmp_path / "corpus"
    program = "func.func @main() {\n  return\n}\n"

    def saved(row: BucketRow) -> BucketRow:
        from shapefuzz.corpus.entry import entry_id

        entry = corpus / entry_id(Signature.from_json(row.sig_json))
        entry.mkdir(parents=True)
        (entry / "reproducer.mlir").write_text(program)
        return dataclasses.replace(row, corpus_entry=str(entry))

    fold = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
    # one program failing in FoldUnitExtentDims on llvm-cpu and in its function-by-function form on the
    # single-dispatch lane (the campaign's two causes, byte-identical shrunk reproducers): one bug
    plain = saved(_row("llvm-cpu", "compile", "error", fold, "pool", 1.0, "cause-plain",
                       _dump("iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass")))
    per_func = saved(_row("llvm-cpu-single-dispatch", "compile", "error", fold, "pool", 2.0, "cause-func",
                          _dump("iree-dispatch-creation-fold-unit-extent-dims-for-func", "FoldUnitExtentDimsForFuncPass")))
    # past a cause's few entries a bucket names one of them: a conv's entry named by a sort's bucket
    other = _row("rocm-gfx942-o3", "compile", "error", fold, "sort", 3.0, "cause-other",
                 _dump("iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass").replace("dims", "dims2"),
                 plain.corpus_entry)
    store = _store(tmp_path, [plain, per_func, other])
    causes = {c.name: c for c in summarize(store).causes}
    assert set(causes) == {"cause-plain", "cause-other"} and causes["cause-plain"].merged == ("cause-func",)
    store.close()


@pytest.mark.iree
def test_a_torch_mlir_crash_is_placed_in_its_conversion_whose_class_is_not_named_pass(toolchain):
    """IREE 3.13 crashes inside torch-mlir's ConvertTorchToLinalg (a one_hot over si8, the 20-minute
    campaign's "compiler (pass unknown)" crash on six lanes): the frame 23 below the signal handler
    names the pass, though its class does not end in `Pass`, and the kept output keeps it."""
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.triage.component import FRONTEND_TORCH, component_of
    from shapefuzz.triage.failing_pass import failing_pass

    text = (DATA.parent / "crash_torch_to_linalg.mlir").read_text()
    result = check_module(text, ["llvm-cpu"], None, toolchain, confirm=False).results[0]
    assert result.status.value == "crash", result.detail[:500]
    assert failing_pass(result.detail) == "ConvertTorchToLinalg", result.detail[-1500:]
    ident = identity_of("compile", "crash", str(result.signature.message), result.detail)
    assert ident.frames[-1].endswith("ConvertTorchToLinalg::runOnOperation") or len(ident.frames) == 3
    assert component_of("compile", "crash", failing_pass(result.detail), (), ["llvm-cpu"]) == FRONTEND_TORCH


def test_a_function_level_diagnostic_is_split_by_what_the_dispatch_computes(tmp_path):
    """The campaign's "'func.func' op failed to distribute" held an ONNX argmax on rocm and a torch
    attention on cuda; "uses N bytes of shared memory" a conv's matmul tile and a top-k. Their
    dispatch names (IREE 3.13's, as kept in the outputs) tell them apart; an op-anchored message
    is never split so."""
    distribute = "'func.func' op failed to distribute"
    argmax = _row("rocm-gfx942", "compile", "error", distribute, "reduce", 1.0, "cause-d",
                  "error: 'func.func' op failed to distribute\nfunc.func @main$async_dispatch_1_arg_compare_4096x16xi32_"
                  "dispatch_tensor_store" + _dump("iree-llvmgpu-vector-distribute", "LLVMGPUVectorDistributePass"))
    attention = _row("cuda-sm80", "compile", "error", distribute, "attention", 2.0, "cause-d",
                     "error: 'func.func' op failed to distribute\nfunc.func @main$async_dispatch_0_attention_16xDx2x16xD"
                     + _dump("iree-llvmgpu-vector-distribute", "LLVMGPUVectorDistributePass"))
    anchored = [_row(lane, "compile", "error", "'memref.copy' op write affecting operations on global resources",
                     family, 3.0 + i, "cause-w", f"func.func @main_dispatch_0_{kind}_Dx16xi8_dispatch_tensor_store"
                     + _dump("iree-codegen-verify-workgroup-distribution", "VerifyWorkgroupDistributionPass"))
                for i, (lane, family, kind) in enumerate((("rocm-gfx942", "scatter", "scatter"),
                                                           ("rocm-gfx942-o3", "topk", "topk")))]
    store = _store(tmp_path, [argmax, attention, *anchored])
    causes = {c.name: list(c.buckets) for c in summarize(store).causes}
    assert causes == {"cause-d": [argmax.sig], "cause-d.attention": [attention.sig],
                      "cause-w": [b.sig for b in anchored]}, causes
    store.close()


def test_a_regression_range_is_shown_only_for_a_cause_holding_the_entry_it_was_taken_from(tmp_path):
    """A cause split after its range was taken (the campaign's shared-memory limit: the range came
    from the top-k's entry, and the top-k is now a cause of its own) keeps its name, not the range."""
    from shapefuzz.campaign.causes.cause_facts import set_regression

    row = _row("rocm-gfx942", "compile", "error", "x", "conv", 1.0, "cause-a", entry=str(tmp_path / "corpus" / "entry-a"))
    store = _store(tmp_path, [row])
    set_regression(store, "cause-a", {"text": "present in every release tried (3.0.0–3.13.0)", "entry": "entry-b"})
    assert summarize(store).causes[0].regression is None
    set_regression(store, "cause-a", {"text": "fails since 3.6.0, passes in 3.0.0", "entry": "entry-a"})
    assert summarize(store).causes[0].regression_text == "fails since 3.6.0, passes in 3.0.0"
    store.close()


def test_a_run_out_of_memory_placed_at_a_buffer_sized_from_the_bound_joins_the_bounds_bug(tmp_path):
    """vmvx's run-time out-of-memory names no size; its placement found bufferize making a
    `memref<1x9007199254740991xf32>` (the fresh campaign's 2cc03b5ade beside the sort's e8f53be160): one
    bug with the stack check's 2^53 - 1 sizes. The same out-of-memory not placed at such a buffer stays apart."""
    from shapefuzz.triage.culprit import BOUND_SIZED

    stack = _row("llvm-cpu", "compile", "error", "'memref.alloca' op stack allocation size overflows N bits", "sort",
                 1.0, "cause-stack", "error: 'memref.alloca' op stack allocation size overflows 64 bits "
                 "(memref<9007199254740991xf32>)")
    oom = _row("vmvx", "run", "oom", "out of memory", "conv_transpose", 2.0, "cause-oom", "out of memory")
    other = _row("vmvx", "run", "oom", "out of memory (other)", "conv", 3.0, "cause-other", "out of memory")
    placed = Localization("codegen", "iree-codegen-iree-comprehensive-bufferize", certain=True,
                          evidence=f"the IR first holds {BOUND_SIZED.what} after iree-codegen-iree-comprehensive-"
                                   "bufferize; the run then runs out of memory allocating it")
    unplaced = Localization(evidence="not localized: no pass's output holds a buffer sized from the bound")
    store = _store(tmp_path, [stack, oom, other], {oom.sig: placed, other.sig: unplaced})
    causes = {c.name: c for c in summarize(store).causes}
    assert set(causes) == {"cause-stack", "cause-other"}, list(causes)
    assert sorted(causes["cause-stack"].buckets) == sorted([stack.sig, oom.sig])
    store.close()
