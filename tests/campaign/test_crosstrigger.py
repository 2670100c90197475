"""Cross-triggering: two causes placed at one pass run each other's minimized reproducers on each
other's lanes, within a time bound, each run kept in the store; a run that gives the other's
failure (or fails in that pass on the same op) makes them one bug. The step over a fake run
(fast); real IREE 3.13 in the test beside the FoldUnitExtentDims pool."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from shapefuzz.campaign.causes.crossings import NO, SAME_FAILURE, SAME_PASS_AND_OP, crossings
from shapefuzz.campaign.causes.crosstrigger import cross_trigger, judge
from shapefuzz.campaign.localizing import LOCALIZE_META
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.corpus.entry import Finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.model import BackendResult, Signature, Stage, Status
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.severity import Severity

FOLD = Localization("dispatch-creation", "iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass",
                    "every lane tried computes it wrong; omitting it fixes it", certain=True)
FOLD_ERROR = ("error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 4, but found 3\n"
              "// -----// IR Dump After FoldUnitExtentDimsPass Failed: iree-dispatch-creation-fold-unit-extent-dims //----- //\n")
OTHER_ERROR = ("error: 'memref.alloca' op expected no unbounded stack allocations\n"
               "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: "
               "iree-llvmcpu-check-ir-before-llvm-conversion //----- //\n")
POOL = "func.func @main(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x4xf32> {{\n  // {op}\n}}\n"


def _bucket(corpus: Path, lane: str, stage: str, status: str, message: str, family: str, first: float, cause: str,
            detail: str = "", text: str = "") -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": stage, "status": status, "message": message})
    entry, _ = save_finding(corpus, Finding(sig, text or POOL.format(op="linalg.pooling_nchw_max"), (lane,), None, 0,
                                            None, None, "3.13.0", ["iree-compile"], detail))
    ident = identity_of(stage, status, message, detail)
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1" if ident.strong else ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage=stage, status=status, family=family, count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED,
                     repro_key=f"cand-{cause}", repro_size=10, repro_text="x", detail=detail, corpus_entry=str(entry), shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG)


def _result(lane: str, stage: str, status: str, message: str = "", detail: str = "") -> BackendResult:
    sig = Signature.from_json({"backend": lane, "stage": stage, "status": status, "message": message}) \
        if status != "ok" else None
    return BackendResult(lane, Stage(stage), Status(status), detail, sig)


def _store(tmp_path: Path, rows: list[BucketRow], located: dict[str, Localization]) -> CampaignStore:
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.set_meta("config", json.dumps({"corpus": str(tmp_path / "corpus")}))
    for row in rows:
        store.put_bucket(row)
    for sig, loc in located.items():
        store.set_meta(LOCALIZE_META + sig, json.dumps(loc.to_json()))
    return store


def test_causes_at_one_pass_run_each_others_reproducers_and_merge_when_they_cross_trigger(tmp_path):
    corpus = tmp_path / "corpus"
    # wrong values localized to FoldUnitExtentDims (a torch pool), a verifier error inside that pass
    # (an ONNX conv: another family, so nothing but the run ties them) and a compile error elsewhere
    wrong = _bucket(corpus, "llvm-cpu", "compare", "mismatch", "wrong values in pool", "pool", 1.0, "cause-w")
    error = _bucket(corpus, "vulkan-spirv", "compile", "error", "'linalg.generic' op inferred operand", "conv", 2.0,
                    "cause-e", FOLD_ERROR, POOL.format(op="linalg.conv_2d_nchw_fchw linalg.pooling_nchw_max"))
    other = _bucket(corpus, "llvm-cpu", "compile", "error", "'memref.alloca' op unbounded", "pool", 3.0, "cause-o",
                    OTHER_ERROR)
    store = _store(tmp_path, [wrong, error, other], {wrong.sig: FOLD})
    assert len(summarize(store).causes) == 3
    runs = []

    def run(entry, lane):
        runs.append((str(entry.signature), lane))
        if str(entry.signature) == error.sig:  # the static form on llvm-cpu fails in the pass too
            return _result(lane, "compile", "error", "'linalg.generic' op inferred operand, other words", FOLD_ERROR)
        return _result(lane, "compile", "ok")  # the dynamic form compiles on vulkan (no device: cannot judge)

    said = []
    assert cross_trigger(store, summarize(store).causes, None, 0.5, said.append, run) == 0
    assert "time is up" in said[-1]
    assert cross_trigger(store, summarize(store).causes, None, 60.0, said.append, run) == 2
    assert sorted(runs) == sorted([(wrong.sig, "vulkan-spirv"), (error.sig, "llvm-cpu")])  # never the other pass
    kept = {(c.source, c.target): c for c in crossings(store)}
    assert kept[(error.sig, wrong.sig)].verdict == SAME_PASS_AND_OP  # in the pass, on a pool op both hold
    assert kept[(wrong.sig, error.sig)].verdict == NO
    (merged, alone) = sorted(summarize(store).causes, key=lambda c: -len(c.buckets))
    assert merged.name == "cause-w" and merged.merged == ("cause-e",) and alone.name == "cause-o"
    assert cross_trigger(store, summarize(store).causes, None, 60.0, said.append, run) == 0  # kept: not run again
    store.close()


def test_a_run_is_judged_by_the_others_failure_then_by_its_pass_and_op():
    corpus_free = BucketRow(sig="vmvx/compile/error: x", sig_json={"backend": "vmvx", "stage": "compile", "status": "error",
                                                                       "message": "'linalg.generic' op inferred operand"}, backend="vmvx",
                            stage="compile", status="error", family="pool", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k", repro_size=1, repro_text="x",
                            detail=FOLD_ERROR, corpus_entry="", shrunk_size=None)
    where = {"iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass"}
    same = _result("vmvx", "compile", "error", "'linalg.generic' op inferred operand", FOLD_ERROR)
    assert judge(same, corpus_free, where, "", "")[0] == SAME_FAILURE
    reworded = _result("vmvx", "compile", "error", "'linalg.generic' op expected operand rank 3", FOLD_ERROR)
    assert judge(reworded, corpus_free, where, "", "")[0] == NO  # in the pass, not with its message (#43)
    other_op = _result("vmvx", "compile", "error", "'tensor.expand_shape' op expected rank", FOLD_ERROR)
    assert judge(other_op, corpus_free, where, "", "")[0] == NO
    elsewhere = _result("vmvx", "compile", "error", "'linalg.generic' op inferred operand", OTHER_ERROR)
    assert judge(elsewhere, corpus_free, where, "", "")[0] == NO
    wrong = dataclasses.replace(corpus_free, stage="compare", status="mismatch", detail="",
                                sig_json={"backend": "vmvx", "stage": "compare", "status": "mismatch",
                                          "message": "wrong values in pool"})
    assert judge(_result("vmvx", "compare", "mismatch", "wrong values in pool"), wrong, where, "", "")[0] == SAME_FAILURE
    # wrong values of another family are its own bug seen there, unless a compute op is in both reproducers
    assert judge(_result("vmvx", "compare", "mismatch", "wrong values in conv"), wrong, where, "", "")[0] == NO
    assert judge(_result("vmvx", "compare", "mismatch", "wrong values in conv"), wrong, where, "linalg.conv_2d_nchw_fchw",
                 "linalg.conv_2d_nchw_fchw")[0] == SAME_FAILURE
    assert judge(_result("vmvx", "compare", "mismatch", "wrong indices in pool"), wrong, where, "", "")[0] == NO
    # the fresh campaign's wrong merge: an ONNX AveragePool's reproducer on the norm's lane
    norm = dataclasses.replace(wrong, sig_json={**wrong.sig_json, "message": "wrong values in norm via onnx"})
    pool = 'torch.operator "onnx.AveragePool"'
    assert judge(_result("vmvx", "compare", "mismatch", "wrong values in pool via onnx"), norm, where, pool,
                 'torch.operator "onnx.InstanceNormalization"')[0] == NO
    assert judge(_result("vmvx", "compile", "ok"), wrong, where, "", "")[0] == "cannot tell"
    # a failure in the pass against a wrong value: the same op kind is read from the two reproducers
    assert judge(reworded, wrong, where, "linalg.pooling_nchw_max", "linalg.pooling_nchw_max")[0] == SAME_PASS_AND_OP
    assert judge(reworded, wrong, where, "linalg.pooling_nchw_max", "iree_linalg_ext.scatter")[0] == NO


def test_a_real_size_past_a_limit_is_no_evidence_of_one_bug_but_a_bound_size_is():
    """An audited ROCm conv_transpose overflowing shared memory at 806,912 bytes, run on CUDA, failed with the
    message a top-k's dead-result scratch of 196,500 bytes gave there: one checker's words, two makers."""
    message = "function 'dispatch' uses N bytes of shared memory; exceeded the limit of N bytes"
    real = ("error: function 'main_dispatch_2_topk' uses 196500 bytes of shared memory; exceeded the limit of "
            "166912 bytes\n// -----// IR Dump After GPUCheckResourceUsagePass Failed: "
            "iree-codegen-gpu-check-resource-usage //----- //\n")
    topk = BucketRow(sig=f"cuda-sm80/compile/error: {message}", sig_json={"backend": "cuda-sm80", "stage": "compile",
                                                                         "status": "error", "message": message},
                     backend="cuda-sm80", stage="compile", status="error", family="topk", count=1, first_seen=1.0,
                     last_seen=1.0, first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k",
                     repro_size=1, repro_text="x", detail=real, corpus_entry="", shrunk_size=None)
    conv = real.replace("main_dispatch_2_topk", "main_dispatch_0_conv").replace("196500", "806912")
    verdict, said = judge(_result("cuda-sm80", "compile", "error", message, conv), topk, set(), "", "")
    assert verdict == NO and "a size past a limit" in said, said
    bound = dataclasses.replace(topk, detail=real.replace("196500", "288230376151711712"))
    assert judge(_result("cuda-sm80", "compile", "error", message, conv.replace("806912", "36028797018963964")),
                 bound, set(), "", "")[0] == SAME_FAILURE


DISTRIBUTE = "'func.func' op failed to distribute"
VECTOR_DISTRIBUTE = ("// -----// IR Dump After LLVMGPUVectorDistributePass Failed: iree-llvmgpu-vector-distribute "
                     "//----- //\n")


def test_a_function_level_failure_in_another_dispatch_kind_is_not_the_same_failure():
    """The #31 audit's argmax and attention both "failed to distribute" (the diagnostic names no op;
    the report splits them by the dispatch's name): the argmax's reproducer failing so on the
    attention's lane is the argmax's bug seen there, never a merge of the two."""
    attention = BucketRow(sig="cuda-sm80/compile/error: x", sig_json={"backend": "cuda-sm80", "stage": "compile",
                                                                          "status": "error", "message": DISTRIBUTE}, backend="cuda-sm80",
                          stage="compile", status="error", family="attention", count=1, first_seen=1.0, last_seen=1.0,
                          first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k", repro_size=1,
                          repro_text="x", detail="in main_dispatch_0_attention_2x4xf32\n" + VECTOR_DISTRIBUTE,
                          corpus_entry="", shrunk_size=None)
    where = {"iree-llvmgpu-vector-distribute"}
    argmax = _result("cuda-sm80", "compile", "error", DISTRIBUTE, "in main_dispatch_0_arg_compare_4xf32\n" + VECTOR_DISTRIBUTE)
    verdict, said = judge(argmax, attention, where, "", "")
    assert verdict == NO and "dispatch kind arg_compare, not attention" in said
    again = _result("cuda-sm80", "compile", "error", DISTRIBUTE, "in main_dispatch_3_attention_8x8xf32\n" + VECTOR_DISTRIBUTE)
    assert judge(again, attention, where, "", "")[0] == SAME_FAILURE


TOPK_1X1 = """// shapefuzz-case: {"family":"topk","params":{"dim":1,"dtype":"f32","form":"topk","frontend":"torch","index_dtype":"i32","indices":"implicit","input_dyn":[false,true],"k":1,"largest":true,"result_dyn":[],"shape":[1,1],"transpose":false,"use":"indices","values":"wide"},"version":1}
func.func @main(%input: !torch.vtensor<[1,?],f32>) -> !torch.vtensor<[1,1],si64> {
  %int1 = torch.constant.int 1
  %true = torch.constant.bool true
  %values1, %indices2 = torch.aten.topk %input, %int1, %int1, %true, %true : !torch.vtensor<[1,?],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1,1],f32>, !torch.vtensor<[1,1],si64>
  return %indices2 : !torch.vtensor<[1,1],si64>
}
"""


@pytest.mark.iree
def test_a_run_time_out_of_memory_that_gives_the_bounds_size_on_llvm_cpu_is_the_bound_bug(tmp_path, toolchain):
    """The 20-minute campaign's vmvx run-time RESOURCE_EXHAUSTED on a 1x1 torch top-k (filed as a
    "runtime / HAL" resource limit): its reproducer, compiled for llvm-cpu, asks for a 2^55-byte
    stack (4 x 2^53), the dynamic-dim bound's scratch; one bug with the bound's cause."""
    corpus = tmp_path / "corpus"
    oom = _bucket(corpus, "vmvx", "run", "oom", "out of memory", "topk", 1.0, "cause-oom",
                  "RESOURCE_EXHAUSTED; libc allocator failed the request", TOPK_1X1)
    stack = _bucket(corpus, "llvm-cpu", "compile", "error", "'memref.alloca' op stack allocation size overflows N bits",
                    "topk", 0.5, "cause-bound", "error: 'memref.alloca' op stack allocation size overflows 64 bits "
                    "(memref<9007199254740991xf32>)\n// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass "
                    "Failed: iree-llvmcpu-check-ir-before-llvm-conversion //----- //\n",
                    POOL.format(op="iree_linalg_ext.topk"))
    store = _store(tmp_path, [oom, stack], {})
    before = {c.name: c for c in summarize(store).causes}
    assert before["cause-oom"].severity == Severity.SIZING_BUG  # an out-of-memory run of a 1x1 module
    assert cross_trigger(store, summarize(store).causes, toolchain, 120.0) == 1
    (run,) = crossings(store)
    assert (run.source, run.target, run.lane, run.verdict) == (oom.sig, stack.sig, "llvm-cpu", SAME_FAILURE), run
    (cause,) = summarize(store).causes
    assert cause.name == "cause-bound" and cause.merged == ("cause-oom",)
    store.close()
