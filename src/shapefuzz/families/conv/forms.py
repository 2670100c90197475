"""The conv family's equivalent forms, features and validity."""

from __future__ import annotations

from shapefuzz.families.conv.params import (
    I8_MAX, I8_MIN, LAYOUTS, QDQ_MAX_REDUCTION, QUANTIZED_OPS, Params, boundary_labels, filter_labels, input_labels,
    layouts_for, output_labels)
from shapefuzz.families.conv.shapes import compute_labels, loop_labels, out_dyn, out_spatial, reduction_size


# --------------------------------------------------------------------------------------------
# Metamorphic forms, features, shrinking


def with_changes(p: Params, **changes) -> Params:
    return p.replace(**changes)


def canonical_loop_perm(p: Params) -> list[int]:
    par, red = loop_labels(p.kind, p.rank)
    return list(range(len(par) + len(red)))


def equivalent_forms(p: Params) -> list[Params]:
    """The same computation, same inputs: other form / compute layout / padding / bias; a case
    whose op takes free dim orders also in the op's own layout (transposes at the boundary)."""
    if p.perm_compute:
        q = p.replace(perm_compute=False)
        return [q] + _equivalent_forms(q)
    forms = _equivalent_forms(p)
    if p.form == "generic" and p.compute_layout == p.layout and (p.input_perm or p.filter_perm or p.output_perm):
        forms.append(p.replace(perm_compute=True))
    return forms


def _equivalent_forms(p: Params) -> list[Params]:
    forms: list[Params] = []
    nloops = len(canonical_loop_perm(p))
    if p.form == "named":
        forms.append(with_changes(p, form="generic", loop_perm=list(range(nloops))))
        forms.append(with_changes(p, form="generic", loop_perm=list(reversed(range(nloops)))))
    elif LAYOUTS[p.compute_layout].named_op is not None:
        forms.append(with_changes(p, form="named", loop_perm=[]))
    for lay in layouts_for(p.rank, p.kind):
        if lay.name == p.compute_layout:
            continue
        if lay.named_op is not None:
            forms.append(with_changes(p, compute_layout=lay.name, form="named", loop_perm=[]))
        else:
            forms.append(with_changes(p, compute_layout=lay.name, form="generic",
                               loop_perm=list(range(nloops))))
    other_pad = {"pad": "insert", "insert": "pad", "none": "pad"}[p.pad_form]
    forms.append(with_changes(p, pad_form=other_pad))
    if p.bias != "none":
        forms.append(with_changes(p, bias="init" if p.bias == "epilogue" else "epilogue"))
    if p.dtype == "i8":  # the same integers through dequantize and an f32 conv, or not
        forms.append(with_changes(p, qdq=not p.qdq))
    return [q for q in forms if q != p and not quantization_problem(q)]


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    "dyn:none", "dyn:all", "dyn:mixed", "form:named", "form:generic", "loops:permuted",
    "rank:1", "rank:2", "rank:3", "kind:regular", "kind:grouped", "kind:depthwise",
    "kind:depthwise_m", "groups>1", "transposed", "pad:zero", "pad:sym", "pad:asym",
    "pad_form:none", "pad_form:pad", "pad_form:insert", "pad_value:nonzero", "stride>1",
    "dilation>1", "kernel:has1", "filter:dyn", "bias:epilogue", "bias:init", "epilogue:relu",
    "dtype:f32", "dtype:f16", "dtype:i32", "dtype:i8", "acc:f16", "big",
    "class1:ncdhw-kernel1", "perm:input", "perm:filter", "perm:output", "perm:compute", "red-order:differs",
    "result:static-of-dyn", "result:dyn-of-static", "zp:nonzero", "zp:extreme", "named:q", "qdq",
)  # fmt: skip


def features(p: Params) -> list[str]:
    flags = list(p.in_dyn.values()) + list(p.filt_dyn.values())
    dyn = "dyn:all" if all(flags) else "dyn:none" if not any(flags) else "dyn:mixed"
    lo, hi = p.pad_lo, p.pad_hi
    if not any(lo) and not any(hi):
        pad = "pad:zero"
    elif lo == hi:
        pad = "pad:sym"
    else:
        pad = "pad:asym"
    feats = [
        f"rank:{p.rank}", f"kind:{p.kind}", f"form:{p.form}", f"layout:{p.layout}",
        f"dtype:{p.dtype}", f"acc:{p.acc}", dyn, pad, f"pad_form:{p.pad_form}",
        f"bias:{p.bias}", f"epilogue:{p.epilogue}",
    ]
    if p.kind == "grouped" and p.g > 1:
        feats.append("groups>1")
    if p.kind.startswith("depthwise"):
        feats.append("depthwise")
    if p.compute_layout != p.layout:
        feats.append("transposed")
    if p.form == "generic" and list(p.loop_perm) != sorted(p.loop_perm):
        feats.append("loops:permuted")
    if p.pad_value != 0:
        feats.append("pad_value:nonzero")
    if any(s > 1 for s in p.strides):
        feats.append("stride>1")
    if any(d > 1 for d in p.dilations):
        feats.append("dilation>1")
    if 1 in p.kernel and p.rank > 1 and any(k > 1 for k in p.kernel):
        feats.append("kernel:has1")
    if any(p.filt_dyn.values()):
        feats.append("filter:dyn")
    if p.big:
        feats.append("big")
    for key in ("input_perm", "filter_perm", "output_perm"):
        if p[key]:
            feats.append(f"perm:{key.split('_')[0]}")
    if p.perm_compute:
        feats.append("perm:compute")
    if p.result_dyn:
        derived = [out_dyn(p, lab) for lab in boundary_labels(p)[2]]
        if any(d and not r for d, r in zip(derived, p.result_dyn)):
            feats.append("result:static-of-dyn")
        if any(r and not d for d, r in zip(derived, p.result_dyn)):
            feats.append("result:dyn-of-static")
    if _reduction_orders_differ(p):
        feats.append("red-order:differs")
    if p.rank == 3 and LAYOUTS[p.layout].input.startswith("nc") and 1 in p.kernel:
        feats.append("class1:ncdhw-kernel1")
    if p.input_zp or p.filter_zp:
        feats.append("zp:nonzero")
        if {p.input_zp, p.filter_zp} & {I8_MIN, I8_MAX}:
            feats.append("zp:extreme")
        if p.form == "named" and not p.qdq and p.compute_layout in QUANTIZED_OPS:
            feats.append("named:q")
    if p.qdq:
        feats.append("qdq")
    return feats


def _reduction_orders_differ(p: Params) -> bool:
    """Whether the conv op's filter takes its reduction dims (c, k...) in another relative order
    than its input takes (c, s...): the im2col assumption of bug class 3."""
    c_in, c_filt, _ = compute_labels(p)
    as_k = ["k" + lab[1:] if lab[0] == "s" else lab for lab in c_in if lab == "c" or lab[0] == "s"]
    red = [lab for lab in c_filt if lab == "c" or lab[0] == "k"]
    return p.kind in ("regular", "grouped") and as_k != red


def is_valid(p: Params) -> bool:
    io = LAYOUTS[p.layout]
    for perm, labels in ((p.input_perm, input_labels(io)), (p.filter_perm, filter_labels(io)),
                         (p.output_perm, output_labels(io))):
        if perm and sorted(perm) != list(range(len(labels))):
            return False
    if p.perm_compute and (p.form != "generic" or p.compute_layout != p.layout):
        return False
    if p.result_dyn and len(p.result_dyn) != len(output_labels(io)):
        return False
    if len(p.input_dyn) != len(input_labels(io)) or len(p.filter_dyn) != len(filter_labels(io)):
        return False
    return not quantization_problem(p) and all(o >= 1 for o in out_spatial(p)) and all(s >= 1 for s in p.spatial)


def quantization_problem(p: Params) -> str:
    """Why the zero points or the qdq form do not fit the case ("" when they do)."""
    for name, zp in (("input_zp", p.input_zp), ("filter_zp", p.filter_zp)):
        if zp and p.dtype != "i8":
            return f"{name}: zero points only with i8 operands"
        if not I8_MIN <= zp <= I8_MAX:
            return f"{name} {zp} is not an i8 value ({I8_MIN}..{I8_MAX})"
    if p.qdq and (p.dtype != "i8" or p.bias == "init" or reduction_size(p) > QDQ_MAX_REDUCTION):
        return (f"qdq: an i8 case without a bias in the accumulator, reducing at most {QDQ_MAX_REDUCTION} "
                "terms (its f32 sums are then exact)")
    return ""
