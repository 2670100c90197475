"""The draw of an op without a rule, from its schema alone: each input by its arity (a single one
always, an optional one now and then, trailing ones only, a variadic one 1-3 times), each type
parameter one of our dtypes the schema allows, the inputs elementwise-shaped (one shape, broadcast
by numpy rules), optional attributes at their defaults. A required attribute no schema default
covers makes the op undrawable without a rule. Whether the draw makes sense is ONNX's shape
inference's to say (`model.drawable`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.families.onnx_op import vocabulary as v
from shapefuzz.families.onnx_op.params import Params, x
from shapefuzz.families.onnx_op.schema import UNDRAWABLE, required_attrs, schema, type_choices

# Value ranges of ops whose inputs have a domain (a logarithm's positive argument), for any draw.
DOMAIN: dict[str, tuple] = {
    "Log": (0.25, 4), "Sqrt": (0, 4), "Reciprocal": (-4, 4, "nonzero"), "Acos": (-1, 1), "Asin": (-1, 1),
    "Atanh": (-0.75, 0.75), "Acosh": (1, 4), "Exp": (-4, 2), "Sinh": (-3, 3), "Cosh": (-3, 3), "Tan": (-1.25, 1.25),
}


def why_not(op: str) -> str:
    """"" when the generic draw can try the op, else why not."""
    if op in UNDRAWABLE:
        return UNDRAWABLE[op]
    required = required_attrs(op)
    if required:
        return f"required attribute(s) {', '.join(required)} and no rule for {op}"
    choices = type_choices(op)
    if any(not choices.get(f.type_str) for f in schema(op).inputs if f.option.name != "Optional"):
        return "an input has no element type that passes to iree-run-module"
    return ""


def draw_generic(draw: Any, op: str, regime: str = "small") -> Params:
    large = regime == "large"
    s = schema(op)
    choices = type_choices(op)
    types = {param: v.pick(draw, [t for t in v.FLOATS if t in allowed] or list(allowed))
             for param, allowed in choices.items() if allowed}
    formals = []
    for i, f in enumerate(s.inputs):
        kind = f.option.name
        if kind == "Optional":
            if f.type_str not in types or not draw(st.booleans()):
                break  # this one and the later ones left out
            formals.append(f)
        elif kind == "Variadic":
            formals += [f] * draw(st.integers(max(1, f.min_arity), 3))
        else:
            formals.append(f)
    full = v.shape(draw, draw(st.integers(0, 4)), large)
    shapes = v.broadcast(draw, full, len(formals)) if formals else []
    operands = []
    for f, dims in zip(formals, shapes):
        dtype = types[f.type_str]
        operands.append(x(dtype, dims, v.dyn(draw, len(dims)), DOMAIN.get(op, ()) if dtype in ("f32", "f16") else ()))
    outputs = sum(1 for f in s.outputs if f.option.name == "Single") or 1
    return Params(op, tuple(operands), (), outputs, big=large)
