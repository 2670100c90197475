"""An issue text shows what an IREE engineer reads of a failure, and attaches the rest.

The real case (campaign audit, IREE 3.13): every compile-error text pasted the ~3 KB
`#hal.executable.target<...>` attribute, the five "IR Dump After ... Failed" headers of the pipeline
that ran the failing pass, and, for a note printing a whole function, up to 126 KB of IR; a wrong
value in a 1x8514xi8 result pasted all 8514 values inline in its `--expected_output=` (a 32 KB text)."""

from __future__ import annotations

import numpy as np

from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.export import IssueContext, plan
from shapefuzz.export.issue import OUTPUT_FILE, to_issue, write_issue
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.model import Signature, Stage, Status

MLIR = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
FEATURES = ",".join(f"+feature{i}" for i in range(300))  # the ~3 KB of a host CPU's features
TARGET = (f'#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {{cpu = "znver4", cpu_features = "{FEATURES}", '
          'data_layout = "e-m:e-p270:32:32-i64:64-n8:16:32:64-S128", native_vector_size = 64 : i64, '
          'target_triple = "x86_64-unknown-unknown-eabi-elf"}>')
HEADERS = [
    "// -----// IR Dump After LLVMCPUTileAndFuseProducerConsumerPass Failed: iree-llvmcpu-tile-and-fuse-producer-consumer"
    "{tiling-level=vector_reduction} //----- //",
    "// -----// IR Dump After LLVMCPULowerExecutableTargetPass Failed: iree-llvmcpu-lower-executable-target //----- //",
    "// -----// IR Dump After mlir::iree_compiler::detail::OpPipelineAdaptorPass Failed: iree-op-pipeline-adaptor //----- //",
    "// -----// IR Dump After TranslateTargetExecutableVariantsPass Failed: iree-hal-translate-target-executable-variants"
    " //----- //",
    "// -----// IR Dump After TranslateAllExecutablesPass Failed: iree-hal-translate-all-executables //----- //",
]
DUMP = [f'  %{i} = "arith.addf"(%{i - 1}, %{i - 1}) : (f16, f16) -> f16' for i in range(1, 400)]
OUTPUT = "\n".join([
    "<work>/module.mlir:17:14: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 "
    "to be greater than or equal to 2, but found 1",
    "    %conv5 = linalg.generic {indexing_maps = [...]} ins(%p0, %wf2 : tensor<1x1x2xf16>, tensor<1x1x2xf16>)",
    "             ^",
    "<work>/module.mlir:3:1: note: called from",
    "func.func @main(%x: tensor<1x1x1xf16>) -> tensor<1x1x1xf16> {",
    "^",
    "<work>/module.mlir:17:14: note: see current operation: ",
    '"func.func"() <{function_type = () -> (), sym_name = "main_dispatch_0"}> ({',
    *DUMP,
    "}) : () -> ()",
    "<work>/module.mlir:17:14: error: failed to run translation of source executable to target executable for "
    f"backend {TARGET}",
    "    %conv5 = linalg.generic {indexing_maps = [...]} ins(%p0, %wf2 : tensor<1x1x2xf16>, tensor<1x1x2xf16>)",
    "             ^",
    *HEADERS,
])


def _compile_error(tmp_path):
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "'linalg.generic' op inferred input/output operand #N")
    path, _ = save_finding(tmp_path / "corpus", Finding(sig, MLIR, ("llvm-cpu",), None, 0, None, None, "3.13.0",
                                                         ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"],
                                                         OUTPUT))
    return load_entry(path)


def test_a_compile_error_shows_its_diagnostics_and_attaches_the_rest(tmp_path):
    toolchain = find_toolchain(None)
    entry = _compile_error(tmp_path)
    written = write_issue(plan(entry, toolchain), tmp_path / "issue.md", toolchain, IssueContext("IREE 3.13.0", ()))
    issue = (tmp_path / "issue.md").read_text()
    assert "but found 1" in issue and "note: called from" in issue and "note: see current operation" in issue
    assert '#hal.executable.target<"llvm-cpu", "embedded-elf-x86_64", {cpu = "znver4", ...}>' in issue
    assert "cpu_features" not in issue and "data_layout" not in issue
    dumps = [line for line in issue.splitlines() if "IR Dump After" in line]
    assert dumps == [HEADERS[0]]  # the failing pass's header alone, one line
    assert DUMP[3] in issue and DUMP[200] not in issue  # the op's first lines, not the whole function
    assert "issue.files/output.txt" in issue and len(issue) < 6000
    whole = tmp_path / "issue.files" / OUTPUT_FILE
    assert whole in written and whole.read_text().strip() == entry.meta["detail"].strip()  # all the entry kept
    assert all(header in whole.read_text() for header in HEADERS)


def test_a_short_output_is_shown_whole_and_attaches_nothing(tmp_path):
    toolchain = find_toolchain(None)
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'x.y'")
    short = "<work>/module.mlir:2:3: error: failed to legalize operation 'x.y'\n  %0 = x.y\n  ^"
    path, _ = save_finding(tmp_path / "corpus", Finding(sig, MLIR, ("llvm-cpu",), None, 0, None, None, "3.13.0",
                                                         ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], short))
    write_issue(plan(load_entry(path), toolchain), tmp_path / "issue.md", toolchain, IssueContext("IREE 3.13.0", ()))
    assert short in (tmp_path / "issue.md").read_text()
    assert not (tmp_path / "issue.files" / OUTPUT_FILE).exists()


def test_a_long_integer_result_is_compared_with_its_npy_not_pasted(tmp_path):
    toolchain = find_toolchain(None)
    mlir = "func.func @main(%a: tensor<1x8514xi8>) -> tensor<1x8514xi8> {\n  return %a : tensor<1x8514xi8>\n}\n"
    sig = Signature("vulkan-spirv", Stage.COMPARE, Status.MISMATCH, "wrong values in conv")
    values = (np.arange(8514) % 17 - 8).astype(np.int8).reshape(1, 8514)
    detail = "result 0: 2 of 8514 elements differ; first at [0, 8512]: got 0, expected 3"
    path, _ = save_finding(tmp_path / "corpus", Finding(sig, mlir, ("vulkan-spirv",), None, 0, [values], [values],
                                                         "3.13.0", ["iree-compile", "reproducer.mlir", "-o",
                                                                    "module.vmfb"], detail))
    p = plan(load_entry(path), toolchain)
    issue = to_issue(p, IssueContext("IREE 3.13.0", ()), "x.files")
    assert "--expected_output=1x8514xi8=" not in issue and len(issue) < 8000
    assert "--output=@result0.npy" in issue and "np.load('expected/result0.npy')" in issue
    assert "first at [0, 8512]" in issue  # where they differ, from the failure's own line
    assert "1x8514xi8 (8514 elements, in the attached .npy; the first: -8 -7 -6" in issue
    write_issue(p, tmp_path / "issue.md", toolchain, IssueContext("IREE 3.13.0", ()))
    assert "--expected_output=1x8514xi8=" in (tmp_path / "issue.files" / "run.sh").read_text()  # the check itself
