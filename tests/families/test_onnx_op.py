"""The onnx_op family and `shapefuzz onnx-ops`: ONNX's own operators drawn from their schemas,
judged by ONNX Runtime and onnx.reference agreeing, compiled and run on llvm-cpu. A case the two
references disagree on is set apart (never compiled); an op the release does not lower is "not
supported"; bad params are one line and exit 2; a real IREE failure is a finding saved with
its model.onnx."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.case import Case
from shapefuzz.families.onnx_op.known import known_disagreement
from shapefuzz.families.onnx_op.model import NotDrawable, build, drawable
from shapefuzz.families.onnx_op.params import NONE, Params, const, x
from shapefuzz.families.onnx_op.reference import ReferenceDisagreement, reference, references
from shapefuzz.invoke.execute import DEFAULT_BUDGET
from shapefuzz.recheck.onnx_ops import DISAGREE, FAILED, NOT_SUPPORTED, PASSED, judge_case, resolve_ops, save_findings, \
    OpRow


def attrs(**kw):
    return tuple(sorted(kw.items()))


# onnx 1.23.2's reference takes the unfloored output length in Resize's align_corners formula:
# 5 * 0.6 is 3.0000001 in float32, so x_original = i * 4 / 2.0000001 falls just under 2 and 4 and
# `floor` picks 1 and 3; ONNX Runtime (and the spec: length_resized is the floored length) picks 2 and 4.
RESIZE_DISAGREEMENT = Params("Resize", (x("f32", [1, 5]), NONE, const("f32", [1.0, 0.6])),
                             attrs(mode="nearest", coordinate_transformation_mode="align_corners", nearest_mode="floor"))

# IREE 3.13 bugs the sweep found (reproduced by hand with iree-import-onnx, iree-compile and iree-run-module).
# Slice from past the end (start 100 on a dim of 9, clamped to 8) with step -3: "expected offsets to be
# non-negative, but got -1" (the same Slice on a `?` dim compiles and returns one column too many).
SLICE_BUG = Params("Slice", (x("f32", [1, 9]), const("i64", [100]), const("i64", [-10]), const("i64", [1]),
                             const("i64", [-3])))
# Div of uint8 tensors divides them as signed: 149 / 6 gives 239 (-17) instead of 24.
DIV_U8_BUG = Params("Div", (x("u8", [2, 3]), x("u8", [3], data=(1, 255))))
# DepthToSpace in CRD mode: 0..7 as [1, 4, 1, 2] gives [[0 1 2 3] [4 5 6 7]], not [[0 2 1 3] [4 6 5 7]].
DEPTH_TO_SPACE_CRD_BUG = Params("DepthToSpace", (x("f32", [1, 4, 1, 2]),), attrs(blocksize=2, mode="CRD"))

# InstanceNormalization with a `?` spatial dim returns NaN everywhere (static, or `?` batch or channels: right).
INSTANCE_NORM_BUG = Params("InstanceNormalization", (x("f32", [2, 3, 5], [False, False, True]), x("f32", [3]),
                                                     x("f32", [3])))

# Two ops per class, each agreeing with both references on llvm-cpu (dynamic dims, broadcasting,
# negative axes and steps, ties, zero points).
PASSING = {
    "elementwise/Add": Params("Add", (x("f32", [3, 1, 5], [True, False, False]), x("f32", [4, 1]))),
    "elementwise/Round": Params("Round", (x("f32", [17]),)),  # quarters: ties at .5 round to even
    "movement/Gather": Params("Gather", (x("f32", [5, 3]), x("i64", [4], [True], (-3, 2))), attrs(axis=-1)),
    "movement/Reshape": Params("Reshape", (x("f32", [2, 3, 4]), const("i64", [0, -1, 2]))),
    "reduction/ReduceSum": Params("ReduceSum", (x("f32", [4, 5, 3], [True, False, True]), const("i64", [-1, 0])),
                                  attrs(keepdims=0)),
    "reduction/ArgMax": Params("ArgMax", (x("f32", [6, 5], None, (-1, 1)),), attrs(axis=-1, select_last_index=1)),
    "contraction/MatMul": Params("MatMul", (x("f32", [2, 1, 3, 4], [True, False, False, False]), x("f32", [5, 4, 3]))),
    "contraction/Einsum": Params("Einsum", (x("f32", [3, 4]), x("f32", [4, 5])), attrs(equation="ij,jk->ik")),
    "normalization/LayerNormalization": Params("LayerNormalization", (x("f32", [3, 5], [True, False]), x("f32", [5]),
                                                                      x("f32", [5])), attrs(axis=-1)),
    "normalization/InstanceNormalization": Params("InstanceNormalization", (x("f32", [2, 3, 5]), x("f32", [3]),
                                                                            x("f32", [3]))),
}


def test_the_schema_types_attributes_and_onnx_decides_what_is_drawable():
    from onnx import AttributeProto

    p = Params("Resize", (x("f32", [1, 1, 4, 4]), NONE, const("f32", [1.0, 1.0, 2.0, 2.0])),
               attrs(mode="cubic", cubic_coeff_a=-1, axes=[]))
    node = build(p).graph.node[-1]
    kinds = {a.name: a.type for a in node.attribute}
    assert kinds == {"mode": AttributeProto.STRING, "cubic_coeff_a": AttributeProto.FLOAT, "axes": AttributeProto.INTS}
    assert "Incompatible dimensions" in drawable(Params("Add", (x("f32", [2, 3]), x("f32", [4]))))
    with pytest.raises(NotDrawable, match="has no attribute 'axis'"):
        build(Params("Add", (x("f32", [3]), x("f32", [3])), attrs(axis=0)))
    with pytest.raises(NotDrawable, match="takes float, not 'x'"):
        build(Params("Elu", (x("f32", [3]),), attrs(alpha="x")))
    assert len(resolve_ops(["all"])) == 183 and resolve_ops(["resize", "Slice"]) == ("Resize", "Slice")


def test_a_real_reference_disagreement_is_set_apart_and_never_compiled():
    p = RESIZE_DISAGREEMENT
    inputs = [np.arange(5, dtype=np.float32).reshape(1, 5)]
    ort_out, ref_out = references(p, inputs)
    assert ort_out[0].tolist() == [[0.0, 2.0, 4.0]] and ref_out[0].tolist() == [[0.0, 1.0, 3.0]]
    with pytest.raises(ReferenceDisagreement, match="ONNX Runtime and onnx.reference differ"):
        reference(p, inputs)
    from shapefuzz.errors import UndefinedReference

    with pytest.raises(UndefinedReference):  # what a campaign's check discards unjudged (campaign/iree.py)
        reference(p, inputs)
    result = judge_case(p, 0, ["llvm-cpu"], toolchain=None, budget=DEFAULT_BUDGET)  # no toolchain: never compiled
    assert result.verdict == DISAGREE and result.report is None and "onnx.reference" in result.why
    assert "unfloored" in known_disagreement(p)  # a campaign does not draw it


def _one_line_error(*args: str) -> str:
    run = subprocess.run([sys.executable, "-m", "shapefuzz", *args], capture_output=True, text=True, timeout=120)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 2 and len(lines) == 1 and lines[0].startswith("shapefuzz: error: "), run.stderr
    return lines[0]


def test_bad_params_are_one_line_and_exit_2(tmp_path):
    from shapefuzz.errors import InvalidInputError
    from shapefuzz.families import validate_case

    assert "'Foo' is not an operator" in _one_line_error("onnx-ops", "--ops", "Resize,Foo")
    bad_attr = Case.make("onnx_op", dict(op="Add", operands=[["x", "f32", [3], [False], []]] * 2, attrs=[["axis", 0]],
                                         frontend="onnx"))
    path = tmp_path / "case.mlir"
    path.write_text(bad_attr.header() + "\nmodule {}\n")
    assert "Add has no attribute 'axis'" in _one_line_error("check", str(path), "--backends", "llvm-cpu")
    with pytest.raises(InvalidInputError, match="'Foo' is not an operator"):  # the same path, in-process
        validate_case(Case.make("onnx_op", dict(op="Foo", operands=[], frontend="onnx")))
    assert "holds 2 values, not 0" in drawable(Params("Slice", (x("f32", [3]), ("const", "i64", (2,), (), ()))))


@pytest.mark.iree
@pytest.mark.parametrize("name", sorted(PASSING))
def test_two_ops_per_class_agree_with_both_references_on_llvm_cpu(name, toolchain):
    p = PASSING[name]
    assert not known_disagreement(p)
    result = judge_case(p, 1, ["llvm-cpu"], toolchain, DEFAULT_BUDGET, confirm=False)
    assert result.verdict == PASSED, result.why


@pytest.mark.iree
def test_an_op_the_release_does_not_lower_is_not_supported(toolchain):
    p = Params("Resize", (x("f32", [4, 4]), NONE, const("f32", [2.0, 2.0])), attrs(mode="linear"))  # 3.13: NCHW only
    result = judge_case(p, 1, ["llvm-cpu"], toolchain, DEFAULT_BUDGET, confirm=False)
    assert result.verdict == NOT_SUPPORTED and "does not lower" in result.why, result.why
    (r,) = result.report.results
    assert r.signature is None  # never bucketed


@pytest.mark.iree
def test_an_iree_failure_is_a_finding_saved_with_its_model(tmp_path, toolchain):
    from shapefuzz.corpus.onnx_files import MODEL_FILE
    from shapefuzz.families import validate_case

    result = judge_case(SLICE_BUG, 1, ["llvm-cpu"], toolchain, DEFAULT_BUDGET)
    assert result.verdict == FAILED and "expected offsets to be non-negative" in result.report.results[0].detail
    for bug in (DIV_U8_BUG, DEPTH_TO_SPACE_CRD_BUG, INSTANCE_NORM_BUG):
        wrong = judge_case(bug, 3, ["llvm-cpu"], toolchain, DEFAULT_BUDGET, confirm=False)
        # each op's wrong values are a bucket of their own
        assert wrong.verdict == FAILED and f"wrong values in onnx_op {bug.op} via onnx" in wrong.why, (bug.op, wrong.why)
    lines = save_findings([OpRow("Slice", cases=[result])], tmp_path, toolchain)
    (entry,) = [tmp_path / line.split()[-1].split("/")[-1] for line in lines]
    meta = json.loads((entry / "meta.json").read_text())
    assert (entry / MODEL_FILE).is_file() and meta["onnx_model"] == MODEL_FILE
    assert meta["family"] == "onnx_op" and 'onnx.Slice' in (entry / "reproducer.mlir").read_text()
    validate_case(Case.make("onnx_op", meta["params"]))  # the entry's case loads again (replay, shrink)
