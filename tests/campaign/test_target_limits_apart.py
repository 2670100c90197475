"""A target limit is never part of a bug's cause (campaign.limits_apart): a cause holding both is split
in the report, no merge joins a limit with a bug (not even one reproducer failing both ways), and
llvmpipe's loop limit met by both Vulkan targets is a target limit with its rule's evidence."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.triage.verdict import vulkan_verdict
from shapefuzz.campaign.causes.merging import merge_causes
from shapefuzz.campaign.outcomes import BucketState, Failure, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.corpus.entry import entry_id
from shapefuzz.model import Signature, Stage, Status

LIMIT = "target limit: spirv-attention"
ATTENTION = "func.func @main() { iree_linalg_ext.attention ... }"


def _bucket(lane: str, message: str, first: float, triage: Triage, cause: str) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage="compile", status="error",
                     family="attention", count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key="k-1", repro_size=10, repro_text=ATTENTION, detail="",
                     corpus_entry=f"/corpus/{entry_id(sig)}", shrunk_size=None, cause=cause, triage=triage,
                     evidence=f"{lane}: the verdict's evidence")


def test_a_cause_holding_a_limit_and_a_bug_is_two_causes(tmp_path: Path):
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    # one attention candidate failed on Vulkan (no SPIR-V attention pipeline) and on ROCm (a bug):
    # the engine tied them by the candidate
    store.put_bucket(_bucket("vulkan-spirv", LIMIT, 1.0, Triage.TARGET_LIMIT, "cause-x"))
    store.put_bucket(_bucket("rocm-gfx942", "'vector.transfer_read' op out of bounds", 2.0, Triage.COMPILER_BUG,
                             "cause-x"))
    causes = {c.name: c for c in summarize(store).causes}
    assert set(causes) == {"cause-x", "cause-x.target-limit"}
    assert causes["cause-x"].triage == Triage.COMPILER_BUG and causes["cause-x"].backends == ("rocm-gfx942",)
    limit = causes["cause-x.target-limit"]
    assert limit.triage == Triage.TARGET_LIMIT and limit.backends == ("vulkan-spirv",) and not limit.is_finding


def test_no_merge_joins_a_limit_with_a_bug_even_for_one_reproducer():
    limit = _bucket("vulkan-spirv", LIMIT, 1.0, Triage.TARGET_LIMIT, "cause-a")
    bug = _bucket("rocm-gfx942", "'vector.transfer_read' op out of bounds", 2.0, Triage.COMPILER_BUG, "cause-b")
    other_bug = _bucket("cuda-sm80", "'vector.transfer_read' op out of bounds", 3.0, Triage.COMPILER_BUG, "cause-c")
    same_text = lambda b: ATTENTION  # noqa: E731 - every bucket's corpus entry holds this one program
    merged = merge_causes({"cause-a": [limit], "cause-b": [bug], "cause-c": [other_bug]}, {}, same_text)
    # the two bugs are one program failing two ways, merged; the limit stays apart
    assert {name: [b.backend for b in members] for name, members in merged.items()} == {
        "cause-a": ["vulkan-spirv"], "cause-b": ["rocm-gfx942", "cuda-sm80"]}


def test_llvmpipe_s_loop_limit_met_by_both_vulkan_targets_is_a_target_limit():
    sort = ("func.func @main(%a: tensor<512xf32>) -> tensor<512xf32> {\n  %0 = iree_linalg_ext.sort dimension(0) "
            "outs(%a : tensor<512xf32>) {\n  ^bb0(%x: f32, %y: f32):\n  }\n  return %0 : tensor<512xf32>\n}\n")
    failure = Failure(Signature("vulkan-spirv", Stage.COMPARE, Status.MISMATCH, "wrong values"), "values differ")
    lanes = {"llvm-cpu": Status.OK, "vulkan-spirv": Status.MISMATCH, "vulkan-llvmpipe": Status.MISMATCH}
    triage, why = vulkan_verdict(sort, failure, lanes, ["llvm-cpu"])
    assert triage == Triage.TARGET_LIMIT
    assert why.startswith("vulkan-spirv: target limit llvmpipe-loop-limit (one invocation of Mesa llvmpipe stops")
    assert "sorts along a dim of up to 512 elements" in why and "vulkan-llvmpipe on the same driver fails too" in why
