"""ONNX imports share one MLIR context per process (making one costs more than a small import);
the text of an import never depends on what the process imported before."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import shapefuzz.iree.onnx_import as oi  # noqa: E402


def _model(raw: bool):
    values = np.arange(6, dtype=np.float32).reshape(2, 3)
    value = numpy_helper.from_array(values, "value_0") if raw else \
        helper.make_tensor("value_0", TensorProto.FLOAT, [2, 3], values.ravel().tolist())
    nodes = [helper.make_node("Constant", [], ["c"], value=value), helper.make_node("Add", ["x", "c"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", oi.OPSET)], ir_version=oi.IR_VERSION)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(oi, "_SHARED", {})


def test_imports_share_a_context_and_give_the_text_of_a_fresh_one(monkeypatch):
    shared = [oi._import(_model(raw=False)) for _ in range(2)]
    context = oi._SHARED["context"]
    assert oi._SHARED["uses"] == 2
    monkeypatch.setattr(oi, "_CONTEXT_USES", 1)  # a context per import: the old way
    fresh = oi._import(_model(raw=False))
    assert oi._SHARED["context"] is not context
    assert shared == [fresh, fresh] and "dense<" in fresh


def test_a_raw_tensor_keeps_its_resource_name_on_a_second_import():
    # in a shared context the second `value_0` resource would be renamed `value_0_1`
    first, second = oi._import(_model(raw=True)), oi._import(_model(raw=True))
    assert "dense_resource<value_0>" in first and first == second
    assert not oi._SHARED  # imported in contexts of their own


def test_a_forked_child_makes_its_own_context():
    oi._import(_model(raw=False))
    parent = oi._SHARED["context"]
    oi._SHARED["pid"] = -1  # as a forked child sees its parent's entry
    oi._import(_model(raw=False))
    assert oi._SHARED["context"] is not parent
    assert oi._INHERITED[-1] is parent  # kept, never freed in the child
    oi._INHERITED.pop()


def test_imports_in_a_forked_child_give_the_parents_text():
    import multiprocessing

    text = oi._import(_model(raw=False))
    with multiprocessing.get_context("fork").Pool(1) as pool:
        assert pool.apply(oi._import, (_model(raw=False),)) == text
