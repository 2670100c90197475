"""A documented gap of a target is its own kind (triage.target_limits): a failure that shows it gets a
signature naming the rule, an identity that is one cause across lanes, and evidence (lane, rule,
diagnostic line, the op it is attached to); the same op failing before the target's codegen, or
another op failing in it, is not the gap. Checked on real IREE 3.13 compiles (no device needed:
the gap is in the compile)."""

from __future__ import annotations

import pytest

from shapefuzz.judge.oracle import check_module
from shapefuzz.model import Stage, Status
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.target_limits import LIMIT_PREFIX, limit_in_output, limit_of_failure

# the smallest attention: one batch, 4 queries and keys of 8
ATTENTION = """func.func @main(%q: tensor<1x4x8xf32>, %k: tensor<1x4x8xf32>, %v: tensor<1x4x8xf32>) -> tensor<1x4x8xf32> {
  %scale = arith.constant 0.25 : f32
  %out_e = tensor.empty() : tensor<1x4x8xf32>
  %result = iree_linalg_ext.attention <indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d3)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d4, d2)>, affine_map<(d0, d1, d2, d3, d4) -> ()>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>]>
    ins(%q, %k, %v, %scale : tensor<1x4x8xf32>, tensor<1x4x8xf32>, tensor<1x4x8xf32>, f32)
    outs(%out_e : tensor<1x4x8xf32>) {
  ^bb0(%score: f32):
    iree_linalg_ext.yield %score : f32
  } -> tensor<1x4x8xf32>
  return %result : tensor<1x4x8xf32>
}
"""

# torch's attention with two dynamic leading dims: torch-mlir's conversion (convert-torch-to-tmtensor)
# builds a `tensor.expand_shape` without its output shape, on every lane: a bug, wherever it is met
SDPA = """func.func @main(%q: !torch.vtensor<[{d},2,16],f32>, %k: !torch.vtensor<[{d},3,16],f32>, %v: !torch.vtensor<[{d},3,8],f32>) -> !torch.vtensor<[{d},2,8],f32> {{
  %none = torch.constant.none
  %zero = torch.constant.float 0.000000e+00
  %false = torch.constant.bool false
  %scale = torch.constant.float 1.250000e-01
  %0 = torch.aten.scaled_dot_product_attention %q, %k, %v, %none, %zero, %false, %scale, %false : !torch.vtensor<[{d},2,16],f32>, !torch.vtensor<[{d},3,16],f32>, !torch.vtensor<[{d},3,8],f32>, !torch.none, !torch.float, !torch.bool, !torch.float, !torch.bool -> !torch.vtensor<[{d},2,8],f32>
  return %0 : !torch.vtensor<[{d},2,8],f32>
}}
"""


def _results(text, lanes, toolchain):
    report = check_module(text, lanes, None, toolchain, confirm=False)
    return {r.backend: r for r in report.results}


@pytest.mark.iree
def test_attention_on_spirv_is_the_documented_gap_with_its_evidence(toolchain):
    results = _results(ATTENTION, ["vulkan-spirv", "vulkan-llvmpipe", "llvm-cpu"], toolchain)
    assert results["llvm-cpu"].status == Status.OK  # the same module compiles for the CPU
    idents = []
    for lane in ("vulkan-spirv", "vulkan-llvmpipe"):
        r = results[lane]
        assert (r.stage, r.status) == (Stage.COMPILE, Status.ERROR)
        assert r.signature is not None and r.signature.message == LIMIT_PREFIX + "spirv-attention"
        gap = limit_of_failure(lane, "compile", "error", r.signature.message, r.detail)
        assert gap is not None and gap.rule.name == "spirv-attention"
        # the evidence: the lane, the rule, the compiler's own line and the op it is attached to
        assert gap.evidence.startswith(f"{lane}: target limit spirv-attention")
        assert "'iree_linalg_ext.online_attention' op result #0 must be variadic of ranked tensor" in gap.diagnostic
        assert gap.source == "iree_linalg_ext.attention"
        ident = identity_of("compile", "error", r.signature.message, r.detail)
        assert ident.strong
        idents.append(ident.key)
    assert idents[0] == idents[1]  # one gap, one cause, on both Vulkan targets


@pytest.mark.iree
def test_torch_attention_is_the_gap_only_where_the_target_s_codegen_meets_it(toolchain):
    static = _results(SDPA.format(d="1,2"), ["vulkan-spirv"], toolchain)["vulkan-spirv"]
    assert static.signature is not None and static.signature.message == LIMIT_PREFIX + "spirv-attention"
    gap = limit_of_failure("vulkan-spirv", "compile", "error", static.signature.message, static.detail)
    assert gap is not None and gap.source == "torch.aten.scaled_dot_product_attention"
    # two dynamic leading dims: torch-mlir's conversion fails before any codegen, on Vulkan as on the CPU
    dynamic = _results(SDPA.format(d="?,?"), ["vulkan-spirv", "llvm-cpu"], toolchain)
    for lane, r in dynamic.items():
        assert r.status == Status.ERROR and r.signature is not None, lane
        assert not r.signature.message.startswith(LIMIT_PREFIX), lane
        assert "expand_shape" in r.signature.message
        assert limit_in_output(lane, "compile", "error", r.detail) is None


def test_another_op_failing_in_spirv_codegen_is_not_the_attention_gap():
    """The rule reads the diagnostic's op: the same SPIR-V codegen failure attached to a conv (a
    chain whose conv dispatch breaks there) stays a bug, and a crash or another lane is never the gap."""
    output = ("m.mlir:5:13: error: failed to run translation of source executable to target executable for backend "
              "#hal.executable.target<\"vulkan-spirv\">\n  %c = linalg.conv_2d_nchw_fchw ins(%x, %w : ...)\n"
              "// -----// IR Dump After SPIRVLowerExecutableTargetPass Failed: iree-spirv-lower-executable-target-pass"
              " //----- //\n")
    assert limit_in_output("vulkan-spirv", "compile", "error", output) is None
    on_attention = output.replace("linalg.conv_2d_nchw_fchw", "iree_linalg_ext.attention")
    assert limit_in_output("vulkan-spirv", "compile", "error", on_attention) is not None
    assert limit_in_output("vulkan-spirv", "compile", "crash", on_attention) is None
    assert limit_in_output("rocm-gfx942", "compile", "error", on_attention) is None
    assert limit_in_output("vulkan-llvmpipe-im2col", "compile", "error", on_attention) is not None  # a variant: its base's
