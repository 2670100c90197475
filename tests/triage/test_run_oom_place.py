"""A run that runs out of memory is placed at the pass that sized a buffer from a dynamic dim's 2^53 - 1
bound (issue #43 item 2, audit C of the fresh campaign: cause-2cc03b5ade, a matmul of `1x?` operands inside
a chain, "runtime / HAL (vmvx)" for `RESOURCE_EXHAUSTED` where the compiler's bufferization made a
`memref<1x9007199254740991xf32>`). Real IREE 3.13: the compile with its IR dumps, no run."""

from __future__ import annotations

from pathlib import Path

import pytest

from shapefuzz.judge.localize_probe import place_run_oom
from shapefuzz.triage.component import component_of_place
from shapefuzz.triage.culprit import BOUND_SIZED, offence_of

MATMUL = Path(__file__).resolve().parents[1] / "data" / "vmvx_bound_sized_matmul.mlir"


def test_a_buffer_sized_from_the_bound_is_what_a_dump_holds():
    assert BOUND_SIZED.found("%0 = memref.alloc() : memref<1x9007199254740991xf32>")
    assert BOUND_SIZED.found("%0 = memref.alloca() {alignment = 64 : i64} : memref<9007199254740991xf32>")
    assert not BOUND_SIZED.found("%0 = memref.alloc(%d) : memref<1x?xf32>")
    assert not BOUND_SIZED.found("%0 = memref.alloc() : memref<1x4096xf32>")
    # the checker's offence reads an alloca with its attribute dict too (as IREE prints them after bufferization)
    unbounded = offence_of("error: 'memref.alloca' op expected no unbounded stack allocations")
    assert unbounded is not None and unbounded.found("%a = memref.alloca(%d) {alignment = 64 : i64} : memref<?xf32>")
    # a GPU's shared memory is a memref.alloc (the triage of a copy of the fresh campaign: "no pass's output
    # holds an unbounded memref.alloca" for "'memref.alloc' op shared memory allocation size overflows 64 bits")
    shared = offence_of("error: 'memref.alloc' op shared memory allocation size overflows 64 bits")
    assert shared is not None and "memref.alloc " in shared.what
    assert shared.found("%a = memref.alloc(%d) : memref<?xf32, #gpu.address_space<workgroup>>")
    assert not shared.found("%a = memref.alloca(%d) : memref<?xf32>")


@pytest.mark.iree
def test_the_vmvx_out_of_memory_is_placed_at_bufferization(toolchain):
    loc = place_run_oom(MATMUL.read_text(), "vmvx", toolchain, 60.0)
    assert loc.certain and loc.pass_name == "iree-codegen-iree-comprehensive-bufferize", loc
    assert component_of_place(loc, ["vmvx"]) == "codegen for vmvx" and "2^53 - 1" in loc.evidence
