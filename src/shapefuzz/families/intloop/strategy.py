"""The intloop family's Hypothesis strategy, features, swarm knobs, equivalent forms and shrink
proposals. Constants reach the bit width and past it (a shift that saturates), -1, the
alternating-bit masks and the type's extremes; the trip count is 0 (the state returned as it
came) to MAX_TRIPS, a constant or passed in."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.families.common import SMALL_SIZES, draw_dyn_flags, dyn_features, shape_and_dynamic_shrinks
from shapefuzz.families.intloop.params import (
    BINARY, BITS, DTYPES, FORMS, MAX_STEPS, MAX_TRIPS, OPERANDS, OPS, SHIFTS, Params, steps_of)

_LARGE = (1 << 17, 1 << 18)


def _constant(draw: Any, op: str, dtype: str) -> int:
    bits = BITS[dtype]
    if op in SHIFTS:
        return draw(st.sampled_from((0, 1, bits - 1, bits, bits + 1, 2 * bits, -1, 3)))
    pattern = int("01" * (bits // 2), 2)  # 0b0101...
    return draw(st.sampled_from((-1, 1, 0, pattern, -(1 << (bits - 1)), (1 << (bits - 1)) - 1, 0x3C)))


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    large = regime == "large"
    dtype = draw(st.sampled_from(DTYPES))
    rank = draw(st.integers(1, 2))
    shape = [draw(st.sampled_from(_LARGE if large and i == 0 else SMALL_SIZES)) for i in range(rank)]
    steps = []
    for _ in range(draw(st.integers(1, MAX_STEPS))):
        op = draw(st.sampled_from(OPS))
        if op not in BINARY:
            steps.append(op)
            continue
        operand = draw(st.sampled_from(OPERANDS))
        steps.append(f"{op}:{operand}" if operand != "c" else f"{op}:c{_constant(draw, op, dtype)}")
    return Params(dtype=dtype, shape=tuple(shape), in_dyn=tuple(draw_dyn_flags(draw, rank)), steps=tuple(steps),
                  trips=draw(st.integers(0, MAX_TRIPS)), trips_input=draw(st.booleans()),
                  form=draw(st.sampled_from(FORMS)), big=large)


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in FORMS if form != p.form]


FEATURES = (
    "dtype:i8", "dtype:i32", "dtype:i64", "rank:1", "rank:2", "form:for", "form:while", "dyn:none", "dyn:all",
    "dyn:mixed", "trips:0", "trips:input", "operand:y", "operand:i", "operand:c", "shift:saturates",
    *(f"op:{op}" for op in OPS),
)  # fmt: skip


def features(p: Params) -> list[str]:
    feats = [f"dtype:{p.dtype}", f"rank:{p.rank}", f"form:{p.form}", *dyn_features(p.in_dyn)]
    steps = steps_of(p)
    feats += sorted({f"op:{s.op}" for s in steps} | {f"operand:{s.operand}" for s in steps if s.operand})
    if p.trips == 0:
        feats.append("trips:0")
    if p.trips_input:
        feats.append("trips:input")
    if any(s.op in SHIFTS and s.operand == "c" and not 0 <= s.constant < BITS[p.dtype] for s in steps):
        feats.append("shift:saturates")
    return feats


def _no_popcnt(p: Params) -> Params:
    return p.replace(steps=tuple("xor:y" if s == "popcnt" else s for s in p.steps))


SWARM = {
    "static": lambda p: p.replace(in_dyn=[False] * p.rank),
    "i32": lambda p: p.replace(dtype="i32"),
    "no-popcnt": _no_popcnt,
    "constant-trips": lambda p: p.replace(trips_input=False),
    "for": lambda p: p.replace(form="for"),
}


def shrink_candidates(p: Params) -> list[Params]:
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(p.replace(**changes))

    for i in range(len(p.steps)):
        if len(p.steps) > 1:
            add(steps=p.steps[:i] + p.steps[i + 1:])
    for t in sorted({0, 1, p.trips // 2} - {p.trips}):
        if t < p.trips:
            add(trips=t)
    if p.rank > 1:
        add(shape=p.shape[:1], in_dyn=p.in_dyn[:1])
    for changes in shape_and_dynamic_shrinks(p.shape, p.in_dyn, lambda n: (1, n // 2)):
        add(**changes)
    if p.trips_input:
        add(trips_input=False)
    if p.form != "for":
        add(form="for")
    if p.dtype != "i32":
        add(dtype="i32")
    if p.big:
        add(big=False)
    return out
