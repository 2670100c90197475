"""Two wrong values placed in codegen without a pass are two bugs when the codegen is two targets'
(issue #43, audit A): the torch gather's strided slice miscompiled on llvm-cpu (0b7ccb8219.2, its pass
no longer named as the strategy-selection pass) and the i8 words lost on Vulkan (0b7ccb8219) share the
message "wrong values in gather via torch"; placed "codegen" alike, they were merged into one cause. One
SPIR-V codegen bug seen on both Vulkan lanes stays one."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.localizing import LOCALIZE_META, place_of
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import CODEGEN, Localization

GATHER = "wrong values in gather via torch"
IN_CODEGEN = Localization(CODEGEN, evidence="the IR after `stream`, compiled onward by vmvx, computes the right values",
                          certain=True, finished_by="vmvx")


def _row(lane: str, first: float, cause: str) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compare", "status": "mismatch", "message": GATHER})
    ident = identity_of("compare", "mismatch", GATHER, "")
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1" if ident.strong else ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compare", status="mismatch", family="gather",
                     count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"cand-{lane}", repro_size=10, repro_text="x", detail="",
                     corpus_entry="", shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG)


def test_codegen_without_a_pass_is_a_place_per_target():
    assert place_of(IN_CODEGEN, "llvm-cpu") == "codegen: codegen for llvm-cpu"
    assert place_of(IN_CODEGEN, "vulkan-spirv") == place_of(IN_CODEGEN, "vulkan-llvmpipe") == "codegen: codegen for SPIR-V"
    named = Localization(CODEGEN, "iree-codegen-generic-vectorization", "GenericVectorizationPass", certain=True)
    assert place_of(named, "llvm-cpu") == place_of(named, "vmvx") == "GenericVectorizationPass (codegen)"
    assert place_of(None, "llvm-cpu") == place_of(Localization(), "llvm-cpu") == ""


def test_two_targets_codegen_wrong_values_of_one_message_are_two_causes(tmp_path: Path):
    vulkan, llvmpipe, cpu = (_row("vulkan-spirv", 1.0, "cause-0b7ccb8219"), _row("vulkan-llvmpipe", 2.0, "cause-0b7ccb8219"),
                             _row("llvm-cpu", 3.0, "cause-0b7ccb8219"))
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in (vulkan, llvmpipe, cpu):
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(IN_CODEGEN.to_json()))
    causes = {c.name: c for c in summarize(store).causes}
    store.close()
    assert set(causes) == {"cause-0b7ccb8219", "cause-0b7ccb8219.2"}, list(causes)
    assert sorted(causes["cause-0b7ccb8219"].buckets) == sorted([vulkan.sig, llvmpipe.sig])
    assert causes["cause-0b7ccb8219.2"].buckets == (cpu.sig,)
