"""A wrong value's text stage (shrink.voted_stage): judged by two reference lanes that agree, on the
case's own inputs for the arguments it keeps. The judging logic over given outputs (fast), and a real
IREE 3.13 wrong value: the default Vulkan profile's i8 emulation, found in a gather, cut to `x + x`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.corpus.store import load_entry
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import function_info
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.replay import ReplayOutcome, replay_entry
from shapefuzz.shrink import run as shrink_run
from shapefuzz.shrink import voted_stage
from shapefuzz.shrink.voted_stage import VotedMismatch, inputs_for, known_inputs, refusal
from shapefuzz.families import render_case

WRONG = Signature("vulkan-spirv", Stage.COMPARE, Status.MISMATCH, "wrong values in gather")
# a gather of i8 from a dynamic 1x16 source by 2x9 transposed indices (18 results: not a whole word)
GATHER = {"batch_dyn": [True, True], "batch_shape": [2, 9], "big": False, "depth": 2, "dimension_map": [1, 0],
          "dtype": "i8", "form": "extract", "implicit_depth": False, "index_dtype": "i64",
          "index_layout": "transposed", "src_dyn": [True, True], "src_shape": [1, 16]}
START = """func.func @main(%a: tensor<4xf32>, %b: tensor<?xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def test_ties_collisions_and_other_failures_are_not_voted_on():
    assert refusal(Case.make("gather", GATHER), "", [WRONG]) == ""
    assert "ties" in refusal(Case("topk", "{}"), "", [WRONG])
    assert "ties" in refusal(Case("gather", "{}"), '%0 = torch.aten.argmax %x', [WRONG])
    assert "arg-max" in refusal(Case("reduce", "{}"), 'linalg.index 0 : index ... ["reduction"]', [WRONG])
    crash = Signature("vulkan-spirv", Stage.COMPILE, Status.CRASH, "segfault")
    assert "not one lane's wrong result" in refusal(Case("gather", "{}"), "", [crash])


def test_kept_arguments_keep_the_cases_arrays_and_new_ones_get_values_unless_dynamic():
    a, b = np.arange(4, dtype=np.float32), np.ones(3, dtype=np.float32)
    known = known_inputs(START, [a, b])
    same = inputs_for(function_info(START), known, 0)
    assert same is not None and same[0] is a and same[1] is b
    cut = START.replace("%b: tensor<?xf32>", "%b: tensor<?xf32>, %rep0: tensor<2x3xi8>")
    grown = inputs_for(function_info(cut), known, 0)
    assert grown is not None and grown[2].shape == (2, 3) and grown[2].dtype == np.int8
    # a new argument with a `?` dim: no size is sound for it
    dynamic = START.replace("%b: tensor<?xf32>", "%b: tensor<?xf32>, %rep0: tensor<?xf32>")
    assert inputs_for(function_info(dynamic), known, 0) is None
    # the same name with another type is a new argument
    retyped = inputs_for(function_info(START.replace("%a: tensor<4xf32>", "%a: tensor<4xf16>")), known, 0)
    assert retyped is not None and retyped[0].dtype == np.float16 and retyped[1] is b


def _voted(monkeypatch, outputs: dict[str, list[np.ndarray]]) -> VotedMismatch:
    # the compiler is not what is tested here: the vote over the outputs it gave
    monkeypatch.setattr(voted_stage, "lane_outputs", lambda *args, **kwargs: ({}, outputs))
    known = known_inputs(START, [np.arange(4, dtype=np.float32), np.ones(3, dtype=np.float32)])
    return VotedMismatch(None, "vulkan-spirv", ("llvm-cpu", "vmvx"), "wrong values", known, 0,  # type: ignore[arg-type]
                         voted_stage.budget_for(5.0))


def _f(values, dtype=np.float32) -> list[np.ndarray]:
    return [np.asarray(values, dtype=dtype)]


ONES = _f([1.0] * 4)


@pytest.mark.parametrize("outputs, kept", [
    ({"llvm-cpu": ONES, "vmvx": ONES, "vulkan-spirv": _f([0.0] * 4)}, True),
    ({"llvm-cpu": ONES, "vmvx": _f([2.0] * 4), "vulkan-spirv": _f([0.0] * 4)}, False),  # refs disagree
    ({"llvm-cpu": ONES, "vmvx": ONES, "vulkan-spirv": ONES}, False),  # the lane is right now
    ({"llvm-cpu": ONES, "vmvx": ONES, "vulkan-spirv": _f([1.0] * 3)}, False),  # another kind: a shape
    ({"llvm-cpu": ONES, "vulkan-spirv": _f([0.0] * 4)}, False),  # a reference did not run to an answer
    # rounding only: an f32 off by 1e-4, an f16 by 2e-2 (over the default tolerances, under clearly wrong)
    ({"llvm-cpu": ONES, "vmvx": ONES, "vulkan-spirv": _f([1.0001] * 4)}, False),
    ({"llvm-cpu": _f([1.0] * 4, np.float16), "vmvx": _f([1.0] * 4, np.float16),
      "vulkan-spirv": _f([1.02] * 4, np.float16)}, False),
    # references a rounding apart still agree
    ({"llvm-cpu": ONES, "vmvx": _f([1.000001] * 4), "vulkan-spirv": _f([0.0] * 4)}, True),
])
def test_a_step_is_kept_only_when_both_references_agree_and_the_lane_differs_as_before(monkeypatch, outputs, kept):
    voted = _voted(monkeypatch, outputs)
    assert voted(START) is kept
    assert (START in voted.verdicts) is kept
    if kept:
        assert voted.verdicts[START].expected[0].tolist() == [1.0] * 4 and "llvm-cpu and vmvx" in voted.verdicts[START].detail


@pytest.mark.iree
def test_the_default_vulkan_profiles_i8_wrong_value_in_a_gather_is_cut_to_x_plus_x(tmp_path, toolchain):
    if not all(BACKENDS[b].executes(toolchain.probe) for b in ("vulkan-spirv", "llvm-cpu", "vmvx")):
        pytest.skip("no Vulkan device here")
    path = tmp_path / "gather.mlir"
    path.write_text(render_case(Case.make("gather", GATHER)))
    corpus = tmp_path / "corpus"
    result = shrink_run.shrink_file(str(path), path.read_text(), toolchain, ("vulkan-spirv",), backend="vulkan-spirv",
                                    time_limit=240, corpus=str(corpus))
    assert result.confirmed and result.case_form is not None and case_from_mlir(result.minimized) is None
    assert "tensor.extract" not in result.minimized and result.after.ops < result.before.ops  # the gather was not needed
    assert result.reference.startswith("the results ") and "vulkan-spirv" not in result.reference
    entry = load_entry(next(p for p in map(str, corpus.iterdir()) if "compare-mismatch" in p))
    assert entry.inputs is not None and entry.expected is not None and entry.meta["reference"] == result.reference
    assert json.loads(json.dumps(entry.meta))["case_form"] == "case.mlir"
    # replay judges the cut-down reproducer against the agreed results, under the signature it was saved with
    replayed = replay_entry(entry, toolchain)
    assert replayed.outcome == ReplayOutcome.STILL_FAILING, replayed.detail
    # the issue text says where its expected results came from, not "the NumPy reference"
    from shapefuzz.export.issue import issue_context, issue_plan, to_issue

    plan = issue_plan(entry, toolchain)
    text = to_issue(plan, issue_context(plan, toolchain), "issue.files")
    assert f"differ from {result.reference}" in text and "NumPy reference):" not in text
    assert f"(`expected/resultN.npy`, {result.reference})" in text



def test_a_cut_down_wrong_values_title_does_not_name_ops_the_reproducer_no_longer_holds():
    from shapefuzz.triage.issue import issue_title

    meta = {"reference": "the results llvm-cpu and vmvx agree on", "bug": {"component": "wrong code for SPIR-V"}}
    title = issue_title(meta, "vulkan-spirv", "compare", "mismatch", "wrong values in gather")
    assert "cut down from a gather case" in title and "values in gather" not in title
    assert "wrong values in gather" in issue_title({}, "vulkan-spirv", "compare", "mismatch", "wrong values in gather")


TORCH_GATHER = """func.func @main(%source: !torch.vtensor<[1],si8>, %indices: !torch.vtensor<[2,1],si64>) -> !torch.vtensor<[2],si8> {
  %int_m1 = torch.constant.int -1
  %int0 = torch.constant.int 0
  %col0_1 = torch.aten.select.int %indices, %int_m1, %int0 : !torch.vtensor<[2,1],si64>, !torch.int, !torch.int -> !torch.vtensor<[2],si64>
  %gathered2 = torch.aten.index_select %source, %int0, %col0_1 : !torch.vtensor<[1],si8>, !torch.int, !torch.vtensor<[2],si64> -> !torch.vtensor<[2],si8>
  return %gathered2 : !torch.vtensor<[2],si8>
}
"""


@pytest.mark.parametrize("spelling", ["torch.aten.index_select", 'torch.operator "onnx.Gather"'])
def test_indices_a_torch_or_onnx_gather_reads_are_never_cut_to_an_argument(spelling):
    """A fresh campaign's voted stage cut the torch gather's `select` of its in-bounds indices to an
    argument: random indices 3 and -4 into a 1-element source, which llvm-cpu and vmvx "agreed" on."""
    from shapefuzz.shrink.case_stage import Guard

    start = TORCH_GATHER.replace("torch.aten.index_select", spelling)
    cut = start.replace("%indices: !torch.vtensor<[2,1],si64>", "%col0_1: !torch.vtensor<[2],si64>").replace(
        "  %col0_1 = torch.aten.select.int %indices, %int_m1, %int0 : !torch.vtensor<[2,1],si64>, !torch.int, "
        "!torch.int -> !torch.vtensor<[2],si64>\n", "")
    assert "select.int" not in cut
    guard = Guard(start, [WRONG])
    assert guard(start) and not guard(cut)


@pytest.mark.iree
def test_a_campaign_pinned_to_its_lanes_judges_only_with_them(toolchain):
    """`fuzz --backends vulkan-spirv,llvm-cpu` pins its shrinks too: one other lane is no vote."""
    case = Case.make("gather", GATHER)
    references, verdict, why = voted_stage.choose_references(
        render_case(case), case, WRONG, toolchain, 0, voted_stage.budget_for(30.0), allowed=("vulkan-spirv", "llvm-cpu"))
    assert references is None and verdict is None and "fewer than two other lanes" in why
