"""Naming the codegen pass of a wrong value (issue #43 item 3): a dispatch's lowering pipeline read
from an IR tree dump, written back as a `#iree_codegen.pass_pipeline` with one pass left out, the
configuration and the target's flags tried after (fakes, fast); on IREE 3.13, the average pool's
window count that GenericVectorization folds to one step (a reduction of a loop-invariant 1.0),
named with the IR before and after it, and the issue text showing that IR."""

from __future__ import annotations

import dataclasses
import shutil
from pathlib import Path

import numpy as np
import pytest

from shapefuzz.campaign.localizing import component_of_localization
from shapefuzz.triage.codegen_pass import (FLAG_TABLE, Lowering, find_codegen_pass, lowerings_in, pipeline_of,
                                          with_translation, workgroup_of)
from shapefuzz.triage.localize import CODEGEN, JIT_LANE, MAX_EVIDENCE, MAX_IR, Localization, localize
from shapefuzz.triage.localize_types import PassRun, Values

ROOT = Path(__file__).resolve().parents[2]
AVG_POOL = ROOT / "corpus" / "llvm-cpu-compare-mismatch-cbbd2208da0a"  # avg pool, count_include_pad, window 5

CONFIGURED = """#translation = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<Mmt4dTilingExpert>>
module {
  hal.executable private @e0 {
    builtin.module {
      func.func @d0() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<DoubleTilingExpert>>} {
        return
      }
      func.func @d1() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_gpu.spirv_pipeline<BaseDistribute> workgroup_size = [64, 1, 1]>} {
        return
      }
      func.func @d2() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_codegen.vmvx_pipeline>} {
        return
      }
      func.func @d3() attributes {translation_info = #translation} {
        return
      }
    }
  }
}
"""


def test_a_dispatchs_translation_info_takes_a_pass_list_a_pipeline_or_a_workgroup_size():
    text = with_translation(CONFIGURED, "d0", ["cse", 'foo{name="x"}'])
    assert text is not None and '#iree_codegen.pass_pipeline<"cse,foo{name=\\"x\\"}">' in text
    assert text.count("pass_pipeline") == 1 and "DoubleTilingExpert" not in text and "BaseDistribute" in text
    assert pipeline_of(CONFIGURED, "d0") == "DoubleTilingExpert" and pipeline_of(CONFIGURED, "d2").endswith("vmvx_pipeline")
    one = with_translation(CONFIGURED, "d1", workgroup=(1, 1, 1)) or ""
    assert workgroup_of(one, "d1") == (1, 1, 1) and pipeline_of(one, "d1") == "BaseDistribute"
    assert workgroup_of(CONFIGURED, "d1") == (64, 1, 1) and workgroup_of(CONFIGURED, "d0") == ()
    vmvx = with_translation(CONFIGURED, "d2", ["cse"]) or ""
    assert 'translation_info<pipeline = #iree_codegen.pass_pipeline<"cse">>' in vmvx
    # an alias is written out on the one function, its definition (shared) left alone
    aliased = with_translation(CONFIGURED, "d3", ["cse"]) or ""
    assert pipeline_of(CONFIGURED, "d3") == "Mmt4dTilingExpert"
    assert '@d3() attributes {translation_info = #iree_codegen.translation_info<pipeline = #iree_codegen.pass_pipeline<"cse">>}' in aliased
    assert aliased.startswith("#translation = #iree_codegen.translation_info<pipeline = #iree_cpu.pipeline<Mmt4dTilingExpert>>")
    assert with_translation(CONFIGURED, "nowhere", ["cse"]) is None
    assert with_translation(CONFIGURED, "d0", workgroup=(1,)) is None  # it has no workgroup size to change


def _dump(folder: Path, order: str, cls: str, arg: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{order}_{arg.split('{')[0]}.mlir").write_text(
        f"// -----// IR Dump After {cls}: {arg} //----- //\n{body}\n")


def test_a_tree_dump_gives_each_dispatchs_lowering_passes_in_order_with_what_changed(tmp_path):
    variant = tmp_path / "builtin_module_no-symbol-name" / "hal_executable_main_dispatch_0" / \
        "hal_executable_variant_embedded_elf_x86_64" / "builtin_module_no-symbol-name"
    func = variant / "func_func_main_dispatch_0_reduction"
    _dump(variant, "6_0_0_0", "LowerExecutableUsingTransformDialectPass",
          "iree-codegen-lower-executable-using-transform-dialect", "module")
    _dump(func, "6_0_0_0_0", "TilePass", "iree-llvmcpu-tile{tiling-level=vector_reduction}", "tiled")
    _dump(func, "6_0_0_0_1", "CSEPass", "cse", "tiled")  # changed nothing
    _dump(func, "6_0_0_0_2", "GenericVectorizationPass", "iree-codegen-generic-vectorization{enable-cleanup=true}",
          "vectorized")
    _dump(func, "6_0_0_0_10", "CSEPass", "cse", "vectorized, cleaned")  # 10 after 2: the numbers order them
    _dump(func, "6_0_0_0_11", "LLVMCPULowerExecutableTargetPass", "iree-llvmcpu-lower-executable-target{cpu-options=opaque}",
          "lowered")
    _dump(func, "6_0_0_0_12", "VerifyWorkgroupDistributionPass", "iree-codegen-verify-workgroup-distribution", "lowered")
    [low] = lowerings_in(tmp_path)
    assert (low.function, low.executable) == ("main_dispatch_0_reduction", "main_dispatch_0")
    assert [r.name for r in low.runs] == ["iree-llvmcpu-tile", "cse", "iree-codegen-generic-vectorization", "cse"]
    assert [r.changed for r in low.runs] == [True, False, True, True]
    assert low.arguments(omit="cse") == ["iree-llvmcpu-tile{tiling-level=vector_reduction}",
                                         "iree-codegen-generic-vectorization{enable-cleanup=true}"]
    assert [r.name for r in low.candidates()] == ["iree-llvmcpu-tile", "iree-codegen-generic-vectorization", "cse"]
    assert low.ir_around("iree-codegen-generic-vectorization") == ("tiled\n", "vectorized\n")
    assert low.strategy_pass == ("iree-llvmcpu-select-lowering-strategy", "LLVMCPUSelectLoweringStrategyPass")


def _lowering(function: str, *names: str) -> Lowering:
    runs = tuple(PassRun(f"{n.title().replace('-', '')}Pass", n, "func.func") for n in names)
    return Lowering(function, "e0", runs, PassRun("LLVMCPULowerExecutableTargetPass",
                                                  "iree-llvmcpu-lower-executable-target", "func.func"))


class FakeCodegen:
    """A program whose dispatch `bad_function` computes wrong values unless `bad` (or `needs`, the
    pass making its form) is left out of its lowering, or a `fix` configuration change is made."""

    lane = "llvm-cpu"

    def __init__(self, bad: str = "", needs: str = "", fix: dict | None = None, flag: str = "",
                 faithful: bool = True, backend: str = "llvm-cpu") -> None:
        self.bad, self.needs, self.fix, self.flag, self.faithful, self.backend = bad, needs, fix, flag, faithful, backend
        self.lowered: list[tuple[str, tuple[str, ...] | None]] = []

    def lowerings(self):
        return [_lowering("d0", "tile", "vectorize", "bufferize"), _lowering("d1", "tile", "bar", "foo", "cse")]

    def configured_ir(self):
        return CONFIGURED

    def target_backend(self):
        return self.backend

    def lower(self, function, passes=None, pipeline="", workgroup=()):
        self.lowered.append((function, tuple(passes) if passes is not None else None))
        if passes is None:
            change = {"pipeline": pipeline} if pipeline else {"workgroup": tuple(workgroup)}
            return Values.RIGHT if function == "d1" and self.fix == change else Values.WRONG
        if "bufferize" not in passes and function == "d0":
            return Values.UNUSABLE  # a pass the rest needs
        if function != "d1":
            return Values.WRONG
        if not self.faithful:
            return Values.RIGHT
        left_out = {"tile", "bar", "foo", "cse"} - set(passes)
        return Values.RIGHT if left_out & {self.bad, self.needs} else Values.WRONG

    def with_flags(self, flags):
        return Values.RIGHT if self.flag in flags else Values.WRONG


def test_the_last_pass_of_the_wrong_dispatchs_lowering_whose_omission_fixes_it_is_named():
    probe = FakeCodegen(bad="foo", needs="bar")
    found = find_codegen_pass(probe, lambda: None)
    assert (found.pass_name, found.function) == ("foo", "d1"), found.evidence
    assert "DoubleTilingExpert" not in found.evidence and "without foo computes the right ones" in found.evidence
    # d0's list first, then its omissions from the last back; d1's whole list, then cse, foo (bar never)
    assert [f for f, _ in probe.lowered] == ["d0", "d0", "d0", "d0", "d1", "d1", "d1"]


def test_a_replay_that_is_not_the_lowering_is_never_used_and_nothing_is_named_without_evidence():
    found = find_codegen_pass(FakeCodegen(bad="foo", faithful=False), lambda: None)
    assert not found.pass_name and "@d1's lowering replayed as a pass list computes the right values" in found.evidence
    assert "names none" in found.evidence and FLAG_TABLE["llvm-cpu"][0].flag in found.evidence


def test_with_no_pass_to_leave_out_the_configuration_then_the_targets_flags_are_tried():
    found = find_codegen_pass(FakeCodegen(fix={"workgroup": (1, 1, 1)}, backend="vulkan-spirv"), lambda: None)
    assert not found.pass_name, found.evidence  # choosing the configuration is not making the bad IR
    assert "with `workgroup_size = [1, 1, 1]`, wrong with [64, 1, 1] under BaseDistribute" in found.evidence
    flag = FLAG_TABLE["llvm-cpu"][1]
    found = find_codegen_pass(FakeCodegen(flag=flag.flag), lambda: None)
    assert (found.pass_name, found.pass_class) == (flag.pass_name, flag.pass_class) and flag.flag in found.evidence


class CodegenLaneProbe:
    """A localization probe (test_localize's shape) whose bug is in the failing lane's codegen,
    with a codegen search behind it (`FakeCodegen`)."""

    lane = "llvm-cpu"

    def __init__(self, codegen: FakeCodegen) -> None:
        self.codegen = codegen

    def phase_ir(self, phase):
        return f"after {phase}"

    def finish(self, ir, phase, lane):
        return Values.RIGHT if lane != self.lane else Values.WRONG

    def __getattr__(self, name):  # lowerings, lower, configured_ir, with_flags, target_backend
        return getattr(self.codegen, name)


def test_a_wrong_value_placed_in_codegen_is_named_by_its_pass_and_stays_placed_when_none_is():
    loc = localize(CodegenLaneProbe(FakeCodegen(bad="foo")), ("vmvx",), seconds=30)
    assert (loc.phase, loc.pass_name, loc.dispatch, loc.certain) == (CODEGEN, "foo", "d1", True), loc.evidence
    assert loc.where == "FooPass (codegen)" and "compiled onward by vmvx" in loc.evidence
    assert Localization.from_json(loc.to_json()) == dataclasses.replace(loc, seconds=round(loc.seconds, 1))
    # nothing named: still placed in codegen, the evidence says what was tried
    loc = localize(CodegenLaneProbe(FakeCodegen()), ("vmvx",), seconds=30)
    assert loc.phase == CODEGEN and not loc.pass_name and "names none" in loc.evidence


def test_a_wrong_constant_the_evaluator_computed_is_named_in_its_lanes_codegen():
    """vmvx reads a constant the compile-time evaluator computed with llvm-cpu: right with
    const-eval off, while llvm-cpu's own code (const-eval off) is wrong; its codegen names the pass,
    and the component is llvm-cpu's codegen, not vmvx's."""

    class Evaluated(CodegenLaneProbe):
        lane = "vmvx"

        def __init__(self, const_eval: bool = True, lane: str = "vmvx") -> None:
            super().__init__(FakeCodegen(bad="foo"))
            self.const_eval, self.lane = const_eval, lane

        def finish(self, ir, phase, lane):
            return Values.WRONG if self.const_eval or lane == JIT_LANE else Values.RIGHT

        def without_const_eval(self):
            return Evaluated(const_eval=False)

        def for_lane(self, lane):
            return Evaluated(self.const_eval, lane)

    loc = localize(Evaluated(), (JIT_LANE,), seconds=30)
    assert (loc.phase, loc.pass_name, loc.target) == (CODEGEN, "foo", JIT_LANE), loc.evidence
    assert "JitGlobalsPass" in loc.evidence and "llvm-cpu computes it wrong with `--iree-opt-const-eval=false` too" \
        in loc.evidence
    assert component_of_localization(loc, ["vmvx"]) == "codegen for llvm-cpu"


# --- real IREE 3.13 ------------------------------------------------------------------------------
@pytest.mark.iree
def test_the_avg_pool_count_wrong_value_names_generic_vectorization(tmp_path, toolchain):
    """The count of an average pool with count_include_pad (a sum of 1.0 over a 5-wide window) is 1
    on llvm-cpu: its DoubleTilingExpert lowering replayed without GenericVectorization computes 5.
    Searched here from the failing lane's codegen (const-eval off, as the localization gets there)."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.judge.localize_probe import IreeProbe

    entry = load_entry(AVG_POOL)
    probe = IreeProbe(entry.mlir, "llvm-cpu", entry.inputs or [], entry.expected or [], toolchain,
                      str(tmp_path), extra=("--iree-opt-const-eval=false",))
    found = find_codegen_pass(probe, lambda: None)
    assert (found.pass_name, found.pass_class) == ("iree-codegen-generic-vectorization",
                                                   "GenericVectorizationPass"), found.evidence
    assert found.function.endswith("reduction_5_f32") and "DoubleTilingExpert" in found.evidence
    # before it, a reduction adding 1.0 five times; after it, a single write of 1.0
    assert "linalg.generic" in found.ir_before and "arith.addf %out, %cst" in found.ir_before
    assert "linalg.generic" not in found.ir_after and "vector.transfer_write %cst" in found.ir_after
    assert "dense<1.000000e+00> : vector<f32>" in found.ir_after


@pytest.mark.iree
def test_the_issue_text_shows_the_ir_before_and_after_the_codegen_pass(tmp_path, toolchain):
    from shapefuzz.corpus import load_entry, update_meta
    from shapefuzz.export.issue import IssueContext, to_issue
    from shapefuzz.export.plan import plan

    path = tmp_path / AVG_POOL.name
    shutil.copytree(AVG_POOL, path)
    evidence = "the lowering replayed without it computes the right values" + "; and more" * 300  # 3,000 characters
    loc = Localization(CODEGEN, "iree-codegen-generic-vectorization", "GenericVectorizationPass", evidence,
                       certain=True, finished_by="vmvx", ir_before="%4 = linalg.generic\n  ^bb0(%in: f32):",
                       ir_after="%2 = vector.transfer_write %cst", dispatch="main_dispatch_0_reduction_5_f32")
    bug = load_entry(path).meta.get("bug") or {}
    # the entry keeps the IR's lines and the long evidence, and still loads (its meta.json is checked)
    update_meta(path, bug={**bug, "localized": loc.to_json(), "component": "codegen for llvm-cpu"})
    said = to_issue(plan(load_entry(path), toolchain), IssueContext("IREE 3.13.0", ()), "issue.files")
    assert f"Localized by running intermediate IR: {evidence}." in said
    assert ("The IR of `@main_dispatch_0_reduction_5_f32` before `GenericVectorizationPass`:\n\n```mlir\n"
            "%4 = linalg.generic\n  ^bb0(%in: f32):\n```") in said
    assert "after `GenericVectorizationPass`:\n\n```mlir\n%2 = vector.transfer_write %cst\n```" in said
    # a record is bounded whatever a search said: what meta.json would refuse is cut
    huge = dataclasses.replace(loc, evidence="x" * 20_000, ir_after="y\n" * 20_000).to_json()
    assert len(str(huge["evidence"])) == MAX_EVIDENCE and len(str(huge["ir_after"])) == MAX_IR
    assert np.load(path / "expected" / "result0.npy").size == 1
