"""A frontend spelling is placed in its conversion by its linalg spelling's values only when the two
compute the same way (issue #43, audit A, cause e95950f047): torch's top 1 of 512 lowers to one
`iree_linalg_ext.sort` of all 512, its linalg spelling is `iree_linalg_ext.topk`, a different algorithm;
on vulkan-spirv the sort meets Mesa's loop limit and the topk does not, so "the same computation written
in linalg computes the right ones" put a driver limit in torch-mlir."""

from __future__ import annotations

import numpy as np
import pytest

from shapefuzz.triage.localize import PHASES, Localization, Values, algorithm_ops, unlike_text, with_frontend

NOT_FOUND = Localization(evidence="not localized: leaving out one pass names none")
SORT_FLOW = "%4 = iree_linalg_ext.sort dimension(0) outs(%3 : tensor<512xf32>) {\n  iree_linalg_ext.yield %c : i1\n}"
TOPK_FLOW = "%5:2 = iree_linalg_ext.topk dimension(0) ins(%i : tensor<512xf32>) {\n  iree_linalg_ext.yield %p : i1\n}"
# the audited cause's reproducer (its case header is what the localization reads)
TOP_1_OF_512 = """// shapefuzz-case: {"family":"topk","params":{"dim":0,"dtype":"f32","form":"topk","frontend":"torch","index_dtype":"i32","indices":"implicit","input_dyn":[false],"k":1,"largest":true,"result_dyn":[],"shape":[512],"transpose":false,"use":"values","values":"wide"},"version":1}
func.func @main(%input: !torch.vtensor<[512],f32>) -> !torch.vtensor<[1],f32> {
  %int1 = torch.constant.int 1
  %int0 = torch.constant.int 0
  %true = torch.constant.bool true
  %values1, %indices2 = torch.aten.topk %input, %int1, %int0, %true, %true : !torch.vtensor<[512],f32>, !torch.int, !torch.int, !torch.bool, !torch.bool -> !torch.vtensor<[1],f32>, !torch.vtensor<[1],si64>
  return %values1 : !torch.vtensor<[1],f32>
}
"""


def test_a_linalg_spelling_of_another_algorithm_places_nothing_in_the_frontend():
    assert algorithm_ops(SORT_FLOW) == {"sort"} and algorithm_ops(TOPK_FLOW) == {"topk"}
    unlike = unlike_text("torch", algorithm_ops(SORT_FLOW), algorithm_ops(TOPK_FLOW))
    assert unlike == ("the same computation written in linalg is not the same algorithm after `flow`: it lowers to "
                      "iree_linalg_ext.topk, the torch spelling to iree_linalg_ext.sort, so its values say nothing of "
                      "the torch-mlir conversion")
    assert unlike_text("torch", frozenset({"sort"}), frozenset({"sort"})) == ""
    # right in linalg: no longer the frontend's; wrong in linalg: no longer cleared either
    for linalg in (Values.RIGHT, Values.WRONG):
        loc = with_frontend(NOT_FOUND, "torch", "vulkan-spirv", linalg, unlike=unlike)
        assert not loc.frontend and loc.phase == "" and unlike in loc.evidence, loc
        assert "computes the right ones" not in loc.evidence and "not the torch-mlir conversion's" not in loc.evidence
    # the same algorithm: as before
    assert with_frontend(NOT_FOUND, "torch", "vulkan-spirv", Values.RIGHT).frontend == "torch"
    # a right lane that showed the IR already wrong after `input` still places it there, without the linalg claim
    at_input = Localization(PHASES[0], certain=True, finished_by="llvm-cpu", evidence="after `input` wrong")
    loc = with_frontend(at_input, "torch", "vulkan-spirv", Values.RIGHT, unlike=unlike)
    assert loc.frontend == "torch" and "linalg computes the right ones" not in loc.evidence


@pytest.mark.iree
def test_torchs_top_1_of_512_and_its_linalg_spelling_are_not_one_algorithm(toolchain):
    from shapefuzz.case import case_from_mlir
    from shapefuzz.judge.localize_probe import frontend_values

    case = case_from_mlir(TOP_1_OF_512)
    x = np.linspace(-3.0, 1020.0, 512, dtype=np.float32)[::-1].copy()
    spelling, linalg, torch, unlike = frontend_values(case, "llvm-cpu", [x], [np.array([x.max()])], toolchain)
    assert (spelling, linalg, torch) == ("torch", Values.RIGHT, None)  # llvm-cpu is right either way
    assert "it lowers to iree_linalg_ext.topk, the torch spelling to iree_linalg_ext.sort" in unlike, unlike
