"""Localizing wrong values: the search over a fake probe (fast), and real IREE 3.13 failures (the
FoldUnitExtentDims pool, the default Vulkan profile's i8 emulation); in a campaign's summary, two
wrong-value buckets localized to different passes are two causes, each named by where it breaks."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.campaign.localizing import LOCALIZE_META, component_of_localization
from shapefuzz.campaign.report.summary import markdown, summarize
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.model import Signature
from shapefuzz.triage.component import DISPATCH_CREATION
from shapefuzz.triage.issue import issue_title
from shapefuzz.triage.localize import CODEGEN, Localization, Values, localize, pass_runs, pipeline_text
from shapefuzz.triage.severity import Severity

ROOT = Path(__file__).resolve().parents[2]
FOLD_POOL = ROOT / "corpus" / "llvm-cpu-compare-mismatch-8dbed37c070f"  # ONNX max pool, kernel 3x1, dynamic batch


def _header(cls: str, arg: str, anchor: str = "builtin.module", func: str = "") -> str:
    at = f": @{func}" if func else ""
    return f"// -----// IR Dump After {cls}: {arg} ('{anchor}' operation{at}) //----- //"


DUMP = "\n".join([
    _header("AssignTargetDevicesPass", "iree-hal-assign-target-devices{targetDevices={local}}"),
    _header("CSEPass", "cse", "util.func", "main$async"), _header("FooPass", "foo{a=1 b=2}", "util.func", "main$async"),
    _header("CSEPass", "cse", "util.func", "main"), _header("FooPass", "foo{a=1 b=2}", "util.func", "main"),
    _header("OpPipelineAdaptorPass", "iree-op-pipeline-adaptor"),
    _header("BarPass", "bar"),
])


def test_a_phase_pass_list_is_replayed_once_per_function_without_device_passes_or_the_omitted_pass():
    runs = pass_runs(DUMP)
    assert [r.cls for r in runs][:3] == ["AssignTargetDevicesPass", "CSEPass", "FooPass"]
    assert pipeline_text(runs) == "builtin.module(util.func(cse,foo{a=1 b=2}),bar)"
    assert pipeline_text(runs, omit="foo") == "builtin.module(util.func(cse),bar)"
    assert pipeline_text(runs, omit="bar") == "builtin.module(util.func(cse,foo{a=1 b=2}))"


class FakeProbe:
    """A program whose values go wrong in `bad_phase` by pass `bad` (FooPass needs BarPass's form
    when `needs` says so); `ref_right` lanes compile the rest right."""

    lane = "gpu"

    def __init__(self, bad_phase: str, bad: str = "", needs: str = "", ref_right: bool = True) -> None:
        self.bad_phase, self.bad, self.needs, self.ref_right = bad_phase, bad, needs, ref_right
        self.calls = 0

    def phase_ir(self, phase):
        return f"after {phase}"

    def finish(self, ir, phase, lane):
        self.calls += 1
        from shapefuzz.triage.localize import PHASES

        if ir.startswith("replayed"):
            return Values.RIGHT if "omit " + self.bad in ir or (self.needs and "omit " + self.needs in ir) else Values.WRONG
        if lane != self.lane and not self.ref_right:
            return Values.WRONG
        if phase == "start":
            return Values.RIGHT if lane != self.lane else Values.WRONG
        if self.bad_phase == CODEGEN:
            return Values.RIGHT if lane != self.lane else Values.WRONG
        done = PHASES.index(phase) >= PHASES.index(self.bad_phase) if phase in PHASES else False
        return Values.WRONG if done or lane == self.lane else Values.RIGHT

    def phase_dump(self, ir, after, phase):
        return "\n".join(_header(c, a) for c, a in (("CSEPass", "cse"), ("BarPass", "bar"), ("FooPass", "foo")))

    def replay(self, ir, pipeline):
        left = {p for p in ("cse", "bar", "foo", "generalize-named-ops") if p not in pipeline.split("(", 1)[1]}
        return "replayed" + "".join(f" omit {p}" for p in sorted(left))


def test_cross_lane_finishing_places_a_target_only_bug_in_codegen():
    probe = FakeProbe(CODEGEN)
    loc = localize(probe, ("cpu",), seconds=30)
    assert loc.phase == CODEGEN and not loc.pass_name and "cpu" in loc.evidence
    assert probe.calls == 2  # the right lane on the program itself, then on the IR after `stream`


def test_the_wrong_phase_is_bisected_and_the_last_pass_whose_omission_fixes_it_is_named():
    loc = localize(FakeProbe("dispatch-creation", bad="foo", needs="bar"), ("cpu",), seconds=30)
    assert (loc.phase, loc.pass_name, loc.pass_class) == ("dispatch-creation", "foo", "FooPass") and loc.certain
    # BarPass (earlier, making the form FooPass mishandles) fixes it too, but FooPass is the last


def test_a_pass_that_only_respells_ops_is_never_named():
    probe = FakeProbe("global-optimization", bad="generalize-named-ops", ref_right=False)
    probe.phase_dump = lambda ir, after, phase: "\n".join(
        _header(c, a) for c, a in (("GeneralizeLinalgNamedOpsPass", "generalize-named-ops"), ("FooPass", "foo")))
    loc = localize(probe, (), seconds=30)
    assert not loc.localized and "GeneralizeLinalgNamedOpsPass" in loc.evidence


def test_with_no_right_lane_pass_omission_alone_names_the_pass():
    loc = localize(FakeProbe("global-optimization", bad="foo", ref_right=False), (), seconds=30)
    assert loc.pass_name == "foo" and loc.phase == "global-optimization"
    assert not loc.certain and loc.where == "needs FooPass (global-optimization)"  # it may only make the form
    title = issue_title({"bug": {"component": "c", "localized": loc.to_json()}}, "gpu", "compare", "mismatch", "m")
    assert title == "[c] wrong values that go away without FooPass (global-optimization)"
    # a lane said to be right that is wrong on this program is not used to finish anything; when
    # every other lane is wrong too, the pass is where it breaks
    loc = localize(FakeProbe("global-optimization", bad="foo", ref_right=False), ("cpu",), seconds=30)
    assert loc.pass_name == "foo" and "finished by gpu" in loc.evidence
    assert loc.certain and loc.where == "FooPass (global-optimization)"


def test_a_localization_out_of_budget_says_so():
    ticks = iter(range(0, 1000, 10))
    loc = localize(FakeProbe("flow", bad="nothing-fixes-it"), ("cpu",), seconds=25, clock=lambda: next(ticks))
    assert not loc.localized and loc.evidence.startswith("not localized: the 25s budget ran out")


class ConstEvalProbe(FakeProbe):
    """Every lane reads a constant the compile-time evaluator got wrong; with const-eval off only
    the failing lane's codegen is wrong (`codegen_bug`), or nothing is."""

    def __init__(self, codegen_bug: bool, const_eval: bool = True) -> None:
        super().__init__(CODEGEN if codegen_bug else "never", ref_right=not const_eval)
        self.codegen_bug, self.const_eval = codegen_bug, const_eval

    def finish(self, ir, phase, lane):
        if not self.const_eval and not self.codegen_bug:
            self.calls += 1
            return Values.RIGHT
        return super().finish(ir, phase, lane)

    def without_const_eval(self):
        return ConstEvalProbe(self.codegen_bug, const_eval=False)


def test_a_wrong_constant_from_the_compile_time_evaluator_is_placed_with_const_eval_off():
    loc = localize(ConstEvalProbe(codegen_bug=True), ("cpu", "vmvx"), seconds=30)
    assert loc.phase == CODEGEN and loc.certain and loc.finished_by == "cpu", loc.evidence
    assert "--iree-opt-const-eval=false" in loc.evidence and "every lane tried (gpu, cpu, vmvx)" in loc.evidence
    loc = localize(ConstEvalProbe(codegen_bug=False), ("cpu",), seconds=30)
    assert (loc.phase, loc.pass_name, loc.pass_class) == ("global-optimization", "iree-consteval-jit-globals",
                                                          "JitGlobalsPass") and loc.certain, loc.evidence


# --- real IREE 3.13 ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def fold_pool(toolchain):
    """The FoldUnitExtentDims pool localized on llvm-cpu (every lane computes it wrong)."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.judge.localize_probe import localize_entry

    return localize_entry(load_entry(FOLD_POOL), toolchain, seconds=60)


@pytest.mark.iree
def test_the_fold_unit_extent_dims_pool_is_localized_to_its_pass(fold_pool):
    loc = fold_pool
    assert loc.phase == "global-optimization", loc.evidence
    assert loc.pass_name == "iree-dispatch-creation-fold-unit-extent-dims", loc.evidence
    assert loc.certain and "every lane tried" in loc.evidence  # vmvx (and Vulkan, where it runs) wrong too
    assert component_of_localization(loc, ["llvm-cpu", "vmvx"]) == DISPATCH_CREATION


I8_DOUBLE = """func.func @main(%x: tensor<3xi8>) -> tensor<3xi8> {
  %e = tensor.empty() : tensor<3xi8>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%x : tensor<3xi8>) outs(%e : tensor<3xi8>) {
  ^bb0(%a: i8, %o: i8):
    %s = arith.addi %a, %a : i8
    linalg.yield %s : i8
  } -> tensor<3xi8>
  return %r : tensor<3xi8>
}
"""


@pytest.fixture(scope="module")
def i8_double(toolchain):
    """3xi8 `x+x` on the default Vulkan profile (`0 0 0`), localized; None without a Vulkan device."""
    from shapefuzz.judge.localize_probe import localize_program

    if not BACKENDS["vulkan-spirv"].executes(toolchain.probe):
        return None
    x = np.array([1, 2, 3], np.int8)
    return localize_program(I8_DOUBLE, "vulkan-spirv", [x], [x + x], toolchain, passed=("llvm-cpu",), seconds=60)


@pytest.mark.iree
def test_the_default_vulkan_profiles_i8_bug_is_localized_to_its_codegen(toolchain, i8_double):
    if i8_double is None:
        pytest.skip("no Vulkan device here")
    loc = i8_double
    assert loc.phase == CODEGEN, loc.evidence
    assert component_of_localization(loc, ["vulkan-spirv"]).startswith("codegen for SPIR-V")
    if BACKENDS["vulkan-llvmpipe"].executes(toolchain.probe):  # the llvmpipe target on the same device is right
        assert loc.finished_by == "vulkan-llvmpipe" and "IREE's, not the device's" in loc.evidence


@pytest.mark.iree
def test_two_real_wrong_value_bugs_localized_apart_are_two_causes(tmp_path, toolchain, fold_pool, i8_double):
    """The engine tied the two buckets into one weak cause (a candidate hit both); where they break
    (dispatch creation's FoldUnitExtentDims, the Vulkan target's codegen) keeps them apart."""
    if i8_double is None:
        pytest.skip("no Vulkan device here")
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for lane, loc, first in (("llvm-cpu", fold_pool, 1.0), ("vulkan-spirv", i8_double, 2.0)):
        row = _mismatch(lane, "pool", first)
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(loc.to_json()))
    causes = {c.backends[0]: c for c in summarize(store).causes}
    assert len(causes) == 2 and causes["llvm-cpu"].identity != causes["vulkan-spirv"].identity
    assert causes["llvm-cpu"].component == DISPATCH_CREATION
    assert causes["vulkan-spirv"].component.startswith("codegen for SPIR-V")
    store.close()


# --- in a campaign --------------------------------------------------------------------------------
def _mismatch(lane: str, family: str, first: float) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compare", "status": "mismatch",
                               "message": f"wrong values in {family}"})
    fields = {**sig.to_json(), "identity": f"compare/mismatch [?]: wrong values in {family}", "strong": ""}
    return BucketRow(sig=str(sig), sig_json=fields, backend=lane, stage="compare", status="mismatch", family=family,
                     count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key="k", repro_size=10, repro_text="x", detail="",
                     corpus_entry="", shrunk_size=None, cause="cause-one", triage=Triage.COMPILER_BUG)


def test_two_wrong_value_buckets_localized_to_different_passes_stay_two_causes(tmp_path):
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    a, b = _mismatch("llvm-cpu", "conv_transpose", 1.0), _mismatch("vulkan-spirv", "conv_transpose", 2.0)
    for row, loc in ((a, Localization("dispatch-creation", "iree-dispatch-creation-fusion-preprocessing",
                                      "FusionPreprocessingPass", "omitting it fixes it", certain=True)),
                     (b, Localization(CODEGEN, evidence="finished by llvm-cpu from stream: right", certain=True))):
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(loc.to_json()))
    causes = {c.backends[0]: c for c in summarize(store).causes}
    assert len(causes) == 2  # the engine had tied them into one cause
    cpu, vk = causes["llvm-cpu"], causes["vulkan-spirv"]
    assert cpu.identity != vk.identity and "fusion-preprocessing" in cpu.identity
    assert cpu.component == DISPATCH_CREATION and vk.component.startswith("codegen for SPIR-V")
    assert cpu.failing_pass == "iree-dispatch-creation-fusion-preprocessing"
    title = issue_title({"bug": {"component": cpu.component, "localized": cpu.localized.to_json()}},
                        "llvm-cpu", "compare", "mismatch", "wrong values in conv_transpose")
    assert title == f"[{DISPATCH_CREATION}] wrong values after FusionPreprocessingPass (dispatch-creation)"
    assert "FusionPreprocessingPass (dispatch-creation)" in markdown(summarize(store))
    store.close()


def test_the_campaign_step_localizes_each_new_wrong_value_bucket_once_within_its_budget(tmp_path, monkeypatch):
    import shapefuzz.judge.localize_probe
    from shapefuzz.campaign.localizing import localization_of, localize_causes

    calls = []

    def fake(entry, toolchain, lane, passed, seconds):
        calls.append((entry.id, lane, tuple(passed), seconds))
        return Localization("global-optimization", "iree-dispatch-creation-fold-unit-extent-dims",
                            "FoldUnitExtentDimsPass", "omitting it fixes it", 3.0)

    monkeypatch.setattr(shapefuzz.judge.localize_probe, "localize_entry", fake)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    wrong = dataclasses.replace(_mismatch("llvm-cpu", "pool", 1.0), corpus_entry=str(FOLD_POOL))
    error = dataclasses.replace(wrong, sig="llvm-cpu/compile/error: x", stage="compile", status="error")
    for row in (wrong, error):
        store.put_bucket(row)
    said = []
    causes = summarize(store).causes
    assert [(set(c.buckets), c.new) for c in causes] == [({wrong.sig, error.sig}, True)]
    assert localize_causes(store, causes, None, 0.5, said.append) == 0 and "time is up" in said[-1]
    assert localize_causes(store, causes, None, 120.0, said.append) == 1  # the compile error is not localized
    assert calls == [(FOLD_POOL.name, "llvm-cpu", (), 60.0)]
    assert localization_of(store, wrong.sig).where == "needs FoldUnitExtentDimsPass (global-optimization)"
    assert localize_causes(store, causes, None, 120.0, said.append) == 0  # kept: a resumed step does not redo it
    # a record its budget cut short is no answer: the next step with time takes it again
    from shapefuzz.campaign.localizing import LOCALIZE_META as KEY

    store.set_meta(KEY + wrong.sig, json.dumps(Localization(evidence="not localized: the 2s budget ran out").to_json()))
    assert localize_causes(store, causes, None, 120.0, said.append) == 1 and len(calls) == 2
    store.close()


def test_placements_of_checked_compile_errors_go_before_wrong_values(tmp_path, monkeypatch):
    """A checker's failure is placed in a second or two, a wrong value's replays take up to a minute: the
    placements go first (a fresh campaign's 180 s ran out on Vulkan wrong values, and every resource-limit
    cause kept the checker's name)."""
    import shapefuzz.judge.localize_probe
    from shapefuzz.campaign.localizing import localize_causes

    calls = []

    def wrong_value(entry, toolchain, lane, passed, seconds):
        calls.append("wrong value")
        return Localization(CODEGEN, evidence="finished by llvm-cpu from stream: right", certain=True)

    def checked(mlir, lane, toolchain, checker, detail, seconds):
        calls.append(checker)
        return Localization(CODEGEN, "iree-codegen-iree-comprehensive-bufferize", "", "made the buffer", certain=True)

    monkeypatch.setattr(shapefuzz.judge.localize_probe, "localize_entry", wrong_value)
    monkeypatch.setattr(shapefuzz.judge.localize_probe, "place_checked_failure", checked)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    wrong = dataclasses.replace(_mismatch("llvm-cpu", "pool", 1.0), corpus_entry=str(FOLD_POOL))
    checker = "iree-llvmcpu-check-ir-before-llvm-conversion"
    error = dataclasses.replace(wrong, sig="llvm-cpu/compile/error: y", stage="compile", status="error", first_seen=2.0,
                                sig_json={**wrong.sig_json, "failing_pass": checker},
                                detail="error: 'memref.alloca' op expected no unbounded stack allocations")
    for row in (wrong, error):
        store.put_bucket(row)
    causes = summarize(store).causes
    assert localize_causes(store, causes, None, 120.0) == 2
    assert calls == [checker, "wrong value"]
    store.close()


def test_every_cause_gets_its_first_localization_before_any_cause_its_second(tmp_path, monkeypatch):
    """A fresh campaign's step spent its 180 s on one cause's nine Vulkan wrong values, then gave the last
    cause's llvm-cpu wrong value 2 s ("not localized: the 2s budget ran out")."""
    import shapefuzz.judge.localize_probe
    from shapefuzz.campaign.localizing import localize_causes

    calls = []

    def fake(entry, toolchain, lane, passed, seconds):
        calls.append(lane)
        return Localization(CODEGEN, evidence="finished by llvm-cpu from stream: right", certain=True)

    monkeypatch.setattr(shapefuzz.judge.localize_probe, "localize_entry", fake)
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    vulkan = [dataclasses.replace(_mismatch("vulkan-spirv", family, first), corpus_entry=str(FOLD_POOL), cause="cause-vk")
              for family, first in (("conv", 1.0), ("gather", 2.0), ("sort", 3.0))]
    cpu = dataclasses.replace(_mismatch("llvm-cpu", "pool", 4.0), corpus_entry=str(FOLD_POOL), cause="cause-cpu")
    for row in (*vulkan, cpu):
        store.put_bucket(row)
    causes = summarize(store).causes
    assert sorted(len(c.buckets) for c in causes) == [1, 3], [c.buckets for c in causes]
    assert localize_causes(store, causes, None, 600.0) == 4
    assert calls.index("llvm-cpu") == 1, calls  # second, after the first cause's first bucket
    store.close()


def test_wrong_values_localized_to_the_same_pass_on_two_lanes_are_one_cause(tmp_path):
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    loc = Localization("dispatch-creation", "iree-dispatch-creation-fusion-preprocessing", "FusionPreprocessingPass",
                       "every lane tried computes it wrong; ...", certain=True)
    for lane, first in (("llvm-cpu", 1.0), ("vmvx", 2.0)):  # never hit by one candidate: two causes so far
        row = dataclasses.replace(_mismatch(lane, "conv_transpose", first), cause=f"cause-{lane}")
        store.put_bucket(row)
        store.set_meta(LOCALIZE_META + row.sig, json.dumps(loc.to_json()))
    causes = summarize(store).causes
    assert [(c.name, c.backends) for c in causes] == [("cause-llvm-cpu", ("llvm-cpu", "vmvx"))]
    store.close()


@pytest.mark.iree
def test_a_wrong_value_and_a_compile_error_in_one_pass_from_one_minimized_form_are_one_cause(tmp_path, toolchain,
                                                                                              fold_pool):
    """One FoldUnitExtentDims bug seen two ways: the max pool with a dynamic batch computes wrong
    values (localized to the pass), the same form with a static batch fails the verifier inside it."""
    from shapefuzz.campaign.iree import failure_of
    from shapefuzz.judge.oracle import check_module

    static = (FOLD_POOL / "reproducer.mlir").read_text().replace("[?,", "[2,").replace('"in_dyn":[true', '"in_dyn":[false')
    compiled = check_module(static, ["vmvx"], None, toolchain, confirm=False).results[0]
    assert compiled.status.value == "error" and "FoldUnitExtentDimsPass Failed" in compiled.detail, compiled.detail
    failure = failure_of(compiled.signature, compiled.detail)
    error = BucketRow(sig=str(compiled.signature), sig_json=failure.fields(), backend="vmvx", stage="compile",
                      status="error", family="pool", count=1, first_seen=2.0, last_seen=2.0, first_wall=0.0,
                      last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k2", repro_size=10, repro_text=static,
                      detail=compiled.detail, corpus_entry="", shrunk_size=None, cause="cause-error",
                      triage=Triage.COMPILER_BUG)
    wrong = dataclasses.replace(_mismatch("llvm-cpu", "pool", 1.0), cause="cause-wrong")
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    for row in (wrong, error):
        store.put_bucket(row)
    store.set_meta(LOCALIZE_META + wrong.sig, json.dumps(fold_pool.to_json()))
    (cause,) = summarize(store).causes  # two engine causes (no message in common), one bug
    assert cause.name == "cause-wrong" and cause.merged == ("cause-error",)
    assert cause.severity == Severity.WRONG_VALUES and cause.failing_pass == "iree-dispatch-creation-fold-unit-extent-dims"
    assert [(s.severity, s.lanes) for s in cause.symptoms] == [("wrong values", ("llvm-cpu",)),
                                                               ("compile error", ("vmvx",))]
    assert "wrong values on llvm-cpu; compile error on vmvx" in markdown(summarize(store))
    store.close()


# an average pool's window count (a sum pool of ones, a constant expression) comes out 1, not 2:
# llvm-cpu's codegen, reached on every lane through the compile-time evaluator's JIT (campaign #31)
AVG_POOL_COUNT = """func.func @main(%input: tensor<1x1x2xf32>) -> tensor<1x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %out_init = tensor.empty() : tensor<1x1x1xf32>
  %out_fill = linalg.fill ins(%zero : f32) outs(%out_init : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %window = tensor.empty() : tensor<2xf32>
  %pooled = linalg.pooling_ncw_sum {dilations = dense<[1]> : vector<1xi64>, strides = dense<[1]> : vector<1xi64>}
    ins(%input, %window : tensor<1x1x2xf32>, tensor<2xf32>) outs(%out_fill : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %ones_init = tensor.empty() : tensor<1x1x2xf32>
  %ones = linalg.fill ins(%one : f32) outs(%ones_init : tensor<1x1x2xf32>) -> tensor<1x1x2xf32>
  %counts = linalg.pooling_ncw_sum {dilations = dense<[1]> : vector<1xi64>, strides = dense<[1]> : vector<1xi64>}
    ins(%ones, %window : tensor<1x1x2xf32>, tensor<2xf32>) outs(%out_fill : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %avg = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]}
    ins(%pooled, %counts : tensor<1x1x1xf32>, tensor<1x1x1xf32>) outs(%out_init : tensor<1x1x1xf32>) {
  ^bb0(%s: f32, %n: f32, %o: f32):
    %q = arith.divf %s, %n : f32
    linalg.yield %q : f32
  } -> tensor<1x1x1xf32>
  return %avg : tensor<1x1x1xf32>
}
"""


@pytest.mark.iree
def test_a_wrong_value_every_lane_shares_through_const_eval_is_localized_to_llvm_cpu_codegen(toolchain):
    from shapefuzz.judge.localize_probe import localize_program

    x = np.array([[[-9.5, -35.0]]], np.float32)
    loc = localize_program(AVG_POOL_COUNT, "llvm-cpu", [x], [x.mean(axis=2, keepdims=True)], toolchain, seconds=60)
    assert loc.phase == CODEGEN and loc.certain and loc.finished_by, loc.evidence  # vmvx, or a Vulkan lane
    assert "--iree-opt-const-eval=false" in loc.evidence
    assert component_of_localization(loc, ["llvm-cpu"]) == "codegen for llvm-cpu"
    # and in its codegen, the pass: the window count's reduction vectorized to one step
    assert loc.pass_class == "GenericVectorizationPass" and "vector.transfer_write" in loc.ir_after, loc.evidence
