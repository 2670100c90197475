"""The torch spelling of a chain: one `func.func @main` in the torch dialect, as torch-mlir's fx
importer leaves a model that runs the chain: the producers as `torch.aten.*` ops on the entry's
arguments, the family's own torch form of the root spliced in (its values renamed `%r_*`, its
arguments the producers' values), then the consumers. Every op is written as the aten op(s)
computing exactly what the op's NumPy `forward` computes, on the plan's types (the linalg chain's),
so the family's inputs and the chain's reference judge both spellings:

    pad        constant_pad_nd            expand     view (sizes from size.int / floordiv.int)
    transpose  transpose.int or permute   collapse   squeeze.dim (unit dims) or flatten.using_ints
    slice      select.int, slice.Tensor   concat     cat
    broadcast  unsqueeze, broadcast_to    reverse    flip
    dequantize to.dtype, sub.Scalar, mul.Scalar     cast       to.dtype
    to_static  tensor_static_info_cast
    bias       unsqueeze, add.Tensor      relu/clamp relu, clamp
    multi_use  mul.Scalar, add.Tensor     extract    index_select by a descending arange, add.Tensor
    cast_out   to.dtype                   quantize   mul.Scalar, round, clamp, add.Scalar, to.dtype
    transpose_out  as transpose           reshape    flatten.using_ints
    reduce     sum.dim_IntList or amax    softmax    softmax.int
    dequantize_affine  quantized_decomposed.dequantize_per_tensor (PT2E)
    quantize_affine    quantized_decomposed.quantize_per_tensor (PT2E)

A chain with an op torch has no exact form for (an i4 dequantize: torch has no i4; a max over a
dim that may be empty: -3e38 in linalg, -inf in torch) is not expressible (`refuse`) and stays
linalg, as in `onnx_chain`."""

from __future__ import annotations

import dataclasses
import re
from typing import Sequence

from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.compose import Plan, inexact_in_frontend
from shapefuzz.families.context.types import Ty, static_size
from shapefuzz.families.torch_ir import INT64_MAX, SCALAR_TYPE, TORCH_ELT, TV, TorchBuilder

ROOT_PREFIX = "%r_"
LIST = "!torch.list<int>"
INT = "!torch.int"


def refuse(p: Plan) -> str:
    """Why torch cannot write this chain exactly ("" when it can)."""
    return inexact_in_frontend(p, "torch", "has no torch form (torch has no i4)")


def tv(name: str, t: Ty) -> TV:
    """A torch value of the plan's type (a `?` dim's size is never read)."""
    return TV(name, tuple((0 if d is None else d, d is None) for d in t.dims), t.elt)


class _Chain:
    """Op writers for the chain's ops on a `TorchBuilder`."""

    def __init__(self, b: TorchBuilder) -> None:
        self.b = b

    def out(self, stem: str, t: Ty) -> TV:
        return tv(self.b.fresh(stem), t)

    def aten(self, name: str, operands: Sequence[tuple[str, str]], result: TV) -> TV:
        return self.b.op(f"torch.aten.{name}", operands, result)

    def reshape_dims(self, x: TV, stem: str, dims: Sequence[tuple[int, bool]]) -> TV:
        return x.with_dims(self.b.fresh(stem), dims)

    def permute(self, x: TV, perm: list[int], out: Ty) -> TV:
        """`transpose.int` where the permutation swaps two dims, else `permute`."""
        moved = [i for i, p in enumerate(perm) if p != i]
        if len(moved) == 2:
            a, c = moved
            return self.aten("transpose.int", [(x.name, x.type), (self.b.int(a), INT), (self.b.int(c), INT)],
                             self.out("tr", out))
        return self.aten("permute", [(x.name, x.type), (self.b.int_list(perm), LIST)], self.out("perm", out))

    def squeeze(self, x: TV, dim: int) -> TV:
        y = self.reshape_dims(x, "sq", [d for i, d in enumerate(x.dims) if i != dim])
        return self.aten("squeeze.dim", [(x.name, x.type), (self.b.int(dim), INT)], y)

    def int_op(self, name: str, a: str, c: str) -> str:
        out = self.b.fresh("n")
        self.b.body.append(f"{out} = torch.aten.{name} {a}, {c} : !torch.int, !torch.int -> !torch.int")
        return out

    def scalar_op(self, name: str, x: TV, value: str, kind: str, alpha: bool = False) -> TV:
        operands = [(x.name, x.type), (value, kind)] + ([(self.b.int(1), INT)] if alpha else [])
        return self.aten(name, operands, self.reshape_dims(x, name.split(".")[0], x.dims))

    def add(self, x: TV, y: TV, out: Ty) -> TV:
        return self.aten("add.Tensor", [(x.name, x.type), (y.name, y.type), (self.b.int(1), INT)], self.out("add", out))

    def clamp(self, x: TV, lo: float, hi: float) -> TV:
        return self.aten("clamp", [(x.name, x.type), (self.b.float(lo), "!torch.float"), (self.b.float(hi), "!torch.float")],
                         self.reshape_dims(x, "clamp", x.dims))

    def flatten_groups(self, x: TV, groups: Sequence[Sequence[int]]) -> TV:
        """Each group of consecutive dims of `x` with more than one dim flattened (right to left)."""
        for g in reversed([list(g) for g in groups]):
            if len(g) > 1:
                x = self.b.flatten(x, g[0], g[-1])
        return x

    # ------------------------------------------------------------------ producers

    def produce(self, op: ContextOp, ins: list[TV], out: Ty) -> TV:
        b, x, name = self.b, ins[0], op.op
        if name == "to_static":
            y = self.out("static", out)
            b.body.append(f"{y.name} = torch.tensor_static_info_cast {x.name} : {x.type} to {y.type}")
            return y
        if name == "pad":  # the pad list runs from the last dim: [lo, hi] of dim r-1, then r-2, ...
            pads = [v for lo, hi in reversed(list(zip(op.get("lo"), op.get("hi")))) for v in (lo, hi)]
            return self.aten("constant_pad_nd", [(x.name, x.type), (b.int_list(pads), LIST),
                                                 (b.float(op.get("value")), "!torch.float")], self.out("pad", out))
        if name == "transpose":
            return self.permute(x, list(op.get("perm")), out)
        if name == "expand":
            sizes: list[int | str] = []
            for k, group in enumerate(op.get("groups")):
                static = 1
                for i in group:
                    static *= out.dims[i] if out.dims[i] is not None else 1
                for i in group:
                    if out.dims[i] is not None:
                        sizes.append(out.dims[i])
                    else:
                        n = b.size(x, k)
                        sizes.append(n if static == 1 else self.int_op("floordiv.int", n, b.int(static)))
            return self.aten("view", [(x.name, x.type), (b.int_list(sizes), LIST)], self.out("view", out))
        if name == "collapse":
            starts, k = [], 0
            for split in op.get("split"):
                starts.append((k, list(split)))
                k += len(split)
            y = x
            for k, split in reversed(starts):
                if len(split) == 1:
                    continue
                wide = [j for j, v in enumerate(split) if v != 1]
                if len(wide) <= 1:  # unit dims around one: squeezed away
                    keep = wide[0] if wide else 0
                    for j in reversed(range(len(split))):
                        if j != keep:
                            y = self.squeeze(y, k + j)
                else:
                    y = b.flatten(y, k, k + len(split) - 1)
            return y
        if name == "slice":
            y, drop = x, op.get("drop")
            if drop >= 0:  # rank-reducing: index 1 of the inserted dim
                y = self.aten("select.int", [(y.name, y.type), (b.int(drop), INT), (b.int(1), INT)],
                              self.reshape_dims(y, "sel", [d for i, d in enumerate(y.dims) if i != drop]))
            for k, (o, s, e) in enumerate(zip(op.get("offsets"), op.get("strides"), op.get("extra"))):
                if (o, s, e) == (0, 1, 0):
                    continue
                dims = list(y.dims)
                dims[k] = tv("", out).dims[k]
                y = self.aten("slice.Tensor", [(y.name, y.type), (b.int(k), INT), (b.int(o), INT),
                                               (b.int(-e if e else INT64_MAX), INT), (b.int(s), INT)],
                              self.reshape_dims(y, "slice", dims))
            return y
        if name == "concat":
            lst = b.fresh("tensors")
            b.body.append(f"{lst} = torch.prim.ListConstruct {ins[0].name}, {ins[1].name} : "
                          f"({ins[0].type}, {ins[1].type}) -> !torch.list<vtensor>")
            return self.aten("cat", [(lst, "!torch.list<vtensor>"), (b.int(op.get("dim")), INT)], self.out("cat", out))
        if name == "broadcast":
            added = sorted(op.get("dims"))
            y = x
            for d in added:
                y = b.unsqueeze(y, d)
            sizes = [static_size(out.dims[i]) if i in added else -1 for i in range(out.rank)]
            return self.aten("broadcast_to", [(y.name, y.type), (b.int_list(sizes), LIST)], self.out("bcast", out))
        if name == "reverse":
            return self.aten("flip", [(x.name, x.type), (b.int_list([op.get("dim")]), LIST)], self.out("flip", out))
        if name == "dequantize":  # (q - zero_point) * scale: exact in the float type (|q - zp| <= 148)
            y = b.to_dtype(x, out.elt, "deq")
            y = self.scalar_op("sub.Scalar", y, b.int(op.get("zero_point")), INT, alpha=True)
            return self.scalar_op("mul.Scalar", y, b.float(op.get("scale")), "!torch.float")
        if name == "dequantize_affine":  # PT2E's, which 3.13 makes IREE's affine dequantize of
            y = self.out("deq", out)
            return self.quantized_decomposed("dequantize_per_tensor", x, op, [(b.none(), "!torch.none")], y)
        if name == "cast":
            return b.to_dtype(x, out.elt, "cast")
        raise ValueError(f"context: {name} has no torch form")

    def quantized_decomposed(self, kind: str, x: TV, op: ContextOp, tail: list[tuple[str, str]], out: TV) -> TV:
        """PT2E's per-tensor `quantized_decomposed.<kind>` of x: scale, zero point, the i8 range."""
        b = self.b
        operands = [(x.name, x.type), (b.float(op.get("scale")), "!torch.float"), (b.int(op.get("zero_point")), INT),
                    (b.int(-128), INT), (b.int(127), INT), (b.int(SCALAR_TYPE["i8"]), INT)] + tail
        return b.op(f"torch.quantized_decomposed.{kind}", operands, out)

    # ------------------------------------------------------------------ consumers

    def consume(self, op: ContextOp, x: TV, t: Ty, extras: list[TV], out: Ty) -> TV:
        b, name = self.b, op.op
        if name == "bias":  # the bias along `dim`, unsqueezed to broadcast over the dims after it
            c = extras[0]
            for _ in range(t.rank - 1 - op.get("dim")):
                c = b.unsqueeze(c, -1)
            return self.add(x, c, out)
        if name == "relu":
            return b.unary("torch.aten.relu", x, "relu")
        if name == "clamp":
            return self.clamp(x, op.get("lo"), min(op.get("hi"), 60000.0))
        if name == "multi_use":
            m = self.scalar_op("mul.Scalar", x, b.float(op.get("factor")), "!torch.float")
            return self.add(m, x, out)
        if name == "extract":  # x + x gathered at (size - 1 - i) along dim
            d = op.get("dim")
            size, dynamic = x.dims[d]
            last = self.int_op("sub.int", b.size(x, d), b.int(1)) if dynamic else b.int(size - 1)
            m1, none = b.int(-1), b.none()
            idx = TV(b.fresh("idx"), (x.dims[d],), "i64")
            self.aten("arange.start_step", [(last, INT), (m1, INT), (m1, INT), (b.int(SCALAR_TYPE["i64"]), INT),
                                            (none, "!torch.none"), (none, "!torch.none"), (none, "!torch.none")], idx)
            g = self.aten("index_select", [(x.name, x.type), (b.int(d), INT), (idx.name, idx.type)],
                          self.reshape_dims(x, "gather", x.dims))
            return self.add(x, g, out)
        if name == "cast_out":
            return b.to_dtype(x, out.elt, "cast")
        if name == "quantize":  # x * (1/scale) in x's type, round half to even, + zero point, saturated
            m = self.scalar_op("mul.Scalar", x, b.float(1.0 / op.get("scale")), "!torch.float")
            r = self.clamp(b.unary("torch.aten.round", m, "round"), -256.0, 256.0)
            z = self.clamp(self.scalar_op("add.Scalar", r, b.int(op.get("zero_point")), INT, alpha=True), -128.0, 127.0)
            return b.to_dtype(z, "i8", "q")
        if name == "quantize_affine":
            return self.quantized_decomposed("quantize_per_tensor", x, op, [], self.out("q", out))
        if name == "transpose_out":
            return self.permute(x, list(op.get("perm")), out)
        if name == "reshape":
            return self.flatten_groups(x, op.get("groups"))
        if name == "reduce":
            dims = b.int_list([op.get("dim")])
            if op.get("kind") == "sum":
                return self.aten("sum.dim_IntList", [(x.name, x.type), (dims, LIST), (b.bool(False), "!torch.bool"),
                                                     (b.none(), "!torch.none")], self.out("sum", out))
            return self.aten("amax", [(x.name, x.type), (dims, LIST), (b.bool(False), "!torch.bool")], self.out("amax", out))
        if name == "softmax":
            return self.aten("softmax.int", [(x.name, x.type), (b.int(op.get("dim")), INT), (b.none(), "!torch.none")],
                             self.out("softmax", out))
        raise ValueError(f"context: {name} has no torch form")


_VALUE = re.compile(r"%[\w$.\-]+")
_VTENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],(\w+)>")
_ELT = {v: k for k, v in TORCH_ELT.items()}


def _ty(text: str) -> Ty:
    m = _VTENSOR.fullmatch(text.strip())
    if m is None or m.group(2) not in _ELT:
        raise ValueError(f"context: the root's torch form has a type the chain cannot read: {text[:60]}")
    dims = tuple(None if d == "?" else int(d) for d in m.group(1).split(",")) if m.group(1) else ()
    return Ty(dims, _ELT[m.group(2)])


@dataclasses.dataclass(frozen=True)
class _Root:
    """The root's torch function (one `func.func @main`, as `TorchBuilder.render` writes it)."""

    args: tuple[tuple[str, Ty], ...]
    body: tuple[str, ...]
    results: tuple[tuple[str, Ty], ...]

    @staticmethod
    def parse(text: str) -> "_Root":
        lines = [line.strip() for line in text.strip().splitlines()]
        head = re.match(r"func\.func @main\((.*?)\) ->", lines[0])
        if head is None or lines[-1] != "}" or not lines[-2].startswith("return "):
            raise ValueError("context: the root's torch form is not one func.func @main")
        args = tuple((n, _ty(t)) for n, t in re.findall(r"(%[\w$.\-]+): (!torch\.vtensor<[^>]*>)", head.group(1)))
        names, types = lines[-2][len("return "):].split(" : ")
        types_ = [m.group(0) for m in _VTENSOR.finditer(types)]
        results = tuple((n, _ty(t)) for n, t in zip(names.split(", "), types_))
        return _Root(args, tuple(line for line in lines[1:-2] if line), results)

    def splice(self, b: TorchBuilder, operands: list[TV]) -> list[TV]:
        """The body into `b`'s: its arguments read `operands`, every other value renamed; its
        returned values."""
        rename = {a: v.name for (a, _), v in zip(self.args, operands)}

        def renamed(text: str) -> str:
            return _VALUE.sub(lambda m: rename.get(m.group(0), ROOT_PREFIX + m.group(0)[1:]), text)

        b.body += [renamed(line) for line in self.body]
        return [tv(renamed(n), t) for n, t in self.results]


def _conform(b: TorchBuilder, v: TV, t: Ty) -> TV:
    """`v` with type `t`: a `tensor_static_info_cast` where the aten ops' own result type is more
    or less static (as torch-mlir bridges them); ValueError where the element types differ."""
    want = tv(b.fresh("like"), t)
    if want.type == v.type:
        return v
    if want.elt != v.elt or want.rank != v.rank:
        raise ValueError(f"context: the chain's {v.type} does not meet the root's torch form's {want.type}")
    b.body.append(f"{want.name} = torch.tensor_static_info_cast {v.name} : {v.type} to {want.type}")
    return want


def chain_text(root_text: str, p: Plan) -> str:
    """The whole chain as one torch function around the root's torch form (ValueError: torch
    cannot write it exactly). The root's torch form may take or return another integer type
    than its linalg form (torch's i64 indices): an operand or result without ops keeps it."""
    why = refuse(p)
    if why:
        raise ValueError(why)
    root = _Root.parse(root_text)
    if len(root.args) != len(p.root_args) or len(root.results) != len(p.root_results):
        raise ValueError("context: the root's torch form has another signature than the chain's plan")
    entry_types = list(p.entry_args())
    k = 0
    for i, steps in enumerate(p.producers):  # an operand without producers: the root's own type
        if not steps:
            entry_types[k] = root.args[i][1]
        k += 1 + sum(len(sources) - 1 for _, sources, _ in steps)
    b = TorchBuilder()
    c = _Chain(b)
    entry = [tv(f"%arg{k}", t) for k, t in enumerate(entry_types)]
    operands, extras = p.through_producers(
        entry, lambda op, ins, _, out: _conform(b, c.produce(op, ins, out), out),
        finish=lambda i, value: _conform(b, value, root.args[i][1]))
    results = root.splice(b, operands)
    finals, x = [], 0
    for j, outward in enumerate(p.consumers):
        value = results[j]
        for op, t, out, more in outward:
            value = c.consume(op, _conform(b, value, t), t, extras[x:x + len(more)], out)
            value = _conform(b, value, out)
            x += len(more)
        finals.append(value)
    return b.render("main", entry, finals)
