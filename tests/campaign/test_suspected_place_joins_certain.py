"""A suspected place that another bucket of the cause has for certain is that place (issue #43, audit A
of the fresh campaign): a conv_transpose's wrong values were localized to FusionPreprocessingPass for
certain on llvm-cpu, and on llvm-cpu-o3 to "needs FusionPreprocessingPass" (no other lane computed its
reproducer right to compare with); the two were split into 96a3e6a75d and 96a3e6a75d.2, one bug (the
stride the pass drops). A suspected place that no bucket holds for certain still splits."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.localizing import LOCALIZE_META
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import Localization

WRONG = "wrong values in conv_transpose"
FUSION = dict(phase="dispatch-creation", pass_name="iree-dispatch-creation-fusion-preprocessing",
              pass_class="FusionPreprocessingPass")


def _row(lane: str, first: float) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compare", "status": "mismatch", "message": WRONG})
    ident = identity_of("compare", "mismatch", WRONG, "")
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1" if ident.strong else ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compare", status="mismatch",
                     family="conv_transpose", count=1, first_seen=first, last_seen=first, first_wall=0.0,
                     last_wall=0.0, state=BucketState.CONFIRMED, repro_key=f"cand-{lane}", repro_size=10,
                     repro_text="x", detail="", corpus_entry="", shrunk_size=None, cause="cause-96a3e6a75d",
                     triage=Triage.COMPILER_BUG)


def _causes(tmp_path: Path, located: dict[str, Localization]) -> dict[str, tuple[str, ...]]:
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for i, (lane, loc) in enumerate(located.items()):
        row = _row(lane, float(i))
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(loc.to_json()))
    causes = {c.name: tuple(sorted(c.buckets)) for c in summarize(store).causes}
    store.close()
    return causes


def test_a_suspected_place_held_for_certain_by_another_bucket_is_one_cause(tmp_path: Path):
    causes = _causes(tmp_path, {"llvm-cpu": Localization(**FUSION, certain=True),
                                "llvm-cpu-o3": Localization(**FUSION, certain=False)})
    assert list(causes) == ["cause-96a3e6a75d"], causes
    assert len(causes["cause-96a3e6a75d"]) == 2


def test_a_suspected_place_of_another_pass_still_splits(tmp_path: Path):
    other = dict(FUSION, pass_name="iree-dispatch-creation-fold-unit-extent-dims", pass_class="FoldUnitExtentDimsPass")
    causes = _causes(tmp_path, {"llvm-cpu": Localization(**FUSION, certain=True),
                                "llvm-cpu-o3": Localization(**other, certain=False)})
    assert set(causes) == {"cause-96a3e6a75d", "cause-96a3e6a75d.2"}, causes


def test_a_frontend_conversion_without_a_pass_joins_its_frontends_pass(tmp_path: Path):
    """A fresh 3.13 campaign's ONNX instance norm: DecomposeComplexOps (DecomposeAtenInstanceNormOp) for
    certain on vulkan-spirv, and on llvm-cpu-split-reduction only "the torch-mlir conversion (input)"
    (no pass named there): split into b5ce061bbe and b5ce061bbe.2, one bug. A frontend placement in
    another phase, or a pass of another frontend's placement, still splits."""
    decompose = Localization("input", "torch-decompose-complex-ops", "DecomposeComplexOps", certain=True,
                             frontend="onnx", pattern="DecomposeAtenInstanceNormOp")
    bare = Localization("input", certain=True, frontend="torch")
    causes = _causes(tmp_path / "a", {"vulkan-spirv": decompose, "llvm-cpu-split-reduction": bare})
    assert list(causes) == ["cause-96a3e6a75d"], causes
    elsewhere = Localization("global-optimization", certain=True)
    causes = _causes(tmp_path / "b", {"vulkan-spirv": decompose, "llvm-cpu": elsewhere})
    assert len(causes) == 2, causes


def test_a_cause_is_placed_by_its_most_exact_localization_without_another_entrys_ir(tmp_path: Path):
    """The ONNX instance norm again: its lead bucket localized only to "the torch-mlir conversion", two
    others to DecomposeComplexOps for certain; the cause names the pass, without IR taken on an entry
    the text does not show (these buckets have none)."""
    decompose = Localization("input", "torch-decompose-complex-ops", "DecomposeComplexOps", certain=True,
                             frontend="onnx", ir_before="func.func @other", ir_after="func.func @other",
                             evidence="the static twin after DecomposeComplexOps computes wrong")
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for i, (lane, loc) in enumerate({"llvm-cpu-split-reduction": Localization("input", certain=True, frontend="torch"),
                                     "vulkan-spirv": decompose}.items()):
        row = _row(lane, float(i))
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(loc.to_json()))
    (cause,) = summarize(store).causes
    store.close()
    assert cause.localized is not None and cause.localized.pass_name == "torch-decompose-complex-ops"
    assert cause.localized.ir_before == "" and cause.localized.ir_after == ""
    # and its evidence says whose it is (an audit read a CPU check's unbounded alloca under a static CUDA sort)
    assert cause.localized.evidence == ("on this cause's vulkan-spirv entry, not the one shown: the static twin "
                                        "after DecomposeComplexOps computes wrong")
