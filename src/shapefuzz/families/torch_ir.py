"""Writes torch-dialect functions the way torch-mlir's importers leave them: `!torch.vtensor`
values, `torch.constant.*` scalars, `torch.prim.ListConstruct` lists, then `torch.aten.*` (or ONNX
`torch.operator "onnx.*"`) ops, one per line, laid out by `templates/torch_func.mlir.j2`.

Each value carries its sizes and which dims are `?`, so every op's result type is written the way
a frontend would: a dim is `?` when any dim it is computed from is. The function's boundary types
come from the linalg form of the same case (see `boundary`), so both spellings take and return the
same arrays; where the computed result type differs from the boundary one (more or less static),
`torch.tensor_static_info_cast` bridges them, as torch-mlir itself does.
"""

from __future__ import annotations

import builtins
import re
from dataclasses import dataclass
from typing import Sequence

from shapefuzz.iree.mlirinfo import parse_tensor_type, split_top_level
from shapefuzz.templates import render_template

# MLIR element type -> torch dtype name, and torch's ScalarType codes (c10/core/ScalarType.h).
TORCH_ELT = {"f32": "f32", "f16": "f16", "bf16": "bf16", "i64": "si64", "i32": "si32", "i8": "si8", "i1": "i1"}
SCALAR_TYPE = {"i8": 1, "i32": 3, "i64": 4, "f16": 5, "f32": 6, "i1": 11, "bf16": 15}
INT64_MAX = 9223372036854775807  # what exporters write for "to the end" in a slice


@dataclass(frozen=True)
class TV:
    """A `!torch.vtensor` value: SSA name, per-dim (size, dynamic), MLIR element type."""

    name: str
    dims: tuple[tuple[int, bool], ...]
    elt: str

    @property
    def type(self) -> str:
        return vtensor_type(self.dims, self.elt)

    @property
    def rank(self) -> int:
        return len(self.dims)

    def with_dims(self, name: str, dims: Sequence[tuple[int, bool]], elt: str | None = None) -> "TV":
        return TV(name, tuple(dims), elt or self.elt)


def si64s(values: Sequence[int]) -> str:
    """An ONNX integer-list attribute: `[1 : si64, 2 : si64]`."""
    return "[" + ", ".join(f"{int(v)} : si64" for v in values) + "]"


# What iree-import-onnx puts on the function; opset 18 has ScatterND's max/min reductions.
ONNX_META = ('torch.onnx_meta.ir_version = 8 : si64, torch.onnx_meta.opset_version = 18 : si64, '
             'torch.onnx_meta.producer_name = "pytorch", torch.onnx_meta.producer_version = "2.3.0"')


def vtensor_type(dims: Sequence[tuple[int, bool]], elt: str) -> str:
    return "!torch.vtensor<[" + ",".join("?" if d else str(s) for s, d in dims) + "]," + TORCH_ELT[elt] + ">"


@dataclass(frozen=True)
class Boundary:
    """A function's argument and result types, from the linalg form's signature."""

    args: tuple[tuple[tuple[int | None, ...], str], ...]  # (shape with None for ?, element type)
    results: tuple[tuple[tuple[int | None, ...], str], ...]


_SIGNATURE = re.compile(r"func\.func\s+(?:public\s+)?@[\w$.]+\s*\(")


def boundary(linalg_text: str) -> Boundary:
    """The entry function's tensor argument and result types, read from a linalg module."""
    m = _SIGNATURE.search(linalg_text)
    assert m, "no func.func in the linalg form"
    depth, i = 1, m.end()
    while depth:
        depth += {"(": 1, ")": -1}.get(linalg_text[i], 0)
        i += 1
    args_text = linalg_text[m.end() : i - 1]
    rest = linalg_text[i:].lstrip()
    assert rest.startswith("->"), "the linalg form returns nothing"
    rest = rest[2:].lstrip()
    if rest.startswith("("):
        depth, j = 1, 1
        while depth:
            depth += {"(": 1, ")": -1}.get(rest[j], 0)
            j += 1
        res_text = rest[1 : j - 1]
    else:
        res_text = rest.split("{")[0].split(" attributes")[0]

    def types(text: str) -> tuple[tuple[tuple[int | None, ...], str], ...]:
        out = []
        for piece in split_top_level(text):
            piece = piece.split(":", 1)[1] if ":" in piece and "%" in piece.split(":", 1)[0] else piece
            t = parse_tensor_type(piece.strip().split(" {")[0])
            out.append((tuple(t.shape), t.element))
        return tuple(out)

    return Boundary(types(args_text), types(res_text))


def dims_of(shape: Sequence[int | None], sizes: Sequence[int]) -> tuple[tuple[int, bool], ...]:
    """(size, dynamic) pairs for a boundary shape (None = `?`) and the sizes the case gives it."""
    return tuple((int(s), d is None) for s, d in zip(sizes, shape))


class TorchBuilder:
    """Collects constants and op lines; hands out fresh SSA names. (Its methods `int`, `str`, ...
    shadow the builtins in the class body, so later signatures spell them `builtins.int`.)"""

    def __init__(self) -> None:
        self.consts: list[str] = []
        self.body: list[str] = []
        self._names: dict[str, str] = {}
        self._count = 0

    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"%{stem}{self._count}"

    # ------------------------------------------------------------------ scalars and lists

    def _const(self, key: str, name: str, line: str) -> str:
        if key not in self._names:
            self._names[key] = name
            self.consts.append(f"{name} = {line}")
        return self._names[key]

    def int(self, v: int) -> str:
        return self._const(f"int:{v}", f"%int{v}" if v >= 0 else f"%int_m{-v}" if v > -100 else "%int_neg", f"torch.constant.int {v}")

    def bool(self, v: bool) -> str:
        return self._const(f"bool:{v}", "%true" if v else "%false", f"torch.constant.bool {'true' if v else 'false'}")

    def none(self) -> str:
        return self._const("none", "%none", "torch.constant.none")

    def float(self, v: float) -> str:
        name = "%float_" + repr(float(v)).replace("-", "m").replace(".", "_")
        text = repr(float(v))  # MLIR reads `1e-05` as an integer: a float literal needs its point
        text = text.replace("e", ".0e") if "e" in text and "." not in text else text
        return self._const(f"float:{v!r}", name, f"torch.constant.float {text}")

    def str(self, v: str) -> str:
        return self._const(f"str:{v}", f"%str_{v}", f'torch.constant.str "{v}"')

    def scalar(self, v: builtins.float, elt: builtins.str) -> builtins.str:
        """A scalar operand for an op on `elt` tensors (`torch.constant.float` or `.int`)."""
        return self.float(v) if elt.startswith("f") else self.int(int(v))

    def int_list(self, items: Sequence[builtins.int | builtins.str]) -> builtins.str:
        """A `!torch.list<int>`; an item is an int constant or an SSA `!torch.int` name."""
        names = [self.int(x) if isinstance(x, int) else x for x in items]
        name = self.fresh("list")
        types = ", ".join(["!torch.int"] * len(names))
        self.body.append(f"{name} = torch.prim.ListConstruct {', '.join(names)} : ({types}) -> !torch.list<int>")
        return name

    # ------------------------------------------------------------------ ops

    def op(self, op: builtins.str, operands: Sequence[tuple[builtins.str, builtins.str]], result: TV) -> TV:
        """`result = op operands : types -> result type` (one result)."""
        names = ", ".join(n for n, _ in operands)
        types = ", ".join(t for _, t in operands)
        self.body.append(f"{result.name} = {op} {names} : {types} -> {result.type}")
        return result

    def op2(self, op: builtins.str, operands: Sequence[tuple[builtins.str, builtins.str]], a: TV, b: TV) -> tuple[TV, TV]:
        names = ", ".join(n for n, _ in operands)
        types = ", ".join(t for _, t in operands)
        self.body.append(f"{a.name}, {b.name} = {op} {names} : {types} -> {a.type}, {b.type}")
        return a, b

    def onnx(self, op: builtins.str, operands: Sequence[TV], results: Sequence[TV],
             attrs: dict[builtins.str, builtins.str] | None = None) -> list[TV]:
        """`torch.operator "onnx.<op>"`, as `iree-import-onnx` leaves it (attributes `torch.onnx.*`)."""
        names = ", ".join(r.name for r in results)
        attr = ""
        if attrs:
            attr = " {" + ", ".join(f"torch.onnx.{k} = {v}" for k, v in sorted(attrs.items())) + "}"
        in_types = ", ".join(x.type for x in operands)
        out_types = ", ".join(r.type for r in results)
        if len(results) > 1:
            out_types = f"({out_types})"
        self.body.append(f'{names} = torch.operator "onnx.{op}"({", ".join(x.name for x in operands)}){attr} : '
                         f"({in_types}) -> {out_types}")
        return list(results)

    def onnx_const(self, values: Sequence[builtins.float], elt: builtins.str,
                   shape: Sequence[builtins.int] | None = None, stem: builtins.str = "c") -> TV:
        """An `onnx.Constant` tensor (shape [len(values)] unless given; [] for a scalar)."""
        shape = [len(values)] if shape is None else list(shape)
        lit = ", ".join(repr(float(v)) if elt.startswith("f") else str(int(v)) for v in values)
        lit = lit if not shape else f"[{lit}]"
        ttype = "tensor<" + "".join(f"{s}x" for s in shape) + TORCH_ELT[elt] + ">"
        out = TV(self.fresh(stem), tuple((s, False) for s in shape), elt)
        self.body.append(f'{out.name} = torch.operator "onnx.Constant"() {{torch.onnx.value = dense<{lit}> : {ttype}}} : '
                         f"() -> {out.type}")
        return out

    def size(self, x: TV, dim: builtins.int) -> builtins.str:
        """A `!torch.int` holding x's size along `dim` (a constant when static)."""
        size, dyn = x.dims[dim]
        if not dyn:
            return self.int(size)
        name = self.fresh("size")
        self.body.append(f"{name} = torch.aten.size.int {x.name}, {self.int(dim)} : {x.type}, !torch.int -> !torch.int")
        return name

    def permute(self, x: TV, perm: Sequence[builtins.int], stem: builtins.str = "perm") -> TV:
        """out dim i = x dim perm[i]; nothing when perm is the identity."""
        if list(perm) == list(range(x.rank)):
            return x
        lst = self.int_list(list(perm))
        out = x.with_dims(self.fresh(stem), [x.dims[i] for i in perm])
        return self.op("torch.aten.permute", [(x.name, x.type), (lst, "!torch.list<int>")], out)

    def flatten(self, x: TV, start: builtins.int, end: builtins.int, stem: builtins.str = "flat") -> TV:
        if end <= start:
            return x
        merged = x.dims[start : end + 1]
        size = 1
        for s, _ in merged:
            size *= s
        dims = list(x.dims[:start]) + [(size, any(d for _, d in merged))] + list(x.dims[end + 1 :])
        out = x.with_dims(self.fresh(stem), dims)
        return self.op("torch.aten.flatten.using_ints",
                       [(x.name, x.type), (self.int(start), "!torch.int"), (self.int(end), "!torch.int")], out)

    def unflatten(self, x: TV, dim: builtins.int, sizes: Sequence[builtins.int], stem: builtins.str = "unflat") -> TV:
        if len(sizes) == 1:
            return x
        lst = self.int_list(list(sizes))
        dims = list(x.dims[:dim]) + [(s, False) for s in sizes] + list(x.dims[dim + 1 :])
        out = x.with_dims(self.fresh(stem), dims)
        return self.op("torch.aten.unflatten.int",
                       [(x.name, x.type), (self.int(dim), "!torch.int"), (lst, "!torch.list<int>")], out)

    def unsqueeze(self, x: TV, dim: builtins.int, stem: builtins.str = "unsq") -> TV:
        pos = dim if dim >= 0 else x.rank + 1 + dim
        dims = list(x.dims)
        dims.insert(pos, (1, False))
        out = x.with_dims(self.fresh(stem), dims)
        return self.op("torch.aten.unsqueeze", [(x.name, x.type), (self.int(dim), "!torch.int")], out)

    def to_dtype(self, x: TV, elt: builtins.str, stem: builtins.str = "cast") -> TV:
        if elt == x.elt:
            return x
        out = x.with_dims(self.fresh(stem), x.dims, elt)
        f = self.bool(False)
        return self.op("torch.aten.to.dtype",
                       [(x.name, x.type), (self.int(SCALAR_TYPE[elt]), "!torch.int"), (f, "!torch.bool"),
                        (f, "!torch.bool"), (self.none(), "!torch.none")], out)

    def cast_to(self, x: TV, shape: Sequence[builtins.int | None], stem: builtins.str = "res") -> TV:
        """A static-info cast to the boundary shape (None = `?`) when the types differ."""
        dims = tuple((s, d is None) for (s, _), d in zip(x.dims, shape))
        if dims == x.dims:
            return x
        out = x.with_dims(self.fresh(stem), dims)
        self.body.append(f"{out.name} = torch.tensor_static_info_cast {x.name} : {x.type} to {out.type}")
        return out

    def unary(self, op: builtins.str, x: TV, stem: builtins.str) -> TV:
        return self.op(op, [(x.name, x.type)], x.with_dims(self.fresh(stem), x.dims))

    def render(self, name: builtins.str, args: Sequence[TV], results: Sequence[TV], attrs: builtins.str = "") -> builtins.str:
        return render_template(
            "torch_func.mlir.j2",
            func=name,
            args=[{"name": a.name, "type": a.type} for a in args],
            results=[{"name": r.name, "type": r.type} for r in results],
            consts=self.consts,
            body=self.body,
            attrs=attrs,
        )
