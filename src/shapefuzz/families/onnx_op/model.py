"""A case as the ONNX model it is: one node of the op, its `x` operands graph inputs (a `?` dim a
symbolic `dim_param`), its constant operands `Constant` nodes, every output of the node a graph
output typed by ONNX's own shape inference. `drawable` says whether ONNX itself accepts the
model (checker, strict shape inference, every output typed with a known rank): a draw it
rejects is not drawable (redrawn and counted), never a finding."""

from __future__ import annotations

import functools
from typing import Any

from shapefuzz.families.onnx_op.params import NUMPY_TYPE, ONNX_TYPE, Params, check_operand
from shapefuzz.families.onnx_op.schema import default_ops, make_attribute


class NotDrawable(ValueError):
    """ONNX itself rejects the model (or the params are malformed): what, in one line."""


def check_params(p: Params) -> None:
    """NotDrawable when the params cannot even be built into a model (unknown op, bad operand or
    attribute); the message names what."""
    if p.op not in default_ops():
        raise NotDrawable(f"{p.op!r} is not an operator of the default ONNX domain at our opset")
    for o in p.operands:
        problem = check_operand(o)
        if problem:
            raise NotDrawable(problem)
    if not 1 <= p.outputs <= 8:
        raise NotDrawable("outputs: 1 to 8")
    names = [a[0] if isinstance(a, tuple) and len(a) == 2 else None for a in p.attrs]
    if any(not isinstance(n, str) for n in names) or len(set(names)) != len(names):
        raise NotDrawable("attrs: a list of distinct [name, value] pairs")


def _dims(name: str, shape: Any, dyn: Any) -> list[int | str]:
    return [f"{name}_d{i}" if d else int(s) for i, (s, d) in enumerate(zip(shape, dyn))]


def untyped_model(p: Params, static: bool = False) -> Any:
    """The model with untyped graph outputs (`static`: every `?` dim at its size)."""
    import numpy as np
    from onnx import helper, numpy_helper

    from shapefuzz.iree.onnx_import import IR_VERSION, OPSET

    check_params(p)
    nodes: list[Any] = []
    inputs: list[Any] = []
    names: list[str] = []
    for i, (kind, dtype, shape, dyn, data) in enumerate(p.operands):
        if kind == "none":
            names.append("")
        elif kind == "x":
            name = f"in{len(inputs)}"
            inputs.append(helper.make_tensor_value_info(name, ONNX_TYPE[dtype],
                                                        _dims(name, shape, [False] * len(shape) if static else dyn)))
            names.append(name)
        else:
            name = f"c{i}"
            array = np.array(data, dtype=NUMPY_TYPE[dtype]).reshape(shape)
            if dtype == "f16":  # the importer reads f16 only from raw bytes
                tensor = numpy_helper.from_array(array, f"{name}_value")
            else:
                tensor = helper.make_tensor(f"{name}_value", ONNX_TYPE[dtype], list(shape), array.reshape(-1).tolist())
            nodes.append(helper.make_node("Constant", [], [name], name=name, value=tensor))
            names.append(name)
    while names and names[-1] == "":
        names.pop()
    outs = [f"out{i}" for i in range(p.outputs)]
    node = helper.make_node(p.op, names, outs, name=p.op.lower())
    try:
        node.attribute.extend(make_attribute(p.op, k, v) for k, v in p.attrs)
    except ValueError as error:
        raise NotDrawable(str(error)) from None
    nodes.append(node)
    graph = helper.make_graph(nodes, "main", inputs, [helper.ValueInfoProto(name=o) for o in outs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="shapefuzz")
    model.ir_version = IR_VERSION
    return model


def typed(model: Any) -> Any:
    """The model with its graph outputs typed by strict shape inference; NotDrawable when ONNX
    rejects it or leaves an output's element type or rank unknown."""
    import onnx

    try:  # (the checker wants typed outputs: it checks the model once they are)
        inferred = onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True, data_prop=True)
    except Exception as error:  # noqa: BLE001 - ONNX rejecting the model is the answer
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise NotDrawable(f"ONNX rejects the model: {lines[-1][:300]}") from None
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for out in model.graph.output:
        info = known.get(out.name)
        t = info.type.tensor_type if info is not None and info.type.HasField("tensor_type") else None
        if t is None or t.elem_type == 0 or not t.HasField("shape"):
            raise NotDrawable(f"ONNX's shape inference leaves output {out.name} without a type and rank")
        if t.elem_type not in ONNX_TYPE.values():
            raise NotDrawable(f"output {out.name} has element type {onnx.TensorProto.DataType.Name(t.elem_type)}")
        assert info is not None  # (t is None when it is)
        out.type.CopyFrom(info.type)
    try:
        onnx.checker.check_model(model, full_check=True)
    except Exception as error:  # noqa: BLE001
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise NotDrawable(f"ONNX's checker rejects the model: {lines[-1][:300]}") from None
    return model


@functools.lru_cache(maxsize=256)
def build(p: Params) -> Any:
    """The case's model (cached: a check renders, feeds and judges one case many times; callers
    must not change it). NotDrawable when ONNX rejects it."""
    return typed(untyped_model(p))


@functools.lru_cache(maxsize=256)
def static_model(p: Params) -> Any:
    """The model with every `?` dim at its size: what ONNX's shape inference says each output is."""
    return typed(untyped_model(p, static=True))


def drawable(p: Params) -> str:
    """"" when ONNX accepts the model, else why not."""
    try:
        build(p)
        static_model(p)
    except NotDrawable as error:
        return str(error)
    return ""
