"""The conv family's swarm knobs and shrink candidates."""

from __future__ import annotations

from shapefuzz.families.common import is_float, with_item
from shapefuzz.families.conv.forms import canonical_loop_perm, with_changes
from shapefuzz.families.conv.params import (
    LAYOUTS, Params, boundary_labels, filter_labels, input_labels, layouts_for, output_labels)


def _reduce_rank(p: Params, drop: int) -> Params | None:
    """The same case with spatial dim `drop` removed (rank - 1), if that layout exists."""
    if p.input_perm or p.filter_perm or p.output_perm or p.perm_compute:
        return None
    rank = p.rank - 1
    io, cl = LAYOUTS[p.layout], LAYOUTS[p.compute_layout]
    same = [lay for lay in layouts_for(rank, p.kind) if lay.input == io.input and lay.filter == io.filter]
    csame = [lay for lay in layouts_for(rank, p.kind) if lay.input == cl.input and lay.filter == cl.filter]
    if not same or not csame:
        return None
    new_io, new_cl = same[0], csame[0]
    form = p.form if new_cl.named_op is not None else "generic"
    keep = [i for i in range(p.rank) if i != drop]

    def renamed(dyn: dict[str, bool], label: str) -> bool:
        if label[0] in "sk" and label[1:].isdigit():
            return dyn[label[0] + str(keep[int(label[1:])])]
        return dyn[label]

    q = with_changes(p, rank=rank, layout=new_io.name, compute_layout=new_cl.name, form=form, result_dyn=(),
              **{key: [p[key][i] for i in keep] for key in ("spatial", "kernel", "strides",
                                                          "dilations", "pad_lo", "pad_hi")},
              input_dyn=[renamed(p.in_dyn, lab) for lab in input_labels(new_io)],
              filter_dyn=[renamed(p.filt_dyn, lab) for lab in filter_labels(new_io)])
    return with_changes(q, loop_perm=[] if form == "named" else canonical_loop_perm(q))


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(input_dyn=[False] * len(p.input_dyn), filter_dyn=[False] * len(p.filter_dyn)),
    "f32": lambda p: p.replace(dtype="f32", acc="f32", input_zp=0, filter_zp=0, qdq=False),
    "no-zero-points": lambda p: p.replace(input_zp=0, filter_zp=0),
    "no-padding": lambda p: p.replace(pad_lo=[0] * p.rank, pad_hi=[0] * p.rank, pad_form="none", pad_value=0),
    "stride-1": lambda p: p.replace(strides=[1] * p.rank),
    "dilation-1": lambda p: p.replace(dilations=[1] * p.rank),
    "no-groups": lambda p: p.replace(g=1),
    "no-bias": lambda p: p.replace(bias="none", epilogue="none"),
    "batch-1": lambda p: p.replace(n=1),
    "no-transpose": lambda p: _same_layout(p),
    "layout-orders": lambda p: _without_perms(p),
    "derived-result-types": lambda p: p.replace(result_dyn=()),
}


def _same_layout(p: Params) -> Params:
    lay = LAYOUTS[p.layout]
    form = p.form if lay.named_op is not None else "generic"
    q = p.replace(compute_layout=p.layout, form=form, loop_perm=[])
    return q if form == "named" else q.replace(loop_perm=canonical_loop_perm(q))


def _without_perms(p: Params) -> Params:
    """The same case with the layout's own dim orders at the boundary and in the op."""
    io = LAYOUTS[p.layout]
    declared = dict(zip(boundary_labels(p)[2], p.result_dyn))
    return p.replace(input_perm=(), filter_perm=(), output_perm=(), perm_compute=False,
                     input_dyn=[p.in_dyn[lab] for lab in input_labels(io)],
                     filter_dyn=[p.filt_dyn[lab] for lab in filter_labels(io)],
                     result_dyn=[declared[lab] for lab in output_labels(io)] if p.result_dyn else ())


def shrink_candidates(p: Params) -> list[Params]:
    cands: list[Params] = []
    if p.result_dyn:
        cands.append(p.replace(result_dyn=()))
    if p.input_perm or p.filter_perm or p.output_perm or p.perm_compute:
        cands.append(_without_perms(p))
        if p.perm_compute:
            cands.append(p.replace(perm_compute=False))
    for drop in reversed(range(p.rank if p.rank > 1 else 0)):
        q = _reduce_rank(p, drop)
        if q is not None:
            cands.append(q)
    if p.big:
        cands.append(with_changes(p, big=False))
    if any(p.input_dyn) or any(p.filter_dyn):
        cands.append(with_changes(p, input_dyn=[False] * len(p.input_dyn), filter_dyn=[False] * len(p.filter_dyn)))
    for key in ("input_dyn", "filter_dyn"):
        for i, v in enumerate(p[key]):
            if v:
                cands.append(with_changes(p, **{key: with_item(p[key], i, False)}))
    if p.compute_layout != p.layout:
        lay = LAYOUTS[p.layout]
        form = p.form if lay.named_op is not None else "generic"
        cands.append(with_changes(p, compute_layout=p.layout, form=form,
                           loop_perm=[] if form == "named" else canonical_loop_perm(p)))
    if p.form == "generic" and list(p.loop_perm) != canonical_loop_perm(p):
        cands.append(with_changes(p, loop_perm=canonical_loop_perm(p)))
    if p.form == "generic" and LAYOUTS[p.compute_layout].named_op is not None:
        cands.append(with_changes(p, form="named", loop_perm=[]))
    if p.kind == "grouped" and p.g > 1:
        cands.append(with_changes(p, g=1))
    for key in ("n", "g", "c", "f", "m"):
        if p[key] > 1:
            cands.append(with_changes(p, **{key: 1}))
            if p[key] > 2:
                cands.append(with_changes(p, **{key: p[key] // 2}))
    for i in range(p.rank):
        for key, target in (("pad_lo", 0), ("pad_hi", 0), ("strides", 1), ("dilations", 1),
                            ("kernel", 1), ("spatial", 1)):
            if p[key][i] != target:
                vals = list(p[key])
                vals[i] = target
                cands.append(with_changes(p, **{key: vals}))
                if key in ("spatial", "kernel") and p[key][i] > 2:
                    vals = list(p[key])
                    vals[i] = p[key][i] // 2
                    cands.append(with_changes(p, **{key: vals}))
    if p.pad_value != 0:
        cands.append(with_changes(p, pad_value=0))
    if p.pad_form != "none" and not any(p.pad_lo) and not any(p.pad_hi):
        cands.append(with_changes(p, pad_form="none", pad_value=0))
    if p.pad_form == "insert":
        cands.append(with_changes(p, pad_form="pad"))
    if p.bias != "none":
        cands.append(with_changes(p, bias="none"))
    if p.epilogue != "none":
        cands.append(with_changes(p, epilogue="none"))
    if p.qdq:
        cands.append(with_changes(p, qdq=False))
    if p.input_zp or p.filter_zp:
        cands.append(with_changes(p, input_zp=0, filter_zp=0))
    if p.dtype != "f32":
        cands.append(with_changes(p, dtype="f32", acc="f32", input_zp=0, filter_zp=0, qdq=False,
                           pad_value=p.pad_value if is_float(p.dtype) else p.pad_value))
    return [with_changes(q, pad_form="pad") if q.pad_form == "none" and (any(q.pad_lo) or any(q.pad_hi)) else q
            for q in cands]
