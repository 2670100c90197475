"""The conv family's MLIR: types, maps and SSA names in Python, `templates/conv.mlir.j2` for the IR."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from shapefuzz.families.common import IndexValues, is_float, tensor_type
from shapefuzz.families.conv.forms import quantization_problem
from shapefuzz.families.conv.operands import filter_values, init_in_compute_layout
from shapefuzz.families.operands import constant_lines, doubled_lines
from shapefuzz.families.conv.params import LAYOUTS, QDQ_SCALES, QUANTIZED_OPS, Params, boundary_labels
from shapefuzz.families.conv.shapes import (
    bias_labels, compute_labels, declared_out_dyn, label_size, loop_labels, out_dyn)
from shapefuzz.templates import render_template


# --------------------------------------------------------------------------------------------
# Rendering


def _shape_str(sizes: list[int], dyn: list[bool], elem: str) -> str:
    return tensor_type(sizes, elem, dyn)




@dataclass
class _Tensor:
    name: str
    labels: list[str]
    sizes: list[int]
    dyn: list[bool]
    elem: str

    @property
    def type(self) -> str:
        return _shape_str(self.sizes, self.dyn, self.elem)


class _Builder:
    """The index value of each dynamic dim, by the role of its tensor and its label (created on
    demand in an `IndexValues`)."""

    def __init__(self, p: Params, inp: _Tensor, filt: _Tensor):
        self.p = p
        self.inp = inp
        self.filt = filt
        self.index = IndexValues()

    def _tensor_dim(self, t: _Tensor, label: str) -> str:
        return self.index.dim(t.name, t.type, t.labels.index(label), name=f"%{t.name[1:]}_{label}")

    def value(self, role: str, label: str) -> str:
        """The SSA value of a dynamic dim `label` of a tensor in role in/filt/pad/out."""
        p = self.p
        if role == "in":
            return self._tensor_dim(self.inp, label)
        if role == "filt":
            return self._tensor_dim(self.filt, label)
        if role == "pad":
            if label[0] != "p":
                return self.value("in", label)
            i = int(label[1:])
            return self.index.apply([(1, self.value("in", f"s{i}"))], p.pad_lo[i] + p.pad_hi[i], name=f"%pad_p{i}")
        if role == "out":
            if label == "n":
                return self.value("in", "n")
            if label in ("g", "c"):
                return self.value("in", label)
            if label in ("f", "m"):
                return self.value("filt", label)
            i = int(label[1:])
            s, k = p.spatial[i], p.kernel[i]
            stride, dil = p.strides[i], p.dilations[i]
            lo, hi = p.pad_lo[i], p.pad_hi[i]
            terms: list[tuple[int, str]] = []
            const = lo + hi + dil - 1  # (s + lo + hi - dil*(k-1) - 1) = s - dil*k + const
            if p.in_dyn[f"s{i}"]:
                terms.append((1, self.value("in", f"s{i}")))
            else:
                const += s
            if p.filt_dyn[f"k{i}"]:
                terms.append((-dil, self.value("filt", f"k{i}")))
            else:
                const -= dil * k
            return self.index.apply(terms, const, divisor=stride, name=f"%out_o{i}")
        raise AssertionError(role)

    def dyn_values(self, role: str, t: _Tensor) -> list[str]:
        return [self.value(role, lab) for lab, d in zip(t.labels, t.dyn) if d]


def _transpose_perm(src: list[str], dst: list[str]) -> list[int]:
    return [src.index(lab) for lab in dst]


def _index_expr(label: str, d: dict[str, str], p: Params) -> str:
    if label[0] == "s":  # input spatial (padded): o * stride + k * dilation
        i = label[1:]
        stride, dil = p.strides[int(i)], p.dilations[int(i)]
        o = d["o" + i] if stride == 1 else f"{d['o' + i]} * {stride}"
        k = d["k" + i] if dil == 1 else f"{d['k' + i]} * {dil}"
        return f"{o} + {k}"
    return d[label]


def _elem_literal(value, elem: str) -> str:
    if is_float(elem):
        return repr(float(value))
    return str(int(value))


def render(p: Params) -> str:
    why = quantization_problem(p)
    if why:  # a header's params (a user's case file): one line, exit 2
        raise ValueError(f"not a conv case: {why}")
    io = LAYOUTS[p.layout]
    cl = LAYOUTS[p.compute_layout]
    rank, kind, dtype, acc = p.rank, p.kind, p.dtype, p.acc
    in_dyn, filt_dyn = p.in_dyn, p.filt_dyn

    def tensor(name, labels, dynmap, elem):
        sizes = [label_size(p, lab) for lab in labels]
        return _Tensor(name, labels, sizes, [dynmap(lab) for lab in labels], elem)

    b_in, b_filt, b_out = boundary_labels(p)
    c_in, c_filt, c_out = compute_labels(p)
    inp = tensor("%input", b_in, lambda lab: in_dyn[lab], dtype)
    filt = tensor("%filter", b_filt, lambda lab: filt_dyn[lab], dtype)
    b = _Builder(p, inp, filt)
    args = [{"name": inp.name, "type": inp.type}] + ([] if p.operand == "folded" else [{"name": filt.name, "type": filt.type}])
    # a folded filter is computed first, from constants: every size read from it is then defined
    folded = doubled_lines(filt.name, filter_values(p), dtype, filt.type) if p.operand == "folded" else []
    bias = None
    if p.bias != "none":
        bias = tensor("%bias", bias_labels(kind), lambda lab: out_dyn(p, lab), acc)
        args.append({"name": bias.name, "type": bias.type})
    scalar = _Tensor("%scalar", [], [], [], acc)
    if p.operand == "scalar":
        args.append({"name": scalar.name, "type": scalar.type})
    steps: list[dict] = []

    # Inputs into the compute layout.
    def transpose_in(t: _Tensor, labels: list[str], role: str, name: str) -> _Tensor:
        if labels == t.labels:
            return t
        dyn = dict(zip(t.labels, t.dyn))
        res = tensor(name, labels, lambda lab: dyn[lab], t.elem)
        steps.append({"op": "transpose", "src": t, "dst": res, "init": f"{name}_init",
                      "dyn_values": b.dyn_values(role, res),
                      "perm": _transpose_perm(t.labels, labels)})
        return res

    cin = transpose_in(inp, c_in, "in", "%input_t")
    cfilt = transpose_in(filt, c_filt, "filt", "%filter_t")

    # Padding.
    pad_labels = [("p" + lab[1:]) if lab[0] == "s" else lab for lab in cin.labels]
    conv_in = cin
    if p.pad_form != "none":
        padded = _Tensor("%padded", cin.labels, [label_size(p, lab) for lab in pad_labels],
                         list(cin.dyn), dtype)
        lows = [p.pad_lo[int(lab[1:])] if lab[0] == "s" else 0 for lab in cin.labels]
        highs = [p.pad_hi[int(lab[1:])] if lab[0] == "s" else 0 for lab in cin.labels]
        step: dict[str, Any] = {"op": p.pad_form, "src": cin, "dst": padded, "lows": lows, "highs": highs,
                "value": _elem_literal(p.pad_value, dtype)}
        if p.pad_form == "insert":
            step["dyn_values"] = [b.value("pad", lab) for lab, d in zip(pad_labels, cin.dyn) if d]
            step["sizes"] = [b.value("in", lab) if d else str(s)
                             for lab, d, s in zip(cin.labels, cin.dyn, cin.sizes)]
        steps.append(step)
        conv_in = padded

    # Quantized operands: zero points for the `_q` op or the generic's body, operands shifted for
    # a named op without a `_q` twin, or both dequantized into an f32 conv (the qdq form).
    conv_filt, conv_dtype, conv_acc, named_op, zero_points = cfilt, dtype, acc, cl.named_op, False
    in_role = (lambda lab: ("pad", "p" + lab[1:]) if lab[0] == "s" else ("pad", lab)) if p.pad_form != "none" \
        else (lambda lab: ("in", lab))
    if p.qdq:
        conv_in = _requantized(b, steps, "dequantize", conv_in, in_role, "%input_real", "f32",
                               scale=repr(QDQ_SCALES[0]), zp=p.input_zp, stem="%input_q")
        conv_filt = _requantized(b, steps, "dequantize", cfilt, lambda lab: ("filt", lab), "%filter_real", "f32",
                                 scale=repr(QDQ_SCALES[1]), zp=p.filter_zp, stem="%filter_q")
        conv_dtype = conv_acc = "f32"
    elif p.input_zp or p.filter_zp:
        steps.append({"op": "zero_points", "input_zp": p.input_zp, "filter_zp": p.filter_zp})
        if p.form == "named" and cl.name in QUANTIZED_OPS:
            named_op, zero_points = QUANTIZED_OPS[cl.name], True
        elif p.form == "named":
            conv_in = _requantized(b, steps, "shift", conv_in, in_role, "%input_shifted", "i32", zp="%input_zp")
            conv_filt = _requantized(b, steps, "shift", cfilt, lambda lab: ("filt", lab), "%filter_shifted", "i32",
                                     zp="%filter_zp")
            conv_dtype = "i32"
        else:
            zero_points = True

    # Accumulator init.
    out_c = tensor("%conv", c_out, lambda lab: declared_out_dyn(p, lab), conv_acc)
    init = _Tensor("%init", out_c.labels, out_c.sizes, out_c.dyn, conv_acc)
    out_dyn_values = b.dyn_values("out", out_c)
    if p.bias == "init":
        assert bias is not None
        steps.append({"op": "bias_init", "bias": bias, "dst": init, "dyn_values": out_dyn_values,
                      "bias_map": _broadcast_map(out_c.labels, bias.labels)})
    elif p.operand == "scalar":  # the 0-d argument broadcast, as a bias would be
        steps.append({"op": "bias_init", "bias": scalar, "dst": init, "dyn_values": out_dyn_values,
                      "bias_map": _broadcast_map(out_c.labels, [])})
    elif p.operand == "const":
        steps.append({"op": "lines", "lines": constant_lines(init.name, init_in_compute_layout(p), conv_acc, init.type)})
    else:
        steps.append({"op": "fill", "dst": init, "dyn_values": out_dyn_values,
                      "value": _elem_literal(0, conv_acc)})

    # The convolution.
    conv = {"op": p.form, "inp": conv_in, "filt": conv_filt, "init": init, "dst": out_c,
            "acc": conv_acc, "dtype": conv_dtype, "zero_points": zero_points}
    if p.form == "named":
        assert named_op is not None
        conv["named_op"] = named_op
        conv["strides"] = ", ".join(map(str, p.strides))
        conv["dilations"] = ", ".join(map(str, p.dilations))
        conv["rank"] = rank
    else:
        par, red = loop_labels(kind, rank)
        canon = par + red
        order = [canon[i] for i in p.loop_perm]
        d = {lab: f"d{order.index(lab)}" for lab in canon}
        dims = ", ".join(f"d{i}" for i in range(len(order)))
        in_lab = [lab if lab[0] != "s" else lab for lab in conv_in.labels]
        conv["maps"] = [
            f"affine_map<({dims}) -> ({', '.join(_index_expr(lab, d, p) for lab in in_lab)})>",
            f"affine_map<({dims}) -> ({', '.join(d[lab] for lab in conv_filt.labels)})>",
            f"affine_map<({dims}) -> ({', '.join(d[lab] for lab in out_c.labels)})>",
        ]
        conv["iterators"] = ", ".join(
            '"parallel"' if lab in par else '"reduction"' for lab in order)
    conv["ext"] = _ext_op(conv_dtype, conv_acc)
    steps.append(conv)
    result = out_c
    if p.qdq:  # the f32 result back to the i32 the boundary returns
        result = _Tensor("%conv_i", out_c.labels, out_c.sizes, out_c.dyn, acc)
        steps.append({"op": "rescale", "src": out_c, "dst": result, "init": "%conv_i_init",
                      "dyn_values": out_dyn_values, "inverse": repr(1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1]))})

    # Back to the boundary layout.
    out_io = b_out
    if result.labels != out_io:
        res = tensor("%conv_t", out_io, lambda lab: declared_out_dyn(p, lab), acc)
        steps.append({"op": "transpose", "src": result, "dst": res, "init": "%conv_t_init",
                      "dyn_values": b.dyn_values("out", res),
                      "perm": _transpose_perm(result.labels, out_io)})
        result = res

    # Epilogue: bias add and/or relu.
    if p.bias == "epilogue" or p.epilogue != "none":
        res = _Tensor("%result", result.labels, result.sizes, result.dyn, acc)
        ident = f"affine_map<({', '.join(f'd{i}' for i in range(len(res.labels)))}) -> " \
                f"({', '.join(f'd{i}' for i in range(len(res.labels)))})>"
        step = {"op": "epilogue", "src": result, "dst": res, "init": "%result_init",
                "dyn_values": b.dyn_values("out", res), "ident": ident,
                "bias": bias if p.bias == "epilogue" else None,
                "relu": p.epilogue == "relu", "acc": acc, "float": is_float(acc),
                "zero": _elem_literal(0, acc)}
        if p.bias == "epilogue" and bias is not None:  # step["bias"] is not None
            step["bias_map"] = _broadcast_map(res.labels, bias.labels)
        steps.append(step)
        result = res

    return render_template(
        "conv.mlir.j2", args=args, result=result, index=b.index.ops(), steps=steps, folded=folded)


def _requantized(b: _Builder, steps: list[dict], op: str, src: _Tensor, role, name: str, elem: str, **extra) -> _Tensor:
    """A "dequantize" (to f32) or "shift" (to i32, zero point off) step of `src`, its result
    named `name`: the same labels and sizes, its `?` sizes from the function's arguments (`role`:
    label -> (role, label) for `_Builder.value`)."""
    dst = _Tensor(name, src.labels, src.sizes, src.dyn, elem)
    dyn_values = [b.value(*role(lab)) for lab, d in zip(src.labels, src.dyn) if d]
    steps.append({"op": op, "src": src, "dst": dst, "init": f"{name}_init", "dyn_values": dyn_values, **extra})
    return dst


def _broadcast_map(labels: list[str], bias_labels_: list[str]) -> str:
    dims = ", ".join(f"d{i}" for i in range(len(labels)))
    picks = ", ".join(f"d{labels.index(lab)}" for lab in bias_labels_)
    return f"affine_map<({dims}) -> ({picks})>"


def _ext_op(dtype: str, acc: str) -> str | None:
    if dtype == acc:
        return None
    return "arith.extf" if is_float(dtype) else "arith.extsi"
