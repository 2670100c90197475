"""Writes StableHLO functions the way JAX's exporter leaves them (`stablehlo.*` ops on `tensor<>`
values, one per line, in the printed form `iree-opt` round-trips), for the families' StableHLO
spellings, compiled with `--iree-input-type=stablehlo`.

Each value carries its sizes and which dims are `?`, as `torch_ir.TV` does. A `?` dim in StableHLO
needs shape ops where an op takes a shape: `stablehlo.get_dimension_size` of a value that has the
dim, `reshape` + `concatenate` into a `tensor<Nxi32>` shape, and then `dynamic_broadcast_in_dim`,
`dynamic_reshape`, `dynamic_iota` in place of their static forms (`shape`, `broadcast`,
`reshape`, `iota` choose). A `dynamic_broadcast_in_dim` says which operand dims keep their size
(`known_nonexpanding_dimensions`): 3.13 lowers one with a `?` operand dim only then. 3.13 lowers no
`dynamic_reshape` at all, so the spellings reshape static values only. The function's boundary types are the linalg form's (`Boundary`); a
result whose computed type is more or less static than the boundary's is bridged by a
`stablehlo.convert` to the same element type (compatible shapes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from shapefuzz.families.torch_ir import Boundary, dims_of

Dims = tuple[tuple[int, bool], ...]
# A dim of a shape to build: a static size, a dynamic dim of a value (value, axis), or an SSA
# tensor<i32> scalar holding a computed size (name, static size it stands for).
DimSource = int | tuple["HV", int] | tuple[str, int]
FLOAT_ELTS = ("f32", "f16", "bf16", "f64")


@dataclass(frozen=True)
class HV:
    """A StableHLO tensor value: SSA name, per-dim (size, dynamic), MLIR element type."""

    name: str
    dims: Dims
    elt: str

    @property
    def type(self) -> str:
        return tensor_type(self.dims, self.elt)

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def sizes(self) -> list[int]:
        return [s for s, _ in self.dims]


def tensor_type(dims: Sequence[tuple[int, bool]], elt: str) -> str:
    return "tensor<" + "".join(("?" if d else str(s)) + "x" for s, d in dims) + elt + ">"


def scalar_type(elt: str) -> str:
    return f"tensor<{elt}>"


def is_float(elt: str) -> bool:
    return elt in FLOAT_ELTS


def literal(value: float | int, elt: str) -> str:
    """A `dense<>` element: `1.0`, `-3`, `true`."""
    if elt == "i1":
        return "true" if value else "false"
    if is_float(elt):
        text = repr(float(value))
        return {"inf": "0x7F800000", "-inf": "0xFF800000"}.get(text, text) if elt == "f32" else \
            {"inf": "0x7C00", "-inf": "0xFC00"}.get(text, text) if elt == "f16" else text
    return str(int(value))


class HloBuilder:
    """Collects op lines; hands out fresh SSA names and builds shape tensors for `?` dims."""

    def __init__(self, first_name: int = 0) -> None:
        """`first_name`: where the SSA name counter starts (a region's builder starts apart from
        the function's, so their names never meet)."""
        self.body: list[str] = []
        self._count = first_name
        self._consts: dict[tuple[str, str], HV] = {}
        self._sizes: dict[tuple[str, int], str] = {}

    def fresh(self, stem: str) -> str:
        self._count += 1
        return f"%{stem}{self._count}"

    def line(self, text: str) -> None:
        self.body.append(text)

    def value(self, stem: str, dims: Sequence[tuple[int, bool]], elt: str) -> HV:
        return HV(self.fresh(stem), tuple(dims), elt)

    # ------------------------------------------------------------------ constants and shapes

    def const(self, value: float | int, elt: str) -> HV:
        """A scalar `tensor<elt>` constant (one per value and type)."""
        key = (literal(value, elt), elt)
        if key not in self._consts:
            out = self.value("cst", (), elt)
            self.line(f"{out.name} = stablehlo.constant dense<{key[0]}> : {scalar_type(elt)}")
            self._consts[key] = out
        return self._consts[key]

    def dense(self, values: Sequence[float | int], elt: str, shape: Sequence[int]) -> HV:
        """A constant tensor of `shape` (values in row-major order)."""
        out = self.value("lit", tuple((s, False) for s in shape), elt)
        items = ", ".join(literal(v, elt) for v in values)
        text = items if not shape else _nest(items.split(", "), list(shape))
        self.line(f"{out.name} = stablehlo.constant dense<{text}> : {out.type}")
        return out

    def size(self, x: HV, axis: int) -> str:
        """A `tensor<i32>` holding x's size along `axis` (`get_dimension_size`, once per value and dim)."""
        key = (x.name, axis)
        if key not in self._sizes:
            name = self.fresh("dim")
            self.line(f"{name} = stablehlo.get_dimension_size {x.name}, dim = {axis} : ({x.type}) -> tensor<i32>")
            self._sizes[key] = name
        return self._sizes[key]

    def size_product(self, parts: Sequence[DimSource]) -> DimSource:
        """The product of several dims (a merged dim's size): static, or a `tensor<i32>` scalar."""
        static = 1
        for part in parts:
            static *= part if isinstance(part, int) else part[1] if isinstance(part[0], str) else part[0].dims[part[1]][0]
        if all(isinstance(p, int) or (isinstance(p[0], HV) and not p[0].dims[p[1]][1]) for p in parts):
            return static
        acc: str | None = None
        for part in parts:
            name = self._scalar_size(part)
            if acc is None:
                acc = name
            else:
                out = self.fresh("prod")
                self.line(f"{out} = stablehlo.multiply {acc}, {name} : tensor<i32>")
                acc = out
        assert acc is not None
        return (acc, static)

    def _scalar_size(self, part: DimSource) -> str:
        if isinstance(part, int):
            return self.const(part, "i32").name
        if isinstance(part[0], str):
            return part[0]
        x, axis = part
        return self.const(x.dims[axis][0], "i32").name if not x.dims[axis][1] else self.size(x, axis)

    @staticmethod
    def dim_of(part: DimSource) -> tuple[int, bool]:
        if isinstance(part, int):
            return (part, False)
        if isinstance(part[0], str):
            return (part[1], True)
        x, axis = part
        return x.dims[axis]

    def shape(self, parts: Sequence[DimSource]) -> str:
        """A `tensor<Nxi32>` shape operand for the dims (the dynamic ops take one)."""
        pieces = []
        for part in parts:
            scalar = self._scalar_size(part)
            one = self.fresh("sz")
            self.line(f"{one} = stablehlo.reshape {scalar} : (tensor<i32>) -> tensor<1xi32>")
            pieces.append(one)
        if len(pieces) == 1:
            return pieces[0]
        out = self.fresh("shape")
        types = ", ".join(["tensor<1xi32>"] * len(pieces))
        self.line(f"{out} = stablehlo.concatenate {', '.join(pieces)}, dim = 0 : ({types}) -> tensor<{len(pieces)}xi32>")
        return out

    # ------------------------------------------------------------------ shape-taking ops

    def broadcast(self, x: HV, parts: Sequence[DimSource], dims: Sequence[int], stem: str = "bc") -> HV:
        """x broadcast to the shape `parts`, x's dim i going to result dim dims[i]."""
        out = self.value(stem, [self.dim_of(p) for p in parts], x.elt)
        attr = "dims = [" + ", ".join(map(str, dims)) + "]"
        if not any(d for _, d in out.dims):
            self.line(f"{out.name} = stablehlo.broadcast_in_dim {x.name}, {attr} : ({x.type}) -> {out.type}")
            return out
        shape = self.shape(parts)
        # which operand dims keep their size (3.13 lowers a `?` operand dim only when told it does)
        same = [i for i, d in enumerate(dims) if x.dims[i][0] == out.dims[d][0]]
        grow = [i for i in range(x.rank) if i not in same]
        known = (f" {{known_expanding_dimensions = array<i64{_ints(grow)}>, "
                 f"known_nonexpanding_dimensions = array<i64{_ints(same)}>}}") if x.rank else ""
        self.line(f"{out.name} = stablehlo.dynamic_broadcast_in_dim {x.name}, {shape}, {attr}{known} : "
                  f"({x.type}, tensor<{len(parts)}xi32>) -> {out.type}")
        return out

    def splat(self, value: float | int, like: HV, elt: str | None = None) -> HV:
        """A constant broadcast to `like`'s shape (its dynamic dims read from it)."""
        return self.spread(self.const(value, elt or like.elt), like)

    def spread(self, scalar: HV, like: HV) -> HV:
        """A scalar (`tensor<elt>`) value broadcast to `like`'s shape."""
        parts: list[DimSource] = [(like, i) for i in range(like.rank)]
        return self.broadcast(scalar, parts, [], "splat")

    def reshape(self, x: HV, parts: Sequence[DimSource], stem: str = "rs") -> HV:
        out = self.value(stem, [self.dim_of(p) for p in parts], x.elt)
        if not any(d for _, d in x.dims) and not any(d for _, d in out.dims):
            self.line(f"{out.name} = stablehlo.reshape {x.name} : ({x.type}) -> {out.type}")
            return out
        shape = self.shape(parts)
        self.line(f"{out.name} = stablehlo.dynamic_reshape {x.name}, {shape} : ({x.type}, tensor<{len(parts)}xi32>) -> "
                  f"{out.type}")
        return out

    def iota(self, parts: Sequence[DimSource], axis: int, elt: str, stem: str = "iota") -> HV:
        out = self.value(stem, [self.dim_of(p) for p in parts], elt)
        if not any(d for _, d in out.dims):
            self.line(f"{out.name} = stablehlo.iota dim = {axis} : {out.type}")
            return out
        shape = self.shape(parts)
        self.line(f"{out.name} = stablehlo.dynamic_iota {shape}, dim = {axis} : (tensor<{len(parts)}xi32>) -> {out.type}")
        return out

    # ------------------------------------------------------------------ element-wise and layout

    def binary(self, op: str, a: HV, b: HV, stem: str = "v") -> HV:
        out = self.value(stem, _joined(a.dims, b.dims), a.elt)
        self.line(f"{out.name} = stablehlo.{op} {a.name}, {b.name} : {out.type}" if a.type == b.type == out.type else
                  f"{out.name} = stablehlo.{op} {a.name}, {b.name} : ({a.type}, {b.type}) -> {out.type}")
        return out

    def unary(self, op: str, x: HV, stem: str = "u") -> HV:
        out = self.value(stem, x.dims, x.elt)
        self.line(f"{out.name} = stablehlo.{op} {x.name} : {out.type}")
        return out

    def convert(self, x: HV, elt: str, stem: str = "cv") -> HV:
        if elt == x.elt:
            return x
        out = self.value(stem, x.dims, elt)
        self.line(f"{out.name} = stablehlo.convert {x.name} : ({x.type}) -> {out.type}")
        return out

    def bitcast(self, x: HV, elt: str, stem: str = "bits") -> HV:
        out = self.value(stem, x.dims, elt)
        self.line(f"{out.name} = stablehlo.bitcast_convert {x.name} : ({x.type}) -> {out.type}")
        return out

    def compare(self, direction: str, a: HV, b: HV, kind: str | None = None, stem: str = "cmp") -> HV:
        kind = kind or ("FLOAT" if is_float(a.elt) else "UNSIGNED" if a.elt.startswith("ui") else "SIGNED")
        out = self.value(stem, _joined(a.dims, b.dims), "i1")
        self.line(f"{out.name} = stablehlo.compare {direction}, {a.name}, {b.name}, {kind} : ({a.type}, {b.type}) -> "
                  f"{out.type}")
        return out

    def select(self, pred: HV, a: HV, b: HV, stem: str = "sel") -> HV:
        out = self.value(stem, _joined(a.dims, b.dims), a.elt)
        self.line(f"{out.name} = stablehlo.select {pred.name}, {a.name}, {b.name} : {pred.type}, {out.type}")
        return out

    def transpose(self, x: HV, perm: Sequence[int], stem: str = "tr") -> HV:
        """out dim i = x dim perm[i]; nothing for the identity."""
        if list(perm) == list(range(x.rank)):
            return x
        out = self.value(stem, [x.dims[i] for i in perm], x.elt)
        self.line(f"{out.name} = stablehlo.transpose {x.name}, dims = [{', '.join(map(str, perm))}] : ({x.type}) -> {out.type}")
        return out

    def pad(self, x: HV, value: HV, low: Sequence[int], high: Sequence[int], stem: str = "pad") -> HV:
        dims = [(s + lo + hi, d) for (s, d), lo, hi in zip(x.dims, low, high)]
        out = self.value(stem, dims, x.elt)
        lists = [", ".join(map(str, v)) for v in (low, high, [0] * x.rank)]
        self.line(f"{out.name} = stablehlo.pad {x.name}, {value.name}, low = [{lists[0]}], high = [{lists[1]}], "
                  f"interior = [{lists[2]}] : ({x.type}, {value.type}) -> {out.type}")
        return out

    def bridge(self, x: HV, shape: Sequence[int | None]) -> HV:
        """x typed with the boundary's shape (None = `?`): a same-type `convert` when they differ."""
        dims = tuple((s, d is None) for (s, _), d in zip(x.dims, shape))
        if dims == x.dims:
            return x
        out = HV(self.fresh("res"), dims, x.elt)
        self.line(f"{out.name} = stablehlo.convert {x.name} : ({x.type}) -> {out.type}")
        return out

    # ------------------------------------------------------------------ the function

    def render(self, args: Sequence[HV], results: Sequence[HV], name: str = "main") -> str:
        sig = ", ".join(f"{a.name}: {a.type}" for a in args)
        res = ", ".join(r.type for r in results)
        lines = [f"func.func @{name}({sig}) -> ({res}) {{"]
        lines += ["  " + line for text in self.body for line in text.splitlines()]
        lines.append(f"  return {', '.join(r.name for r in results)} : {res}")
        lines.append("}")
        return "\n".join(lines) + "\n"


def int_list(values: Sequence[int]) -> str:
    """A dimension-numbers list as StableHLO writes it: `[0, 2]`."""
    return "[" + ", ".join(map(str, values)) + "]"


def _ints(values: Sequence[int]) -> str:
    return (": " + ", ".join(map(str, values))) if values else ""


def _joined(a: Dims, b: Dims) -> Dims:
    """Two same-shaped operands' dims: static where either is (their sizes agree)."""
    if len(a) != len(b):  # a scalar with a tensor (select's predicate): the tensor's
        return a if len(a) > len(b) else b
    return tuple((s, da and db) for (s, da), (_, db) in zip(a, b))


def _nest(items: list[str], shape: list[int]) -> str:
    if len(shape) == 1:
        return "[" + ", ".join(items) + "]"
    step = len(items) // shape[0]
    return "[" + ", ".join(_nest(items[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])) + "]"


def boundary_values(bnd: Boundary, sizes: Sequence[Sequence[int]], names: Sequence[str]) -> list[HV]:
    """The function's arguments: the boundary's types with the sizes the case gives them."""
    return [HV(n, dims_of(shape, sz), elt) for n, (shape, elt), sz in zip(names, bnd.args, sizes)]


def region(args: Sequence[tuple[str, str]], body: Sequence[str], results: Sequence[tuple[str, str]]) -> str:
    """A region `({ ^bb0(args): body; stablehlo.return results })` for sort, scatter and the like."""
    head = ", ".join(f"{n}: {t}" for n, t in args)
    lines = [f"  ^bb0({head}):"] + [f"    {line}" for line in body]
    lines.append(f"    stablehlo.return {', '.join(n for n, _ in results)} : {', '.join(t for _, t in results)}")
    return "({\n" + "\n".join(lines) + "\n})"


__all__ = ["HV", "HloBuilder", "DimSource", "boundary_values", "int_list", "literal", "region", "scalar_type", "tensor_type"]
