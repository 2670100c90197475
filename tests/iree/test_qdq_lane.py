"""The QDQ twin lane (issue 45): `llvm-cpu-no-qdq-rewrite` compiles with 3.13's default-on
QDQ-to-integer-math rewrite switched off, takes a candidate's slot only for a module whose ops the
rewrite changes, judges the same case against the NumPy reference as llvm-cpu does, and is refused
with a line by a release whose iree-compile lacks the flag."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np
import pytest

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Limits, Outcome
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS
from shapefuzz.iree.mlirinfo import module_traits, op_traits
from shapefuzz.iree.toolchain import ToolchainProbe, find_toolchain
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.model import Stage, Status, Verdict
from support.engine_fakes import InertTargetParts
from support.fakes import FAKE_FLAGS, make_fake_toolchain

LANE = "llvm-cpu-no-qdq-rewrite"
FLAG = "--iree-global-opt-enable-qdq-to-integer-math"


def _dequantize(name: str, src: str, shape: str, zp: int, scale: float, zp_map: str = "()") -> str:
    dims = "(d0, d1)"
    return (f"  {name}_i = tensor.empty() : tensor<{shape}xf32>\n"
            f"  {name} = iree_linalg_ext.dequantize_affine <indexing_maps = [affine_map<{dims} -> {dims}>, "
            f"affine_map<{dims} -> ()>, affine_map<{dims} -> {zp_map}>, affine_map<{dims} -> {dims}>], "
            f"quant_min = -128, quant_max = 127> ins({src}, %s_{name[1:]}, %z_{name[1:]} : tensor<{shape}xi8>, f32, "
            f"{'i64' if zp_map == '()' else 'tensor<4xi8>'}) outs({name}_i : tensor<{shape}xf32>) -> tensor<{shape}xf32>\n")


# A per-row zero point on A (the extremes), a per-tensor 127 on B: both operands dequantized and a
# zero-filled f32 matmul, the pattern the 3.13 rewrite turns into an i8 x i8 -> i32 matmul.
QDQ_MATMUL = ("func.func @main(%aq: tensor<4x8xi8>, %bq: tensor<8x5xi8>) -> tensor<4x5xf32> {\n"
              "  %s_a = arith.constant 0.25 : f32\n  %s_b = arith.constant 0.5 : f32\n"
              "  %z_a = arith.constant dense<[-128, 127, 0, -1]> : tensor<4xi8>\n  %z_b = arith.constant 127 : i64\n"
              + _dequantize("%a", "%aq", "4x8", 0, 0.25, "(d0)") + _dequantize("%b", "%bq", "8x5", 127, 0.5)
              + "  %zero = arith.constant 0.0 : f32\n  %e = tensor.empty() : tensor<4x5xf32>\n"
              "  %f = linalg.fill ins(%zero : f32) outs(%e : tensor<4x5xf32>) -> tensor<4x5xf32>\n"
              "  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x5xf32>) outs(%f : tensor<4x5xf32>) "
              "-> tensor<4x5xf32>\n  return %r : tensor<4x5xf32>\n}\n")
F32_CONV = "%r = linalg.conv_2d_nchw_fchw ins(%x, %w : tensor<1x2x5x5xf32>, tensor<3x2x2x2xf32>) outs(%f : tensor<1x3x4x4xf32>)"
GENERIC_DEQUANTIZE = ('%d = linalg.generic {iterator_types = ["parallel"]} ins(%q : tensor<8xi8>) { arith.extsi '
                      'arith.sitofp arith.mulf }\n%r = linalg.matmul ins(%d, %b')


def test_the_qdq_trait_is_a_contraction_beside_a_dequantize_the_rewrite_reads():
    assert "qdq" in op_traits(QDQ_MATMUL) and {"contraction", "qdq"} <= module_traits(QDQ_MATMUL)
    onnx = 'torch.operator "onnx.DequantizeLinear"(%q, %s, %z)\ntorch.operator "onnx.Conv"(%x, %w)'
    assert op_traits(onnx) == {"conv", "qdq"}
    pt2e = "torch.quantized_decomposed.dequantize_per_channel %w, %s\ntorch.aten.mm %a, %b"
    assert op_traits(pt2e) == {"contraction", "qdq"}
    # a dequantize with nothing to contract, a generic-bodied dequantize, integer matmuls: unchanged
    assert op_traits("iree_linalg_ext.dequantize_affine <indexing_maps = []> ins(%q") == set()
    assert "qdq" not in op_traits(GENERIC_DEQUANTIZE)
    assert "qdq" not in op_traits('linalg.quantized_matmul ins(%a, %b, %za, %zb\ntorch.operator "onnx.MatMulInteger"')
    assert op_traits(F32_CONV) == {"conv"}


def test_the_twin_is_in_the_default_set_and_only_for_qdq_cases():
    lane = BACKENDS[LANE]
    assert LANE in DEFAULT_BACKENDS and lane.variant_of == "llvm-cpu" and lane.affects == ("qdq",)
    assert lane.ineligible_for(module_traits(QDQ_MATMUL)) is None
    assert lane.ineligible_for(module_traits(F32_CONV)) == "its flags change only qdq ops, and the case has none"


def _probe(flags: set[str], release=(3, 13)) -> ToolchainProbe:
    return ToolchainProbe("x", release, frozenset(flags), ("local-task://",), False, frozenset())


def test_the_twin_compiles_with_the_flag_off_and_is_refused_where_the_release_lacks_it():
    base = {"--iree-hal-target-device", "--iree-hal-local-target-device-backends", "--iree-llvmcpu-target-cpu"}
    lane = BACKENDS[LANE]
    assert lane.compile_flags(_probe(base | {FLAG}))[-1] == f"{FLAG}=false" and lane.executes(_probe(base | {FLAG}))
    older = _probe(base, (3, 12))
    assert lane.compile_flags(older) is None and not lane.executes(older)
    assert lane.availability(older) == f"this compiler has no {FLAG}"
    assert BACKENDS["llvm-cpu"].executes(older)


def test_a_fake_release_without_the_flag_lists_the_twin_as_unavailable_and_skips_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = make_fake_toolchain(tmp_path / "bin", "ok", version="3.12.0", flags=FAKE_FLAGS)
    toolchain = find_toolchain(folder)
    assert toolchain.probe.release == (3, 12) and not toolchain.probe.has_flag(FLAG)
    report = check_module(QDQ_MATMUL, [LANE], None, toolchain, confirm=False)
    (result,) = report.results
    assert (result.backend, result.stage, result.status) == (LANE, Stage.COMPILE, Status.SKIPPED)
    assert result.detail == f"this compiler has no {FLAG}"


def test_backends_lists_the_twin_refused_at_a_release_without_the_flag(tmp_path, monkeypatch):
    from click.testing import CliRunner

    from shapefuzz.cli import cli

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    folder = make_fake_toolchain(tmp_path / "bin", "ok", version="3.12.0", flags=FAKE_FLAGS)
    result = CliRunner().invoke(cli, ["--iree-bin", str(folder), "backends", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["name"]: row for row in json.loads(result.output)["backends"]}
    assert rows[LANE]["availability"] == f"this compiler has no {FLAG}" and not rows[LANE]["compiles"]
    assert rows[LANE]["affects"] == ["qdq"]


@dataclass(frozen=True)
class QdqOrConvTarget(InertTargetParts):
    """Even seeds are QDQ matmuls, odd ones plain f32 convs; the real lane rules."""

    corpus: str

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        n = seed % 4000
        text = QDQ_MATMUL if n % 2 == 0 else F32_CONV
        return Candidate(hashlib.sha256(str(n).encode()).hexdigest()[:16], group, seed, (), json.dumps({"n": n}),
                         f"// {n}\n{text}")

    def ineligible(self, candidate: Candidate, lanes) -> set[str]:
        return IreeTarget.ineligible(self, candidate, lanes)  # type: ignore[arg-type]

    def check(self, candidate: Candidate, lanes) -> Outcome:
        return Outcome(Verdict.PASS, {lane: (Status.OK, 0.01) for lane in lanes})

    confirm = check


def test_a_campaign_draws_the_twin_for_qdq_cases_and_never_for_a_plain_conv(tmp_path):
    lanes = ("llvm-cpu", LANE, "vmvx")
    engine = Engine(QdqOrConvTarget(str(tmp_path / "corpus")), CampaignStore(tmp_path / "camp"),
                    EngineConfig(("g",), lanes, 5, 1, Limits(count=40), start_method="fork", reference="llvm-cpu",
                                 lanes_per_candidate=2, confirm=False))
    engine.run()
    rows = list(engine.store.candidates())
    qdq = [r for r in rows if not json.loads(r.payload)["n"] % 2]
    conv = [r for r in rows if json.loads(r.payload)["n"] % 2]
    assert qdq and conv and all(r.backends[0] == "llvm-cpu" for r in rows)
    assert not any(LANE in r.backends for r in conv)
    assert any(LANE in r.backends for r in qdq)


def _qdq_reference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    za = np.array([-128, 127, 0, -1])[:, None]
    return (((a.astype(np.int64) - za) * 0.25) @ ((b.astype(np.int64) - 127) * 0.5)).astype(np.float32)


@pytest.mark.iree
def test_the_rewrite_and_the_float_path_both_match_numpy_on_a_qdq_matmul(toolchain):
    assert toolchain.probe.has_flag(FLAG)  # 3.13 has the rewrite, on by default
    rng = np.random.default_rng(45)
    a, b = (rng.integers(-128, 128, shape).astype(np.int8) for shape in ((4, 8), (8, 5)))
    a[0, :2], b[:2, 0] = -128, 127  # the extremes against the extreme zero points
    report = check_module(QDQ_MATMUL, ["llvm-cpu", LANE], Expectation([a, b], [_qdq_reference(a, b)]), toolchain,
                          confirm=False)
    results = {r.backend: r for r in report.results}
    for name in ("llvm-cpu", LANE):
        assert (results[name].stage, results[name].status) == (Stage.COMPARE, Status.OK), results[name].detail[:300]
    assert report.verdict == Verdict.PASS
