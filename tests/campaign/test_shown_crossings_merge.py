"""A shown reproducer that, run on another cause's lane by the shown step, fails there with that cause's
very identity (the same pass and message) ties the two causes (issue #43 item 2, hand audit of a fresh
campaign: a reversed-map generic first seen failing in GPUApplyTilingLevel on rocm's single-dispatch
lane, cause-b97e42ec0f, once shrunk failed in workgroup tiling on rocm-gfx942 exactly as cause-7af5034ab8
does, and was filed apart). A size past a limit never ties this way: its identity folds the size, and a
real 130,560-byte top-k scratch is not the 2^53-1 bound's bug."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.shown import LaneRun, ShownRuns, reproducer_digest

MLIR = "func.func @main(%x: tensor<2xf16>) -> tensor<f16> { ... }\n"
TILING = ("'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be greater than or equal "
          "to N, but found N")
SHARED = "function 'dispatch' uses N bytes of shared memory; exceeded the limit of N bytes"


def _detail(pass_arg: str, message: str) -> str:
    return f"error: {message}\n// -----// IR Dump After {pass_arg} Failed ({pass_arg}) //----- //\n"


def _row(lane: str, first: float, cause: str, message: str, pass_arg: str, entry: str = "") -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    detail = _detail(pass_arg, message)
    ident = identity_of("compile", "error", message, detail)
    assert ident.strong, ident
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1"}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compile", status="error", family="conv",
                     count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"cand-{lane}-{first}", repro_size=10, repro_text="x",
                     detail=detail, corpus_entry=entry, shrunk_size=None, cause=cause, triage=Triage.COMPILER_BUG,
                     evidence="compile/error for input that verifies")


def _entry(folder: Path, lane: str, message: str, runs: tuple[LaneRun, ...]) -> str:
    folder.mkdir(parents=True)
    (folder / "reproducer.mlir").write_text(MLIR)
    signature = {"backend": lane, "stage": "compile", "status": "error", "message": message}
    meta = {"signature": signature, "signature_text": str(Signature.from_json(signature)),
            "shown": ShownRuns(reproducer_digest(MLIR), runs).to_json()}
    (folder / "meta.json").write_text(json.dumps(meta))
    return str(folder)


def _names(tmp_path: Path, message: str, source_pass: str, target_pass: str, ran_identity: bool) -> set[str]:
    target = _row("rocm-gfx942", 1.0, "cause-7af5034ab8", message, target_pass)
    run = LaneRun("rocm-gfx942", "same", "fails the same way", target.sig_json["identity"] if ran_identity else "")
    entry = _entry(tmp_path / "corpus" / "rocm-gfx942-single-dispatch-compile-error-1", "rocm-gfx942-single-dispatch",
                   message, (LaneRun("rocm-gfx942-single-dispatch", "same", "fails the same way"), run))
    source = _row("rocm-gfx942-single-dispatch", 2.0, "cause-b97e42ec0f", message, source_pass, entry)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in (target, source):
        store.put_bucket(row)
    names = {c.name for c in summarize(store).causes}
    store.close()
    return names


def test_a_shown_run_with_the_other_causes_identity_ties_them(tmp_path: Path):
    names = _names(tmp_path, TILING, "iree-codegen-gpu-apply-tiling-level",
                   "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op", ran_identity=True)
    assert names == {"cause-7af5034ab8"}, names


def test_without_that_identity_they_stay_apart(tmp_path: Path):
    names = _names(tmp_path, TILING, "iree-codegen-gpu-apply-tiling-level",
                   "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op", ran_identity=False)
    assert names == {"cause-7af5034ab8", "cause-b97e42ec0f"}, names


def test_a_size_past_a_limit_never_ties_by_a_shown_run(tmp_path: Path):
    names = _names(tmp_path, SHARED, "iree-codegen-gpu-check-resource-usage", "iree-codegen-gpu-check-resource-usage",
                   ran_identity=True)
    assert names == {"cause-7af5034ab8", "cause-b97e42ec0f"}, names
