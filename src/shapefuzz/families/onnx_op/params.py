"""The onnx_op family's parameters: one ONNX operator of the default domain, its operands and
attributes, as JSON a case header carries.

An operand is a 5-tuple `(kind, dtype, shape, dyn, data)`:
- `("x", dtype, shape, dyn, data)`: a graph input; `dyn[i]` makes dim i a symbolic `dim_param`;
  `data` is `()` (the dtype's vocabulary: quarters in [-4, 4] for floats, small integers) or
  `(lo, hi)` (values in that range; a float range draws quarters), `(lo, hi, "nonzero")` leaves 0 out;
- `("const", dtype, shape, (), values)`: a `Constant` node holding `values` (flat, row-major):
  what frontends write for shape-like operands (Slice's starts, Reshape's shape, Resize's scales);
- `("none", "", (), (), ())`: an optional input left out (an empty name in the node).

An attribute is `(name, value)`; its ONNX type comes from the op's schema (`schema.attr_type`),
so `1` for a FLOAT attribute is 1.0 and `[]` for INTS is an empty list of integers."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from shapefuzz.families.base import FamilyParams

ONNX = "onnx"  # every case of the family is an ONNX model: its `frontend`

# Our element types, by the names the case header uses, and ONNX's (TensorProto) and NumPy's.
ONNX_TYPE = {"f32": 1, "u8": 2, "i8": 3, "i32": 6, "i64": 7, "i1": 9, "f16": 10}
NUMPY_TYPE = {"f32": "float32", "u8": "uint8", "i8": "int8", "i32": "int32", "i64": "int64", "i1": "bool",
              "f16": "float16"}
FROM_SCHEMA = {"tensor(float)": "f32", "tensor(float16)": "f16", "tensor(int32)": "i32", "tensor(int64)": "i64",
               "tensor(int8)": "i8", "tensor(uint8)": "u8", "tensor(bool)": "i1"}
KINDS = ("x", "const", "none")
_BYTES = {"f32": 4, "u8": 1, "i8": 1, "i32": 4, "i64": 8, "i1": 1, "f16": 2}


def _count(shape: Any) -> int:
    n = 1
    for s in shape:
        n *= s
    return n
NONE = ("none", "", (), (), ())


@dataclass(frozen=True)
class Params(FamilyParams):
    op: str
    operands: tuple[tuple[Any, ...], ...]
    attrs: tuple[tuple[Any, ...], ...] = ()
    outputs: int = 1  # the node's outputs, every one a graph output
    big: bool = False
    frontend: str = field(default=ONNX, kw_only=True)  # the family's only spelling

    @property
    def dtype(self) -> str:
        """The element type of the largest graph input (as the families name theirs; u8 and i1
        as i8, their size): what the size regimes measure."""
        ins = [o for o in self.operands if o[0] == "x"]
        if not ins:
            return "f32"
        biggest = max(ins, key=lambda o: _count(o[2]) * _BYTES[o[1]])
        return {"u8": "i8", "i1": "i8"}.get(biggest[1], biggest[1])

    def attr(self, name: str, default: Any = None) -> Any:
        return next((v for k, v in self.attrs if k == name), default)

    def with_attr(self, name: str, value: Any) -> "Params":
        kept = tuple((k, v) for k, v in self.attrs if k != name)
        return self.replace(attrs=tuple(sorted(kept + ((name, value),))))

    def without_attr(self, name: str) -> "Params":
        return self.replace(attrs=tuple((k, v) for k, v in self.attrs if k != name))


def x(dtype: str, shape: Any, dyn: Any = None, data: tuple = ()) -> tuple:
    shape = tuple(int(s) for s in shape)
    return ("x", dtype, shape, tuple(bool(d) for d in (dyn or [False] * len(shape))), tuple(data))


def const(dtype: str, values: Any, shape: Any = None) -> tuple:
    values = tuple(values)
    return ("const", dtype, (len(values),) if shape is None else tuple(int(s) for s in shape), (), values)


def scalar(dtype: str, value: Any) -> tuple:
    """A rank-0 constant (CumSum's axis, Range's start, Trilu's k)."""
    return ("const", dtype, (), (), (value,))


def pin_broadcast_ones(operands: tuple) -> tuple:
    """The operands with every input dim that is 1 where another input's (trailing-aligned) dim is
    larger made static: torch-mlir assumes a `?` dim never broadcasts (a `?` that is 1 at run time
    fails its shape assertion, "tensor shape dimension 0 mismatch; expected 4 but have 1"), a
    documented limit of the frontend, not a finding. Making a dim static loses nothing else."""
    ins = [o for o in operands if o[0] == "x"]
    rank = max((len(o[2]) for o in ins), default=0)
    largest = [max((o[2][len(o[2]) - rank + i] for o in ins if len(o[2]) - rank + i >= 0), default=1)
               for i in range(rank)]
    out = []
    for o in operands:
        if o[0] == "x":
            off = rank - len(o[2])
            dyn = tuple(d and not (s == 1 and largest[off + i] > 1) for i, (s, d) in enumerate(zip(o[2], o[3])))
            o = (o[0], o[1], o[2], dyn, o[4])
        out.append(o)
    return tuple(out)


def runtime(p: Params) -> list[tuple]:
    """The operands that are graph inputs, in order: the function's arguments."""
    return [o for o in p.operands if o[0] == "x"]


def check_operand(o: Any) -> str:
    """"" when `o` is a well-formed operand, else what is wrong (for is_valid and bad params)."""
    if not isinstance(o, tuple) or len(o) != 5 or o[0] not in KINDS:
        return f"an operand is a list [kind, dtype, shape, dyn, data] with kind one of {', '.join(KINDS)}"
    kind, dtype, shape, dyn, data = o
    if kind == "none":
        return "" if o == NONE else "a left-out operand is [\"none\", \"\", [], [], []]"
    if dtype not in ONNX_TYPE:
        return f"operand dtype {dtype!r} is not one of {', '.join(ONNX_TYPE)}"
    if not isinstance(shape, tuple) or not all(isinstance(s, int) and not isinstance(s, bool) and s >= 0 for s in shape):
        return "an operand's shape is a list of sizes >= 0"
    if kind == "x" and (len(dyn) != len(shape) or not all(isinstance(d, bool) for d in dyn)):
        return "an input's dyn flags are one boolean per dim"
    if kind == "x" and data and not (len(data) in (2, 3) and all(isinstance(v, (int, float)) for v in data[:2])
                                     and data[0] <= data[1] and data[2:] in ((), ("nonzero",))):
        return "an input's data is [] or [lo, hi] or [lo, hi, \"nonzero\"]"
    if kind == "const":
        n = _count(shape)
        if len(data) != n:
            return f"a constant of shape {list(shape)} holds {n} values, not {len(data)}"
    return ""
