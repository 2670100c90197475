"""The intloop family's parameters: integer state carried through a counted loop, each trip
applying a short program of bit operations to it.

state = x; for i in [0, trips): state = steps(state, y, i), where each step is `op` or `op:operand`:
shifts `shl`, `shr_u` (logical), `shr_s` (arithmetic), bitwise `and`, `or`, `xor`, wrapping `add`
(of the second input `y`, the trip counter `i` converted to the element type, or a constant `c<k>`,
k wrapped to the type), and `popcnt`. A shift amount is read unsigned: one of at least the bit
width saturates (0, or the sign for `shr_s`), as StableHLO's lowering and XLA define it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Dtype = Literal["i8", "i32", "i64"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Form = Literal["for", "while"]  # scf.for over the trips | scf.while on an i32 counter
FORMS: tuple[Form, ...] = get_args(Form)
SHIFTS = ("shl", "shr_u", "shr_s")
BINARY = SHIFTS + ("and", "or", "xor", "add")
UNARY = ("popcnt",)
OPS = BINARY + UNARY
OPERANDS = ("y", "i", "c")  # the second input, the trip counter, a constant
BITS = {"i8": 8, "i32": 32, "i64": 64}
MAX_TRIPS = 9
MAX_STEPS = 4
_STEP = re.compile(r"^(?P<op>[a-z_]+)(?::(?P<operand>y|i|c-?\d+))?$")


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: Dtype
    shape: tuple[int, ...]
    in_dyn: tuple[bool, ...]
    steps: tuple[str, ...]  # "xor:y", "shl:c9", "add:i", "popcnt", ...
    trips: int
    trips_input: bool = False  # the trip count passed in as a tensor<i32> (a loop bound known at run time)
    form: Form = "for"
    big: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)


@dataclass(frozen=True)
class Step:
    op: str
    operand: str  # "" (popcnt), "y", "i" or "c"
    constant: int = 0  # wrapped to the element type


def wrap(value: int, dtype: str) -> int:
    """`value` as the element type holds it (two's complement)."""
    bits = BITS[dtype]
    return ((value + (1 << (bits - 1))) % (1 << bits)) - (1 << (bits - 1))


def parse_step(text: str, dtype: str) -> Step:
    m = _STEP.match(text)
    if m is None or m.group("op") not in OPS:
        raise ValueError(f"step {text!r}: one of {', '.join(OPS)}, binary ones with :y, :i or :c<int>")
    op, operand = m.group("op"), m.group("operand") or ""
    if (op in UNARY) != (operand == ""):
        raise ValueError(f"step {text!r}: {op} takes {'no operand' if op in UNARY else 'an operand'}")
    if operand.startswith("c"):
        return Step(op, "c", wrap(int(operand[1:]), dtype))
    return Step(op, operand)


def steps_of(p: Params) -> list[Step]:
    return [parse_step(s, p.dtype) for s in p.steps]


def is_valid(p: Params) -> bool:
    try:
        steps_of(p)
    except ValueError:
        return False
    return (p.dtype in DTYPES and 1 <= p.rank <= 2 and len(p.in_dyn) == p.rank and min(p.shape) >= 1
            and 1 <= len(p.steps) <= MAX_STEPS and 0 <= p.trips <= MAX_TRIPS and p.form in FORMS)


def arguments(p: Params) -> list[tuple[list[int], str]]:
    """(shape, element type) of each argument: x, y, and the trip count where passed in."""
    state: tuple[list[int], str] = (list(p.shape), p.dtype)
    return [state, state] + ([([], "i32")] if p.trips_input else [])
