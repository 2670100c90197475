"""The conv_transpose family's swarm knobs and shrink candidates."""

from __future__ import annotations

from shapefuzz.families.conv_transpose.forms import dyn_nc, simplest_form
from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import (
    canonical, channel_pos, fwd_labels, named_allowed, named_fwd_layouts)


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(input_dyn=[False] * len(p.input_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "no-padding": lambda p: _repair(p.replace(pad_lo=[0] * p.rank, pad_hi=[0] * p.rank, out_pad=[0] * p.rank)),
    "stride-1": lambda p: _repair(p.replace(strides=[1] * p.rank)),
    "dilation-1": lambda p: _repair(p.replace(dilations=[1] * p.rank)),
    "no-groups": lambda p: _repair(p.replace(groups=1, fwd_layout=[i - 1 for i in p.fwd_layout if i != 0]))
    if p.groups > 1 else p,
    "torch-filter": lambda p: p.replace(w_layout=list(range(p.rank + 2))),
    "batch-1": lambda p: p.replace(n=1),
    "channels-first": lambda p: _channels_first(p),
}


def shrink_candidates(p: Params) -> list[Params]:
    """Strictly simpler params, most aggressive first; each is valid."""
    r = p.rank
    out: list[Params] = []

    def add(q: Params) -> None:
        out.append(_repair(q))

    if r > 1:  # drop the last spatial dim
        add(p.replace(
            rank=r - 1,
            **{key: p[key][:-1] for key in ("spatial", "kernel", "strides", "dilations", "pad_lo", "pad_hi", "out_pad")},
            input_dyn=p.input_dyn[:-1] if p.x_layout == "nc" else [*p.input_dyn[:r], p.input_dyn[-1]],
            w_layout=[i for i in p.w_layout if i != r + 1],
            fwd_layout=[i for i in p.fwd_layout if i != len(fwd_labels(p)) - 1],
        ))
    if p.groups > 1:
        add(p.replace(groups=1, fwd_layout=[i - 1 for i in p.fwd_layout if i != 0]))
    if p.x_layout == "nhc":
        add(_channels_first(p))
    add(p.replace(**simplest_form(p)))
    for key in ("n", "ci", "co"):
        if p[key] > 1:
            add(p.replace(**{key: 1}))
            add(p.replace(**{key: p[key] // 2}))
    if any(p.input_dyn):
        add(p.replace(input_dyn=[False] * (r + 2)))
        for i, dyn in enumerate(p.input_dyn):
            if dyn:
                add(p.replace(input_dyn=[v and j != i for j, v in enumerate(p.input_dyn)]))
    for key, simple in (("out_pad", 0), ("pad_lo", 0), ("pad_hi", 0), ("strides", 1), ("dilations", 1), ("kernel", 1), ("spatial", 1)):
        if any(v != simple for v in p[key]):
            add(p.replace(**{key: [simple] * r}))
            for t in range(r):
                if p[key][t] != simple:
                    vals = list(p[key])
                    vals[t] = simple if key not in ("kernel", "spatial") or vals[t] <= 2 else vals[t] // 2
                    add(p.replace(**{key: vals}))
    if p.dtype != "f32":
        add(p.replace(dtype="f32"))
    if list(p.w_layout) != list(range(r + 2)):
        add(p.replace(w_layout=list(range(r + 2))))
    for key, simple in simplest_form(p).items():
        if p[key] != simple:
            add(p.replace(**{key: simple}))
    return out


def _channels_first(p: Params) -> Params:
    return p.replace(x_layout="nc", input_dyn=dyn_nc(p))


def _repair(q: Params) -> Params:
    """Clamp paddings/output padding after a shrink step so the params stay valid."""
    lo, hi, op = list(q.pad_lo), list(q.pad_hi), list(q.out_pad)
    for t in range(q.rank):
        full = q.dilations[t] * (q.kernel[t] - 1)
        lo[t], hi[t] = min(lo[t], full), min(hi[t], full)
        op[t] = min(op[t], max(q.strides[t], q.dilations[t]) - 1)
    q = q.replace(pad_lo=lo, pad_hi=hi, out_pad=op)
    if q.groups > 1:
        q = q.replace(input_dyn=[v and i != channel_pos(q) for i, v in enumerate(q.input_dyn)])
    if q.form == "named" and (not named_allowed(q) or list(q.fwd_layout) not in named_fwd_layouts(q)):
        q = q.replace(form="generic")
    return canonical(q)
