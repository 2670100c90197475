"""The shared toolkit of the ONNX spellings as real ONNX models (`onnx.helper`), the way an
exporter writes one: graph inputs and outputs with the linalg form's boundary types (a `?` dim is
a symbolic dim, `dim_param`), the default domain at opset 18 recorded in the model, constants as
`Constant` nodes. `iree-import-onnx` turns the model into the MLIR we compile (`onnx_import`), and
`onnx.reference.ReferenceEvaluator` runs the same model as a second judge (`onnx_judge`).

Each family builds its graph in its package's `spellings` module (`ONNX_MODEL`, a
`ModelSpelling`), mirroring its hand-written ONNX spelling. A result whose element type differs
from the boundary's gets a `Cast`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_ir import Boundary

if TYPE_CHECKING:
    import onnx

# MLIR element type -> onnx.TensorProto data type.
ONNX_TYPE = {"f32": 1, "f16": 10, "i64": 7, "i32": 6, "i8": 3, "u8": 2, "i1": 9, "f64": 11}
NUMPY_TYPE = {"f32": "float32", "f16": "float16", "i64": "int64", "i32": "int32", "i8": "int8", "u8": "uint8",
              "i1": "bool", "f64": "float64"}


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

        from shapefuzz.iree.onnx_import import IR_VERSION, OPSET

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


@dataclass(frozen=True)
class ModelSpelling:
    """How a family's ONNX-expressible cases are built as models (which cases: the family's onnx `Spelling`)."""

    family: str
    build: Callable[[Params, Boundary], "onnx.ModelProto"]
    # why a case ONNX cannot hold as a model ("" when it can): its hand-written text is kept
    refuse: Callable[[Params], str] = lambda p: ""
    # why onnx.reference is known to compute this case wrong ("" when it is not): not judged
    reference_gap: Callable[[Params], str] = lambda p: ""
    # for the judge alone: a model of other ONNX ops computing the same values on the same arrays,
    # for a case the family cannot spell in ONNX (None when there is none); its boundary on demand
    stand_in: Callable[[Params, Callable[[], Boundary]], "onnx.ModelProto | None"] = lambda p, bnd: None


def model_spelling(family: str) -> ModelSpelling | None:
    """A family's model builder: its package's `spellings.ONNX_MODEL` (None: ONNX cannot write it)."""
    from shapefuzz.families.registry import spellings_module

    module = spellings_module(family)
    return None if module is None else getattr(module, "ONNX_MODEL", None)
