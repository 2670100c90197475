"""Regression ranges judge an old release by the failure itself (stage, status, failing pass; for
wrong values, still wrong against the reference), never by its message: messages change across
releases. Outputs below are copied from IREE 3.2.0 and 3.13.0."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shapefuzz.corpus import load_entry
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult
from shapefuzz.triage.failing_pass import failing_pass
from shapefuzz.recheck.regression import GENERIC_FORM, Failure, regression_range

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "corpus" / "llvm-cpu-compile-error-8ed727d2bab5"  # a dim bound of 2^53-1 reaching a stack buffer

# The 2^53-1 bug at 3.2.0 and at 3.13.0: another message, the pass spelled another way.
OUTPUT_3_2 = """module.mlir:7:10: error: 'memref.alloca' op expected no unbounded stack allocations
// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed (iree-llvmcpu-check-ir-before-llvm-conversion) //----- //
// -----// IR Dump After TranslateTargetExecutableVariantsPass Failed (iree-hal-translate-target-executable-variants) //----- //
"""
OUTPUT_3_13 = """module.mlir:7:10: error: 'memref.alloca' op allocation size overflows 64 bits
// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: iree-llvmcpu-check-ir-before-llvm-conversion{fail-on-out-of-bounds=true} //----- //
// -----// IR Dump After mlir::iree_compiler::detail::OpPipelineAdaptorPass Failed: iree-op-pipeline-adaptor //----- //
"""


def test_the_same_pass_under_another_message_and_spelling_is_the_same_failure():
    old = Failure("compile", "error", failing_pass(OUTPUT_3_2) or "")
    new = Failure("compile", "error", failing_pass(OUTPUT_3_13) or "")
    assert old.failing_pass == "iree-llvmcpu-check-ir-before-llvm-conversion"  # 3.2 prints it in parentheses
    assert new.failing_pass == "iree-llvmcpu-check-ir-before-llvm-conversion"
    assert new.same_as(old) and old.same_as(new)
    # the GPU pass named by its backtrace class and by its argument (with a "codegen" prefix)
    assert Failure("compile", "crash", "GPUDistributeSharedMemoryCopyPass").same_as(
        Failure("compile", "crash", "iree-codegen-gpu-distribute-shared-memory-copy"))
    # a pass that moved from the flow pipeline to dispatch creation is still that pass
    assert Failure("compile", "error", "iree-flow-fold-unit-extent-dims").same_as(
        Failure("compile", "error", "iree-dispatch-creation-fold-unit-extent-dims"))
    assert Failure("compile", "error", "FoldUnitExtentDimsPass").same_as(
        Failure("compile", "error", "iree-dispatch-creation-fold-unit-extent-dims"))


def test_the_link_step_named_by_its_wrapper_or_by_the_pass_it_runs_is_one_failure():
    # an f16 softmax's "undefined symbol: fmaxf": IREE 3.13 names the wrapper, 3.6 the pass it runs per target
    at_3_13 = Failure("compile", "error", "iree-hal-serialize-all-executables")
    assert at_3_13.same_as(Failure("compile", "error", "SerializeTargetExecutablesPass"))
    assert at_3_13.same_as(Failure("compile", "error", "iree-hal-serialize-target-executables"))
    assert not at_3_13.same_as(Failure("compile", "error", "iree-hal-translate-all-executables"))


def test_another_pass_stage_or_status_is_another_failure():
    new = Failure("compile", "error", "iree-llvmcpu-check-ir-before-llvm-conversion")
    assert not new.same_as(Failure("compile", "error", "iree-codegen-llvmcpu-vector-lowering"))
    assert not new.same_as(Failure("compile", "crash", "iree-llvmcpu-check-ir-before-llvm-conversion"))
    assert not new.same_as(Failure("run", "error"))
    assert not Failure("compile", "crash", "CSEPass").same_as(Failure("compile", "crash", "CanonicalizePass"))
    # a pass is compared only where both outputs name one; wrong values: still wrong is the same
    assert new.same_as(Failure("compile", "error", ""))
    assert Failure("compare", "mismatch").same_as(Failure("compare", "mismatch"))


def test_a_release_that_cannot_tell_is_stepped_over_and_said(tmp_path):
    entry = load_entry(ENTRY)
    answers = {"3.2.0": (ReplayOutcome.UNREADABLE, "cannot parse the reproducer (unknown op)"),
               "3.4.0": (ReplayOutcome.NOT_RUNNABLE, "fails another way (run/error, not compile/error): cannot tell"),
               "3.8.0": (ReplayOutcome.STILL_FAILING, ""), "3.13.0": (ReplayOutcome.STILL_FAILING, "")}

    def check(e, version):
        outcome, detail = answers[version]
        return ReplayResult(e.id, e.path, outcome, "failing", e.signature, detail=detail)

    record = regression_range(entry, list(answers), check=check, installer=lambda v: v)
    assert record["text"] == "present in every release tried (3.8.0–3.13.0)"
    assert record["tried"] == "3.8.0, 3.13.0"
    assert "3.2.0: unreadable: cannot parse the reproducer" in record["stepped_over"]
    assert "3.4.0: not runnable: fails another way" in record["stepped_over"]
    answers.update({"3.8.0": answers["3.2.0"]})  # only the pinned release can tell: no range
    record = regression_range(entry, list(answers), check=check, installer=lambda v: v)
    assert record["text"] == "no range: only 3.13.0 could tell (the other releases were stepped over)"


# 3.13's spelling of iree_linalg_ext.attention (indexing maps, a region): older releases cannot parse it
ATTENTION = """func.func @main(%q: tensor<1x1x1xf32>, %k: tensor<1x1x1xf32>, %v: tensor<1x1x1xf32>) -> tensor<1x1x1xf32> {
  %scale = arith.constant 1.0 : f32
  %out_e = tensor.empty() : tensor<1x1x1xf32>
  %result = iree_linalg_ext.attention <indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> ()>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>]>
    ins(%q, %k, %v, %scale : tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, f32)
    outs(%out_e : tensor<1x1x1xf32>) {
  ^bb0(%score: f32):
    iree_linalg_ext.yield %score : f32
  } -> tensor<1x1x1xf32>
  return %result : tensor<1x1x1xf32>
}
"""


@pytest.mark.iree
def test_an_old_cached_release_shows_the_same_failure(toolchain, tmp_path):
    """Real IREE: the repository's 2^53-1 entry on the oldest release already in the toolchain
    cache (nothing is downloaded here) and on the pinned 3.13 wheels."""
    from shapefuzz.iree.releases import cached_versions, installed_version, version_key
    from shapefuzz.recheck.regression import local_installer, same_failure_check

    pinned = installed_version()
    older = [v for v in cached_versions() if pinned and version_key(v) < version_key(pinned)]
    if not older:
        pytest.skip("no release older than the pinned wheels in the toolchain cache "
                    "(`shapefuzz bisect ENTRY --versions 3.2.0,3.13.0` fills it)")
    entry = load_entry(ENTRY)
    on_old = same_failure_check("iree-llvmcpu-check-ir-before-llvm-conversion")(entry, local_installer(older[0]))
    assert on_old.outcome == ReplayOutcome.STILL_FAILING, on_old.detail
    assert "iree-llvmcpu-check-ir-before-llvm-conversion" in on_old.detail  # by its argument, as 3.13 names it
    elsewhere = same_failure_check("iree-codegen-llvmcpu-vector-lowering")(entry, local_installer(older[0]))
    assert elsewhere.outcome == ReplayOutcome.NOT_RUNNABLE and "fails another way" in elsewhere.detail
    record = regression_range(entry, [older[0], pinned], failing="iree-llvmcpu-check-ir-before-llvm-conversion")
    assert record["text"] == f"present in every release tried ({older[0]}–{pinned})", record
    # a reproducer in a newer spelling: stepped over, said without the temporary file's path
    shutil.copytree(ENTRY, tmp_path / ENTRY.name)
    (tmp_path / ENTRY.name / "reproducer.mlir").write_text(ATTENTION)
    newer = same_failure_check(printer=lambda: None)(load_entry(tmp_path / ENTRY.name), local_installer(older[0]))
    assert newer.outcome == ReplayOutcome.UNREADABLE and newer.detail.startswith("cannot parse the reproducer (")
    assert "attention" in newer.detail and "/tmp" not in newer.detail and "module.mlir" not in newer.detail
    # with the pinned wheels to print it, the old release reads its generic form instead
    generic = same_failure_check()(load_entry(tmp_path / ENTRY.name), local_installer(older[0]))
    assert generic.outcome != ReplayOutcome.UNREADABLE and GENERIC_FORM in generic.detail, generic.detail
