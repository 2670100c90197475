"""Who joins the dynamic-dim bound's bug: a bucket whose own output shows a size made from the bound, and
a run out of memory (a sizing failure that names no size) whose reproducer, with a dynamic dim, gave
the bound's failure on a bound member's lane. No other tie joins a bound-sized bucket with one that is
not (an audit's wrong merge: a static CUDA topk's GPU bufferization failure and ROCm conv shared-memory
overflows of real sizes were filed under the 2^53 - 1 family, tied to it through one shrunk program
failing at a bound size on one lane and a real one on another, and through the folded words of
"incorrect number of dynamic sizes, has N, expected N")."""

from __future__ import annotations

import dataclasses

from shapefuzz.campaign.causes.merging import has_dynamic_dim, merge_causes
from tests.campaign.test_merging import _row

STACK = "'memref.alloca' op stack allocation size overflows N bits"
STACK_DETAIL = ("error: 'memref.alloca' op stack allocation size overflows 64 bits (memref<9007199254740991xf32>)\n"
                "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: "
                "iree-llvmcpu-check-ir-before-llvm-conversion //----- //")
SHARED = "function 'dispatch' uses N bytes of shared memory; exceeded the limit of N bytes"
SIZES = "'memref.alloca' op incorrect number of dynamic sizes, has N, expected N"
DYNAMIC = "func.func @main(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {\n  return %a : tensor<?x8xf32>\n}\n"
STATIC = "func.func @main(%a: tensor<3x8xf32>) -> tensor<3x8xf32> {\n  return %a : tensor<3x8xf32>\n}\n"


def _stack():
    return dataclasses.replace(_row("llvm-cpu", "compile", "error", STACK, "sort", 1.0, "cause-stack", STACK_DETAIL),
                               repro_text=DYNAMIC)


def _oom(cause: str, text: str, first: float):
    return dataclasses.replace(_row("vmvx", "run", "oom", f"out of memory ({cause})", "sort", first, cause,
                                    "out of memory"), repro_text=text)


def _names(merged: dict) -> dict[str, list[str]]:
    return {name: sorted(b.sig for b in members) for name, members in merged.items()}


def test_a_dynamic_out_of_memory_sized_from_the_bound_on_its_lane_joins():
    stack, dynamic = _stack(), _oom("cause-dynamic", DYNAMIC, 2.0)
    merged = merge_causes({"cause-stack": [stack], "cause-dynamic": [dynamic]}, {}, lambda b: None,
                          crossed=[(dynamic.sig, stack.sig)])
    assert _names(merged) == {"cause-stack": sorted([stack.sig, dynamic.sig])}


def test_a_static_source_or_a_target_of_the_bounds_own_reproducer_does_not_join():
    stack, static, dynamic = _stack(), _oom("cause-static", STATIC, 0.5), _oom("cause-dynamic", DYNAMIC, 2.0)
    groups = {"cause-static": [static], "cause-stack": [stack], "cause-dynamic": [dynamic]}
    # the static program's run on the bound member's lane; the bound member's run on the others' lanes
    merged = merge_causes(groups, {}, lambda b: None,
                          crossed=[(static.sig, stack.sig), (stack.sig, static.sig), (stack.sig, dynamic.sig)])
    assert set(merged) == {"cause-static", "cause-stack", "cause-dynamic"}, _names(merged)


def test_a_failure_that_only_shares_folded_words_with_a_bound_sized_one_stays_apart():
    """One message shape, and one's reproducer gave the other's failure there: the rule that ties one root
    cause tripping two passes. A dynamic sort's missing sizes ("has 0, expected 2") and a conv's overflowed
    static size ("has 1, expected 0", `memref<-262144xf32>`) fold to one shape; only the second is the bound's."""
    sort = dataclasses.replace(_row("llvm-cpu", "compile", "error", SIZES, "topk", 2.0, "cause-sort",
                                    "error: 'memref.alloca' op incorrect number of dynamic sizes, has 0, expected 2\n"
                                    "note: see current operation: memref<?x32x?xf32>"), repro_text=DYNAMIC)
    conv = dataclasses.replace(_row("vmvx", "compile", "error", SIZES, "conv", 3.0, "cause-conv",
                                    "error: 'memref.alloca' op incorrect number of dynamic sizes, has 1, expected 0\n"
                                    "note: see current operation: (index) -> memref<-262144xf32>"), repro_text=DYNAMIC)
    merged = merge_causes({"cause-stack": [_stack()], "cause-sort": [sort], "cause-conv": [conv]}, {},
                          lambda b: None, crossed=[(sort.sig, conv.sig)])
    assert set(merged) == {"cause-stack", "cause-sort"}, _names(merged)  # the conv joined the bound's bug
    assert sort.sig not in _names(merged)["cause-stack"]


def test_one_program_at_a_bound_size_on_one_lane_and_a_real_size_on_another_is_two_bugs(tmp_path):
    """The same shrunk reproducer failing "uses N bytes of shared memory" at 2^58 bytes on rocm-gfx942-o3 and
    at a real 422,400 on rocm-gfx942: byte-identical programs are one bug only when their sizes say one
    mechanism."""
    from shapefuzz.corpus.entry import entry_id

    def own(row):
        folder = tmp_path / entry_id(row.failure.signature)
        folder.mkdir()
        return dataclasses.replace(row, corpus_entry=str(folder))

    bound = own(_row("rocm-gfx942-o3", "compile", "error", SHARED, "sort", 1.0, "cause-bound",
                     "error: function 'main_dispatch_1_topk' uses 576460752303423424 bytes of shared memory; "
                     "exceeded the limit of 65536 bytes"))
    real = own(_row("rocm-gfx942", "compile", "error", SHARED + " (2)", "conv_transpose", 2.0, "cause-real",
                    "error: function 'main_dispatch_1_conv' uses 422400 bytes of shared memory; exceeded the limit "
                    "of 65536 bytes"))
    other = own(_row("vulkan-spirv", "compile", "error", SHARED + " (3)", "sort", 3.0, "cause-other",
                     "error: function 'main_dispatch_1_sort' uses 36028797018963964 bytes of shared memory; exceeded "
                     "the limit of 16384 bytes"))
    groups = {"cause-bound": [bound], "cause-real": [real], "cause-other": [other]}
    merged = merge_causes(groups, {}, lambda b: DYNAMIC)  # one program for all three
    assert _names(merged) == {"cause-bound": sorted([bound.sig, other.sig]), "cause-real": [real.sig]}


def test_dynamic_dims_are_read_from_builtin_and_torch_types():
    assert has_dynamic_dim(DYNAMIC) and has_dynamic_dim("%0: !torch.vtensor<[2,?],f32>")
    assert has_dynamic_dim("memref<4x?xi8>")
    assert not has_dynamic_dim(STATIC) and not has_dynamic_dim("!torch.vtensor<[2,3],f32>") and not has_dynamic_dim("")
