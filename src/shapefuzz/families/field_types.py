"""JSON values against a params dataclass's annotations: `true` is not an integer, `3` is not a
list, and a list of 40 floats is not a tuple[int, ...]. Params read from a file (a case header, a
corpus entry) are checked with this before a family sees them, so a wrong type is the user's
error (exit 2), never a rendered module that fails (a finding)."""

from __future__ import annotations

import functools
import types
import typing
from typing import Any


@functools.cache
def field_hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # noqa: BLE001 - an annotation naming a type only imported for checkers: no check
        return {}


def conforms(value: Any, hint: Any) -> bool:
    """Whether a JSON value fits an annotation (int, bool, float, str, None, tuple[X, ...],
    tuple[X, Y], X | Y, Literal); anything else annotated is accepted as it comes."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return True
    if hint is type(None) or hint is None:
        return value is None
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if origin in (typing.Union, types.UnionType):
        return any(conforms(value, arm) for arm in args)
    if origin is typing.Literal:
        return value in args
    if origin is tuple:
        if not isinstance(value, (list, tuple)):
            return False
        if len(args) == 2 and args[1] is Ellipsis:
            return all(conforms(v, args[0]) for v in value)
        return len(value) == len(args) and all(conforms(v, a) for v, a in zip(value, args))
    return True


def check_fields(cls: type, data: dict[str, Any]) -> None:
    """Raises ValueError naming the first field whose value does not fit its annotation."""
    hints = field_hints(cls)
    for name, value in data.items():
        if name in hints and not conforms(value, hints[name]):
            shown = "true" if value is True else "false" if value is False else repr(value)
            if typing.get_origin(hints[name]) is typing.Literal:  # an enum-like param: name the choices
                raise ValueError(f"{name}: {shown[:40]} is not one of {', '.join(map(repr, typing.get_args(hints[name])))}")
            raise ValueError(f"{name}: {shown[:40]} does not fit {_spell(hints[name])}")


def _spell(hint: Any) -> str:
    return getattr(hint, "__name__", None) or str(hint).replace("typing.", "")
