"""What the per-op rules share: the registry (`RULES`, filled by `@rule`) and small helpers."""

from __future__ import annotations

import functools
from typing import Any, Callable

from hypothesis import strategies as st

from shapefuzz.families.onnx_op import vocabulary as v
from shapefuzz.families.onnx_op.params import Params, x
from shapefuzz.families.onnx_op.schema import type_choices

Rule = Callable[[Any, bool], Params]
RULES: dict[str, Rule] = {}
INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)


def _drawn_as(fn: Callable[..., Params], op: str, draw: Any, large: bool) -> Params:
    return fn(draw, op, large)


def rule(*ops: str) -> Callable[[Callable[..., Params]], Callable[..., Params]]:
    def register(fn: Callable[..., Params]) -> Callable[..., Params]:
        for op in ops:
            RULES[op] = functools.partial(_drawn_as, fn, op)
        return fn
    return register


def attrs_of(**kw: Any) -> tuple:
    return tuple(sorted((k, val) for k, val in kw.items() if val is not None))


def maybe(draw: Any, value: Any) -> Any:
    """`value`, or None (the attribute left at its default) half the time."""
    return value if draw(st.booleans()) else None


def graph_input(draw: Any, dtype: str, dims: list[int], data: tuple = ()) -> tuple:
    return x(dtype, dims, v.dyn(draw, len(dims)), data)


def elem_type(draw: Any, op: str, param: str = "T", floats_only: bool = False) -> str:
    allowed = type_choices(op)[param]
    if floats_only:
        allowed = tuple(t for t in allowed if t in ("f32", "f16")) or allowed
    return v.float_type(draw, allowed) if draw(st.integers(0, 3)) else v.pick(draw, allowed)


