"""The sort family: `iree_linalg_ext.sort` along one dim of a rank-1..3 tensor, of the values
alone or with an index payload (an iota, or labels passed in), ascending or descending, stable
where the comparator promises it (ties broken by the iota), each result used alone or both, over
static and dynamic sizes around powers of two. Forms the metamorphic oracle compares: the sort, a
`topk` with k = n, and either along the last dim of a transposed input. Spellings:
`torch.aten.sort` / `sort.stable` / `argsort`, ONNX TopK with K = n (spellings.py). Ties are
judged by the values the indices select (reference.py), never flagged."""

from __future__ import annotations

from shapefuzz.families.base import LINALG, Family, EXACT
from shapefuzz.families.gates import ReleaseGate
from shapefuzz.families.sort.params import Params
from shapefuzz.families.sort.reference import compare, make_inputs, reference
from shapefuzz.families.sort.render import render
from shapefuzz.families.sort.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "RELEASE_GATES"]

def export_rule(p: Params) -> dict:
    """`compare` for exported tests: a stable sort exactly; an unstable one as a top-k with k = n
    (values exact, indices by the values they select)."""
    if p.stable:
        return dict(EXACT)
    return {"kind": "topk", "dim": int(p.dim), "k": int(p.shape[p.dim]), "largest": bool(p.descending),
            "labels": p.payload == "arg", "results": [name for name in ("values", "indices") if p.use in (name, "both")]}

# Measured: 3.2.0's torch dialect has no torch.aten.argsort (the torch spelling of an indices-only sort).
RELEASE_GATES = (
    ReleaseGate("torch argsort spelling", "torch.aten.argsort",
                lambda p: p.frontend == "torch" and p.use == "indices",
                lambda: Params("f32", (4,), (False,), 0, False, "iota", "indices", False, frontend="torch"),
                instead=lambda p: p.replace(frontend=LINALG)),
)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "index:i32")


def largest_operand(p: Params) -> list[int]:
    return list(p.shape)


EXAMPLE = {"dtype": "f32", "shape": [2, 9], "in_dyn": [True, False], "dim": 1, "descending": True, "payload": "arg",
           "use": "both", "stable": False, "values": "ties", "index_dtype": "i64"}
FAMILY = Family.define("sort", Params, globals())
