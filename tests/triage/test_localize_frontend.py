"""A wrong value spelled in a frontend (issue 31): placed in the frontend conversion (torch-mlir,
or the ONNX import) when the same computation written in linalg is right on the failing lane,
or when a right lane shows the IR already wrong after `input`; never called the frontend's when
the linalg form fails the same way. Real IREE 3.13: the ONNX instance norm over a `?` spatial
dim (torch-mlir's decomposition) and the ONNX max pool whose bug is FoldUnitExtentDims."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from shapefuzz.campaign.causes.cause_facts import lead_fields
from shapefuzz.campaign.localizing import component_of_localization
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.export.issue import components
from shapefuzz.model import Stage
from shapefuzz.triage.component import DISPATCH_CREATION, FRONTEND_ONNX, FRONTEND_TORCH
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.localize import Localization, Values, with_frontend
from shapefuzz.triage.severity import Severity

ROOT = Path(__file__).resolve().parents[2]
FOLD_POOL = ROOT / "corpus" / "llvm-cpu-compare-mismatch-8dbed37c070f"  # ONNX max pool: FoldUnitExtentDims
NOT_FOUND = Localization(evidence="not localized: leaving out one pass of global-optimization at a time names none")
FOLD = Localization("global-optimization", "iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass",
                    "every lane tried computes it wrong; ...", certain=True)
R, W, U = Values.RIGHT, Values.WRONG, Values.UNUSABLE


def _title(loc: Localization) -> str:
    bug = {"component": component_of_localization(loc, ["llvm-cpu"]), "localized": loc.to_json()}
    return issue_title({"bug": bug}, "llvm-cpu", "compare", "mismatch", "wrong values in norm via torch")


def test_a_frontend_spelling_is_the_frontends_only_when_its_linalg_form_is_right():
    loc = with_frontend(NOT_FOUND, "torch", "llvm-cpu", R)
    assert (loc.phase, loc.frontend, loc.certain, loc.where) == ("input", "torch", True, "torch-mlir conversion (input)")
    assert "written in linalg computes the right ones" in loc.evidence and "torch-mlir conversion" in loc.evidence
    assert component_of_localization(loc, ["llvm-cpu", "vmvx"]) == FRONTEND_TORCH
    assert _title(loc) == f"[{FRONTEND_TORCH}] wrong values from the torch-mlir conversion (input)"
    assert Localization.from_json(loc.to_json()) == loc
    # ONNX: its torch spelling says which conversion (torch-mlir lowers both, or the import alone)
    assert component_of_localization(with_frontend(NOT_FOUND, "onnx", "llvm-cpu", R, W), []) == FRONTEND_TORCH
    assert component_of_localization(with_frontend(NOT_FOUND, "onnx", "llvm-cpu", R, R), []) == FRONTEND_ONNX
    # the linalg form wrong too: not a frontend bug, and said so; no evidence either way: unchanged
    cleared = with_frontend(NOT_FOUND, "onnx", "llvm-cpu", W)
    assert not cleared.localized and not cleared.frontend and "not the ONNX import conversion's" in cleared.evidence
    assert with_frontend(NOT_FOUND, "torch", "llvm-cpu", U) == NOT_FOUND
    # placed for certain in a later pass: IREE's, whatever the linalg form does
    assert with_frontend(FOLD, "onnx", "llvm-cpu", R, W) == FOLD
    # a right lane finished the IR after `input` wrong: the conversion, even without the linalg form
    at_input = Localization("input", evidence="llvm-cpu's IR finished by vmvx: after `input` wrong", certain=True,
                            finished_by="vmvx")
    loc = with_frontend(at_input, "torch", "llvm-cpu", U)
    assert loc.frontend == "torch" and "already wrong after the torch spelling's conversion" in loc.evidence


def _row(lane: str) -> BucketRow:
    fields = {"backend": lane, "stage": "compare", "status": "mismatch", "message": "wrong values in norm via onnx",
              "identity": "compare/mismatch [?]: wrong values in norm via onnx", "strong": ""}
    return BucketRow(sig=f"{lane}/compare/mismatch: wrong values in norm via onnx", sig_json=fields, backend=lane,
                     stage="compare", status="mismatch", family="norm", count=1, first_seen=1.0, last_seen=1.0,
                     first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k", repro_size=10,
                     repro_text="x", detail="", corpus_entry="", shrunk_size=None, cause="cause-norm",
                     triage=Triage.COMPILER_BUG)


def test_a_campaigns_report_places_a_frontend_cause_in_its_conversion(tmp_path):
    import json

    from shapefuzz.campaign.localizing import LOCALIZE_META
    from shapefuzz.campaign.report.summary import markdown, summarize
    from shapefuzz.campaign.database import CampaignStore

    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    row = _row("llvm-cpu")
    store.put_bucket(row)
    store.set_meta(LOCALIZE_META + row.sig, json.dumps(with_frontend(NOT_FOUND, "onnx", "llvm-cpu", R, W).to_json()))
    try:
        (cause,) = summarize(store).causes
        text = markdown(summarize(store))
    finally:
        store.close()
    assert cause.component == FRONTEND_TORCH
    assert f"| {FRONTEND_TORCH} | torch-mlir conversion (input) |" in text


def test_a_cause_placed_in_a_frontend_is_named_and_filed_as_the_frontends():
    loc = with_frontend(NOT_FOUND, "onnx", "llvm-cpu", R, W)
    fields = lead_fields([_row("llvm-cpu"), _row("vmvx")], localized=loc)
    assert fields["component"] == FRONTEND_TORCH and "frontend:torch" in fields["identity"]
    assert fields["scope"] == "default pipeline" and fields["severity"] == Severity.WRONG_VALUES
    other = lead_fields([_row("llvm-cpu")], localized=FOLD)
    assert other["identity"] != fields["identity"] and other["component"] == DISPATCH_CREATION
    # the report form's components: "Frontends" only for a bug in a frontend
    onnx_ir = "func.func @main(%a: !torch.vtensor<[2],f32>) -> !torch.vtensor<[2],f32> { ... }"
    assert components({"bug": {"component": FRONTEND_TORCH}}, onnx_ir, Stage.COMPARE) == ["Frontends", "Compiler"]
    assert components({"bug": {"component": DISPATCH_CREATION}}, onnx_ir, Stage.COMPARE) == ["Compiler"]
    assert components({}, onnx_ir, Stage.COMPARE) == ["Frontends", "Compiler"]  # not triaged yet: by its spelling


# --- real IREE 3.13 -------------------------------------------------------------------------------
@pytest.mark.iree
def test_the_onnx_instance_norm_bug_is_torch_mlirs_and_the_onnx_pool_bug_is_not_a_frontends(toolchain, monkeypatch):
    """Instance norm over a `?` spatial dim via ONNX is wrong on every lane (torch-mlir counts the `?`
    as -1) and the pass-by-pass search names nothing (replaced here by its not-found answer, which
    takes a minute): its linalg form is right on llvm-cpu and its torch spelling wrong, so it is
    torch-mlir's. The ONNX max pool's linalg form is wrong the same way: not the frontend's."""
    import shapefuzz.judge.localize_probe
    from shapefuzz.case import Case
    from shapefuzz.corpus import load_entry
    from shapefuzz.families import get_family
    from shapefuzz.judge.oracle import case_expectation

    searched = []
    monkeypatch.setattr(shapefuzz.judge.localize_probe, "localize_program", lambda *a, **k: searched.append(a[1]) or NOT_FOUND)
    norm = get_family("norm").load({"kind": "instance", "dtype": "f32", "shape": [1, 2, 1, 3], "layout": "nchw",
                                    "dyn": [False, False, False, True], "affine": True, "eps": 1e-5, "frontend": "onnx"})
    case = Case.make("norm", norm.to_json())
    expected = case_expectation(case, 1)
    entry = SimpleNamespace(case=case, inputs=expected.inputs, expected=expected.expected, mlir="(not searched)",
                            signature=SimpleNamespace(backend="llvm-cpu"))
    loc = shapefuzz.judge.localize_probe.localize_entry(entry, toolchain, seconds=60)
    assert loc.frontend == "torch" and loc.certain, loc.evidence
    assert "its torch spelling is wrong too" in loc.evidence and searched == ["llvm-cpu"]
    pool = load_entry(FOLD_POOL)
    loc = shapefuzz.judge.localize_probe.localize_entry(pool, toolchain, seconds=60)
    assert not loc.frontend and "written in linalg computes wrong values on llvm-cpu too" in loc.evidence, loc.evidence
