"""A bucket's verdict in the report is the one its text states (issue #43, audit B): re-derived on its
shrunk reproducer where the recorded one was decided on the larger candidate, and causes whose verdicts
then name one mechanism are one cause. The audit's case: a top-k on vulkan-llvmpipe, first "suspected
driver", was Mesa's loop limit on its shrunk reproducer, and stood as cause-6373377de8-2 beside the
same limit's cause-6373377de8 on vulkan-spirv."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.shown import LaneRun, ShownRuns, reproducer_digest

TOPK = "wrong values in topk"
MLIR = "func.func @main(%a: tensor<512xf32>) -> tensor<1xf32> { ... }\n"
LIMIT = ("{lane}: target limit llvmpipe-loop-limit (one invocation of Mesa llvmpipe stops after 65,535 loop iterations; "
         "measured); it sorts along a dim of up to 512 elements in one invocation, past the limit")
DRIVER = ("wrong numbers only on vulkan-llvmpipe (Mesa's software Vulkan device, the only one here); not yet checked "
          "on vulkan-spirv")


def _row(lane: str, first: float, cause: str, triage: Triage, evidence: str, entry: str = "") -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compare", "status": "mismatch", "message": TOPK})
    ident = identity_of("compare", "mismatch", TOPK, "")
    fields = {**sig.to_json(), "identity": ident.key, "strong": ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compare", status="mismatch", family="topk",
                     count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"cand-{lane}", repro_size=10, repro_text="x", detail="",
                     corpus_entry=entry, shrunk_size=None, cause=cause, triage=triage, evidence=evidence)


def _entry(folder: Path, lane: str, evidence_of: str) -> str:
    """A corpus entry of the llvmpipe bucket: recorded "suspected driver" (decided on the module
    `evidence_of` names), and its shown reproducer's own runs re-derived the loop limit."""
    folder.mkdir(parents=True)
    (folder / "reproducer.mlir").write_text(MLIR)
    shown = ShownRuns(reproducer_digest(MLIR), (LaneRun(lane, "same"), LaneRun("vulkan-spirv", "same")),
                      triage=Triage.TARGET_LIMIT.value, evidence=LIMIT.format(lane=lane))
    meta = {"signature": {"backend": lane, "stage": "compare", "status": "mismatch", "message": TOPK},
            "triage": Triage.SUSPECTED_DRIVER.value, "triage_evidence": DRIVER, "triage_evidence_of": evidence_of,
            "shown": shown.to_json()}
    (folder / "meta.json").write_text(json.dumps(meta))
    return str(folder)


def _causes(tmp_path: Path, evidence_of: str) -> dict:
    entry = _entry(tmp_path / "corpus" / "vulkan-llvmpipe-compare-mismatch-1", "vulkan-llvmpipe", evidence_of)
    spirv = _row("vulkan-spirv", 1.0, "cause-6373377de8", Triage.TARGET_LIMIT, LIMIT.format(lane="vulkan-spirv"))
    llvmpipe = _row("vulkan-llvmpipe", 2.0, "cause-6373377de8-2", Triage.SUSPECTED_DRIVER, DRIVER, entry)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in (spirv, llvmpipe):
        store.put_bucket(row)
    summary = summarize(store)
    store.close()
    return {"causes": {c.name: c for c in summary.causes}, "buckets": {b["signature"]: b for b in summary.buckets},
            "rows": (spirv, llvmpipe)}


def test_a_verdict_re_derived_on_the_shrunk_reproducer_merges_its_cause_into_the_one_it_names(tmp_path: Path):
    got = _causes(tmp_path, evidence_of="0123456789abcdef")  # the larger candidate's digest
    spirv, llvmpipe = got["rows"]
    assert set(got["causes"]) == {"cause-6373377de8"}, list(got["causes"])
    cause = got["causes"]["cause-6373377de8"]
    assert sorted(cause.buckets) == sorted([spirv.sig, llvmpipe.sig])
    assert cause.triage == Triage.TARGET_LIMIT
    assert got["buckets"][llvmpipe.sig]["triage"] == Triage.TARGET_LIMIT.value  # the buckets table agrees


def test_a_verdict_recorded_on_the_reproducer_itself_stands(tmp_path: Path):
    got = _causes(tmp_path, evidence_of=reproducer_digest(MLIR))  # decided on this very module
    assert set(got["causes"]) == {"cause-6373377de8", "cause-6373377de8-2"}, list(got["causes"])
    assert got["causes"]["cause-6373377de8-2"].triage == Triage.SUSPECTED_DRIVER
