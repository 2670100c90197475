"""The norm family's parameters and shapes: layer, group, instance, batch (inference) and RMS
normalization, softmax and log-softmax, over chosen axes, channels first (NCHW) or last (NHWC)
where a channel dim exists, any dim `?` (a group norm's channel dim static), f32 or f16 inputs
with f32 statistics, epsilon drawn (> 0)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Kind = Literal["layer", "group", "instance", "batch", "rms", "softmax", "logsoftmax"]
KINDS: tuple[Kind, ...] = get_args(Kind)
CHANNEL_KINDS = ("group", "instance", "batch")  # the kinds with a channel dim (NCHW or NHWC)
AXIS_KINDS = ("layer", "rms", "softmax", "logsoftmax")  # the kinds whose `axis` says what is reduced
Dtype = Literal["f32", "f16"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Layout = Literal["", "nchw", "nhwc"]  # "": a kind without a channel dim
LAYOUTS: tuple[Layout, ...] = get_args(Layout)[1:]
# twopass: mean, then the variance of the centred values (softmax: max, sum, then a division);
# fused: sum and sum of squares in one generic, var = E[x^2] - mean^2 (batch norm: a per-channel
# scale and shift first; RMS: a division by the root; softmax: a reciprocal multiplied;
# log-softmax: log-sum-exp first); named: `linalg.softmax` (softmax only).
Form = Literal["twopass", "fused", "named"]
FORMS: tuple[Form, ...] = get_args(Form)
MIN_RANK = {"layer": 1, "rms": 1, "softmax": 1, "logsoftmax": 1, "group": 2, "instance": 3, "batch": 2}
MAX_RANK = 4


@dataclass(frozen=True)
class Params(FamilyParams):
    kind: Kind
    dtype: Dtype
    shape: tuple[int, ...]
    dyn: tuple[bool, ...]
    axis: int = 0  # layer / rms: the first normalized dim (through the last); softmax: the dim
    layout: Layout = ""  # group / instance / batch: "nchw" (channel dim 1) or "nhwc" (the last)
    groups: int = 1  # group norm
    eps: float = 1e-5
    affine: bool = True  # a scale (and for all but RMS, a bias); batch norm always has them
    form: Form = "twopass"
    big: bool = False

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def channel(self) -> int:
        """The channel dim's index (kinds with one)."""
        return 1 if self.layout == "nchw" else self.rank - 1


def reduced(p: Params) -> list[int]:
    """The dims of the input one statistic is taken over (batch norm: none, its statistics are given)."""
    if p.kind in ("layer", "rms"):
        return list(range(p.axis, p.rank))
    if p.kind in ("softmax", "logsoftmax"):
        return [p.axis]
    if p.kind == "batch":
        return []
    spatial = [i for i in range(1, p.rank) if i != p.channel]
    return spatial + ([p.channel] if p.kind == "group" else [])


def count(p: Params) -> int:
    n = 1
    for i in reduced(p):
        n *= p.shape[i]
    return n // (p.groups if p.kind == "group" else 1)


def param_dims(p: Params) -> list[int]:
    """The input dims a scale / bias / mean / var operand spans."""
    if p.kind in ("layer", "rms"):
        return list(range(p.axis, p.rank))
    if p.kind in CHANNEL_KINDS:
        return [p.channel]
    return []


def operands(p: Params) -> list[str]:
    """The per-element operands after the input, in argument order."""
    if p.kind == "batch":
        return ["scale", "bias", "mean", "var"]
    if not p.affine or p.kind in ("softmax", "logsoftmax"):
        return []
    return ["scale"] if p.kind == "rms" else ["scale", "bias"]


def operand_shape(p: Params) -> list[int]:
    return [p.shape[i] for i in param_dims(p)]


def problem(p: Params) -> str:
    """Why the params describe no case this family builds ("" when they do): the one check behind
    `is_valid`, and the line a user gets for a case file holding such params (a frontend rejects
    a norm axis out of range or an epsilon that is not positive)."""
    if p.kind not in KINDS:
        return f"kind {p.kind!r} is not one of {', '.join(KINDS)}"
    if p.dtype not in DTYPES:
        return f"dtype {p.dtype!r} is not one of {', '.join(DTYPES)}"
    if len(p.dyn) != p.rank or not MIN_RANK[p.kind] <= p.rank <= MAX_RANK:
        return f"a {p.kind} norm takes rank {MIN_RANK[p.kind]} to {MAX_RANK}, with one dyn flag per dim"
    if min(p.shape) < 1:
        return "every size is at least 1"
    if not 0 <= p.axis < p.rank:
        return f"axis {p.axis} is out of range for a rank-{p.rank} {p.kind} input"
    if p.axis and p.kind not in AXIS_KINDS:
        return f"axis: a {p.kind} norm takes its dims from the layout (axis 0)"
    if not 0 < p.eps < float("inf"):  # also false for NaN
        return f"eps {p.eps!r} must be a finite number > 0"
    if (p.layout in LAYOUTS) != (p.kind in CHANNEL_KINDS):
        return f"layout {p.layout!r}: {' or '.join(LAYOUTS)} for {', '.join(CHANNEL_KINDS)}; none otherwise"
    if p.kind == "group":
        c = p.shape[p.channel]
        if p.groups < 1 or c % p.groups:
            return f"groups {p.groups} does not divide the {c} channels"
        if p.dyn[p.channel]:
            return "a group norm's channel dim is static (the groups split it)"
    elif p.groups != 1:
        return "groups only for a group norm"
    if p.form not in forms_for(p):
        return f"form {p.form!r} does not write this case; it takes {', '.join(forms_for(p))}"
    return ""


def forms_for(p: Params) -> tuple[str, ...]:
    if p.kind == "softmax":
        return ("twopass", "fused", "named")
    return ("twopass", "fused")
