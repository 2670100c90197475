"""A wrong value that another lowering pipeline computes right is not the strategy-selection pass's
(issue #43, audit batch A, cause 0b7ccb8219.2): LLVMCPUSelectLoweringStrategy only chose
DoubleTilingExpert; the bad IR (a stride-2 `extract_slice` folded as stride 1) is made by one of that
pipeline's passes. So the finding names no pass, says under which pipeline it is right and wrong and
lists the wrong pipeline's passes that are left, and no issue title says "after
...SelectLoweringStrategyPass"."""

from __future__ import annotations

from shapefuzz.triage.codegen_pass import find_codegen_pass
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.localize import CODEGEN, localize
from shapefuzz.triage.localize_types import PassRun, Values
from shapefuzz.triage.codegen_pass import Lowering

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
