"""Drawing a chain that fits a root: producers grown outwards from the operands whose values
are free (float, not one the family fixes), consumers grown outwards from float results where
the family compares element-wise. Each op's attributes are drawn against the current outer
type (its `?` dims) and concrete sizes (the root operand's, carried outwards by the same shape
rules on static types), and an op that does not fit is skipped."""

from __future__ import annotations

import contextlib
from typing import Any, Iterator

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.context.chain import MAX_PER_SIDE, Chain, ContextOp, canonical, consumers_of
from shapefuzz.families.context.consumers import CONSUMERS
from shapefuzz.families.context.ops import OPS
from shapefuzz.families.context.producers import NP, PRODUCERS
from shapefuzz.families.context.types import Ty, is_float

# The affine (de)quantize ops come as a QDQ pair (`_draw_qdq`), never one at a time from the pool.
QDQ_OPS = ("dequantize_affine", "quantize_affine")
PRODUCER_NAMES = tuple(name for name in PRODUCERS if name not in QDQ_OPS)
CONSUMER_NAMES = tuple(name for name in CONSUMERS if name not in QDQ_OPS)
QDQ_SHARE = 4  # one chain in QDQ_SHARE starts as the QDQ pattern (`_draw_qdq`)
_left_out: set[str] = set()  # ops a campaign's swarm epoch leaves out (campaign/allocation.py)


@contextlib.contextmanager
def leaving_out(ops: tuple[str, ...]) -> Iterator[None]:
    """Chains drawn inside never use these ops (while any of its side is left); restored after."""
    before = set(_left_out)
    _left_out.update(ops)
    try:
        yield
    finally:
        _left_out.clear()
        _left_out.update(before)


def _held(op: ContextOp | None) -> bool:
    """Whether a case header holds the op: its attributes read back (`ContextOp.from_json`: a
    list of at most 8 values, ...). Stacked collapses grow an operand past 8 dims, and a pad drawn
    on it then named a candidate no header could hold (its draw failed as the family's bug); such
    an op is skipped like one that does not fit."""
    if op is None:
        return False
    try:
        ContextOp.from_json(op.to_json(), OPS)
    except ValueError:
        return False
    return True


def _allowed(names: tuple[str, ...]) -> tuple[str, ...]:
    """The names not left out (all of them when nothing is left out: the draws stay what they were)."""
    if not _left_out:
        return names
    return tuple(n for n in names if n not in _left_out) or names


# The largest operand (in elements) a producer is drawn for: its sizes are found by inverting the
# producer on an array of that shape, and a strided slice's inverse can be many times larger (a
# "large"-regime operand of millions of elements asked numpy for 55 GiB).
MAX_PRODUCER_ELEMENTS = 1 << 18


def outward(op: ContextOp, t: Ty, s: tuple[int, ...]) -> tuple[Ty, tuple[int, ...]]:
    """The argument a producer reads: its type and concrete sizes (ValueError when it does not fit)."""
    p = PRODUCERS[op.op]
    sources = p.sources(op, t)
    p.check(op, s)
    if int(np.prod(s, dtype=np.float64)) > MAX_PRODUCER_ELEMENTS:
        raise ValueError(f"context: no producer on an operand of {s} (over {MAX_PRODUCER_ELEMENTS} elements)")
    try:
        x = p.invert(op, np.zeros(s, dtype=NP.get(t.elt, np.float32)), list(sources), np.random.default_rng(0))[0]
    except MemoryError:
        raise ValueError(f"context: {op.op}'s argument for {s} is too large to build") from None
    return sources[0], tuple(x.shape)


def _draw_producer(draw: Any, name: str, i: int, t: Ty, s: tuple[int, ...],
                   nonnegative: bool = False) -> ContextOp | None:
    """One producer of operand i (None: it does not fit); `nonnegative`: the operand's values must
    stay >= 0 (a pad value is then never negative)."""
    r = t.rank
    mk = lambda **a: ContextOp.make(name, operand=i, **a)  # noqa: E731
    if name == "pad" and r and is_float(t.elt):
        lo, hi = [], []
        for n in s:
            room = n - 1
            if room >= 1 and n <= 3 and draw(st.booleans()):  # pad onto a unit dim
                a = draw(st.integers(0, room))
                lo.append(a)
                hi.append(room - a)
            else:
                a = draw(st.integers(0, min(2, room)))
                lo.append(a)
                hi.append(draw(st.integers(0, min(2, room - a))))
        if not any(lo + hi):
            return None
        return mk(lo=lo, hi=hi, value=draw(st.sampled_from((0.0, 0.5) if nonnegative else (0.0, 0.5, -1.0))))
    if name == "transpose" and r >= 2:
        perm = draw(st.permutations(range(r)))
        return mk(perm=list(perm), form=draw(st.sampled_from(("named", "generic")))) if perm != list(range(r)) else None
    if name == "expand" and r >= 2:
        cuts = [k for k in range(1, r) if draw(st.booleans())]
        bounds = [0, *cuts, r]
        groups = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
        return mk(groups=groups) if len(groups) < r else None
    if name == "collapse" and r:
        split = []
        for d, n in zip(t.dims, s):
            kind = draw(st.sampled_from(("keep", "lead", "trail", "factor")))
            base = -1 if d is None else n
            if kind == "lead":
                split.append([1, base])
            elif kind == "trail":
                split.append([base, 1])
            elif kind == "factor" and d is not None and any(n % a == 0 for a in range(2, n)):
                a = draw(st.sampled_from([a for a in range(2, n) if n % a == 0]))
                split.append([a, n // a])
            else:
                split.append([base])
        return mk(split=split) if any(len(x) > 1 for x in split) else None
    if name == "slice":
        drop = draw(st.integers(-1, r)) if draw(st.booleans()) else -1
        if not r and drop < 0:
            return None
        return mk(offsets=[draw(st.integers(0, 2)) for _ in range(r)], strides=[draw(st.integers(1, 3)) for _ in range(r)],
                  extra=[draw(st.integers(0, 2)) for _ in range(r)], drop=drop)
    if name == "concat" and r:
        dims = [d for d in range(r) if s[d] >= 2]
        if not dims:
            return None
        d = draw(st.sampled_from(dims))
        return mk(dim=d, split=draw(st.integers(1, s[d] - 1)))
    if name == "broadcast" and r >= 2:
        static = [d for d in range(r) if t.dims[d] is not None]
        if not static:
            return None
        return mk(dims=[draw(st.sampled_from(static))])
    if name == "reverse" and r:
        d = draw(st.integers(0, r - 1))
        form = "extract" if t.dims[d] is None or draw(st.booleans()) else "map"
        return mk(dim=d, form=form)
    if name == "dequantize" and t.elt in ("f32", "f16"):
        frm = draw(st.sampled_from(("i8", "i4")))
        zp = draw(st.integers(-20, 20) if frm == "i8" else st.integers(-4, 4))
        return mk(**{"from": frm, "scale": draw(st.sampled_from((0.125, 0.25, 0.5, 1.0))), "zero_point": zp})
    if name == "cast" and t.elt in ("f32", "f16"):
        return mk(**{"from": "f16" if t.elt == "f32" else "f32"})
    if name == "to_static":
        static = [d for d in range(r) if t.dims[d] is not None]
        if not static:
            return None
        return mk(dims=sorted(set(draw(st.lists(st.sampled_from(static), min_size=1, max_size=len(static))))))
    return None


def _draw_consumer(draw: Any, name: str, j: int, t: Ty) -> ContextOp | None:
    r = t.rank
    mk = lambda **a: ContextOp.make(name, result=j, **a)  # noqa: E731
    if name in ("transpose_out", "reshape"):
        if r < 2:
            return None
        if name == "transpose_out":
            perm = draw(st.permutations(range(r)))
            return mk(perm=list(perm)) if perm != list(range(r)) else None
        cuts = [k for k in range(1, r) if draw(st.booleans())]
        bounds = [0, *cuts, r]
        groups = [list(range(a, b)) for a, b in zip(bounds, bounds[1:])]
        return mk(groups=groups) if len(groups) < r else None
    if t.elt not in ("f32", "f16"):
        return None
    if name == "bias":
        static = [d for d in range(r) if t.dims[d] is not None]
        return mk(dim=draw(st.sampled_from(static))) if static else None
    if name == "relu":
        return mk()
    if name == "clamp":
        return mk(lo=draw(st.sampled_from((-1.0, -0.5, 0.0))), hi=draw(st.sampled_from((1.0, 2.5, 6.0))))
    if name == "multi_use":
        return mk(factor=draw(st.sampled_from((2.0, -0.5, 0.25))))
    if name in ("extract", "softmax") or (name == "reduce" and r):
        if not r:
            return None
        d = draw(st.integers(0, r - 1))
        return mk(dim=d, kind=draw(st.sampled_from(("sum", "max")))) if name == "reduce" else mk(dim=d)
    if name == "cast_out":
        return mk(to="f16" if t.elt == "f32" else "f32")
    if name == "quantize":
        return mk(scale=draw(st.sampled_from((0.25, 0.5, 1.0, 2.0))), zero_point=draw(st.integers(-10, 10)))
    return None


def _draw_qdq(draw: Any, operands: list[int], outer: dict[int, tuple[Ty, tuple[int, ...]]],
              outs: list[tuple[int, Ty]]) -> list[ContextOp]:
    """The QDQ pattern frontends export around an op: its (first two) free operands made by IREE's
    affine dequantize from i8 (their innermost producers), and for half of them an affine
    quantize of the first result. Around a contraction it is what 3.13's QDQ-to-integer-math
    rewrite matches; around a gather, a quantized embedding table (which 3.13's affine
    quantization propagation moves past the gather). Updates `outer`."""
    chain: list[ContextOp] = []
    for i in operands:
        op = ContextOp.make("dequantize_affine", operand=i, scale=draw(st.sampled_from((0.125, 0.25, 0.5, 1.0))),
                            zero_point=draw(st.integers(-20, 20)))
        try:
            outer[i] = outward(op, *outer[i])
        except ValueError:
            continue
        chain.insert(0, op)
    if chain and outs and draw(st.booleans()):
        j, t = outs[0]
        op = ContextOp.make("quantize_affine", result=j, scale=draw(st.sampled_from((0.25, 0.5, 1.0, 2.0))),
                            zero_point=draw(st.integers(-10, 10)))
        try:
            CONSUMERS[op.op].result(op, t)
            chain.append(op)
        except ValueError:  # an f16 result: no affine quantize of it here
            pass
    return chain


def draw_chain(draw: Any, args: tuple[Ty, ...], results: tuple[Ty, ...], shapes: list[tuple[int, ...]],
               fixed: tuple[int, ...], consumers_ok: bool, tries: int = 3, nonnegative: tuple[int, ...] = ()) -> Chain:
    """A chain of 0-4 producers and 0-4 consumers, at least one op where one fits (a few tries).
    `fixed`: operands that get no producer; `nonnegative`: operands whose values must stay >= 0."""
    for _ in range(tries):
        chain = _draw_once(draw, args, results, shapes, fixed, consumers_ok, nonnegative)
        if chain:
            return chain
    return ()


def _draw_once(draw: Any, args: tuple[Ty, ...], results: tuple[Ty, ...], shapes: list[tuple[int, ...]],
               fixed: tuple[int, ...], consumers_ok: bool, nonnegative: tuple[int, ...] = ()) -> Chain:
    """A chain of 0-4 producers and 0-4 consumers (at least one op where one fits) over a root."""
    free = [i for i, t in enumerate(args) if is_float(t.elt) and i not in fixed]
    outs = [j for j, t in enumerate(results) if t.elt in ("f32", "f16")] if consumers_ok else []
    n_prod = draw(st.integers(0, MAX_PER_SIDE)) if free else 0
    n_cons = draw(st.integers(0, MAX_PER_SIDE)) if outs else 0
    if n_prod + n_cons == 0 and (free or outs):
        n_prod, n_cons = (1, 0) if free and (not outs or draw(st.booleans())) else (0, 1)
    chain: list[ContextOp] = []
    outer = {i: (args[i], tuple(shapes[i])) for i in free}
    if free and draw(st.integers(0, QDQ_SHARE - 1)) == 0:
        chain = _draw_qdq(draw, free[:2], outer, [(j, results[j]) for j in outs])
        n_prod = min(n_prod, MAX_PER_SIDE - sum(op.is_producer for op in chain))
        n_cons = min(n_cons, MAX_PER_SIDE - sum(not op.is_producer for op in chain))
    for _ in range(n_prod):
        i = draw(st.sampled_from(free))
        t, s = outer[i]
        op = _draw_producer(draw, draw(st.sampled_from(_allowed(PRODUCER_NAMES))), i, t, s, i in nonnegative)
        if op is None or not _held(op):
            continue
        try:
            outer[i] = outward(op, t, s)
        except ValueError:
            continue
        chain.insert(0, op)  # outermost first
    for _ in range(n_cons):
        j = draw(st.sampled_from(outs))
        steps = consumers_of(tuple(chain), j)
        t = results[j]
        for c in steps:
            t = CONSUMERS[c.op].result(c, t)
        op = _draw_consumer(draw, draw(st.sampled_from(_allowed(CONSUMER_NAMES))), j, t)
        try:
            if op is not None and _held(op):
                CONSUMERS[op.op].result(op, t)
                chain.append(op)
        except ValueError:
            pass
    return canonical(chain)
