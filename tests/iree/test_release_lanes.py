"""The lanes of issue 34 and release gating: each lane probed per release (a release without its
flag or pass offers no lane), lanes eligible only for the ops they change, the O3 and other new
lanes compiling with real IREE 3.13, and families that know their release (a form the release
cannot parse is drawn as an equivalent form, and never called a generator bug)."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS, ZNVER4_CPU_FLAGS
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Limits, Outcome
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import NOT_FOR_RELEASE, Verdict
from shapefuzz.families import get_family
from shapefuzz.families.gates import Closed, Gated, ReleaseGate, closed_by_release, for_release, release_gates
from shapefuzz.families.registry import FAMILY_MODULES
from shapefuzz.iree.mlirinfo import op_traits
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.iree.toolchain import ToolchainProbe, host_cpu_flags
from support.engine_fakes import InertTargetParts

NEW_LANES = ("llvm-cpu-o3", "rocm-gfx942-o3", "llvm-cpu-znver4-data-tiling", "rocm-gfx942-transpose-conv",
             "rocm-gfx942-pad-to-intrinsics")
CPU_FLAGS = {"--iree-hal-target-device", "--iree-hal-local-target-device-backends", "--iree-llvmcpu-target-cpu",
             "--iree-rocm-target", "--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels",
             "--iree-preprocessing-pass-pipeline", "--iree-dispatch-creation-enable-aggressive-fusion"}
PASSES = {"iree-preprocessing-transpose-convolution-pipeline", "iree-preprocessing-pad-to-intrinsics"}


def probe(flags=CPU_FLAGS, passes=PASSES, cpu=frozenset(ZNVER4_CPU_FLAGS), release=(3, 13)) -> ToolchainProbe:
    return ToolchainProbe("x", release, frozenset(flags), ("local-task://",), False, frozenset(passes),
                          cpu_flags=frozenset(cpu))


# --- lanes, probed per release (no IREE) -----------------------------------------------------------
def test_a_probe_lacking_a_lanes_flag_or_pass_offers_no_lane():
    old = probe()  # a 3.2-like release: no --iree-opt-level
    o3 = BACKENDS["llvm-cpu-o3"]
    assert not o3.compiles(old) and o3.compile_flags(old) is None
    assert o3.availability(old) == "this compiler has no --iree-opt-level"
    assert not BACKENDS["rocm-gfx942-o3"].compiles(old)
    new = probe(CPU_FLAGS | {"--iree-opt-level"})
    assert o3.compile_flags(new)[-1] == "--iree-opt-level=O3" and o3.executes(new)
    assert BACKENDS["rocm-gfx942-o3"].compile_flags(new)[-1] == "--iree-opt-level=O3"
    # the preprocessing lanes need their pass; the flag alone is not enough
    lacking = probe(passes={"iree-preprocessing-pad-to-intrinsics"})
    assert BACKENDS["rocm-gfx942-transpose-conv"].availability(lacking) == (
        "this compiler has no iree-preprocessing-transpose-convolution-pipeline pass")
    assert BACKENDS["rocm-gfx942-pad-to-intrinsics"].compile_flags(lacking)[-1] == (
        "--iree-preprocessing-pass-pipeline=builtin.module(iree-preprocessing-pad-to-intrinsics)")
    assert not BACKENDS["llvm-cpu-split-reduction"].compiles(old)  # 3.2-3.4 lack its flag (measured)
    assert set(NEW_LANES) | {"llvm-cpu-data-tiling", "llvm-cpu-aggressive-fusion", "llvm-cpu-split-reduction"} <= set(
        DEFAULT_BACKENDS)


def test_the_znver4_lane_targets_zen4_and_executes_only_on_a_cpu_with_its_extensions():
    lane = BACKENDS["llvm-cpu-znver4-data-tiling"]
    flags = lane.compile_flags(probe())
    assert "--iree-llvmcpu-target-cpu=znver4" in flags and "--iree-llvmcpu-target-cpu=host" not in flags
    assert {"--iree-opt-data-tiling=true", "--iree-llvmcpu-enable-ukernels=all"} <= set(flags)
    assert lane.executes(probe()) and lane.availability(probe()) == "compiles and executes"
    older = probe(cpu={"avx2", "fma"})
    assert not lane.executes(older) and lane.compiles(older)
    assert lane.availability(older).startswith("compile-only here: this CPU lacks avx512f")
    assert BACKENDS["llvm-cpu"].executes(older)  # the host's own CPU needs nothing named


def test_host_cpu_flags_are_read_from_cpuinfo(tmp_path):
    (tmp_path / "x86").write_text("processor\t: 0\nflags\t\t: fpu avx2 avx512f\n")
    (tmp_path / "arm").write_text("processor\t: 0\nFeatures\t: fp asimd sve\n")
    assert host_cpu_flags(str(tmp_path / "x86")) == {"fpu", "avx2", "avx512f"}
    assert host_cpu_flags(str(tmp_path / "arm")) == {"fp", "asimd", "sve"}
    assert host_cpu_flags(str(tmp_path / "none")) == frozenset()


# --- lanes eligible for the ops they change --------------------------------------------------------
MATMUL = "%r = linalg.matmul ins(%a, %b : tensor<4x3xf32>, tensor<3x5xf32>) outs(%c : tensor<4x5xf32>)"
CONV_GENERIC = ('linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0 + d2)>, affine_map<(d0, d1, d2) -> (d2)>,'
                ' affine_map<(d0, d1, d2) -> (d0)>], iterator_types = ["parallel", "reduction"]} { arith.mulf }')
SUM_GENERIC = ('linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0)>], '
               'iterator_types = ["parallel", "reduction"]} { arith.addf }')


def test_op_kinds_are_read_from_every_spelling():
    assert op_traits(MATMUL) == {"contraction"}
    assert op_traits("linalg.conv_2d_nchw_fchw ins(") == {"conv"}
    assert op_traits(CONV_GENERIC) == {"conv"}
    assert op_traits(CONV_GENERIC.replace("arith.mulf", "arith.maximumf")) == {"pool"}
    assert op_traits(SUM_GENERIC) == {"reduction"}
    assert op_traits(SUM_GENERIC.replace("arith.addf", "arith.mulf %a, %b arith.addf")) == {"contraction"}
    # each generic counts alone (a scaling after a sum is no contraction), through map aliases too
    scale = 'linalg.generic {iterator_types = ["parallel"]} { arith.mulf linalg.yield }'
    assert op_traits(f"{SUM_GENERIC} linalg.yield\n{scale}") == {"reduction"}
    aliased = "#m = affine_map<(d0, d1) -> (d0 + d1)>\n" + CONV_GENERIC.replace(
        "affine_map<(d0, d1, d2) -> (d0 + d2)>", "#m")
    assert op_traits(aliased) == {"conv"}
    assert op_traits('torch.aten.sum.dim_IntList %x') == {"reduction"}
    assert op_traits('torch.operator "onnx.ReduceMax"(%x)') == {"reduction"}
    assert op_traits("torch.aten.max_pool2d %x") == {"pool"}
    assert op_traits('torch.operator "onnx.Gemm"(%a, %b)') == {"contraction"}
    assert op_traits("iree_linalg_ext.gather dimension_map = [0]") == set()
    assert op_traits("func.func @conv_f16(%a: tensor<4xf32>)") == set()  # a name is not an op


def test_a_variant_is_ineligible_for_a_case_whose_ops_it_does_not_change():
    data_tiling, fusion = BACKENDS["llvm-cpu-data-tiling"], BACKENDS["llvm-cpu-aggressive-fusion"]
    assert data_tiling.ineligible_for({"f32", "contraction"}) is None
    assert data_tiling.ineligible_for({"f32", "conv"}) == "its flags change only contraction ops, and the case has none"
    assert fusion.ineligible_for({"reduction"}) is None and fusion.ineligible_for(set()) is not None
    assert BACKENDS["rocm-gfx942-transpose-conv"].ineligible_for({"pool"}) is None
    assert BACKENDS["llvm-cpu-o3"].ineligible_for(set()) is None  # O3 changes every op
    single = BACKENDS["llvm-cpu-single-dispatch"]
    assert single.ineligible_for({"dynamic-result"}) == single.limit_for({"dynamic-result"})  # a known limit too
    # a known limit is what is not compiled; a case a variant does not change still compiles there
    assert data_tiling.limit_for({"conv"}) is None


@dataclass(frozen=True)
class KindTarget(InertTargetParts):
    """Candidates n: even n are "matmul" cases, odd n "scatter" cases; the real lane rules."""

    corpus: str

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        n = seed % 4000
        text = MATMUL if n % 2 == 0 else "iree_linalg_ext.scatter"
        return Candidate(hashlib.sha256(str(n).encode()).hexdigest()[:16], group, seed, (), json.dumps({"n": n}),
                         f"// {n}\n{text}")

    def ineligible(self, candidate: Candidate, lanes) -> set[str]:
        return IreeTarget.ineligible(self, candidate, lanes)  # type: ignore[arg-type]

    def check(self, candidate: Candidate, lanes) -> Outcome:
        return Outcome(Verdict.PASS, {lane: (Status.OK, 0.01) for lane in lanes})

    confirm = check


def test_a_default_campaign_gives_a_variants_slot_to_the_next_lane_for_a_case_it_cannot_change(tmp_path):
    lanes = ("llvm-cpu", "llvm-cpu-data-tiling", "llvm-cpu-split-reduction", "vmvx", "llvm-cpu-o3")
    engine = Engine(KindTarget(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), lanes, 5, 1, Limits(count=60), start_method="fork", reference="llvm-cpu",
                                 lanes_per_candidate=2, confirm=False))
    engine.run()
    rows = list(engine.store.candidates())
    scatter = [r for r in rows if json.loads(r.payload)["n"] % 2]
    matmul = [r for r in rows if not json.loads(r.payload)["n"] % 2]
    assert all(len(r.backends) == 2 and r.backends[0] == "llvm-cpu" for r in rows)
    assert scatter and not any(set(r.backends) & {"llvm-cpu-data-tiling", "llvm-cpu-split-reduction"} for r in scatter)
    assert any("llvm-cpu-data-tiling" in r.backends for r in matmul)


# --- the new lanes with real IREE 3.13 ----------------------------------------------------------------
MATMUL_MODULE = """func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""
# Output width 16: 3.13's pad-to-intrinsics fails convs whose output width it must pad (test_lanes.py).
CONV_MODULE = """func.func @main(%x: tensor<1x3x18x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x1x16x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x16x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x3x18x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  return %r : tensor<1x1x16x4xf32>
}
"""


@pytest.mark.iree
def test_the_o3_lanes_compile_a_small_case_and_the_cpu_one_matches_numpy(toolchain):
    # (every variant lane compiles a conv in test_lanes.py; here O3 on a matmul, and pad-to-intrinsics)
    rng = np.random.default_rng(7)
    a, b = ((rng.integers(-8, 9, shape) / 4).astype(np.float32) for shape in ((5, 7), (7, 3)))
    report = check_module(MATMUL_MODULE, ["llvm-cpu-o3", "rocm-gfx942-o3"], Expectation([a, b], [a @ b]), toolchain,
                          confirm=False)
    x, w = ((rng.integers(-8, 9, shape) / 4).astype(np.float32) for shape in ((1, 3, 18, 3), (3, 3, 3, 4)))
    conv = np.stack([np.einsum("hwc,hwcf->f", x[0, :, j:j + 3], w) for j in range(16)])[None, None]
    conv_report = check_module(CONV_MODULE, ["rocm-gfx942-pad-to-intrinsics"], Expectation([x, w], [conv]), toolchain,
                               confirm=False)
    results = {r.backend: r for r in report.results + conv_report.results}
    for name, result in results.items():
        want = Stage.COMPARE if BACKENDS[name].executes(toolchain.probe) else Stage.COMPILE
        assert (result.stage, result.status) == (want, Status.OK), (name, result.detail[:300])
    assert results["llvm-cpu-o3"].stage == Stage.COMPARE  # O3 executes here and matches NumPy


# --- families that know their release --------------------------------------------------------------
def closed(family: str, what: str, instead: bool = True) -> Closed:
    return Closed(family, what, "this release does not parse it", instead)


def test_a_closed_gate_draws_the_equivalent_form_and_an_open_one_changes_nothing():
    gated = Gated((closed("gather", "form linalg_ext"), closed("attention", "form attention"),
                   closed("sort", "torch argsort spelling")))
    gather, attention, sort = (get_family(name) for name in ("gather", "attention", "sort"))
    example = gather.release_gates[0].example()
    assert gated.params("gather", example) == example.replace(form="extract")
    assert not gated.accepts("gather", example) and gated.accepts("gather", example.replace(form="extract"))
    assert Gated().params("gather", example) == example
    onnx = example.replace(frontend="onnx")  # the ONNX spelling never writes the op: left alone
    assert gated.params("gather", onnx) == onnx
    assert gated.params("attention", attention.release_gates[0].example()).form == "decomposed"
    argsort = sort.release_gates[0].example()
    assert gated.params("sort", argsort) == argsort.replace(frontend="linalg")
    assert gated.params("sort", argsort.replace(use="both")).frontend == "torch"  # torch.aten.sort is fine
    for name, p in (("gather", example), ("attention", attention.release_gates[0].example()), ("sort", argsort)):
        q = gated.params(name, p)
        assert get_family(name).is_valid(q) and q in get_family(name).equivalent_forms(p)


def test_a_family_without_an_accepted_form_is_off_and_said_so():
    gate = ReleaseGate("family", "op x", lambda p: True, lambda: None, since=(3, 5))
    assert for_release((gate,), "p", {"family"}) is None and for_release((gate,), "p", set()) == "p"
    assert closed_by_release(gate, (3, 4)) is True and closed_by_release(gate, (3, 5)) is False
    assert closed_by_release(gate, (0, 0)) is None  # a dev build: decided by verifying, not by number
    gated = Gated((Closed("norm", "family", "op x is new in 3.5", False), closed("gather", "form linalg_ext")))
    assert gated.family_off("norm") == "op x is new in 3.5" and gated.family_off("gather") is None
    assert gated.lines() == [
        "family norm off for this release: op x is new in 3.5",
        "gather form linalg_ext off for this release: this release does not parse it; an equivalent form the "
        "release parses is drawn instead"]


@pytest.mark.iree
def test_the_pinned_release_parses_every_gated_form(toolchain):
    assert release_gates(toolchain, FAMILY_MODULES) == Gated()  # every gate's example verifies with 3.13


@pytest.mark.iree
def test_a_gated_target_never_draws_a_closed_form_and_a_candidate_of_one_is_not_a_generator_bug(toolchain, tmp_path):
    gated = Gated((closed("gather", "form linalg_ext"),))
    target = IreeTarget(toolchain, tmp_path / "corpus", gated=gated)
    drawn = [json.loads(target.generate("gather", seed).payload) for seed in range(40)]
    assert not [p for p in drawn if p.get("form", "linalg_ext") == "linalg_ext" and "frontend" not in p]
    assert any(p.get("form") == "extract" for p in drawn)
    # a candidate of a closed form that does not verify (here: made not to) is the release's, not ours
    plain = IreeTarget(toolchain, tmp_path / "corpus").generate("gather", 3)
    while json.loads(plain.payload).get("form", "linalg_ext") != "linalg_ext" or "frontend" in plain.payload:
        plain = IreeTarget(toolchain, tmp_path / "corpus").generate("gather", plain.seed + 1)
    broken = Candidate(plain.key, "gather", plain.seed, (), plain.payload, plain.text.replace("iree_linalg_ext.gather",
                                                                                             "iree_linalg_ext.gathr"))
    outcome = target.check(broken, ("llvm-cpu",))
    assert outcome.verdict == Verdict.INVALID and outcome.error.startswith(NOT_FOR_RELEASE)
    assert not IreeTarget(toolchain, tmp_path / "corpus").check(broken, ("llvm-cpu",)).error.startswith(NOT_FOR_RELEASE)


@pytest.mark.iree
def test_old_release_gates_and_draws_verify(tmp_path):
    """With IREE 3.2.0 in the toolchain cache (`shapefuzz --iree-version 3.2.0 backends` fetches it):
    its unparsable forms are closed, and what every family draws for it verifies."""
    from shapefuzz.invoke.execute import verify_many
    from shapefuzz.iree.releases import cached_versions, install

    if "3.2.0" not in cached_versions():
        pytest.skip("IREE 3.2.0 is not in the toolchain cache (fetch it with `shapefuzz --iree-version 3.2.0 backends`)")
    old = install("3.2.0")
    gated = release_gates(old, FAMILY_MODULES)
    # the quantized chains and forms (IREE's affine quantization ops, torch's quantized_decomposed
    # spellings) are newer than 3.2.0 in every family that draws them (intloop has no float operand to dequantize)
    quantized = {(family, f"context {kind} quantization") for family in FAMILY_MODULES if family not in ("onnx_op", "intloop")
                 for kind in ("affine", "torch")}
    assert {(c.family, c.what) for c in gated.closed} == {
        ("gather", "form linalg_ext"), ("attention", "form attention"), ("sort", "torch argsort spelling"),
        ("matmul", "form contract"), ("matmul", "form named with indexing maps"), ("norm", "torch rms_norm spelling"),
        ("conv", "form qdq"), ("conv", "torch qdq spelling"), ("matmul", "form qdq"), ("matmul", "torch qdq spelling"),
        *quantized}
    assert any("does not parse torch.aten.argsort (custom op 'torch.aten.argsort' is unknown)" in line
               for line in gated.lines())
    assert any("does not parse torch.aten.rms_norm (custom op 'torch.aten.rms_norm' is unknown)" in line
               for line in gated.lines())
    target = IreeTarget(old, tmp_path / "corpus", gated=gated)
    texts = [target.generate(family, seed).text for family in FAMILY_MODULES for seed in range(12)]
    errors = [e for e in verify_many(texts, old) if e is not None]
    assert not errors, errors[0][:300]
