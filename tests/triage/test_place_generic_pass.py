"""A compile error in a pass that runs in every phase (canonicalize, cse) is placed by the phase it
failed in and the pass it ran inside: "canonicalize (abi, inside inline)", and its component follows
from that phase, never "IREE compiler, in canonicalize"."""

from __future__ import annotations

import json

import pytest

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.localizing import LOCALIZE_META, _wanted, generic_failing_pass
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize, text_lines
from shapefuzz.judge.localize_probe import place_compile_failure
from shapefuzz.model import Signature
from shapefuzz.triage.component import INPUT_GLOBAL_OPT, component_of_place
from shapefuzz.triage.failing_pass import enclosing_passes, failing_pass, is_generic_pass
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.record import bug_record

# IREE 3.13's gather of one element from a `?` source (cause-0f4e3e1518 of the #31 audit): the
# inliner's canonicalize builds a rank-0 collapse_shape, in the ABI phase
GATHER = """func.func @main(%source: tensor<?xf32>, %indices_arg: tensor<1xi32>) -> tensor<f32> {
  %out_init = tensor.empty() : tensor<f32>
  %gathered = iree_linalg_ext.gather dimension_map = [0]
    ins(%source, %indices_arg : tensor<?xf32>, tensor<1xi32>) outs(%out_init : tensor<f32>) -> tensor<f32>
  return %gathered : tensor<f32>
}
"""
MESSAGE = "'tensor.collapse_shape' op expected collapsed rank (N) to equal the number of reassociation maps (N)."
# its output as IREE 3.13 printed it with --mlir-print-ir-after-failure, the IR dumps reduced to their headers
OUTPUT = (
    "reproducer.mlir:4:15: error: 'tensor.collapse_shape' op expected collapsed rank (0) to equal the number of "
    "reassociation maps (1).\n"
    "// -----// IR Dump After CanonicalizerPass Failed: canonicalize{cse-between-iterations=false    "
    "max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true} //----- //\n"
    "// -----// IR Dump After InlinerPass Failed: inline{default-pipeline=canonicalize "
    "inlining-threshold=4294967295 max-iterations=4 } //----- //\n")


def test_the_nested_dump_headers_say_which_pass_a_generic_pass_ran_inside():
    assert failing_pass(OUTPUT) == "canonicalize"
    assert enclosing_passes(OUTPUT) == ["canonicalize", "inline"]
    assert is_generic_pass("canonicalize") and is_generic_pass("CanonicalizerPass") and is_generic_pass("cse")
    assert not is_generic_pass("iree-dispatch-creation-fold-unit-extent-dims")
    assert not is_generic_pass("FoldUnitExtentDimsPass") and not is_generic_pass("")


def _bucket(lane: str, corpus_entry: str = "/c/e") -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": MESSAGE})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage="compile", status="error",
                     family="gather", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key="k", repro_size=10, repro_text=GATHER, detail=OUTPUT,
                     corpus_entry=corpus_entry, shrunk_size=None, cause="cause-g", triage=Triage.COMPILER_BUG)


def test_a_canonicalize_failure_placed_by_its_phase_names_it_and_its_component_follows(tmp_path):
    bucket = _bucket("llvm-cpu")
    assert generic_failing_pass(bucket) == "canonicalize" and _wanted(bucket)  # the campaign's step places it
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.put_bucket(bucket)
    vague = summarize(store).causes[0]
    assert vague.component == "IREE compiler, in canonicalize (llvm-cpu)"  # before it is placed
    loc = Localization("abi", "canonicalize", certain=True, inside="inline", evidence="compiled to abi ...")
    store.set_meta(LOCALIZE_META + bucket.sig, json.dumps(loc.to_json()))
    cause = summarize(store).causes[0]
    assert cause.where == "canonicalize (abi, inside inline)"
    assert cause.component == INPUT_GLOBAL_OPT and cause.failing_pass == "canonicalize"
    assert "[canonicalize (abi, inside inline)]" in cause.identity  # two phases' canonicalize bugs are two
    assert cause.to_json()["localized"]["inside"] == "inline"
    assert "; fails in canonicalize (abi, inside inline);" in "\n".join(text_lines(summarize(store)))
    store.close()


def test_an_entry_s_bug_record_and_issue_title_name_the_phase_a_canonicalize_failure_was_placed_in():
    loc = Localization("abi", "canonicalize", certain=True, inside="inline")
    bug = bug_record({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": MESSAGE}, OUTPUT,
                     ["llvm-cpu"], GATHER, loc)
    assert bug["component"] == INPUT_GLOBAL_OPT and "[canonicalize (abi, inside inline)]" in bug["identity"]
    title = issue_title({"bug": bug}, "llvm-cpu", "compile", "error", MESSAGE)
    assert title.startswith("[IREE input / global optimization] canonicalize (abi, inside inline) fails: ")


@pytest.mark.iree
def test_real_iree_places_the_gather_canonicalize_failure_in_the_abi_phase(toolchain):
    loc = place_compile_failure(GATHER, "llvm-cpu", toolchain, "canonicalize", 60.0)
    assert (loc.phase, loc.inside, loc.certain) == ("abi", "inline", True), loc.evidence
    assert loc.where == "canonicalize (abi, inside inline)"
    assert component_of_place(loc, ["llvm-cpu"]) == INPUT_GLOBAL_OPT
    assert "compiled to input it does not" in loc.evidence
