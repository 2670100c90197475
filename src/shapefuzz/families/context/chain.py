"""The chain around a family's root op, as a case header carries it.

In the params object of a case header, `"context"` is a list of ops (absent when empty, so a
context-free case keeps the header it always had):

    "context": [{"op": "pad", "operand": 0, "lo": [0, 1], "hi": [1, 0], "value": 0.5},
                {"op": "transpose", "operand": 0, "perm": [1, 0]},
                {"op": "relu", "result": 0}]

Each op is an object with `"op"` (a name in `ops.OPS`), exactly one of `"operand": i` (a
producer: it makes the root's operand i) or `"result": j` (a consumer: it reads the root's
result j), and its own attributes (the op's `ATTRS`, all required). Order is data-flow order:
the producers of one operand are listed from the entry argument inwards (the last one writes
the root's operand), the consumers of one result from the root outwards (the last one's value
is returned). Producers and consumers of different operands/results may be interleaved; only
the order within one operand or result matters, and `canonical` sorts the rest away.

The entry function keeps the family's name and conventions (`@main`); its arguments are, for
each root operand in order, the arguments its producer chain reads (two for `concat`, else
one; the operand itself when it has no producer), then each consumer's extra arguments
(`bias`) in chain order. Its results are the root's results, each through its consumers."""

from __future__ import annotations

import dataclasses
from typing import Any, Iterable, Mapping, TypeGuard

from shapefuzz.case import freeze as _freeze, thaw as _thaw

KEY = "context"
MAX_PER_SIDE = 4  # at most this many producers, and this many consumers, in one chain


@dataclasses.dataclass(frozen=True)
class ContextOp:
    """One op of the chain: a producer of operand `operand`, or a consumer of result `result`."""

    op: str
    operand: int | None = None
    result: int | None = None
    attrs: tuple[tuple[str, Any], ...] = ()  # sorted (name, frozen value) pairs

    @property
    def is_producer(self) -> bool:
        return self.operand is not None

    @property
    def slot(self) -> int:
        """The root operand (producer) or result (consumer) this op sits on."""
        slot = self.operand if self.operand is not None else self.result
        assert slot is not None  # every op sits on an operand or a result (`make`, `from_json`)
        return slot

    def get(self, name: str) -> Any:
        return dict(self.attrs)[name]

    def with_attrs(self, **changes: Any) -> "ContextOp":
        merged = dict(self.attrs) | {k: _freeze(v) for k, v in changes.items()}
        return dataclasses.replace(self, attrs=tuple(sorted(merged.items())))

    @staticmethod
    def make(op: str, *, operand: int | None = None, result: int | None = None, **attrs: Any) -> "ContextOp":
        return ContextOp(op, operand, result, tuple(sorted((k, _freeze(v)) for k, v in attrs.items())))

    def to_json(self) -> dict[str, Any]:
        where = {"operand": self.operand} if self.is_producer else {"result": self.result}
        return {"op": self.op, **where, **{k: _thaw(v) for k, v in self.attrs}}

    @staticmethod
    def from_json(data: Any, OPS: Mapping[str, Any]) -> "ContextOp":
        """Raises ValueError naming what is wrong (a user's header: one line, exit 2). `OPS`:
        each op's spec by name (`ops.OPS`: whether it is a producer, its attributes' kinds)."""
        if isinstance(data, ContextOp):
            return data
        if not isinstance(data, Mapping):
            raise ValueError(f"context: each op must be a JSON object, got {type(data).__name__}")
        name = data.get("op")
        if not isinstance(name, str) or name not in OPS:
            raise ValueError(f"context: unknown op {str(name)[:40]!r}; choose from {', '.join(sorted(OPS))}")
        spec = OPS[name]
        where = "operand" if spec.producer else "result"
        other = "result" if spec.producer else "operand"
        slot = data.get(where)
        if not _is_int(slot) or not 0 <= slot < 64:
            raise ValueError(f"context: {name} needs \"{where}\": a root {where} number")
        if other in data:
            raise ValueError(f"context: {name} is a {'producer' if spec.producer else 'consumer'}; it takes no \"{other}\"")
        attrs = {k: v for k, v in data.items() if k not in ("op", where)}
        unknown, missing = sorted(set(attrs) - set(spec.attrs)), sorted(set(spec.attrs) - set(attrs))
        if unknown or missing:
            raise ValueError(f"context: {name}: unknown attributes {unknown}, missing {missing}")
        for key, kind in spec.attrs.items():
            if not _fits(attrs[key], kind):
                raise ValueError(f"context: {name}.{key}: {str(attrs[key])[:40]} is not {kind}")
        return ContextOp.make(name, **{where: slot}, **attrs)


def _is_int(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _fits(value: Any, kind: str) -> bool:
    """The attribute kinds ops declare: int, float, str, ints (a list of ints), intss (lists of ints)."""
    if kind == "int":
        return _is_int(value) and abs(value) < 1 << 20
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool) and abs(value) < 1e6
    if kind == "str":
        return isinstance(value, str) and len(value) < 20
    if kind == "ints":
        return isinstance(value, (list, tuple)) and len(value) <= 8 and all(_fits(v, "int") for v in value)
    if kind == "intss":
        return isinstance(value, (list, tuple)) and len(value) <= 8 and all(_fits(v, "ints") for v in value)
    raise AssertionError(kind)


Chain = tuple[ContextOp, ...]


def chain_from_json(data: Any, specs: Mapping[str, Any]) -> Chain:
    """The chain a header carries (a list of op objects), checked for structure against the
    ops' specs (`ops.OPS`); ValueError naming what is wrong."""
    if isinstance(data, tuple) and all(isinstance(op, ContextOp) for op in data):
        return data
    if not isinstance(data, (list, tuple)):
        raise ValueError(f"context: must be a list of ops, got {type(data).__name__}")
    chain = tuple(ContextOp.from_json(item, specs) for item in data)
    producers = [op for op in chain if op.is_producer]
    if len(producers) > MAX_PER_SIDE or len(chain) - len(producers) > MAX_PER_SIDE:
        raise ValueError(f"context: at most {MAX_PER_SIDE} producers and {MAX_PER_SIDE} consumers")
    return canonical(chain)


def canonical(chain: Iterable[ContextOp]) -> Chain:
    """Producers by operand, then consumers by result; data-flow order kept within each."""
    ops = list(chain)
    return tuple(sorted(ops, key=lambda op: (not op.is_producer, op.slot)))


def producers_of(chain: Chain, operand: int) -> list[ContextOp]:
    return [op for op in chain if op.is_producer and op.operand == operand]


def consumers_of(chain: Chain, result: int) -> list[ContextOp]:
    return [op for op in chain if not op.is_producer and op.result == result]


def chain_to_json(chain: Chain) -> list[dict[str, Any]]:
    return [op.to_json() for op in chain]


def outermost_drops(chain: Chain) -> list[Chain]:
    """The chain without one op, for each op whose removal keeps a chain: the first producer of
    an operand (the one reading the entry argument) or the last consumer of a result."""
    out: list[Chain] = []
    for i, op in enumerate(chain):
        same = producers_of(chain, op.slot) if op.is_producer else consumers_of(chain, op.slot)
        if op is (same[0] if op.is_producer else same[-1]):
            out.append(chain[:i] + chain[i + 1:])
    return out


def inner_drops(chain: Chain) -> list[Chain]:
    """The chain without ops `outermost_drops` cannot reach at once: each op that is not the
    outermost of its side (its neighbours then meet: its operand is forwarded, which fits where it
    has the type of its result; the caller checks the chain still fits), and every producer of
    one operand or every consumer of one result together. A failure that needs a chain's outer op
    but not an inner one kept the inner one, which only outer drops had offered."""
    outer = set(outermost_drops(chain))
    out: list[Chain] = [chain[:i] + chain[i + 1:] for i in range(len(chain))]
    for op in chain:
        out.append(tuple(o for o in chain if o.is_producer != op.is_producer or o.slot != op.slot))
    return [c for c in dict.fromkeys(out) if c and c not in outer and c != chain]  # () is the bare case
