"""A size made from the 2^53 - 1 dynamic-dim bound is one bug wherever it is noticed, also when it
wrapped around int64 on its way (issue #43, audit batch C: causes c8172e8a0a and d1e387a91e). On
vmvx, bufferize made a `memref<9007199254740991x32x64x64xf32>` scratch alloca and
FlattenMemRefSubspan multiplied it out in int64 into `memref<-131072xf32>`, which fails as
"incorrect number of dynamic sizes": that was a cause of its own beside the CPU stack's
"overflows 64 bits" of the same bound. The messages below are the campaign's own (its store's
bucket details, its corpus entry's), cut to the lines that matter."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.issue_texts import IssueTexts, one_bug_lines
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.severity import Severity, from_dynamic_dim_bound, severity_of, wrapped_bound_product

FLATTEN = "'memref.alloca' op incorrect number of dynamic sizes, has N, expected N"
FLATTEN_DETAIL = (
    "<work>/module.mlir:29:15: error: 'memref.alloca' op incorrect number of dynamic sizes, has 1, expected 0\n"
    "<work>/module.mlir:29:15: note: see current operation: %5 = \"memref.alloca\"(%4) <{operandSegmentSizes = "
    "array<i32: 1, 0>}> : (index) -> memref<-8388608xf32>\n"
    "<work>/module.mlir:29:15: error: failed to run translation of source executable to target executable for "
    "backend #hal.executable.target<\"vmvx\", \"vmvx-bytecode-fb\", {ukernels = \"none\"}>\n"
    "// -----// IR Dump After FlattenMemRefSubspanPass Failed: iree-codegen-flatten-memref-subspan //----- //\n")
# the corpus entry's own reproducer (a smaller conv): 2^70 - 2^17 in int64
ENTRY_NOTE = ("<work>/module.mlir:18:13: note: see current operation: %6 = \"memref.alloca\"(%5) <{operandSegmentSizes "
              "= array<i32: 1, 0>}> : (index) -> memref<-131072xf32>")
STACK = "'memref.alloca' op stack allocation size overflows N bits"
STACK_DETAIL = (
    "<work>/module.mlir:6:25: error: 'memref.alloca' op stack allocation size overflows 64 bits\n"
    "<work>/module.mlir:6:25: note: see current operation: %5 = \"memref.alloca\"() <{alignment = 64 : i64, "
    "operandSegmentSizes = array<i32: 0, 0>}> : () -> memref<64x9007199254740991xi32>\n"
    "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: "
    "iree-llvmcpu-check-ir-before-llvm-conversion{fail-on-out-of-bounds=true} //----- //\n")


def _row(lane: str, message: str, detail: str, family: str, first: float, cause: str) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    ident = identity_of("compile", "error", message, detail)
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1" if ident.strong else ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compile", status="error", family=family,
                     count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"cand-{cause}", repro_size=10, repro_text="x",
                     detail=detail, corpus_entry="", shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG)


def test_a_negative_size_that_is_the_bounds_product_wrapped_is_a_size_from_the_bound():
    assert wrapped_bound_product(ENTRY_NOTE) == (-131072, 131072)  # (2^53 - 1) * 32*64*64
    assert wrapped_bound_product(FLATTEN_DETAIL) == (-8388608, 8388608)
    assert from_dynamic_dim_bound(FLATTEN_DETAIL) and from_dynamic_dim_bound(ENTRY_NOTE)
    assert severity_of("compile", "error", FLATTEN, FLATTEN_DETAIL) == Severity.SIZING_BUG
    # markers and other numbers are no wrapped product: INT64_MIN, -1, an ordinary negative, a real size
    for text in ("[1, -9223372036854775808]", "memref<-1xf32>", "memref<-3x4xf32>", "memref<-9223372036854775808x4xf32>",
                 "uses 70400 bytes of shared memory", "-> memref<64x9007199254740991xi32>"):
        assert wrapped_bound_product(text) is None, text
    assert severity_of("compile", "error", "'memref.alloca' op incorrect number of dynamic sizes, has N, expected N",
                       "error: 'memref.alloca' op incorrect number of dynamic sizes, has 1, expected 0") == \
        Severity.COMPILE_ERROR


def test_the_wrapped_vmvx_alloca_joins_the_bounds_cause_with_its_overflow_said_as_a_second_defect(tmp_path: Path):
    stack = _row("llvm-cpu", STACK, STACK_DETAIL, "topk", 1.0, "cause-d1e387a91e")
    flatten = _row("vmvx", FLATTEN, FLATTEN_DETAIL, "conv", 2.0, "cause-c8172e8a0a")
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in (stack, flatten):
        store.put_bucket(row)
    causes = {c.name: c for c in summarize(store).causes}
    store.close()
    assert set(causes) == {"cause-d1e387a91e"}, list(causes)
    cause = causes["cause-d1e387a91e"]
    assert cause.merged == ("cause-c8172e8a0a",) and sorted(cause.buckets) == sorted([stack.sig, flatten.sig])
    vmvx = next(s for s in cause.symptoms if s.lanes == ("vmvx",))
    assert vmvx.note == ("its size -8388608 is (2^53 - 1)·8388608 wrapped around int64: "
                         "iree-codegen-flatten-memref-subspan multiplies out the bound's size without an overflow "
                         "check (a second defect, beside the bound)")
    assert not next(s for s in cause.symptoms if s.lanes == ("llvm-cpu",)).note
    said = "\n".join(one_bug_lines(cause))
    assert "one bug, 2 symptoms" in said and "wrapped around int64" in said and "cause-c8172e8a0a" in said


@pytest.mark.iree
def test_the_vmvx_entrys_own_issue_text_says_its_size_is_the_bounds_overflowed(tmp_path: Path, toolchain):
    from shapefuzz.campaign.causes.cause import Cause
    from shapefuzz.corpus import make_finding, save_finding

    sig = Signature("vmvx", Stage.COMPILE, Status.ERROR, FLATTEN)
    module = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  return %x : tensor<4xf32>\n}\n"
    path, _ = save_finding(tmp_path / "corpus", make_finding(sig, module, toolchain, detail=FLATTEN_DETAIL))
    cause = Cause(name="cause-c8172e8a0a", triage=Triage.COMPILER_BUG, evidence="", identity="i",
                  failing_pass="iree-codegen-flatten-memref-subspan", component="codegen for vmvx",
                  scope="default pipeline", lanes=("vmvx",), severity=Severity.SIZING_BUG, localized=None, reported="",
                  known=False, regression=None, backends=("vmvx",), stage="compile", status="error", message=FLATTEN,
                  buckets=(), count=1, first_seen=0.0, new=True, rehits=0, rehit_seconds=0.0,
                  corpus_entries=(str(path),), symptoms=(), merged=(), shrunk=True)
    buckets = [{"backend": "vmvx", "signature": str(sig), "count": 1, "state": "confirmed"}]
    out = IssueTexts(tmp_path / "camp", toolchain).write(cause, buckets)
    assert out is not None
    assert ("The size it fails on comes from the 2^53 - 1 bound IREE gives a dynamic dim: its size -8388608 is "
            "(2^53 - 1)·8388608 wrapped around int64: iree-codegen-flatten-memref-subspan multiplies out the bound's "
            "size without an overflow check (a second defect, beside the bound).") in out.read_text()


def test_a_stack_frame_a_few_bytes_over_a_bound_sized_buffer_is_from_the_bound():
    """Audit C of a fresh 3.13 campaign: ROCm's "stack frame size (18014398509481988) exceeds limit" for
    a sort's private copy of a `?` operand (2 * 2^53 bytes and the frame's other 4) was a cause apart
    from the bound's; a frame holds the buffer and a few bytes beside it."""
    frame = ("warning: <unknown>:0:0: stack frame size (18014398509481988) exceeds limit (4294967295) in function "
             "'main$async_dispatch_1_sort_DxDxDxf16_dispatch_tensor_store'\n"
             "error: <unknown>:0: value evaluated as 18014398509481988 is out of range.")
    assert from_dynamic_dim_bound(frame)
    assert not from_dynamic_dim_bound("stack frame size (18014398509491988) exceeds limit")  # 10,004 over: not a frame's
    assert not from_dynamic_dim_bound("value evaluated as 9223372036854775807 is out of range")  # INT64_MAX
