"""The norm family: layer, group, instance, batch (inference, given mean / var / scale / bias) and
RMS normalization, softmax and log-softmax, over chosen axes, NCHW or NHWC, unit batch / channel
dims, `?` / static mixes, f32 or f16 inputs with f32 statistics, epsilon drawn. Written as
frontends lower them: `linalg.generic` reductions and elementwise generics (params.py: the
forms the metamorphic oracle compares: two-pass or fused one-pass variance, `linalg.softmax`).
Results are judged in float64 within a tolerance derived from the reduction length and dtype
(reference.py), never a fixed epsilon."""

from __future__ import annotations

from shapefuzz.families.base import LINALG, Family, elementwise_rule
from shapefuzz.families.gates import ReleaseGate
from shapefuzz.families.norm.params import Params, count, operands
from shapefuzz.families.norm.reference import SMALLEST_NORMAL, U32, UNIT_ROUNDOFF, compare, make_inputs, reference
from shapefuzz.families.norm.render import render
from shapefuzz.families.norm.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "RELEASE_GATES",
           "context_nonnegative_operands"]


def export_rule(p: Params) -> dict:
    """`compare` for exported tests: reference.py's bound taken at its largest over the inputs
    make_inputs draws (|x|, |scale|, |bias| <= 2; softmax |x| <= 8; a batch norm's var >= 1/4;
    a variance that is not 0 at least 1 / (32 N))."""
    u, uo, n = U32, UNIT_ROUNDOFF[p.dtype], max(count(p), 1)
    if p.kind == "softmax":
        return elementwise_rule(2 * u * (2 * n + 128) + 2 * uo, SMALLEST_NORMAL[p.dtype])
    if p.kind == "logsoftmax":
        err = 2 * (u * (32 + 4 * n + 64) + 2.0 ** -21) + 2 * uo * (16 + n)
        return elementwise_rule(0.0, err + SMALLEST_NORMAL[p.dtype])
    if p.kind == "batch":
        r, rel, z = 2.0, 16 * u, 8.0
    else:
        r = p.eps ** -0.5
        rel = u * ((n + 16) * 4 + 64) / 2 / (1 / (32 * n) + p.eps) + 16 * u
        z = n ** 0.5 + 1
    dz = (z + 4) * (rel + 4 * u) + 16 * u * r
    y = 2 * (z + 4) + 2
    return elementwise_rule(0.0, 4 * (2 * dz + 4 * u * (y + 2)) + 2 * uo * y + SMALLEST_NORMAL[p.dtype])


# Older releases' torch dialect has no torch.aten.rms_norm (3.2.0: "custom op is unknown"), nor, where
# the example does not verify, linalg.softmax: decided by verifying each example with the release.
RELEASE_GATES = (
    ReleaseGate("torch rms_norm spelling", "torch.aten.rms_norm",
                lambda p: p.frontend == "torch" and p.kind == "rms",
                lambda: Params("rms", "f32", (2, 3), (False, False), axis=1, frontend="torch"),
                instead=lambda p: p.replace(frontend=LINALG)),
    ReleaseGate("form named", "linalg.softmax",
                lambda p: p.form == "named" and p.frontend == LINALG,
                lambda: Params("softmax", "f32", (2, 3), (False, False), axis=1, form="named"),
                instead=lambda p: p.replace(form="twopass")),
)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "form:twopass")


def largest_operand(p: Params) -> list[int]:
    return list(p.shape)


EXAMPLE = {"kind": "layer", "dtype": "f16", "shape": [2, 6, 3, 5], "dyn": [True, False, False, True], "axis": 2,
           "eps": 1e-3}
FEATURE_DRAWS = 512
def context_nonnegative_operands(p: Params) -> tuple[int, ...]:
    """A batch norm's variance (after the input, its scale, bias and mean): its reference takes
    rsqrt(var + eps), NaN for a negative variance (a chain's pad of -1.0 once made one, which a
    quantize then cast to i8)."""
    return (1 + operands(p).index("var"),) if p.kind == "batch" else ()


FAMILY = Family.define("norm", Params, globals())
