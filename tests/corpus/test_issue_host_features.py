"""A host-CPU caveat whose CPU name does not give the host's features says the features too, so the
command it tells a reader to pass compiles as here (iree.host_cpu: a VM's Xeon resolves to "rocketlake"
with AVX512-FP16 and AMX; the name alone failed an f16 max where `host` compiled)."""

from __future__ import annotations

import numpy as np

from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.export import IssueContext, plan
from shapefuzz.export.issue import write_issue
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.model import Signature, Stage, Status

MLIR = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
HOST = ["iree-compile", "reproducer.mlir", "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", "module.vmfb"]


def _issue(tmp_path, features: str) -> str:
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'x.y'")
    arrays = [np.ones(4, np.float32)]
    path, _ = save_finding(tmp_path / "corpus", Finding(sig, MLIR, ("llvm-cpu",), None, 0, arrays, arrays, "3.13.0",
                                                         HOST, "error: failed to legalize operation 'x.y'"))
    update_meta(path, bug={"component": "codegen for llvm-cpu", "failing_pass": "iree-x"})
    toolchain = find_toolchain(None)
    write_issue(plan(load_entry(path), toolchain), tmp_path / "issue.md", toolchain,
                IssueContext("IREE 3.13.0", (), host_cpu="rocketlake", host_features=features))
    return (tmp_path / "issue.md").read_text()


def test_the_features_beyond_the_name_are_said_and_passed(tmp_path):
    issue = _issue(tmp_path, "+avx512fp16,+amx-tile,-pku")
    assert "which is rocketlake here, with features beyond rocketlake's: +avx512fp16,+amx-tile,-pku" in issue
    assert ("pass --iree-llvmcpu-target-cpu=rocketlake --iree-llvmcpu-target-cpu-features=+avx512fp16,+amx-tile,-pku "
            "to compile as here") in issue


def test_a_name_that_gives_the_hosts_features_is_said_alone(tmp_path):
    issue = _issue(tmp_path, "")
    assert "which is rocketlake here); on another CPU" in issue and "target-cpu-features" not in issue
