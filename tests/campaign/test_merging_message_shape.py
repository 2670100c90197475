"""One root cause tripping different passes (issue #43's audit, llvm#113021): a reversed-index generic
fails "inferred input/output operand #N has shape's dimension #N to be greater than or equal to N" in
the forall tiling pass on llvm-cpu and rocm-gfx942 (cause 7af5034ab8) and in GPUApplyTilingLevel on
rocm-gfx942-single-dispatch (b97e42ec0f). Causes of one message shape in different places are
cross-run, and one bug only when the run gives the other's very failure."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.causes.crossings import NO, SAME_FAILURE, crossings
from shapefuzz.campaign.causes.crosstrigger import cross_trigger
from shapefuzz.campaign.causes.merging import cross_pairs, merge_causes
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.corpus.entry import Finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.model import BackendResult, Signature, Stage, Status
from shapefuzz.triage.identity import identity_of

SHAPE = ("'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be greater than or "
         "equal to N, but found N")
FORALL = ("// -----// IR Dump After TileAndDistributeToWorkgroupsUsingForallOpPass Failed: "
          "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op //----- //\n")
TILING = "// -----// IR Dump After GPUApplyTilingLevelPass Failed: iree-codegen-gpu-apply-tiling-level //----- //\n"
OTHER = "'memref.alloca' op expected no unbounded stack allocations"
CHECK = ("// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: "
         "iree-llvmcpu-check-ir-before-llvm-conversion //----- //\n")
FLIP = "func.func @main(%w: tensor<3xi32>) -> tensor<3xi32> {{\n  // linalg.generic {which}\n}}\n"


def _bucket(corpus: Path, lane: str, message: str, detail: str, first: float, cause: str) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    entry, _ = save_finding(corpus, Finding(sig, FLIP.format(which=cause), (lane,), None, 0, None, None, "3.13.0",
                                            ["iree-compile"], detail))
    ident = identity_of("compile", "error", message, detail)
    fields = {**sig.to_json(), "identity": ident.key, "strong": "1", "failing_pass": ident.failing_pass}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage=Stage.COMPILE, status=Status.ERROR,
                     family="conv_transpose", count=1, first_seen=first, last_seen=first, first_wall=0.0,
                     last_wall=0.0, state=BucketState.CONFIRMED, repro_key=f"cand-{cause}", repro_size=10,
                     repro_text="x", detail=detail, corpus_entry=str(entry), shrunk_size=None, cause=cause,
                     triage=Triage.COMPILER_BUG)


def _causes(corpus: Path) -> tuple[BucketRow, BucketRow, BucketRow, BucketRow]:
    return (_bucket(corpus, "llvm-cpu", SHAPE, FORALL, 1.0, "cause-7af"),
            _bucket(corpus, "rocm-gfx942", SHAPE, FORALL, 2.0, "cause-7af"),
            _bucket(corpus, "rocm-gfx942-single-dispatch", SHAPE, TILING, 3.0, "cause-b97"),
            _bucket(corpus, "llvm-cpu", OTHER, CHECK, 4.0, "cause-o"))


def test_causes_of_one_message_shape_in_different_passes_are_paired_with_no_pass(tmp_path):
    forall_cpu, forall_rocm, tiling, other = _causes(tmp_path)
    groups = {"cause-7af": [forall_cpu, forall_rocm], "cause-b97": [tiling], "cause-o": [other]}
    pairs = cross_pairs(groups, {})
    assert len(pairs) == 1
    (xs, ys, where), = pairs
    assert where == frozenset() and ys == [tiling]
    assert xs[0] is forall_rocm  # b97's reproducer goes to a lane of its own driver (hip) first


def test_they_merge_only_on_a_run_that_gave_the_others_very_failure(tmp_path):
    forall_cpu, forall_rocm, tiling, _ = _causes(tmp_path)
    groups = {"cause-7af": [forall_cpu, forall_rocm], "cause-b97": [tiling]}
    assert len(merge_causes(groups, {}, lambda b: None)) == 2  # one message shape alone ties nothing
    merged = merge_causes(groups, {}, lambda b: None, crossed=[(tiling.sig, forall_rocm.sig)])
    assert list(merged) == ["cause-7af"] and len(merged["cause-7af"]) == 3


def _result(lane: str, message: str = "", detail: str = "") -> BackendResult:
    if not message:
        return BackendResult(lane, Stage.COMPILE, Status.OK, "", None)
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    return BackendResult(lane, Stage.COMPILE, Status.ERROR, detail, sig)


def test_the_step_runs_them_and_the_report_merges_by_the_same_failure(tmp_path):
    rows = _causes(tmp_path / "corpus")
    forall_cpu, forall_rocm, tiling, other = rows
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.set_meta("config", json.dumps({"corpus": str(tmp_path / "corpus")}))
    for row in rows:
        store.put_bucket(row)

    def run(entry, lane):
        if str(entry.signature) == tiling.sig and lane == "rocm-gfx942":  # the forall pass on plain rocm
            return _result(lane, SHAPE, FORALL)
        if str(entry.signature) == tiling.sig:
            return _result(lane, SHAPE, TILING)  # its own failure, in its own pass
        return _result(lane)

    assert len(summarize(store).causes) == 3
    assert cross_trigger(store, summarize(store).causes, None, 60.0, lambda _: None, run) == 2
    kept = {(c.source, c.target): c.verdict for c in crossings(store)}
    assert kept == {(tiling.sig, forall_rocm.sig): SAME_FAILURE, (forall_rocm.sig, tiling.sig): NO}
    causes = sorted(summarize(store).causes, key=lambda c: -len(c.buckets))
    assert [c.name for c in causes] == ["cause-7af", "cause-o"] and causes[0].merged == ("cause-b97",)
    store.close()


def test_its_own_failure_in_its_own_pass_on_the_others_lane_ties_nothing(tmp_path):
    rows = _causes(tmp_path / "corpus")
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.set_meta("config", json.dumps({"corpus": str(tmp_path / "corpus")}))
    for row in rows:
        store.put_bucket(row)
    assert cross_trigger(store, summarize(store).causes, None, 60.0, lambda _: None,
                         lambda entry, lane: _result(lane, SHAPE, TILING if "single" in entry.signature.backend else FORALL)) == 2
    assert len(summarize(store).causes) == 3
    store.close()
