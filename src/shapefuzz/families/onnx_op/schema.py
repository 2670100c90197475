"""What ONNX's own operator schemas (`onnx.defs`) say about an op of the default domain at the
opset our models record (`iree.onnx_import.OPSET`): which ops there are, each input's arity and
element types, each attribute's type and default. What a schema cannot say (valid ranks,
attribute value ranges) is the per-op rules' (`rules.py`); an op with none is drawn from its
schema alone (`generic.py`), and ONNX's shape inference decides what that draw means."""

from __future__ import annotations

import functools
from typing import Any

from shapefuzz.families.onnx_op.params import FROM_SCHEMA

# Ops whose cases no reference can judge, or that are no tensor function: why, by op.
UNDRAWABLE = {
    **{op: "takes a graph attribute (control flow)" for op in ("If", "Loop", "Scan", "SequenceMap")},
    **{op: "sequence or optional values, not tensors" for op in (
        "ConcatFromSequence", "Optional", "OptionalGetElement", "OptionalHasElement", "SequenceAt",
        "SequenceConstruct", "SequenceEmpty", "SequenceErase", "SequenceInsert", "SequenceLength",
        "SplitToSequence")},
    **{op: "draws random numbers: no reference computes the same values" for op in (
        "Bernoulli", "Multinomial", "RandomNormal", "RandomNormalLike", "RandomUniform", "RandomUniformLike")},
    "StringNormalizer": "string tensors do not pass to iree-run-module",
}


@functools.cache
def default_ops() -> tuple[str, ...]:
    """Every non-deprecated op of the default domain at our opset, sorted."""
    import onnx.defs

    from shapefuzz.iree.onnx_import import OPSET

    names = sorted({s.name for s in onnx.defs.get_all_schemas_with_history() if s.domain == ""})
    ops = []
    for name in names:
        try:
            if not onnx.defs.get_schema(name, OPSET, "").deprecated:
                ops.append(name)
        except onnx.defs.SchemaError:  # introduced after our opset
            continue
    return tuple(ops)


@functools.cache
def schema(op: str) -> Any:
    import onnx.defs

    from shapefuzz.iree.onnx_import import OPSET

    return onnx.defs.get_schema(op, OPSET, "")


def attr_type(op: str, name: str) -> Any:
    """The attribute's `onnx.AttributeProto.AttributeType`; KeyError for one the op does not have."""
    return schema(op).attributes[name].type


def type_choices(op: str) -> dict[str, tuple[str, ...]]:
    """Each type parameter (`T`, `T1`, ...) and a plain `tensor(x)` type string -> our dtypes it allows."""
    out: dict[str, tuple[str, ...]] = {}
    s = schema(op)
    for c in s.type_constraints:
        out[c.type_param_str] = tuple(FROM_SCHEMA[t] for t in c.allowed_type_strs if t in FROM_SCHEMA)
    for formal in list(s.inputs) + list(s.outputs):
        if formal.type_str not in out:
            out[formal.type_str] = (FROM_SCHEMA[formal.type_str],) if formal.type_str in FROM_SCHEMA else ()
    return out


def required_attrs(op: str) -> tuple[str, ...]:
    return tuple(sorted(name for name, a in schema(op).attributes.items() if a.required))


def make_attribute(op: str, name: str, value: Any) -> Any:
    """The AttributeProto of (name, value) with the schema's type (ValueError for a bad one)."""
    import onnx
    from onnx import helper

    try:
        kind = attr_type(op, name)
    except KeyError:
        raise ValueError(f"{op} has no attribute {name!r} (it has {', '.join(sorted(schema(op).attributes)) or 'none'})") from None
    T = onnx.AttributeProto
    cast = {T.FLOAT: float, T.INT: int, T.STRING: str}
    many = {T.FLOATS: float, T.INTS: int, T.STRINGS: str}
    try:
        if kind in cast:
            if isinstance(value, (list, tuple)) or (kind != T.STRING and isinstance(value, str)):
                raise TypeError
            return helper.make_attribute(name, cast[kind](value), attr_type=kind)
        if kind in many:
            if not isinstance(value, (list, tuple)) or (kind != T.STRINGS and any(isinstance(v, str) for v in value)):
                raise TypeError
            return helper.make_attribute(name, [many[kind](v) for v in value], attr_type=kind)
    except (TypeError, ValueError):
        raise ValueError(f"{op} attribute {name!r} takes {T.AttributeType.Name(kind).lower()}, not {value!r}") from None
    raise ValueError(f"{op} attribute {name!r} is a {T.AttributeType.Name(kind).lower()}: not drawn")
