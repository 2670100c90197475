"""A compile error in a checker (LLVMCPUCheckIRBeforeLLVMConversion, GPUCheckResourceUsage) is placed at
the pass that made the buffer it refuses, found by walking the IR after each pass: one maker is one
place, whichever checker, message or target notices its size."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.triage.culprit import dumps_in, first_maker, is_checker, offence_of
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import CODEGEN, Localization
from shapefuzz.triage.record import placed

CHECKER = "iree-llvmcpu-check-ir-before-llvm-conversion"
SORT_SCRATCH = """func.func @main(%arg0: tensor<?xf32>) -> tensor<1xi32> {
  %c0 = arith.constant 0 : index
  %dim = tensor.dim %arg0, %c0 : tensor<?xf32>
  %0 = tensor.empty(%dim) : tensor<?xi32>
  %1 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} outs(%0 : tensor<?xi32>) {
  ^bb0(%out: i32):
    %3 = linalg.index 0 : index
    %4 = arith.index_cast %3 : index to i32
    linalg.yield %4 : i32
  } -> tensor<?xi32>
  %2:2 = iree_linalg_ext.sort dimension(0) outs(%arg0, %1 : tensor<?xf32>, tensor<?xi32>) {
  ^bb0(%arg1: f32, %arg2: f32, %arg3: i32, %arg4: i32):
    %3 = arith.cmpf ogt, %arg1, %arg2 : f32
    iree_linalg_ext.yield %3 : i1
  } -> tensor<?xf32>, tensor<?xi32>
  %extracted_slice = tensor.extract_slice %2#1[0] [1] [1] : tensor<?xi32> to tensor<1xi32>
  return %extracted_slice : tensor<1xi32>
}
"""


def _tree(root: Path, dumps: dict[str, str]) -> Path:
    for rel, text in dumps.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def test_the_offence_is_read_from_the_checkers_own_numbers():
    assert is_checker(CHECKER) and is_checker("GPUCheckResourceUsagePass") and not is_checker("CSEPass")
    unbounded = offence_of("error: 'memref.alloca' op expected no unbounded stack allocations")
    assert unbounded is not None and unbounded.found("%a = memref.alloca(%d) : memref<?xf32>")
    assert unbounded.found("%a = memref.alloca() : memref<9007199254740991xf32>")
    assert not unbounded.found("%a = memref.alloca() alignment = 64 : memref<64x64xf32>")
    limit = offence_of("'func.func' op exceeded stack allocation limit of 32768 bytes for function. Got 1048576 bytes")
    assert limit is not None and "32768" in limit.what
    assert limit.found("%a = memref.alloca() alignment = 64 : memref<64x64x64xf32>")  # 1 MiB
    assert not limit.found("%a = memref.alloca() : memref<64x64xf32>\n%b = memref.alloca() : memref<8xi8>")  # 16 KiB
    shared = offence_of("uses 592944 bytes of shared memory; exceeded the limit of 65536 bytes")
    assert shared is not None
    assert shared.found("%s = memref.alloc() : memref<128x1200xf32, #gpu.address_space<workgroup>>")
    assert not shared.found("%s = memref.alloc() : memref<128x1200xf32>")  # not workgroup memory
    assert offence_of("'vector.transfer_read' op operand #0 must be ...") is None  # no size to trace
    # a dynamic-size workgroup buffer is the offence from the pass that made it (hand audit: a sort's unbounded
    # workgroup copy from bufferization, and a top-k's 128-row scratch, were placed at pad-dynamic-alloc,
    # which only gives the buffer its bound's static size)
    assert shared.found("%s = memref.alloc(%n) : memref<?x255xf32, #gpu.address_space<workgroup>>")
    assert not shared.found("%s = memref.alloc(%n) : memref<?x255xf32>")


def test_the_first_pass_whose_output_holds_it_is_the_maker_in_pass_order(tmp_path):
    bad = "%a = memref.alloca(%d) : memref<?xf32>\n"
    tree = _tree(tmp_path, {
        "m/2_iree-flow-outline.mlir": "tensor only",
        "m/exe/variant/m/func/10_1_1_2_3_iree-codegen-iree-comprehensive-bufferize.mlir": bad,
        "m/exe/variant/m/func/10_1_1_2_12_iree-codegen-canonicalize.mlir": bad,  # after it (2_12 > 2_3)
        "m/exe/variant/m/10_1_1_9_iree-op-pipeline-adaptor.mlir": bad,
        "m/exe/variant/m/func/10_1_1_2_2_iree-codegen-tile.mlir": "%x = tensor.empty(%d) : tensor<?xf32>",
    })
    dumps = dumps_in(tree)
    assert [d.order for d in dumps][:2] == [(2,), (10, 1, 1, 2, 2)]
    maker = first_maker(dumps, offence_of("expected no unbounded stack allocations"))
    assert maker is not None and maker.pass_name == "iree-codegen-iree-comprehensive-bufferize"


def test_a_checkers_refusal_is_named_by_its_maker_in_the_identity():
    message = "'memref.alloca' op expected no unbounded stack allocations"
    detail = f"error: {message}\n// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed ({CHECKER}) //----- //"
    ident = identity_of("compile", "error", message, detail)
    assert ident.failing_pass
    loc = Localization(CODEGEN, "iree-codegen-iree-comprehensive-bufferize", certain=True, evidence="e")
    placed_ident, failing, _component = placed(ident, ident.failing_pass, "codegen", loc, "compile", ["llvm-cpu"])
    assert failing == "iree-codegen-iree-comprehensive-bufferize"
    assert placed_ident.failing_pass == "iree-codegen-iree-comprehensive-bufferize (codegen)"
    assert placed_ident.key != ident.key


@pytest.mark.iree
def test_a_dynamic_sorts_unbounded_scratch_is_made_by_bufferization(toolchain):
    from shapefuzz.judge.localize_probe import place_checked_failure

    message = "error: 'memref.alloca' op expected no unbounded stack allocations"
    loc = place_checked_failure(SORT_SCRATCH, "llvm-cpu", toolchain, CHECKER, message, 60)
    assert loc.certain and loc.phase == CODEGEN, loc.evidence
    assert loc.pass_name == "iree-codegen-iree-comprehensive-bufferize", loc.evidence
    assert CHECKER in loc.evidence and "unbounded" in loc.evidence
