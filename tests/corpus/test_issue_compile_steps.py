"""An issue text says only what applies to its failure: a compile failure's steps and files need only
iree-compile, and the host-CPU caveat is for a bug whose place depends on the target's CPU.

The real cases (campaign audit, IREE 3.13): run.sh of every compile error ran iree-run-module after it
(for a ROCm lane, on a HIP device the reader may not have), and a failure in dispatch creation
(`iree-dispatch-creation-fold-unit-extent-dims`) said "on another CPU it may not reproduce"."""

from __future__ import annotations

import numpy as np

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.export import IssueContext, plan
from shapefuzz.export.issue import write_issue
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.component import DISPATCH_CREATION

MLIR = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
HOST = ["iree-compile", "reproducer.mlir", "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", "module.vmfb"]


def _issue(tmp_path, backend: str, component: str) -> tuple[str, str, list]:
    sig = Signature(backend, Stage.COMPILE, Status.ERROR, "failed to legalize operation 'x.y'")
    arrays = [np.ones(4, np.float32)]  # kept by the entry, as a campaign's are
    command = HOST if backend == "llvm-cpu" else ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"]
    path, _ = save_finding(tmp_path / "corpus", Finding(sig, MLIR, (backend,), None, 0, arrays, arrays, "3.13.0",
                                                         command, "error: failed to legalize operation 'x.y'"))
    update_meta(path, bug={"component": component, "failing_pass": "iree-x"})
    toolchain = find_toolchain(None)
    written = write_issue(plan(load_entry(path), toolchain), tmp_path / "issue.md", toolchain,
                          IssueContext("IREE 3.13.0", (), host_cpu="znver4"))
    return (tmp_path / "issue.md").read_text(), (tmp_path / "issue.files" / "run.sh").read_text(), written


def test_a_compile_failure_on_a_gpu_lane_needs_only_iree_compile(tmp_path):
    issue, run_sh, written = _issue(tmp_path, "rocm-gfx942", "codegen for ROCm (rocm-gfx942)")
    assert "iree-compile reproducer.mlir" in run_sh and "iree-run-module" not in run_sh
    assert "iree-run-module" not in issue and ".npy" not in issue
    assert not any(".npy" in str(path) for path in written)


def test_a_target_independent_failure_has_no_host_cpu_caveat(tmp_path):
    issue, _, _ = _issue(tmp_path, "llvm-cpu", DISPATCH_CREATION)
    assert "--iree-llvmcpu-target-cpu=host" in issue and "this machine's CPU" not in issue


def test_a_codegen_failure_for_the_host_cpu_keeps_the_caveat(tmp_path):
    issue, _, _ = _issue(tmp_path, "llvm-cpu", "codegen for llvm-cpu")
    assert "on another CPU it may not reproduce: pass --iree-llvmcpu-target-cpu=znver4" in issue
