"""The lanes IREE's CPU bug reports of June-September 2026 name (issue 45, item 3): data tiling with
ukernels on haswell (no AVX-512) beside znver4, the experimental data-tiled conv with its ukernel,
the conv preprocessing pipelines and the strided-insert conversions. Each is probed per release (a
release without its flag or pass refuses it in one line), compile-only where this CPU cannot run
its code (and saying so), and drawn only for modules holding the ops it changes."""

from __future__ import annotations

import dataclasses
import json
import re
import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.families import get_family
from shapefuzz.families.conv_transpose import canonical
from shapefuzz.iree import toolchain as toolchain_module
from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS, HASWELL_CPU_FLAGS, ZNVER4_CPU_FLAGS
from shapefuzz.iree.mlirinfo import module_traits, op_traits
from shapefuzz.iree.toolchain import ToolchainProbe, find_toolchain
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.model import Stage, Status
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.triage.record import lanes_evidence
from support.family_testing import check_params
from support.fakes import make_fake_toolchain

CPU_LANES = ("llvm-cpu-haswell-data-tiling", "llvm-cpu-znver4-conv-data-tiling")
PREPROCESSING_LANES = ("llvm-cpu-conv-channels-last", "llvm-cpu-conv-channels-last-tiled",
                       "llvm-cpu-conv-filter-channels-last", "llvm-cpu-transpose-conv",
                       "llvm-cpu-strided-insert-generic", "llvm-cpu-backward-data-conv")
NEW_LANES = CPU_LANES + PREPROCESSING_LANES
ALL_FLAGS = frozenset({
    "--iree-hal-target-device", "--iree-hal-local-target-device-backends", "--iree-llvmcpu-target-cpu",
    "--iree-opt-data-tiling", "--iree-llvmcpu-enable-ukernels", "--iree-dispatch-creation-data-tiling",
    "--iree-dispatch-creation-experimental-set-data-tiling-ops", "--iree-preprocessing-pass-pipeline"})
ALL_PASSES = frozenset({
    "iree-preprocessing-convert-conv-to-channels-last", "iree-preprocessing-convert-conv-filter-to-channels-last",
    "iree-preprocessing-transpose-convolution-pipeline", "iree-preprocessing-convert-strided-insert-slice-to-generic",
    "iree-preprocessing-backward-data-conv-pipeline"})
X86_64_V2 = frozenset({"sse4_2", "popcnt", "ssse3"})  # an x86 CPU without AVX


def probe(flags=ALL_FLAGS, passes=ALL_PASSES, cpu=frozenset(ZNVER4_CPU_FLAGS + HASWELL_CPU_FLAGS)) -> ToolchainProbe:
    return ToolchainProbe("x", (3, 13), frozenset(flags), ("local-task://",), False, frozenset(passes),
                          cpu_flags=frozenset(cpu))


# --- probed per release (no IREE) -------------------------------------------------------------------
def test_each_lane_is_refused_in_one_line_by_a_release_lacking_its_flag_or_pass():
    for name in NEW_LANES:
        lane = BACKENDS[name]
        assert lane.compiles(probe()) and lane.in_default and lane.variant_of == "llvm-cpu", name
        for flag in {f.split("=", 1)[0] for f in lane.extra_flags}:
            lacking = probe(flags=ALL_FLAGS - {flag})
            assert not lane.compiles(lacking) and lane.compile_flags(lacking) is None, (name, flag)
            assert lane.availability(lacking) == f"this compiler has no {flag}", (name, flag)
        for name_of_pass in lane.needs_passes:
            lacking = probe(passes=ALL_PASSES - {name_of_pass})
            assert lane.availability(lacking) == f"this compiler has no {name_of_pass} pass", name
    assert set(NEW_LANES) <= set(DEFAULT_BACKENDS)


def test_a_fake_release_without_conv_data_tiling_refuses_those_lanes_and_keeps_the_others(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = make_fake_toolchain(tmp_path / "bin", "ok", version="3.11.0",
                                 flags=sorted(ALL_FLAGS - {"--iree-dispatch-creation-data-tiling"}))
    old = find_toolchain(folder).probe  # the real 3.13 iree-opt beside it lists every pass
    assert BACKENDS["llvm-cpu-znver4-conv-data-tiling"].availability(old) == (
        "this compiler has no --iree-dispatch-creation-data-tiling")
    assert all(BACKENDS[name].compiles(old) for name in NEW_LANES if "conv-data-tiling" not in name)
    listed = subprocess.run([sys.executable, "-m", "shapefuzz", "--iree-bin", str(folder), "backends"],
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith(" *llvm-cpu-znver4-conv-data-tiling "))
    assert "this compiler has no --iree-dispatch-creation-data-tiling" in row


def test_the_named_cpu_lanes_build_for_their_cpu_and_run_only_where_this_cpu_has_its_features():
    for name, cpu in (("llvm-cpu-haswell-data-tiling", "haswell"), ("llvm-cpu-znver4-conv-data-tiling", "znver4")):
        flags = BACKENDS[name].compile_flags(probe())
        assert f"--iree-llvmcpu-target-cpu={cpu}" in flags and "--iree-llvmcpu-target-cpu=host" not in flags
        assert "--iree-llvmcpu-enable-ukernels=all" in flags
    assert "--iree-opt-data-tiling=true" in BACKENDS["llvm-cpu-haswell-data-tiling"].compile_flags(probe())
    assert "--iree-dispatch-creation-experimental-set-data-tiling-ops=convolution" in BACKENDS[
        "llvm-cpu-znver4-conv-data-tiling"].compile_flags(probe())
    haswell_host = probe(cpu=HASWELL_CPU_FLAGS)  # AVX2 and FMA, no AVX-512
    assert BACKENDS["llvm-cpu-haswell-data-tiling"].executes(haswell_host)
    zen4 = BACKENDS["llvm-cpu-znver4-conv-data-tiling"]
    assert not zen4.executes(haswell_host) and zen4.compiles(haswell_host)
    assert zen4.availability(haswell_host) == "compile-only here: this CPU lacks avx512f, avx512dq, avx512cd ..."
    assert "executes only where the CPU has Zen 4's AVX-512 extensions" in zen4.description
    older = probe(cpu=X86_64_V2)
    assert BACKENDS["llvm-cpu-haswell-data-tiling"].availability(older) == (
        "compile-only here: this CPU lacks avx, avx2, fma ...")
    assert all(BACKENDS[name].executes(older) for name in PREPROCESSING_LANES)  # they build for the host
    # what a failure's record says of lanes that passed: run or only built
    assert lanes_evidence(["llvm-cpu-haswell-data-tiling", "llvm-cpu-znver4-conv-data-tiling"], haswell_host) == (
        "; right on llvm-cpu-haswell-data-tiling (executed); compiles on llvm-cpu-znver4-conv-data-tiling "
        "(not executed)")


# --- drawn only for the ops they change (no IREE) ------------------------------------------------------
MATMUL = """func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<5x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<5x3xf32>) -> tensor<5x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<5x7xf32>, tensor<7x3xf32>) outs(%f : tensor<5x3xf32>) -> tensor<5x3xf32>
  return %r : tensor<5x3xf32>
}
"""
# 16 channels in and out: divisible by the tiled lane's 4, and data-tiled convs go to the ukernel.
CONV_NCHW = """func.func @main(%x: tensor<1x16x6x18xf32>, %w: tensor<16x16x3x3xf32>) -> tensor<1x16x4x16xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x16x4x16xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  %r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x16x6x18xf32>, tensor<16x16x3x3xf32>) outs(%f : tensor<1x16x4x16xf32>) -> tensor<1x16x4x16xf32>
  return %r : tensor<1x16x4x16xf32>
}
"""
CONV_NHWC = """func.func @main(%x: tensor<1x3x18x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x1x16x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x1x16x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x3x18x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<1x1x16x4xf32>) -> tensor<1x1x16x4xf32>
  return %r : tensor<1x1x16x4xf32>
}
"""
STRIDED_INSERT = """func.func @main(%src: tensor<4x4xf32>) -> tensor<9x9xf32> {
  %cst = arith.constant dense<0.000000e+00> : tensor<9x9xf32>
  %0 = tensor.insert_slice %src into %cst[1, 1] [4, 4] [2, 2] : tensor<4x4xf32> into tensor<9x9xf32>
  return %0 : tensor<9x9xf32>
}
"""


def test_a_strided_insert_is_one_into_a_zero_constant_with_a_stride_above_one():
    assert op_traits(STRIDED_INSERT) == {"strided-insert"}
    fill = STRIDED_INSERT.replace("%cst = arith.constant dense<0.000000e+00> : tensor<9x9xf32>",
                                  "%e = tensor.empty() : tensor<9x9xf32>\n  %cst = linalg.fill ins(%z : f32) "
                                  "outs(%e : tensor<9x9xf32>) -> tensor<9x9xf32>")
    assert op_traits(fill) == set()  # the passes leave an insert into a fill alone (measured on 3.13)
    assert op_traits(STRIDED_INSERT.replace("[2, 2]", "[1, 1]")) == set()
    assert op_traits(STRIDED_INSERT.replace("dense<0.000000e+00>", "dense<1.000000e+00>")) == set()
    assert op_traits(STRIDED_INSERT.replace("[2, 2]", "[%s, 1]")) == set()  # a dynamic stride is not rewritten
    ints = STRIDED_INSERT.replace("f32", "i32").replace("dense<0.000000e+00>", "dense<0>")
    assert op_traits(ints) == {"strided-insert"}


def test_each_lane_is_ineligible_for_a_module_whose_ops_it_does_not_change():
    kinds = {"matmul": MATMUL, "conv": CONV_NCHW, "strided": STRIDED_INSERT,
             "pool": "%r = linalg.pooling_nchw_max ins(%x, %k : tensor<1x2x4x4xf32>, tensor<2x2xf32>)"}
    eligible = {name: {kind for kind, text in kinds.items() if BACKENDS[name].ineligible_for(module_traits(text)) is None}
                for name in NEW_LANES}
    assert eligible == {
        "llvm-cpu-haswell-data-tiling": {"matmul"},
        "llvm-cpu-znver4-conv-data-tiling": {"conv"},
        "llvm-cpu-conv-channels-last": {"conv"},
        "llvm-cpu-conv-channels-last-tiled": {"conv"},
        "llvm-cpu-conv-filter-channels-last": {"conv"},
        "llvm-cpu-transpose-conv": {"conv", "pool"},
        "llvm-cpu-strided-insert-generic": {"strided"},
        "llvm-cpu-backward-data-conv": {"strided"},
    }
    why = BACKENDS["llvm-cpu-strided-insert-generic"].ineligible_for(module_traits(MATMUL))
    assert why == "its flags change only strided-insert ops, and the case has none"


def test_conv_transpose_draws_its_zero_insertion_into_a_constant_where_static():
    family = get_family("conv_transpose")
    p = family.load({"rank": 1, "dtype": "f32", "n": 3, "groups": 1, "ci": 4, "co": 2, "in_size": [8], "kernel": [3],
                     "stride": [3], "dilation": [1], "pad_lo": [1], "pad_hi": [1], "out_pad": [0],
                     "dyn_x": [False, False, False], "w_layout": [0, 1, 2], "form": "named", "flip": "extract",
                     "pad_mode": "insert", "x_expand": "late", "w_order": "fused", "fwd_layout": [0, 1, 2],
                     "zero_dest": "constant"})
    text = family.render(p)
    assert re.search(r"%z\d+ = arith\.constant dense<0\.000000e\+00> : tensor<3x4x24xf32>", text)
    assert "strided-insert" in op_traits(text) and "zero_dest:constant" in family.features(p)
    assert p.replace(zero_dest="fill") in family.equivalent_forms(p)
    # a dynamic x has no constant zero tensor: the key is normalized away
    dynamic = canonical(p.replace(input_dyn=[True, False, False]))
    assert dynamic.zero_dest == "fill" and "strided-insert" not in op_traits(family.render(dynamic))
    assert "zero_dest:fill" not in family.features(dynamic) and family.is_valid(dynamic)


# --- with real IREE 3.13 -----------------------------------------------------------------------------------
def _inputs(*shapes):
    rng = np.random.default_rng(11)
    return [(rng.integers(-8, 9, shape) / 4).astype(np.float32) for shape in shapes]


def _conv_nchw(x, w):
    out = np.zeros((1, 16, 4, 16), np.float32)
    for i in range(4):
        for j in range(16):
            out[0, :, i, j] = np.einsum("chw,fchw->f", x[0, :, i:i + 3, j:j + 3], w)
    return out


def _conv_nhwc(x, w):
    return np.stack([np.einsum("hwc,hwcf->f", x[0, :, j:j + 3], w) for j in range(16)])[None, None]


def _strided(src):
    out = np.zeros((9, 9), np.float32)
    out[1::2, 1::2] = src
    return out


def _cases():
    a, b = _inputs((5, 7), (7, 3))
    x, w = _inputs((1, 16, 6, 18), (16, 16, 3, 3))
    xh, wh = _inputs((1, 3, 18, 3), (3, 3, 3, 4))
    (src,) = _inputs((4, 4))
    return {
        "matmul": (MATMUL, Expectation([a, b], [a @ b])),
        "conv": (CONV_NCHW, Expectation([x, w], [_conv_nchw(x, w)])),
        "conv_nhwc": (CONV_NHWC, Expectation([xh, wh], [_conv_nhwc(xh, wh)])),
        "strided": (STRIDED_INSERT, Expectation([src], [_strided(src)])),
    }


LANE_CASE = {"llvm-cpu-haswell-data-tiling": "matmul", "llvm-cpu-znver4-conv-data-tiling": "conv",
             "llvm-cpu-conv-channels-last": "conv",
             "llvm-cpu-conv-channels-last-tiled": "conv", "llvm-cpu-conv-filter-channels-last": "conv_nhwc",
             "llvm-cpu-transpose-conv": "conv", "llvm-cpu-strided-insert-generic": "strided",
             "llvm-cpu-backward-data-conv": "strided"}


@pytest.mark.iree
def test_each_lane_compiles_its_case_and_the_executing_ones_match_numpy(toolchain):
    cases = _cases()
    for kind in sorted(set(LANE_CASE.values())):
        text, expectation = cases[kind]
        lanes = ["llvm-cpu"] + [name for name, case in LANE_CASE.items() if case == kind]
        report = check_module(text, lanes, expectation, toolchain, confirm=False)
        for result in report.results:
            want = Stage.COMPARE if BACKENDS[result.backend].executes(toolchain.probe) else Stage.COMPILE
            assert (result.stage, result.status) == (want, Status.OK), (result.backend, result.detail[:300])
    if set(HASWELL_CPU_FLAGS) <= toolchain.probe.cpu_flags:  # an x86 host with AVX2 runs the haswell lane
        assert BACKENDS["llvm-cpu-haswell-data-tiling"].executes(toolchain.probe)


def _compiled_to(toolchain, text, flags, phase, tmp_path):
    source = tmp_path / "m.mlir"
    source.write_text(text)
    result = run_sandboxed([str(toolchain.compile_bin), str(source), *flags, f"--compile-to={phase}"],
                           Limits(timeout=300.0))
    assert result.ok, result.stderr[-500:]
    return result.stdout


@pytest.mark.iree
def test_each_lane_changes_what_is_built_for_the_ops_it_claims(toolchain, tmp_path):
    """What puts a lane in the default set for a kind of op: its flags change the code of such a
    module (the preprocessing lanes the preprocessed IR; the data-tiling lanes call their ukernel)."""
    cases = _cases()
    base = BACKENDS["llvm-cpu"].compile_flags(toolchain.probe)
    for name in PREPROCESSING_LANES:
        text = cases[LANE_CASE[name]][0]
        flags = BACKENDS[name].compile_flags(toolchain.probe)
        assert (_compiled_to(toolchain, text, flags, "preprocessing", tmp_path)
                != _compiled_to(toolchain, text, base, "preprocessing", tmp_path)), name
    built = _compiled_to(toolchain, CONV_NCHW, BACKENDS["llvm-cpu-znver4-conv-data-tiling"].compile_flags(
        toolchain.probe), "executable-targets", tmp_path)
    assert "iree_uk_conv_nchwc" in built and 'cpu = "znver4"' in built
    built = _compiled_to(toolchain, MATMUL, BACKENDS["llvm-cpu-haswell-data-tiling"].compile_flags(toolchain.probe),
                         "executable-targets", tmp_path)
    assert "iree_uk_mmt4d" in built and 'cpu = "haswell"' in built


@pytest.mark.iree
def test_a_lane_this_cpu_cannot_run_is_compiled_and_said_not_executed(toolchain, monkeypatch):
    real = toolchain.probe
    no_avx512 = dataclasses.replace(real, cpu_flags=frozenset(f for f in real.cpu_flags if not f.startswith("avx512")))
    monkeypatch.setattr(toolchain_module, "probe_toolchain", lambda _: no_avx512)
    text, expectation = _cases()["conv"]
    report = check_module(text, ["llvm-cpu", "llvm-cpu-znver4-conv-data-tiling"], expectation, toolchain, confirm=False)
    results = {r.backend: r for r in report.results}
    zen4 = results["llvm-cpu-znver4-conv-data-tiling"]
    assert (zen4.stage, zen4.status, zen4.detail) == (Stage.COMPILE, Status.OK, "compiled; not executed here")
    assert results["llvm-cpu"].stage == Stage.COMPARE


@pytest.mark.iree
def test_a_conv_transpose_into_a_zero_constant_matches_numpy_on_the_strided_insert_lanes():
    report = check_params("conv_transpose", {
        "rank": 1, "dtype": "f32", "n": 3, "groups": 1, "ci": 4, "co": 2, "in_size": [8], "kernel": [3],
        "stride": [3], "dilation": [1], "pad_lo": [1], "pad_hi": [1], "out_pad": [0], "dyn_x": [False, False, False],
        "w_layout": [0, 1, 2], "form": "named", "flip": "extract", "pad_mode": "insert", "x_expand": "late",
        "w_order": "fused", "fwd_layout": [0, 1, 2], "zero_dest": "constant"},
        backends=("llvm-cpu", "llvm-cpu-strided-insert-generic", "llvm-cpu-backward-data-conv"))
    assert [(r.backend, r.stage, r.status) for r in report.results] == [
        (name, Stage.COMPARE, Status.OK)
        for name in ("llvm-cpu", "llvm-cpu-strided-insert-generic", "llvm-cpu-backward-data-conv")]


@pytest.mark.iree
def test_shapefuzz_backends_lists_each_lane_with_its_status(toolchain):
    listed = subprocess.run([sys.executable, "-m", "shapefuzz", "backends", "--json"], capture_output=True, text=True,
                            timeout=300)
    rows = {row["name"]: row for row in json.loads(listed.stdout)["backends"]}
    cpu = toolchain.probe.cpu_flags
    for name in NEW_LANES:
        row = rows[name]
        assert row["compiles"] and row["default"], row
        runs = set(BACKENDS[name].cpu_features) <= cpu
        assert row["executes"] == runs and (row["availability"] == "compiles and executes") == runs, row
    assert rows["llvm-cpu-strided-insert-generic"]["affects"] == ["strided-insert"]
    text = subprocess.run([sys.executable, "-m", "shapefuzz", "backends"], capture_output=True, text=True, timeout=300)
    lines = [line for line in text.stdout.splitlines() if line.startswith((" *", "  ")) and "llvm-cpu" in line]
    # the longest names keep the columns aligned
    assert len({line.index("compiles") for line in lines if "compiles and executes" in line}) == 1


# Found by the first sweep of these lanes (3.13): the conversion copies a dim of stride 1 and
# offset 0 whole, even where the source is shorter than the destination (here 3 of 4 columns),
# reading past the source instead of leaving zeros.
SHORT_PASSTHROUGH = """func.func @main(%src: tensor<4x3xf32>) -> tensor<7x4xf32> {
  %cst = arith.constant dense<0.000000e+00> : tensor<7x4xf32>
  %0 = tensor.insert_slice %src into %cst[0, 0] [4, 3] [2, 1] : tensor<4x3xf32> into tensor<7x4xf32>
  return %0 : tensor<7x4xf32>
}
"""


@pytest.mark.iree
def test_the_strided_insert_lane_finds_3_13s_read_past_a_short_passthrough_dim(toolchain):
    """A known IREE bug: right on llvm-cpu, wrong on the strided-insert lane (fails loudly once IREE
    fixes it, so the test is updated)."""
    src = np.arange(1, 13, dtype=np.float32).reshape(4, 3)
    want = np.zeros((7, 4), np.float32)
    want[::2, :3] = src
    report = check_module(SHORT_PASSTHROUGH, ["llvm-cpu", "llvm-cpu-strided-insert-generic"],
                          Expectation([src], [want]), toolchain, confirm=False)
    assert [(r.backend, r.stage, r.status) for r in report.results] == [
        ("llvm-cpu", Stage.COMPARE, Status.OK), ("llvm-cpu-strided-insert-generic", Stage.COMPARE, Status.MISMATCH)]
