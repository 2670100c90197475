"""A cause found on a variant lane whose plain lane fails the same way is ranged on the plain lane,
as its issue text's steps compile it (issue #43 item 4, audit A of the fresh campaign): a wrong value
found on llvm-cpu-o3 that plain llvm-cpu computes wrong too was ranged "3.6.0-3.13.0" because 3.0.0
has no --iree-opt-level ("could not tell"), while 3.0.0 gives the same wrong values on plain llvm-cpu.
Real IREE: the pinned wheels, and the toolchain cache's older releases where there are any."""

from __future__ import annotations

import pytest

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.regression import regression_range
from support.reversed_dot import ERROR, REVERSED_DOT

pytestmark = pytest.mark.iree


def _entry(tmp_path, toolchain, lane: str):
    sig = Signature(lane, Stage.COMPILE, Status.ERROR, "'linalg.generic' op inferred input/output operand #N")
    path, _ = save_finding(tmp_path, Finding(sig, REVERSED_DOT, (lane,), None, 0, None, None,
                                             toolchain.probe.version, [], f"error: {ERROR}"))
    return load_entry(path)


def test_a_variant_lane_failure_the_plain_lane_shares_is_ranged_there(toolchain, tmp_path):
    from shapefuzz.iree.releases import cached_versions, installed_version, version_key

    pinned = installed_version()
    if not pinned:
        pytest.skip("the pinned wheels are not a release")
    versions = sorted([*(v for v in ("3.0.0", "3.6.0") if v in cached_versions()), pinned], key=version_key)
    record = regression_range(_entry(tmp_path, toolchain, "llvm-cpu-o3"), versions, trust_seen=True)
    assert record["lane"] == "llvm-cpu", record
    assert "(taken on llvm-cpu, where this reproducer fails the same way; older releases may lack llvm-cpu-o3 or its flags)" in record["text"]
    assert record["releases"] == "; ".join(f"{v} fails" for v in versions), record  # 3.0.0 tells too


def test_a_plain_lane_entry_is_ranged_where_it_is(toolchain, tmp_path):
    from shapefuzz.iree.releases import installed_version

    if not installed_version():
        pytest.skip("the pinned wheels are not a release")
    record = regression_range(_entry(tmp_path, toolchain, "llvm-cpu"), [installed_version()], trust_seen=True)
    assert record["lane"] == "" and "on llvm-cpu" not in record["text"], record


def test_a_frontend_crash_found_on_vulkan_llvmpipe_is_ranged_on_llvm_cpu(toolchain, tmp_path):
    """Audit B: torch-mlir's si8 `aten.mul.Scalar` crash (ConvertTorchToLinalg), found on vulkan-llvmpipe, read
    "could not tell" at 3.0.0 and 3.6.0 (no llvmpipe target there), which crash the same way on llvm-cpu."""
    from pathlib import Path

    from shapefuzz.iree.releases import installed_version
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.triage.component import FRONTEND_TORCH

    if not installed_version():
        pytest.skip("the pinned wheels are not a release")
    text = (Path(__file__).resolve().parents[1] / "data" / "crash_torch_to_linalg.mlir").read_text()
    result = check_module(text, ["vulkan-llvmpipe"], None, toolchain, confirm=False).results[0]
    assert result.signature is not None and result.status == Status.CRASH, result.detail[:300]
    path, _ = save_finding(tmp_path, Finding(result.signature, text, ("vulkan-llvmpipe",), None, 0, None, None,
                                             toolchain.probe.version, [], result.detail))
    update_meta(path, bug={"component": FRONTEND_TORCH, "failing_pass": "ConvertTorchToLinalg"})
    record = regression_range(load_entry(path), [installed_version()], trust_seen=True)
    assert record["lane"] == "llvm-cpu" and "older releases may lack vulkan-llvmpipe)" in record["text"], record


ONE_ROW_GATHER = """func.func @main(%source: tensor<1x1xf32>, %indices_arg: tensor<3x1xi32>) -> tensor<3x1xf32> {
  %out_init = tensor.empty() : tensor<3x1xf32>
  %gathered = iree_linalg_ext.gather dimension_map = [0]
    ins(%source, %indices_arg : tensor<1x1xf32>, tensor<3x1xi32>) outs(%out_init : tensor<3x1xf32>) -> tensor<3x1xf32>
  return %gathered : tensor<3x1xf32>
}
"""


def test_a_spirv_codegen_failure_found_on_vulkan_llvmpipe_is_ranged_on_vulkan_spirv(toolchain, tmp_path):
    """Audit D: ab1aa7cfd1, SPIR-V's "failed to get lowering configuration" on a one-row gather, found on
    vulkan-llvmpipe, was ranged from 3.12.0 ("could not tell" at 3.6.0: no llvmpipe target there), while
    3.6.0 fails the same way on vulkan-spirv."""
    from shapefuzz.iree.releases import cached_versions, installed_version, version_key
    from shapefuzz.judge.oracle import check_module

    pinned = installed_version()
    if not pinned:
        pytest.skip("the pinned wheels are not a release")
    result = check_module(ONE_ROW_GATHER, ["vulkan-llvmpipe"], None, toolchain, confirm=False).results[0]
    assert result.signature is not None and result.status == Status.ERROR, result.detail[:300]
    path, _ = save_finding(tmp_path, Finding(result.signature, ONE_ROW_GATHER, ("vulkan-llvmpipe",), None, 0, None,
                                             None, toolchain.probe.version, [], result.detail))
    versions = sorted([*(v for v in ("3.6.0",) if v in cached_versions()), pinned], key=version_key)
    record = regression_range(load_entry(path), versions, trust_seen=True)
    assert record["lane"] == "vulkan-spirv" and "older releases may lack vulkan-llvmpipe)" in record["text"], record
    if "3.6.0" in versions:
        assert record["releases"].startswith("3.6.0 fails"), record
