"""One pass reads alike whichever release failed in it. IREE up to 3.6 prints the failing pass's
dump header as `IR Dump After Canonicalizer Failed (canonicalize)` (its argument in parentheses, its
class without `Pass`); 3.12 and later `After CanonicalizerPass Failed: canonicalize{...}`. An audit
found 3.6.0's identical failure of a gather canonicalization (cause-0f4e3e1518) stepped over as
"fails another way (in Canonicalizer, not in canonicalize)": the parenthesised argument was not
read and "canonicalizer" was not "canonicalize". The headers below are copied from real outputs."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from shapefuzz.recheck.regression import Failure, pass_key, same_pass_key
from shapefuzz.triage.failing_pass import enclosing_passes, failing_pass

# a 0-d gather (cause-0f4e3e1518's reproducer): its canonicalization builds an invalid collapse_shape
GATHER = """func.func @main(%source: tensor<1x1xf32>, %indices_arg: tensor<2xi32>) -> tensor<f32> {
  %out_init = tensor.empty() : tensor<f32>
  %gathered = iree_linalg_ext.gather dimension_map = [0, 1]
    ins(%source, %indices_arg : tensor<1x1xf32>, tensor<2xi32>) outs(%out_init : tensor<f32>) -> tensor<f32>
  return %gathered : tensor<f32>
}
"""
ERROR = ("gather.mlir:3:15: error: 'tensor.collapse_shape' op expected collapsed rank (0) to equal the number of "
         "reassociation maps (1).\n")
AT_3_6 = ERROR + """// -----// IR Dump After Canonicalizer Failed (canonicalize) //----- //
// -----// IR Dump After Inliner Failed (inline) //----- //
"""
AT_3_13 = ERROR + """// -----// IR Dump After CanonicalizerPass Failed: canonicalize{cse-between-iterations=false    max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true} //----- //
// -----// IR Dump After InlinerPass Failed: inline{default-pipeline=canonicalize inlining-threshold=4294967295 max-iterations=4 } //----- //
"""
# a 1-D reversed dot product at 3.0.0 (its tiling pass, by argument)
AT_3_0 = """rev.mlir:5:8: error: 'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be greater than or equal to 2, but found 1
// -----// IR Dump After LLVMCPUTilePass Failed (iree-llvmcpu-tile) //----- //
// -----// IR Dump After LLVMCPULowerExecutableTargetPass Failed (iree-llvmcpu-lower-executable-target) //----- //
"""


def test_a_header_with_its_argument_in_parentheses_names_the_argument():
    assert failing_pass(AT_3_6) == "canonicalize" == failing_pass(AT_3_13)
    assert enclosing_passes(AT_3_6) == ["canonicalize", "inline"] == enclosing_passes(AT_3_13)
    assert failing_pass(AT_3_0) == "iree-llvmcpu-tile"
    at_3_6 = Failure("compile", "error", failing_pass(AT_3_6) or "")
    assert at_3_6.same_as(Failure("compile", "error", failing_pass(AT_3_13) or ""))


def test_a_class_and_its_argument_are_one_pass_key():
    for spellings in (["Canonicalizer", "CanonicalizerPass", "canonicalize", "mlir::(anonymous namespace)::Canonicalizer"],
                      ["Inliner", "InlinerPass", "inline"],
                      ["FooBarPass", "FooBar", "foo-bar", "iree-codegen-foo-bar"],
                      ["ConfigTrackingCanonicalizerPass", "iree-codegen-config-tracking-canonicalize"],
                      ["DecomposeComplexOps", "torch-decompose-complex-ops"],
                      ["LLVMCPUTilePass", "iree-llvmcpu-tile"]):
        assert len({pass_key(name) for name in spellings}) == 1, spellings
    assert len({pass_key(n) for n in ["canonicalize", "inline", "cse", "config-tracking-canonicalize"]}) == 4
    # a classic rename: one pass to a range (3.2 to 3.6 by one name, 3.12 on by the other)
    assert same_pass_key("iree-llvmcpu-tile-root-and-fuse-producer-consumer") == \
        same_pass_key("LLVMCPUTileAndFuseProducerConsumerPass")


def _compiled(compiler: Path, folder: Path) -> str:
    source = folder / "gather.mlir"
    source.write_text(GATHER)
    done = subprocess.run([str(compiler), str(source), "--iree-hal-target-device=local",
                           "--iree-hal-local-target-device-backends=llvm-cpu", "--mlir-print-ir-after-failure",
                           "-o", str(folder / "out.vmfb")], capture_output=True, text=True, timeout=120)
    assert done.returncode != 0, "the gather compiled"
    return done.stderr


@pytest.mark.iree
def test_the_same_canonicalization_failure_at_3_6_and_at_the_pinned_release_is_one_failure(toolchain, tmp_path):
    """Real IREE: the 0-d gather fails in canonicalize at 3.6.0 and 3.13; both outputs name one pass."""
    from shapefuzz.iree.releases import cached_versions
    from shapefuzz.recheck.regression import local_installer

    if "3.6.0" not in cached_versions():
        pytest.skip("IREE 3.6.0 is not in the toolchain cache (`shapefuzz --iree-version 3.6.0 backends` fetches it)")
    old = _compiled(local_installer("3.6.0").compile_bin, tmp_path)
    new = _compiled(toolchain.compile_bin, tmp_path)
    assert "Canonicalizer Failed (canonicalize)" in old  # the old header, as it is printed
    assert failing_pass(old) == failing_pass(new) == "canonicalize"
    assert Failure("compile", "error", failing_pass(old) or "").same_as(Failure("compile", "error", failing_pass(new) or ""))
