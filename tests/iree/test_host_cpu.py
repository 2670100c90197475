"""An issue whose compile command targets `--iree-llvmcpu-target-cpu=host` names the CPU that was:
a host-dependent bug (an f16 `fmaxf` libcall fails for x86-64-v3/v4 and passes for sapphirerapids)
cannot be reproduced elsewhere without it."""

from __future__ import annotations

import pytest

from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.model import Signature, Stage, Status

HOST = ["iree-compile", "reproducer.mlir", "--iree-hal-target-device=local",
        "--iree-hal-local-target-device-backends=llvm-cpu", "--iree-llvmcpu-target-cpu=host", "-o", "module.vmfb"]


@pytest.mark.iree
def test_host_resolves_to_a_cpu_name(toolchain):
    from shapefuzz.iree.host_cpu import host_cpu

    name = host_cpu(toolchain)
    assert name and name != "host" and " " not in name


@pytest.mark.iree
def test_the_issue_says_what_host_was(tmp_path, toolchain):
    from shapefuzz.export import IssueContext, plan, to_issue
    from shapefuzz.export.issue import host_cpu_of

    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "undefined symbol: fmaxf")
    mlir = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    path, _ = save_finding(tmp_path, Finding(sig, mlir, ("llvm-cpu",), None, 0, None, None, "3.13.0", HOST, "error: x"))
    p = plan(load_entry(path), toolchain)
    cpu = host_cpu_of(p, toolchain)
    assert cpu
    text = to_issue(p, IssueContext("IREE 3.13.0", (), host_cpu=cpu), "x.files")
    assert f"which is {cpu} here" in text and f"--iree-llvmcpu-target-cpu={cpu} to compile as here" in text
    assert "which is" not in to_issue(p, IssueContext("IREE 3.13.0", ()), "x.files")  # nothing said when unknown
