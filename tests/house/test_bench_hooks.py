"""The public hooks the benchmarks and studies use instead of our private names: each forget_*
empties the cache it names, so the next call works from cold (`families.forget_validated`,
`oracle.forget_expectations`, `onnx_import.forget_imports`, `corpus.listing.forget_listing`), and
`oracle.watch_checks` shows a watcher every check made inside its block, and none after."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

import shapefuzz.families as families
import shapefuzz.judge.oracle as oracle
from shapefuzz.families.generate import draw_case
from shapefuzz.model import Verdict


def test_forgetting_validated_cases_validates_them_again(monkeypatch):
    case = draw_case("topk", 3)
    checked = []
    real = families.validate_params
    monkeypatch.setattr(families, "validate_params", lambda *a: checked.append(a) or real(*a))
    families.validate_case(case)
    families.validate_case(case)  # remembered
    assert len(checked) == 1
    families.forget_validated()
    families.validate_case(case)
    assert len(checked) == 2


def test_forgetting_expectations_computes_them_again(monkeypatch):
    case = draw_case("matmul", 2)
    family = families.get_family("matmul")
    made = []
    real = type(family).make_inputs
    monkeypatch.setattr(type(family), "make_inputs", lambda self, *a: made.append(a) or real(self, *a))
    first = oracle.case_expectation(case, 5)
    oracle.case_expectation(case, 5)  # from the memo
    assert len(made) == 1
    oracle.forget_expectations()
    again = oracle.case_expectation(case, 5)
    assert len(made) == 2 and all(np.array_equal(a, b) for a, b in zip(first.inputs, again.inputs))


@pytest.mark.iree  # the importer is IREE's own, in this process
def test_forgetting_imports_imports_the_model_again():
    import onnx
    from onnx import TensorProto, helper

    from shapefuzz.iree import onnx_import

    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", onnx_import.OPSET)])
    model.ir_version = onnx_import.IR_VERSION
    onnx.checker.check_model(model)
    onnx_import.import_model(model)
    before = dict(onnx_import.STATS)
    text = onnx_import.import_model(model)
    assert (onnx_import.STATS["imports"], onnx_import.STATS["cached"]) == (before["imports"], before["cached"] + 1)
    onnx_import.forget_imports()
    assert onnx_import.import_model(model) == text
    assert onnx_import.STATS["imports"] == before["imports"] + 1


def test_forgetting_a_listing_drops_its_cache_and_no_other(tmp_path, monkeypatch):
    from shapefuzz.corpus import Finding, list_entries, save_finding
    from shapefuzz.corpus.listing import forget_listing
    from shapefuzz.model import Signature, Stage, Status

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    corpora = []
    for name in ("a", "b"):
        corpus = tmp_path / name
        save_finding(corpus, Finding(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, f"bug {name}"),
                                     "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
                                     "  return %a : tensor<4xf32>\n}\n", ("llvm-cpu",), None, 0, [], [], "3.13.0",
                                     [], f"bug {name}"))
        old = time.time() - 60  # past the window in which a listing does not trust a stat
        for root, _, files in os.walk(corpus):
            for file in files:
                os.utime(os.path.join(root, file), (old, old))
        list_entries(corpus)
        corpora.append(corpus)
    caches = lambda: sorted((tmp_path / "cache").rglob("*.json"))  # noqa: E731
    assert len(caches()) == 2
    forget_listing(corpora[0])
    assert len(caches()) == 1
    forget_listing(corpora[0])  # nothing left to drop: no error
    list_entries(corpora[0])
    assert len(caches()) == 2


@pytest.mark.iree
def test_a_watcher_sees_each_check_in_its_block_and_none_after(toolchain):
    seen = []
    watcher = lambda report, seconds, expectation: seen.append((report.verdict, seconds, expectation))  # noqa: E731
    with oracle.watch_checks(watcher):
        report = oracle.check_module("this is not MLIR", ["llvm-cpu"], None, toolchain)
    assert report.verdict == Verdict.INVALID
    assert len(seen) == 1 and seen[0][0] == Verdict.INVALID and seen[0][1] > 0 and seen[0][2] is None
    oracle.check_module("this is not MLIR", ["llvm-cpu"], None, toolchain)
    assert len(seen) == 1
