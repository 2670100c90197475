"""A wrong value that another lowering pipeline computes right is not the strategy-selection pass's
(issue #43, audit batch A, cause 0b7ccb8219.2): LLVMCPUSelectLoweringStrategy only chose
DoubleTilingExpert; the bad IR (a stride-2 `extract_slice` folded as stride 1) is made by one of that
pipeline's passes. So the finding names no pass, says under which pipeline it is right and wrong and
lists the wrong pipeline's passes that are left, and no issue title says "after
...SelectLoweringStrategyPass"."""

from __future__ import annotations

import dataclasses

import pytest

from shapefuzz.triage.codegen_pass import Lowering, find_codegen_pass
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.localize import CODEGEN, localize
from shapefuzz.triage.localize_types import PassRun, Values

FUNCTION = "main$async_dispatch_0_elementwise_3_i32xi64"
CONFIGURED = f"""module {{
  hal.executable private @e0 {{
    builtin.module {{
      func.func @{FUNCTION}() attributes {{translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>}} {{
        return
      }}
    }}
  }}
}}
"""
# the passes of the real dispatch's DoubleTilingExpert lowering that changed it (IREE 3.13), in order
CHANGED = ("iree-codegen-tile-and-distribute-to-workgroups-using-forall-op", "iree-codegen-generic-vectorization",
           "iree-codegen-optimize-tensor-insert-extract-slices", "iree-eliminate-empty-tensors",
           "iree-codegen-iree-comprehensive-bufferize", "canonicalize", "iree-codegen-vector-transfer-lowering")
NEEDED = {"iree-eliminate-empty-tensors", "iree-codegen-iree-comprehensive-bufferize"}  # without one: no compile


class StridedSlice:
    """As measured on IREE 3.13: every single omission of the DoubleTilingExpert list still computes
    the wrong values (or does not compile), while the `Default` pipeline computes the right ones."""

    lane = "llvm-cpu"

    def lowerings(self):
        runs = tuple(PassRun(f"{n.title().replace('-', '')}Pass", n, "func.func") for n in CHANGED)
        return [Lowering(FUNCTION, "e0", runs, PassRun("LLVMCPULowerExecutableTargetPass",
                                                       "iree-llvmcpu-lower-executable-target", "func.func"))]

    def configured_ir(self):
        return CONFIGURED

    def target_backend(self):
        return "llvm-cpu"

    def lower(self, function, passes=None, pipeline="", workgroup=()):
        if passes is None:
            return Values.RIGHT if pipeline == "#iree_cpu.pipeline<Default>" else Values.WRONG
        return Values.UNUSABLE if NEEDED - set(passes) else Values.WRONG

    def with_flags(self, flags):
        return Values.WRONG

    # as a localization probe: right when vmvx finishes the IR after `stream`, wrong on llvm-cpu
    def phase_ir(self, phase):
        return f"after {phase}"

    def finish(self, ir, phase, lane):
        return Values.RIGHT if lane != self.lane else Values.WRONG


def test_a_pipeline_that_computes_it_right_names_no_pass_and_lists_the_wrong_pipelines_passes():
    found = find_codegen_pass(StridedSlice(), lambda: None)
    assert (found.pass_name, found.pass_class) == ("", ""), found.evidence
    assert found.function == FUNCTION
    assert "SelectLoweringStrategy" not in found.pass_class
    said = found.evidence
    assert "right values on llvm-cpu under the `Default` pipeline, wrong under DoubleTilingExpert" in said, said
    assert "the culprit is among DoubleTilingExpert's passes that changed the function: " + ", ".join(CHANGED) in said
    # what the omissions said: each alone still wrong, and the two the rest needs never judged
    assert "left out alone, 5 of them still compute wrong values" in said
    assert ("without iree-codegen-iree-comprehensive-bufferize, iree-eliminate-empty-tensors it does not compile, "
            "so those are untried") in said


def test_the_issue_title_of_such_a_localization_names_the_lanes_codegen_not_a_strategy_pass():
    loc = localize(StridedSlice(), ("vmvx",), seconds=30)
    assert (loc.phase, loc.pass_name, loc.certain, loc.dispatch) == (CODEGEN, "", True, FUNCTION), loc.evidence
    assert loc.where == "codegen" and "wrong under DoubleTilingExpert" in loc.evidence
    meta = {"bug": {"component": "codegen for llvm-cpu", "localized": loc.to_json()}}
    title = issue_title(meta, "llvm-cpu", "compare", "mismatch", "wrong values in gather via torch")
    assert title == "[codegen for llvm-cpu] wrong values from llvm-cpu's codegen", title


OWN_IR = f"""// -----// IR Dump After LLVMCPULowerExecutableTargetPass: iree-llvmcpu-lower-executable-target //----- //
func.func @{FUNCTION}() attributes {{translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>}} {{
  %alloca = memref.alloca() alignment = 64 : memref<3xi64>
  return
}}
"""


class Replayed(StridedSlice):
    """The same, with the IR its replay as a pass list lowers to: bufferization's stack buffer on the heap."""

    def __init__(self, after, replayed: str) -> None:
        self.after, self.replayed, self.omitted = after, replayed, 0

    def lowerings(self):
        return [dataclasses.replace(low, after=self.after) for low in super().lowerings()]

    def replayed_ir(self, function, passes):
        return self.replayed

    def lower(self, function, passes=None, pipeline="", workgroup=()):
        self.omitted += passes is not None and len(passes) < len(CHANGED)
        return super().lower(function, passes, pipeline, workgroup)


def test_a_replay_that_lowers_to_other_ir_is_no_evidence_for_any_omission(tmp_path):
    after = tmp_path / "after.mlir"
    after.write_text(OWN_IR)
    on_heap = OWN_IR.replace("DoubleTilingExpert", 'pass_pipeline<"...">').replace(
        "%alloca = memref.alloca() alignment = 64 : memref<3xi64>", "%alloc = memref.alloc() : memref<3xi64>")
    probe = Replayed(after, on_heap)
    found = find_codegen_pass(probe, lambda: None)
    assert probe.omitted == 0 and not found.pass_name, found.evidence
    assert found.evidence.startswith(
        f"@{FUNCTION}'s lowering replayed as a pass list computes wrong values too, but is not the same lowering: "
        "after the pipeline the replay has `%alloc = memref.alloc() : memref<3xi64>` where the pipeline's own has "
        "`%alloca = memref.alloca() alignment = 64 : memref<3xi64>`, so no pass was left out of it; "), found.evidence
    assert "wrong under DoubleTilingExpert" in found.evidence and "left out alone" not in found.evidence
    # a flag that then makes it right names its pass, after what the replay said
    probe.with_flags = lambda flags: Values.RIGHT  # type: ignore[method-assign]
    found = find_codegen_pass(probe, lambda: None)
    assert found.pass_name == "loop-vectorize" and "is not the same lowering" in found.evidence.split("; ")[0]
    # the same IR but for the translation_info it names: the replay is the lowering, each pass is left out
    probe = Replayed(after, OWN_IR.replace("DoubleTilingExpert", 'pass_pipeline<"...">'))
    found = find_codegen_pass(probe, lambda: None)
    assert probe.omitted == len(CHANGED) and "left out alone, 5 of them" in found.evidence, found.evidence


# the audited cause's reproducer, its indices made in range (3 5 7: the stride-2 slice picks 3 and 7)
GATHER = """func.func @main(%source: !torch.vtensor<[13],si8>, %indices: !torch.vtensor<[3],si32>) -> !torch.vtensor<[2],si8> {
  %false = torch.constant.bool false
  %int4 = torch.constant.int 4
  %none = torch.constant.none
  %int0 = torch.constant.int 0
  %int9223372036854775807 = torch.constant.int 9223372036854775807
  %int2 = torch.constant.int 2
  %idx641 = torch.aten.to.dtype %indices, %int4, %false, %false, %none : !torch.vtensor<[3],si32>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[3],si64>
  %idx_s2 = torch.aten.slice.Tensor %idx641, %int0, %int0, %int9223372036854775807, %int2 : !torch.vtensor<[3],si64>, !torch.int, !torch.int, !torch.int, !torch.int -> !torch.vtensor<[2],si64>
  %gathered3 = torch.aten.index_select %source, %int0, %idx_s2 : !torch.vtensor<[13],si8>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2],si8>
  return %gathered3 : !torch.vtensor<[2],si8>
}
"""


@pytest.mark.iree
def test_the_strided_gather_on_llvm_cpu_is_placed_among_double_tiling_experts_passes(tmp_path, toolchain):
    """IREE 3.13: the replay as a pass list keeps bufferization's buffer off the stack (and `Default`'s own
    pass list is wrong too, while `Default` by name is right), so no omission is evidence; `Default` is
    right, DoubleTilingExpert wrong, and no pass is named."""
    import numpy as np

    from shapefuzz.judge.iree_probe import IreeProbe

    source = np.array([99, 79, -33, 85, 61, 47, -54, -84, -21, -57, 38, 43, -36], dtype=np.int8)
    indices = np.array([3, 5, 7], dtype=np.int32)
    probe = IreeProbe(GATHER, "llvm-cpu", [source, indices], [source[[3, 7]]], toolchain, str(tmp_path))
    found = find_codegen_pass(probe, lambda: None)
    assert not found.pass_name and "SelectLoweringStrategy" not in found.pass_class, found.evidence
    assert "replayed as a pass list computes wrong values too, but is not the same lowering" in found.evidence
    assert "memref.alloca()" in found.evidence
    assert "right values on llvm-cpu under the `Default` pipeline, wrong under DoubleTilingExpert" in found.evidence
    assert "iree-codegen-optimize-tensor-insert-extract-slices" in found.evidence  # among those listed


def test_a_kept_record_naming_the_strategy_pass_names_no_pass_and_is_taken_again(tmp_path):
    """The audited campaign's record of 0b7ccb8219.2 (`LLVMCPUSelectLoweringStrategyPass`, codegen) reads as
    placed in codegen without a pass (still apart from the Vulkan i8 cause it would join unplaced), and
    `triage --localize` localizes it again; another codegen pass's record stays as kept."""
    import json

    from shapefuzz.campaign.database import CampaignStore
    from shapefuzz.campaign.localizing import LOCALIZE_META, localization_of, stale
    from shapefuzz.triage.localize import Localization

    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    old = Localization(CODEGEN, "iree-llvmcpu-select-lowering-strategy", "LLVMCPUSelectLoweringStrategyPass",
                       "... the configuration LLVMCPUSelectLoweringStrategyPass chose (DoubleTilingExpert) is what its "
                       "pipeline miscompiles", certain=True, finished_by="vmvx", dispatch=FUNCTION)
    kept = Localization(CODEGEN, "iree-codegen-generic-vectorization", "GenericVectorizationPass", "...", certain=True)
    store.set_meta(LOCALIZE_META + "a", json.dumps(old.to_json()))
    store.set_meta(LOCALIZE_META + "b", json.dumps(kept.to_json()))
    read = localization_of(store, "a")
    assert read is not None and stale(old) and not stale(kept)
    assert (read.phase, read.pass_name, read.pass_class, read.certain) == (CODEGEN, "", "", True)
    assert read.evidence.endswith("LLVMCPUSelectLoweringStrategyPass only chose that pipeline: it is not where the "
                                  "bad IR is made, and no pass is named")
    assert read.where == "codegen"
    assert localization_of(store, "b") == kept
    store.close()
