"""A bug on a host-CPU lane says whether it depends on the CPU (recheck.cpus): its reproducer compiled for
a few other CPUs, each verdict recorded, the issue text saying "fails for host (...) and x86-64-v3, passes
for sapphirerapids", within a time bound that says when it cut the list short.

The real case, by hand on IREE 3.13 (a Zen 4 host): `arith.maxnumf` on 1 x f16 lowers to an `fmaxf`
libcall that the embedded linker cannot resolve ("undefined symbol: fmaxf") for host, znver4, x86-64 and
x86-64-v2/v3/v4, and compiles for sapphirerapids (AVX512-FP16)."""

from __future__ import annotations

import platform

import numpy as np
import pytest

from shapefuzz.campaign.cpu_spreads import spread_causes
from shapefuzz.corpus import Finding, load_entry, make_finding, save_finding
from shapefuzz.judge.oracle import check_module
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.cpus import cpu_spread
from shapefuzz.triage.cpus import FAILS, NOT_JUDGED, PASSES, cpu_spread_of
from support.f16_max import FMAXF

MATMUL = """func.func @main(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x2xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2x2xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<2x2xf32>) -> tensor<2x2xf32>
  %r = linalg.matmul ins(%a, %b : tensor<2x3xf32>, tensor<3x2xf32>) outs(%f : tensor<2x2xf32>) -> tensor<2x2xf32>
  return %r : tensor<2x2xf32>
}
"""

x86 = pytest.mark.skipif(platform.machine() != "x86_64", reason="the CPUs tried are x86 ones")


def _host(toolchain) -> str:
    from shapefuzz.iree.host_cpu import host_cpu

    return host_cpu(toolchain)


def _fmaxf_entry(tmp_path, toolchain):
    found = check_module(FMAXF, ["llvm-cpu"], None, toolchain, confirm=False).results[0]
    if found.signature is None and found.status == Status.OK:  # by the CPU's features, whatever its name
        pytest.skip(f"this host's CPU ({_host(toolchain)}) compiles f16 max natively (AVX512-FP16): no fmaxf "
                    "libcall to fail on here")
    assert found.signature is not None and "fmaxf" in found.signature.message  # the real failure, on host
    return save_finding(tmp_path / "corpus", make_finding(found.signature, FMAXF, toolchain, detail=found.detail,
                                                          triage="compiler bug", evidence="compile/error on llvm-cpu"))[0]


@x86
@pytest.mark.iree
def test_the_fmaxf_libcall_fails_for_x86_64_v3_and_passes_for_sapphirerapids(tmp_path, toolchain):
    host = _host(toolchain)
    if host == "sapphirerapids":
        pytest.skip("this host is the CPU that passes")
    path = _fmaxf_entry(tmp_path, toolchain)
    spread = cpu_spread(load_entry(path), toolchain)
    assert spread is not None and spread.host == host and not spread.left
    verdicts = {v.cpu: v.verdict for v in spread.verdicts}
    assert verdicts == {"x86-64-v3": FAILS, "sapphirerapids": PASSES, "x86-64": FAILS}
    assert spread.text == f"fails for host ({host}), x86-64-v3 and x86-64, passes for sapphirerapids"

    # the issue text says it, from the record kept with the entry (of this very reproducer)
    from shapefuzz.corpus import update_meta
    from shapefuzz.export import IssueContext, plan, to_issue

    update_meta(path, cpus=spread.to_json())
    entry = load_entry(path)
    assert cpu_spread_of(entry.meta, entry.mlir) == spread
    text = to_issue(plan(entry, toolchain), IssueContext("IREE 3.13.0", ()), "x.files")
    assert f"on llvm-cpu): fails for host ({host}), x86-64-v3 and x86-64, passes for sapphirerapids." in text


@x86
@pytest.mark.iree
def test_a_wrong_value_is_judged_only_on_the_cpus_whose_code_runs_here(tmp_path, toolchain):
    a = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    b = np.arange(6, dtype=np.float32).reshape(3, 2) / 4
    sig = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values")
    host_flags = ["iree-compile", "reproducer.mlir", "--iree-hal-target-device=local",
                  "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host"]
    # a saved reference one off everywhere stands in for a miscompile: every CPU that runs it is wrong
    path, _ = save_finding(tmp_path / "c", Finding(sig, MATMUL, ("llvm-cpu",), None, 0, [a, b], [a @ b + 1], "3.13.0",
                                                   host_flags, "result 0 differs"))
    spread = cpu_spread(load_entry(path), toolchain)
    assert spread is not None
    verdicts = {v.cpu: v.verdict for v in spread.verdicts}
    assert verdicts["x86-64"] == FAILS and verdicts["x86-64-v3"] == FAILS
    if "avx512_fp16" not in toolchain.probe.cpu_flags:  # its code would not run here: never called right
        assert verdicts["sapphirerapids"] == NOT_JUDGED
        assert spread.text.startswith(f"fails for every CPU tried (host ({_host(toolchain)}), x86-64-v3 and x86-64)")
        assert "not judged for sapphirerapids (its code cannot run on this machine)" in spread.text


@x86
@pytest.mark.iree
def test_a_cause_the_time_does_not_reach_says_so(tmp_path, toolchain):
    from shapefuzz.campaign.causes.cause import Cause
    from shapefuzz.triage.severity import Severity
    from shapefuzz.campaign.outcomes import Triage

    path = _fmaxf_entry(tmp_path, toolchain)
    cause = Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="i", failing_pass="",
                  component="c", scope="s", lanes=("llvm-cpu",), severity=Severity.COMPILE_ERROR,
                  localized=None, reported="", known=False, regression=None, backends=("llvm-cpu",),
                  stage="compile", status="error", message="m", buckets=(), count=1, first_seen=0.0, new=True,
                  rehits=0, rehit_seconds=0.0, corpus_entries=(str(path),), symptoms=(), merged=(), shrunk=True)
    said: list[str] = []
    assert spread_causes([cause], toolchain, 0.0, said.append) == 1
    entry = load_entry(path)
    record = cpu_spread_of(entry.meta, entry.mlir)
    assert record is not None and record.left == ("x86-64-v3", "sapphirerapids", "x86-64")
    assert "not tried: x86-64-v3, sapphirerapids, x86-64 (time is up" in record.text and said
    # with time, the step takes it again and finishes it
    assert spread_causes([cause], toolchain, 60.0) == 1
    entry = load_entry(path)
    record = cpu_spread_of(entry.meta, entry.mlir)
    assert record is not None and not record.left and len(record.verdicts) == 3
    # a bug placed before codegen (audit D: a torch-mlir conversion's) is no CPU's: its spread is not taken
    import dataclasses

    from shapefuzz.triage.component import FRONTEND_TORCH
    fresh = _fmaxf_entry(tmp_path / "torch", toolchain)  # no record yet: only its component keeps it out
    torch = dataclasses.replace(cause, component=FRONTEND_TORCH, name="cause-torch", corpus_entries=(str(fresh),))
    assert spread_causes([torch], toolchain, 60.0) == 0 and cpu_spread_of(load_entry(fresh).meta, "") is None
