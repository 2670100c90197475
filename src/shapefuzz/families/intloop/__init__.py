"""The intloop family: integer state carried through a counted loop, each trip applying a short
program of bit operations (shifts, and / or / xor, wrapping add, popcount) with the second input,
the trip counter or a constant; i8 / i32 / i64, rank 1-2, any dim dynamic, the trip count a
constant or passed in (0 included). Forms the metamorphic oracle compares: `scf.for` and
`scf.while` around one `linalg.generic` (render.py); spelling: `stablehlo.while` (stablehlo.py).
Shift semantics are StableHLO's: an amount read unsigned at or past the bit width saturates."""

from __future__ import annotations

from shapefuzz.families.base import EXACT, Family
from shapefuzz.families.intloop.params import Params, is_valid
from shapefuzz.families.intloop.reference import compare, make_inputs, reference
from shapefuzz.families.intloop.render import render
from shapefuzz.families.intloop.strategy import FEATURES, SWARM, equivalent_forms, features, shrink_candidates, strategy

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule"]


def export_rule(p: Params) -> dict:
    """Exact: integers."""
    return dict(EXACT)


RARE_CONJUNCTION = ("dyn:none", "dtype:i32", "form:for")
NO_SPELLING = {"torch": "an fx graph has no loop carrying state, nor a logical shift or a popcount",
               "onnx": "ONNX's BitShift takes unsigned types only and it has no popcount"}
NO_CONTEXT = "the chains' producers and consumers are float ops; this family's state is integer bits"


def largest_operand(p: Params) -> list[int]:
    return list(p.shape)


EXAMPLE = {"dtype": "i8", "shape": [5, 3], "in_dyn": [True, False], "steps": ["shl:i", "xor:y", "popcnt", "shr_s:y"],
           "trips": 3, "trips_input": True, "form": "while"}
FAMILY = Family.define("intloop", Params, globals())
