"""Who joins the dynamic-dim bound's bug by a cross-trigger run, and which member shows it: the run's
source joins when its reproducer, with a dynamic dim, gave a bound-sized failure on the bound member's
lane; a bound member's reproducer failing as another cause does says nothing of that cause, and a static
program has no bound to size from (the audit's wrong merge: a static CUDA sort shown as the 2^53 - 1
family's reproducer). A merged family's lead is one of its bound-sized buckets."""

from __future__ import annotations

import dataclasses

from shapefuzz.campaign.causes.merging import has_dynamic_dim, merge_causes
from tests.campaign.test_merging import _row

STACK = "'memref.alloca' op stack allocation size overflows N bits"
STACK_DETAIL = ("error: 'memref.alloca' op stack allocation size overflows 64 bits (memref<9007199254740991xf32>)\n"
                "// -----// IR Dump After LLVMCPUCheckIRBeforeLLVMConversionPass Failed: "
                "iree-llvmcpu-check-ir-before-llvm-conversion //----- //")
DYNAMIC = "func.func @main(%a: tensor<?x8xf32>) -> tensor<?x8xf32> {\n  return %a : tensor<?x8xf32>\n}\n"
STATIC = "func.func @main(%a: tensor<3x8xf32>) -> tensor<3x8xf32> {\n  return %a : tensor<3x8xf32>\n}\n"


def _rows() -> tuple:
    stack = dataclasses.replace(_row("llvm-cpu", "compile", "error", STACK, "sort", 1.0, "cause-stack", STACK_DETAIL),
                                repro_text=DYNAMIC)
    static = dataclasses.replace(_row("vmvx", "run", "oom", "out of memory", "sort", 0.5, "cause-static",
                                      "out of memory"), repro_text=STATIC)
    dynamic = dataclasses.replace(_row("vmvx", "run", "oom", "out of memory (2)", "topk", 2.0, "cause-dynamic",
                                       "out of memory"), repro_text=DYNAMIC)
    return stack, static, dynamic


def _merged(crossed: list[tuple[str, str]]) -> dict[str, list[str]]:
    stack, static, dynamic = _rows()
    groups = {"cause-static": [static], "cause-stack": [stack], "cause-dynamic": [dynamic]}
    merged = merge_causes(groups, {}, lambda b: None, crossed=crossed)
    return {name: [b.sig for b in members] for name, members in merged.items()}


def test_a_dynamic_source_sized_from_the_bound_on_its_lane_joins_and_the_bound_member_leads():
    stack, static, dynamic = _rows()
    merged = _merged([(dynamic.sig, stack.sig)])
    assert set(merged) == {"cause-static", "cause-stack"}, merged
    assert merged["cause-stack"] == [stack.sig, dynamic.sig]


def test_a_static_source_or_a_target_of_the_bounds_reproducer_does_not_join():
    stack, static, dynamic = _rows()
    # the static program's run on the bound member's lane, and the bound member's run on the static one's
    merged = _merged([(static.sig, stack.sig), (stack.sig, static.sig), (stack.sig, dynamic.sig)])
    assert set(merged) == {"cause-static", "cause-stack", "cause-dynamic"}, merged


def test_the_family_shows_a_bound_sized_member_first_even_when_an_earlier_cause_joined_it():
    """The static sort came first and names the merged cause; its lead is still the bound's bucket."""
    stack, _static, _dynamic = _rows()
    # a symptom more severe than the bound's compile error: by severity alone it would lead
    earlier = dataclasses.replace(_row("vmvx", "run", "crash", "SIGSEGV", "topk", 0.1, "cause-dynamic", "SIGSEGV"),
                                  repro_text=DYNAMIC)
    groups = {"cause-dynamic": [earlier], "cause-stack": [stack]}
    merged = merge_causes(groups, {}, lambda b: None, crossed=[(earlier.sig, stack.sig)])
    assert [b.sig for b in merged["cause-dynamic"]] == [stack.sig, earlier.sig]


def test_dynamic_dims_are_read_from_builtin_and_torch_types():
    assert has_dynamic_dim(DYNAMIC) and has_dynamic_dim("%0: !torch.vtensor<[2,?],f32>")
    assert has_dynamic_dim("memref<4x?xi8>")
    assert not has_dynamic_dim(STATIC) and not has_dynamic_dim("!torch.vtensor<[2,3],f32>") and not has_dynamic_dim("")
