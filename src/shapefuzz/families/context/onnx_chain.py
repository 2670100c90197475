"""The ONNX spelling of a chain: the family's real ONNX model of the root (`onnx_models`), its
nodes kept as they are (values renamed `r_*`), with the chain's ops added as ONNX nodes before
(producers) and after (consumers) it, so `iree-import-onnx` imports the whole computation and
`onnx.reference` judges all of it. Each op is written as the ONNX op computing exactly what the
op's NumPy `forward` computes (IREE's affine dequantize / quantize as DequantizeLinear /
QuantizeLinear, which 3.13 lowers to them); a chain with an op ONNX has no exact equivalent for (an i4
dequantize, a max over a dim that may be empty) is not expressible (`refuse`) and stays linalg."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.compose import Plan, inexact_in_frontend
from shapefuzz.families.context.types import Ty, static_size
from shapefuzz.families.onnx_models import ONNX_TYPE, Graph
from shapefuzz.families.torch_ir import Boundary

if TYPE_CHECKING:
    import onnx

INT64_MAX = (1 << 63) - 1
ROOT_PREFIX = "r_"


def refuse(p: Plan) -> str:
    """Why ONNX cannot write this chain exactly ("" when it can)."""
    return inexact_in_frontend(p, "ONNX", "has no exact ONNX form here")


class _Chain:
    """Node writers for the chain's ops on a `Graph` (fresh names, constants)."""

    def __init__(self, g: Graph) -> None:
        self.g = g

    def ints(self, values: list[int]) -> str:
        return self.g.const(values, "i64")

    def scalar(self, value: float, elt: str) -> str:
        return self.g.const([value], elt, shape=[])

    def dim(self, x: str, i: int) -> str:
        """Dim i of `x` as a 1-element i64 tensor."""
        shape = self.g.one("Shape", [x])
        return self.g.one("Slice", [shape, self.ints([i]), self.ints([i + 1])])

    def shape(self, parts: list[int | str]) -> str:
        """A shape tensor from static sizes and 1-element dim values."""
        if all(isinstance(v, int) for v in parts):
            return self.ints([int(v) for v in parts])
        pieces = [self.ints([v]) if isinstance(v, int) else v for v in parts]
        return self.g.one("Concat", pieces, axis=0)

    def produce(self, op: ContextOp, ins: list[str], in_tys: tuple[Ty, ...], out: Ty) -> str:
        g, x = self.g, ins[0]
        name = op.op
        if name == "to_static":  # Reshape keeping every dim (0 copies it) gives the static type
            return g.one("Reshape", [x, self.ints([0 if d is None else d for d in out.dims])])
        if name == "pad":
            pads = self.ints(list(op.get("lo")) + list(op.get("hi")))
            return g.one("Pad", [x, pads, self.scalar(op.get("value"), out.elt)], mode="constant")
        if name == "transpose":
            return g.one("Transpose", [x], perm=list(op.get("perm")))
        if name == "expand":
            parts: list[int | str] = []
            for k, group in enumerate(op.get("groups")):
                static = 1
                for i in group:
                    static *= out.dims[i] if out.dims[i] is not None else 1
                for i in group:
                    parts.append(out.dims[i] if out.dims[i] is not None
                                 else g.one("Div", [self.dim(x, k), self.ints([static])]))
            return g.one("Reshape", [x, self.shape(parts)])
        if name == "collapse":
            parts, k = [], 0
            for d, split in zip(out.dims, op.get("split")):
                parts.append(d if d is not None else self.dim(x, k + list(split).index(-1)))
                k += len(split)
            return g.one("Reshape", [x, self.shape(parts)])
        if name == "slice":
            drop = op.get("drop")
            if drop >= 0:
                x = g.one("Gather", [x, self.g.const([1], "i64", shape=[])], axis=drop)
            rank = out.rank
            if not rank:
                return x
            ends = [-e if e else INT64_MAX for e in op.get("extra")]
            return g.one("Slice", [x, self.ints(list(op.get("offsets"))), self.ints(ends), self.ints(list(range(rank))),
                                   self.ints(list(op.get("strides")))])
        if name == "concat":
            return g.one("Concat", ins, axis=op.get("dim"))
        if name == "broadcast":
            dims = list(op.get("dims"))
            up = g.one("Unsqueeze", [x, self.ints(dims)])
            return g.one("Expand", [up, self.ints([static_size(out.dims[i]) if i in dims else 1 for i in range(out.rank)])])
        if name == "reverse":
            return self.reverse(x, op.get("dim"))
        if name in ("dequantize", "dequantize_affine"):  # (DequantizeLinear is what 3.13 makes the affine op of)
            value = g.one("DequantizeLinear", [x, self.scalar(op.get("scale"), "f32"),
                                                self.g.const([op.get("zero_point")], "i8", shape=[])])
            return value if out.elt == "f32" else g.one("Cast", [value], to=ONNX_TYPE[out.elt])
        if name == "cast":
            return g.one("Cast", [x], to=ONNX_TYPE[out.elt])
        raise ValueError(f"context: {name} has no ONNX form")

    def reverse(self, x: str, dim: int) -> str:
        return self.g.one("Slice", [x, self.ints([-1]), self.ints([-INT64_MAX]), self.ints([dim]), self.ints([-1])])

    def consume(self, op: ContextOp, x: str, t: Ty, extras: list[str], out: Ty) -> str:
        g, name = self.g, op.op
        if name == "bias":
            shape = [1] * t.rank
            shape[op.get("dim")] = -1
            return g.one("Add", [x, g.one("Reshape", [extras[0], self.ints(shape)])])
        if name == "relu":
            return g.one("Relu", [x])
        if name == "clamp":
            lo, hi = self.scalar(op.get("lo"), t.elt), self.scalar(min(op.get("hi"), 60000.0), t.elt)
            return g.one("Clip", [x, lo, hi])
        if name == "multi_use":
            return g.one("Add", [g.one("Mul", [x, self.scalar(op.get("factor"), t.elt)]), x])
        if name == "extract":
            return g.one("Add", [x, self.reverse(x, op.get("dim"))])
        if name == "cast_out":
            return g.one("Cast", [x], to=ONNX_TYPE[out.elt])
        if name == "quantize":  # x * (1/scale) in x's type, then round-half-even + zero point, saturated
            m = g.one("Mul", [x, self.scalar(1.0 / op.get("scale"), t.elt)])
            if t.elt != "f32":
                m = g.one("Cast", [m], to=ONNX_TYPE["f32"])
            return g.one("QuantizeLinear", [m, self.scalar(1.0, "f32"),
                                            self.g.const([op.get("zero_point")], "i8", shape=[])])
        if name == "quantize_affine":  # saturate(roundeven(x / scale) + zero point), an f32 x
            return g.one("QuantizeLinear", [x, self.scalar(op.get("scale"), "f32"),
                                            self.g.const([op.get("zero_point")], "i8", shape=[])])
        if name == "transpose_out":
            return g.one("Transpose", [x], perm=list(op.get("perm")))
        if name == "reshape":
            parts: list[int | str] = []
            for group in op.get("groups"):
                sizes = [t.dims[i] for i in group]
                if None not in sizes:
                    n = 1
                    for s in sizes:
                        n *= s
                    parts.append(n)
                else:
                    value = self.dim(x, group[0])
                    for i in group[1:]:
                        value = g.one("Mul", [value, self.dim(x, i)])
                    parts.append(value)
            return g.one("Reshape", [x, self.shape(parts)])
        if name == "reduce":
            kind = "ReduceSum" if op.get("kind") == "sum" else "ReduceMax"
            return g.one(kind, [x, self.ints([op.get("dim")])], keepdims=0)
        if name == "softmax":
            return g.one("Softmax", [x], axis=op.get("dim"))
        raise ValueError(f"context: {name} has no ONNX form")


def _dims(ty: Ty) -> tuple[tuple[int | None, ...], str]:
    return (ty.dims, ty.elt)


def chain_model(root: "onnx.ModelProto", p: Plan) -> "onnx.ModelProto":
    """The whole chain as one ONNX model around the root's (ValueError: not expressible)."""
    why = refuse(p)
    if why:
        raise ValueError(why)
    entry, outs = p.entry_args(), p.entry_results()
    names = [f"arg{k}" for k in range(len(entry))]
    g = Graph(Boundary(tuple(_dims(t) for t in entry), tuple(_dims(t) for t in outs)), names)
    c = _Chain(g)
    operands, extras = p.through_producers(names, c.produce)
    results = _splice(g, root, operands)
    finals, x = [], 0
    for j, steps in enumerate(p.consumers):
        value = results[j]
        for op, t, out, more in steps:
            value = c.consume(op, value, t, extras[x:x + len(more)], out)
            x += len(more)
        finals.append((value, outs[j].elt))
    return g.model(finals)


def _splice(g: Graph, root: "onnx.ModelProto", operands: list[str]) -> list[str]:
    """The root's nodes into `g`: its inputs read `operands`, every other value renamed; returns
    the values of its outputs."""
    graph = root.graph
    if graph.initializer or any(a.type in (5, 10) for n in graph.node for a in n.attribute):  # GRAPH/GRAPHS
        raise ValueError("context: the root model has initializers or subgraphs")
    rename: dict[str, str] = {i.name: v for i, v in zip(graph.input, operands)}

    def new(name: str) -> str:
        return "" if not name else rename.get(name, ROOT_PREFIX + name)

    from onnx import NodeProto

    for node in graph.node:
        copy = NodeProto()
        copy.CopyFrom(node)
        copy.name = ROOT_PREFIX + node.name if node.name else ""
        for field in (copy.input, copy.output):
            for j, value in enumerate(field):
                field[j] = new(value)
        g.nodes.append(copy)
    return [new(o.name) for o in graph.output]


def onnx_chain_model(family: Any, p: Any, plan: Plan) -> "onnx.ModelProto | None":
    """The ONNX model of a chain case spelled in ONNX (`p.frontend == "onnx"`), or None where the
    family's root has no ONNX model (a hand-written spelling) or the chain is not expressible."""
    from shapefuzz.families.frontends import onnx_model

    if refuse(plan):
        return None
    root = onnx_model(family, p.replace(context=()))
    if root is None:
        return None
    try:
        return chain_model(root, plan)
    except ValueError:
        return None
