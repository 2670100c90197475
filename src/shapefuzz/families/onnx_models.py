"""Each family's ONNX spelling as a real ONNX model (`onnx.helper`), the way an exporter writes
one: graph inputs and outputs with the linalg form's boundary types (a `?` dim is a symbolic
dim, `dim_param`), the default domain at opset 18 recorded in the model, constants as `Constant`
nodes. `iree-import-onnx` turns the model into the MLIR we compile (`onnx_import`), and
`onnx.reference.ReferenceEvaluator` runs the same model as a second judge (`onnx_judge`).

The graphs mirror the hand-written spellings in `onnx_forms` (which say which cases each op can
write): conv as `Transpose` + `Conv` (+ `Unsqueeze` of a depthwise filter, `Cast` of f16 inputs
to an f32 accumulator, `Relu`); conv_transpose as `ConvTranspose` with `output_padding`;
scatter as `ScatterND` (with `Unsqueeze` of implicit-depth indices, `Neg` for sub); one_hot as
`OneHot` (+ `Concat` of input on/off values, `Mul` + `ReduceSum` consumer); topk as `TopK`
(+ `GatherElements` of labels). A result whose element type differs from the boundary's gets a
`Cast`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_ir import Boundary

if TYPE_CHECKING:
    import onnx

# MLIR element type -> onnx.TensorProto data type.
ONNX_TYPE = {"f32": 1, "f16": 10, "i64": 7, "i32": 6, "i8": 3, "i1": 9, "f64": 11}
NUMPY_TYPE = {"f32": "float32", "f16": "float16", "i64": "int64", "i32": "int32", "i8": "int8", "i1": "bool",
              "f64": "float64"}


class Graph:
    """Collects nodes; hands out fresh value names."""

    def __init__(self, bnd: Boundary, names: Sequence[str]) -> None:
        from onnx import helper

        self.nodes: list[Any] = []
        self._count = 0
        self.names = list(names)
        self.inputs = [helper.make_tensor_value_info(n, ONNX_TYPE[elt], _dims(n, shape))
                       for n, (shape, elt) in zip(names, bnd.args)]
        self.results = bnd.results

    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"{stem}_{self._count}"

    def node(self, op: str, inputs: Sequence[str], outputs: int = 1, **attrs: Any) -> list[str]:
        from onnx import helper

        outs = [self.fresh(op.lower()) for _ in range(outputs)]
        self.nodes.append(helper.make_node(op, list(inputs), outs, name=outs[0], **attrs))
        return outs

    def one(self, op: str, inputs: Sequence[str], **attrs: Any) -> str:
        return self.node(op, inputs, **attrs)[0]

    def const(self, values: Sequence[float | int], elt: str, shape: Sequence[int] | None = None) -> str:
        import numpy as np
        from onnx import helper, numpy_helper

        array = np.array(values, dtype=NUMPY_TYPE[elt]).reshape([len(values)] if shape is None else list(shape))
        if elt == "f16":  # the importer reads f16 only from raw bytes (which it keeps as a dense_resource blob)
            return self.one("Constant", [], value=numpy_helper.from_array(array, self.fresh("value")))
        # typed fields, as exporters write small constants: the importer prints them inline (`dense<...>`)
        tensor = helper.make_tensor(self.fresh("value"), ONNX_TYPE[elt], list(array.shape), array.reshape(-1).tolist())
        return self.one("Constant", [], value=tensor)

    def transpose(self, x: str, perm: Sequence[int]) -> str:
        return x if list(perm) == list(range(len(perm))) else self.one("Transpose", [x], perm=list(perm))

    def unsqueeze(self, x: str, axis: int) -> str:
        return self.one("Unsqueeze", [x, self.const([axis], "i64")])

    def model(self, outputs: Sequence[tuple[str, str]]) -> "onnx.ModelProto":
        """The model returning `outputs` ((value, element type)) with the boundary's result types."""
        from onnx import helper

        from shapefuzz.onnx_import import IR_VERSION, OPSET

        infos = []
        for i, ((value, elt), (shape, want)) in enumerate(zip(outputs, self.results)):
            if elt != want:
                value = self.one("Cast", [value], to=ONNX_TYPE[want])
            name = f"result{i}"
            if value in self.names:  # a graph input returned as it is
                self.nodes.append(helper.make_node("Identity", [value], [name], name=name))
            else:  # the producing node's output is the graph output (its type then is the boundary's)
                self._rename(value, name)
            infos.append(helper.make_tensor_value_info(name, ONNX_TYPE[want], _dims(name, shape)))
        graph = helper.make_graph(self.nodes, "main", self.inputs, infos)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="shapefuzz")
        model.ir_version = IR_VERSION
        return model


    def _rename(self, old: str, new: str) -> None:
        for node in self.nodes:
            for field in (node.input, node.output):
                for j, value in enumerate(field):
                    if value == old:
                        field[j] = new


def _dims(name: str, shape: Sequence[int | None]) -> list[int | str]:
    return [f"{name}_d{i}" if s is None else int(s) for i, s in enumerate(shape)]


# ============================================================================ scatter

_REDUCTION = {"overwrite": "none", "add": "add", "sub": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter(p: Params, bnd: Boundary) -> "onnx.ModelProto":
    g = Graph(bnd, ["original", "indices", "updates"])
    idx, upd = "indices", "updates"
    if p["implicit_depth"]:
        idx = g.unsqueeze(idx, -1)
    if p["combiner"] == "sub":
        upd = g.one("Neg", [upd])
    reduction = _REDUCTION[p["combiner"]]
    attrs = {"reduction": reduction} if reduction != "none" else {}
    y = g.one("ScatterND", ["original", idx, upd], **attrs)
    return g.model([(y, bnd.args[0][1])])


# ============================================================================ one_hot


def _one_hot(p: Params, bnd: Boundary) -> "onnx.ModelProto":
    from shapefuzz.families import one_hot

    elt, a = p["dtype"], one_hot.out_axis(p)
    names = ["indices"] + (["depth_t"] if p["depth_dyn"] else []) + (["on_t", "off_t"] if p["values"] == "input" else [])
    names += ["weights"] if p["consumer"] != "none" else []
    g = Graph(bnd, names)
    depth = "depth_t" if p["depth_dyn"] else g.const([p["depth"]], "i64", shape=[])
    if p["values"] == "input":
        values = g.one("Concat", [g.unsqueeze("off_t", 0), g.unsqueeze("on_t", 0)], axis=0)
    else:
        values = g.const([p["off"], p["on"]], elt)
    hot = g.one("OneHot", ["indices", depth, values], axis=p["axis"])
    outputs = []
    if p["consumer"] in ("none", "both"):
        outputs.append((hot, elt))
    if p["consumer"] in ("reduce", "both"):
        prod = g.one("Mul", [hot, "weights"])
        outputs.append((g.one("ReduceSum", [prod, g.const([a], "i64")], keepdims=0), elt))
    return g.model(outputs)


# ============================================================================ topk


def _topk(p: Params, bnd: Boundary) -> "onnx.ModelProto":
    dim = p["dim"]
    g = Graph(bnd, ["input"] + (["labels"] if p["indices"] == "arg" else []))
    vals, idx = g.node("TopK", ["input", g.const([p["k"]], "i64")], outputs=2, axis=dim,
                       largest=int(bool(p["largest"])), sorted=1)
    idx_elt = "i64"
    if p["indices"] == "arg":
        idx = g.one("GatherElements", ["labels", idx], axis=dim)
        idx_elt = bnd.args[1][1]
    outputs = []
    if p["use"] in ("values", "both"):
        outputs.append((vals, bnd.args[0][1]))
    if p["use"] in ("indices", "both"):
        outputs.append((idx, idx_elt))
    return g.model(outputs)


@dataclass(frozen=True)
class ModelSpelling:
    """How a family's ONNX-expressible cases are built as models (which cases: `onnx_forms`)."""

    family: str
    build: Callable[[Params, Boundary], "onnx.ModelProto"]
    # why a case ONNX cannot hold as a model ("" when it can): its hand-written text is kept
    refuse: Callable[[Params], str] = lambda p: ""
    # why onnx.reference is known to compute this case wrong ("" when it is not): not judged
    reference_gap: Callable[[Params], str] = lambda p: ""


MODELS: dict[str, ModelSpelling] = {m.family: m for m in (
    ModelSpelling("scatter", _scatter),
    # ONNX rejects 0-d OneHot indices (its shape inference: "Indices tensor must have rank >= 1").
    ModelSpelling("one_hot", _one_hot, lambda p: "" if p["index_shape"] else "ONNX OneHot needs indices of rank >= 1"),
    ModelSpelling("topk", _topk),
)}


def model_spelling(family: str) -> ModelSpelling | None:
    """A family's model builder: the table above, or for a family written as a package its
    `spellings` module's ONNX_MODEL."""
    import importlib

    if family in MODELS:
        return MODELS[family]
    try:
        module = importlib.import_module(f"shapefuzz.families.{family}.spellings")
    except ModuleNotFoundError:
        return None
    return getattr(module, "ONNX_MODEL", None)
