"""A torch-mlir conversion's verifier error is placed at the pass that made the ill-typed op it
refused (audits D and E of the fresh campaign: ONNX MatMulInteger with a per-row `a_zero_point` was
filed, twice, as a `convert-torch-to-linalg` bug; `convert-torch-onnx-to-torch` had typed
`torch.aten.sub.Tensor` of [M,K] and [M] as [M,K])."""

from __future__ import annotations

import pytest

from shapefuzz.judge.localize_probe import place_frontend_refusal
from shapefuzz.triage.frontend_offence import conflict, ill_typed_broadcasts, refused_by_conversion
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.record import bug_record
from shapefuzz.triage.tracker import tracker_of

# the line convert-torch-onnx-to-torch writes on IREE 3.13 (measured)
MADE = ("%2 = torch.aten.sub.Tensor %0, %arg2, %int1 : !torch.vtensor<[3,4],si32>, !torch.vtensor<[3],si8>, "
        "!torch.int -> !torch.vtensor<[3,4],si32>\n")
PER_ROW_ZERO_POINT = """module {
  func.func @f(%a: !torch.vtensor<[3,4],si8>, %b: !torch.vtensor<[4,5],si8>, %azp: !torch.vtensor<[3],si8>) -> !torch.vtensor<[3,5],si32> attributes {torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 17 : si64, torch.onnx_meta.producer_name = "t", torch.onnx_meta.producer_version = ""} {
    %0 = torch.operator "onnx.MatMulInteger"(%a, %b, %azp) : (!torch.vtensor<[3,4],si8>, !torch.vtensor<[4,5],si8>, !torch.vtensor<[3],si8>) -> !torch.vtensor<[3,5],si32>
    return %0 : !torch.vtensor<[3,5],si32>
  }
}
"""
# the same contradiction written by hand: the program made it, no pass did
ALREADY_ILL_TYPED = """func.func @f(%a: !torch.vtensor<[3,4],si32>, %b: !torch.vtensor<[3],si32>) -> !torch.vtensor<[3,4],si32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.sub.Tensor %a, %b, %int1 : !torch.vtensor<[3,4],si32>, !torch.vtensor<[3],si32>, !torch.int -> !torch.vtensor<[3,4],si32>
  return %0 : !torch.vtensor<[3,4],si32>
}
"""


def test_a_broadcast_whose_static_sizes_meet_is_ill_typed():
    found = ill_typed_broadcasts(MADE)
    assert found == ["`torch.aten.sub.Tensor` of [3,4] and [3] typed [3,4]: sizes 3 and 4 meet on one axis"], found


def test_numpy_broadcasting_and_open_dims_are_not_offences():
    assert conflict([[3, 4], [4]], [3, 4]) == ""
    assert conflict([[3, 1], [1, 5]], [3, 5]) == ""
    assert conflict([[3, None], [4]], [3, None]) == ""  # `?` against 4: the run decides
    assert conflict([[1], [1]], [1]) == ""
    assert conflict([[3, 1], [3]], [3, 1]) == "the result's size 1 where its operands make 3"
    assert conflict([[2, 3], [3]], [3]) == "the result has rank 1, its operands broadcast to rank 2"
    assert ill_typed_broadcasts(MADE.replace("[3],si8", "[4],si8")) == []


def test_only_a_conversions_verifier_error_is_traced():
    message = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
    assert refused_by_conversion("convert-torch-to-linalg", message)
    assert not refused_by_conversion("convert-torch-to-linalg", "failed to legalize operation 'torch.aten.foo'")
    assert not refused_by_conversion("iree-codegen-llvmcpu-tile", message)


@pytest.mark.iree
def test_the_onnx_lowering_that_typed_the_op_is_named_not_the_conversion(toolchain):
    loc = place_frontend_refusal(PER_ROW_ZERO_POINT, "llvm-cpu", toolchain, "convert-torch-to-linalg", 60.0)
    assert loc.certain and loc.phase == "input", loc
    assert (loc.pass_name, loc.pattern) == ("convert-torch-onnx-to-torch", "onnx.MatMulInteger"), loc
    assert "of [3,4] and [3] typed [3,4]" in loc.evidence and "convert-torch-to-linalg only refuses it" in loc.evidence
    assert "torch.aten.sub.Tensor" in loc.ir_after and "onnx.MatMulInteger" in loc.ir_before


@pytest.mark.iree
def test_an_input_that_is_ill_typed_already_is_not_blamed_on_a_pass(toolchain):
    loc = place_frontend_refusal(ALREADY_ILL_TYPED, "llvm-cpu", toolchain, "convert-torch-to-linalg", 60.0)
    assert not loc.localized and "the input itself holds" in loc.evidence, loc


@pytest.mark.iree
def test_the_issue_names_the_maker_and_routes_it_to_torch_mlir(toolchain):
    loc = place_frontend_refusal(PER_ROW_ZERO_POINT, "llvm-cpu", toolchain, "convert-torch-to-linalg", 60.0)
    detail = ("<work>/module.mlir:3:10: error: 'linalg.generic' op inferred input/output operand #1 has shape's "
              "dimension #0 to be 4, but found 3\n"
              "// -----// IR Dump After ConvertTorchToLinalg Failed: convert-torch-to-linalg{allow-non-finites=true} "
              "//----- //\n")
    message = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
    bug = bug_record({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": message}, detail,
                     ["llvm-cpu"], PER_ROW_ZERO_POINT, loc)
    assert bug["failing_pass"] == "convert-torch-onnx-to-torch" and "[convert-torch-onnx-to-torch (input)]" in bug["identity"]
    title = issue_title({"bug": bug, "detail": detail}, "llvm-cpu", "compile", "error", message)
    assert "convert-torch-onnx-to-torch makes what convert-torch-to-linalg refuses: 'linalg.generic' op" in title, title
    assert tracker_of({"bug": bug}).name == "torch-mlir"


# A fresh 3.13 campaign's cause-c248a784d1: torch-mlir's unflatten of a `?` dim into static sizes
# emits a `tensor.expand_shape` whose collapsed dim is dynamic; the op's verifier refuses it.
UNFLATTEN = """func.func @main(%x: !torch.vtensor<[1,?,?],f32>) -> !torch.vtensor<[1,3,2,?],f32> {
  %int2 = torch.constant.int 2
  %int1 = torch.constant.int 1
  %int3 = torch.constant.int 3
  %list = torch.prim.ListConstruct %int3, %int2 : (!torch.int, !torch.int) -> !torch.list<int>
  %y = torch.aten.unflatten.int %x, %int1, %list : !torch.vtensor<[1,?,?],f32>, !torch.int, !torch.list<int> -> !torch.vtensor<[1,3,2,?],f32>
  return %y : !torch.vtensor<[1,3,2,?],f32>
}
"""
UNFLATTEN_MESSAGE = "'tensor.expand_shape' op expected dimension N of collapsed type to be static value of N"


@pytest.mark.iree
def test_an_op_the_conversion_emits_itself_is_placed_at_the_conversion(toolchain):
    loc = place_frontend_refusal(UNFLATTEN, "llvm-cpu", toolchain, "convert-torch-to-linalg{allow-non-finites=true}",
                                 60.0, UNFLATTEN_MESSAGE)
    assert loc.certain and (loc.phase, loc.pass_name) == ("input", "convert-torch-to-linalg"), loc
    assert "itself emits the 'tensor.expand_shape'" in loc.evidence and "torch.aten.unflatten.int" in loc.ir_before
    detail = ("<work>/module.mlir:6:8: error: 'tensor.expand_shape' op expected dimension 1 of collapsed type to be "
              "static value of 6\n// -----// IR Dump After ConvertTorchToLinalg Failed: "
              "convert-torch-to-linalg{allow-non-finites=true} //----- //\n")
    bug = bug_record({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": UNFLATTEN_MESSAGE},
                     detail, ["llvm-cpu"], UNFLATTEN, loc)
    title = issue_title({"bug": bug, "detail": detail}, "llvm-cpu", "compile", "error", UNFLATTEN_MESSAGE)
    assert "makes what" not in title and "convert-torch-to-linalg" in title, title
    assert tracker_of({"bug": bug}).name == "torch-mlir"
    # without the refused op's name (or with a torch op's) nothing says the conversion made it
    assert not place_frontend_refusal(UNFLATTEN, "llvm-cpu", toolchain, "convert-torch-to-linalg", 60.0).localized


def test_the_campaign_places_such_a_bucket_and_its_cause_follows(tmp_path):
    import json

    from shapefuzz.campaign.database import BucketRow, CampaignStore
    from shapefuzz.campaign.localizing import LOCALIZE_META, _wanted, frontend_refusal_pass
    from shapefuzz.campaign.outcomes import BucketState, Triage
    from shapefuzz.campaign.report.summary import summarize
    from shapefuzz.model import Signature
    from shapefuzz.triage.component import FRONTEND_ONNX
    from shapefuzz.triage.localize import Localization

    message = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
    detail = ("<work>/module.mlir:3:10: error: 'linalg.generic' op inferred input/output operand #1 has shape's "
              "dimension #0 to be 4, but found 3\n// -----// IR Dump After ConvertTorchToLinalg Failed: "
              "convert-torch-to-linalg{allow-non-finites=true} //----- //\n")
    sig = Signature.from_json({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": message})
    bucket = BucketRow(sig=str(sig), sig_json=sig.to_json(), backend="llvm-cpu", stage="compile", status="error",
                       family="matmul", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0,
                       state=BucketState.CONFIRMED, repro_key="k", repro_size=10, repro_text=PER_ROW_ZERO_POINT,
                       detail=detail, corpus_entry="/c/e", shrunk_size=None, cause="cause-m",
                       triage=Triage.COMPILER_BUG)
    assert frontend_refusal_pass(bucket) == "convert-torch-to-linalg" and _wanted(bucket)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.put_bucket(bucket)
    loc = Localization("input", "convert-torch-onnx-to-torch", certain=True, pattern="onnx.MatMulInteger",
                       evidence="the IR first holds ...; convert-torch-to-linalg only refuses it")
    store.set_meta(LOCALIZE_META + bucket.sig, json.dumps(loc.to_json()))
    cause = summarize(store).causes[0]
    assert cause.failing_pass == "convert-torch-onnx-to-torch" and cause.component == FRONTEND_ONNX, cause
    assert "[convert-torch-onnx-to-torch (input)]" in cause.identity
    store.close()


def test_an_older_versions_unplaced_refusal_is_taken_again_and_the_new_answers_are_not():
    from shapefuzz.campaign.localizing import stale
    from shapefuzz.triage.localize import Localization

    old = Localization(evidence="not localized: no pass's output holds a broadcasting torch op whose static shapes "
                                "contradict its result type")
    assert stale(old)
    new = Localization(evidence="not localized: no pass before convert-torch-to-linalg holds a broadcasting torch op "
                                "whose static shapes contradict its result type, and the op it refuses "
                                "('torch.aten.mm') is not one only it emits")
    assert not stale(new)
    assert not stale(Localization(evidence="not localized: no pass's output holds a buffer sized from the bound"))
