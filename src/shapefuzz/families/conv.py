"""The forward-convolution family: 1-D, 2-D and 3-D convolutions in every layout linalg names.

A case is a convolution described once, abstractly (batch `n`, groups `g`, channels per group
`c`, filters per group `f`, depthwise multiplier `m`, spatial sizes, kernel, strides, dilations,
paddings), plus the choices that do not change what it computes:

- `layout`: the layout at the function boundary (e.g. "nchw_fchw"), from `LAYOUTS`;
- `compute_layout`: the layout the convolution itself runs in; when it differs from `layout`,
  `linalg.transpose` ops convert at the function boundary (same label sets, another order);
- `form`: "named" (the `linalg.conv_*` / `linalg.depthwise_conv_*` op) or "generic" (an equivalent
  `linalg.generic` whose loops are permuted by `loop_perm`);
- `pad_form`: "none" (no padding op; only when all pads are 0), "pad" (`tensor.pad`) or "insert"
  (`linalg.fill` of the padded shape and `tensor.insert_slice`);
- `bias`: "none", "epilogue" (added after the convolution) or "init" (broadcast into the
  accumulator before it).

The Python side computes types, maps and SSA names; `templates/conv.mlir.j2` lays out the IR.
The NumPy reference works on one canonical form: input [n, G, C, *spatial], filter
[G, F, C, *kernel], output [n, G, F, *out] (a plain convolution is G = 1; a depthwise one is
G = channels, C = 1, F = multiplier).
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.base import DTYPE_TOLERANCE, EXACT, Family, FamilyParams
from shapefuzz.families.common import (
    affine_expr,
    count_mismatch,
    IndexValues,
    identity_map,
    is_float,
    literal,
    np_dtype,
    shape_mismatch,
    tensor_type,
    values_mismatch,
    with_item,
)
from shapefuzz.model import Mismatch
from shapefuzz.templates import render_template

# --------------------------------------------------------------------------------------------
# Layouts. Each is (rank, kind, input labels, filter labels, output labels, named op or None).
# "S" stands for the spatial dims: s0.. in the input, k0.. in the filter, o0.. in the output.
# Kinds: "regular" (n, c, f), "grouped" (n, g, c, f), "depthwise" (n, c), "depthwise_m" (n, c, m).


@dataclass(frozen=True)
class Layout:
    name: str
    rank: int
    kind: str
    input: str
    filter: str
    output: str
    named_op: str | None


def _layouts() -> dict[str, Layout]:
    table = [
        # rank 1
        ("nwc_wcf", 1, "regular", "nSc", "Scf", "nSf", "conv_1d_nwc_wcf"),
        ("ncw_fcw", 1, "regular", "ncS", "fcS", "nfS", "conv_1d_ncw_fcw"),
        ("ngcw_gfcw", 1, "grouped", "ngcS", "gfcS", "ngfS", None),
        ("nwgc_gfwc", 1, "grouped", "nSgc", "gfSc", "nSgf", None),
        ("nwc_wc", 1, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_1d_nwc_wc"),
        ("ncw_cw", 1, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_1d_ncw_cw"),
        ("nwc_wcm", 1, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_1d_nwc_wcm"),
        ("ncw_cmw", 1, "depthwise_m", "ncS", "cmS", "ncmS", None),
        # rank 2
        ("nhwc_hwcf", 2, "regular", "nSc", "Scf", "nSf", "conv_2d_nhwc_hwcf"),
        ("nhwc_fhwc", 2, "regular", "nSc", "fSc", "nSf", "conv_2d_nhwc_fhwc"),
        ("nchw_fchw", 2, "regular", "ncS", "fcS", "nfS", "conv_2d_nchw_fchw"),
        ("ngchw_fgchw", 2, "grouped", "ngcS", "fgcS", "ngfS", "conv_2d_ngchw_fgchw"),
        ("ngchw_gfchw", 2, "grouped", "ngcS", "gfcS", "ngfS", "conv_2d_ngchw_gfchw"),
        ("nhwgc_gfhwc", 2, "grouped", "nSgc", "gfSc", "nSgf", "conv_2d_nhwgc_gfhwc"),
        ("nhwc_hwc", 2, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_2d_nhwc_hwc"),
        ("nchw_chw", 2, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_2d_nchw_chw"),
        ("nhwc_hwcm", 2, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_2d_nhwc_hwcm"),
        ("nchw_cmhw", 2, "depthwise_m", "ncS", "cmS", "ncmS", None),
        # rank 3
        ("ndhwc_dhwcf", 3, "regular", "nSc", "Scf", "nSf", "conv_3d_ndhwc_dhwcf"),
        ("ncdhw_fcdhw", 3, "regular", "ncS", "fcS", "nfS", "conv_3d_ncdhw_fcdhw"),
        ("ngcdhw_gfcdhw", 3, "grouped", "ngcS", "gfcS", "ngfS", None),
        ("ndhwgc_gfdhwc", 3, "grouped", "nSgc", "gfSc", "nSgf", None),
        ("ndhwc_dhwc", 3, "depthwise", "nSc", "Sc", "nSc", "depthwise_conv_3d_ndhwc_dhwc"),
        ("ncdhw_cdhw", 3, "depthwise", "ncS", "cS", "ncS", "depthwise_conv_3d_ncdhw_cdhw"),
        ("ndhwc_dhwcm", 3, "depthwise_m", "nSc", "Scm", "nScm", "depthwise_conv_3d_ndhwc_dhwcm"),
        ("ncdhw_cmdhw", 3, "depthwise_m", "ncS", "cmS", "ncmS", None),
    ]
    return {row[0]: Layout(*row) for row in table}


LAYOUTS = _layouts()
KINDS = ("regular", "grouped", "depthwise", "depthwise_m")
DTYPES = {"f32": ("f32",), "f16": ("f32", "f16"), "i32": ("i32",), "i8": ("i32",)}


def _expand(spec: str, rank: int, spatial_prefix: str) -> list[str]:
    labels: list[str] = []
    for ch in spec:
        if ch == "S":
            labels.extend(f"{spatial_prefix}{i}" for i in range(rank))
        else:
            labels.append(ch)
    return labels


def input_labels(layout: Layout) -> list[str]:
    return _expand(layout.input, layout.rank, "s")


def filter_labels(layout: Layout) -> list[str]:
    return _expand(layout.filter, layout.rank, "k")


def output_labels(layout: Layout) -> list[str]:
    return _expand(layout.output, layout.rank, "o")


def layouts_for(rank: int, kind: str) -> list[Layout]:
    return [lay for lay in LAYOUTS.values() if lay.rank == rank and lay.kind == kind]


_is_float = is_float


@dataclass(frozen=True)
class Params(FamilyParams):
    rank: int
    kind: str  # KINDS
    layout: str  # the layout at the function boundary (LAYOUTS)
    compute_layout: str  # the layout the convolution runs in (transposes between)
    form: str  # "named" | "generic"
    loop_perm: tuple[int, ...]  # the generic's loop order (empty for named)
    dtype: str
    acc: str
    n: int
    g: int
    c: int
    f: int
    m: int
    spatial: tuple[int, ...]
    kernel: tuple[int, ...]
    strides: tuple[int, ...]
    dilations: tuple[int, ...]
    pad_lo: tuple[int, ...]
    pad_hi: tuple[int, ...]
    pad_form: str  # "none" | "pad" | "insert"
    pad_value: float | int
    input_dyn: tuple[bool, ...]  # in the boundary layout's input dim order
    filter_dyn: tuple[bool, ...]  # in the boundary layout's filter dim order
    bias: str  # "none" | "epilogue" | "init"
    epilogue: str  # "none" | "relu"
    big: bool
    # Free operand dim orders: the function's input / filter / output dims are these
    # permutations of the layout's (empty: the layout's own order). With `perm_compute` the
    # linalg.generic itself takes them in that order (no transposes; compute_layout == layout).
    input_perm: tuple[int, ...] = ()
    filter_perm: tuple[int, ...] = ()
    output_perm: tuple[int, ...] = ()
    perm_compute: bool = False
    # Result types not derived mechanically: the declared dynamic flag of each output dim (in the
    # boundary output order), overriding what the operands imply (empty: derived). A dim may be
    # static although the operands give it as `?`, or `?` although they fix it.
    result_dyn: tuple[bool, ...] = ()

    @classmethod
    def upgrade(cls, data: dict) -> dict:
        # Old headers: `in_dyn` / `filt_dyn` as {dim label: dynamic} dicts.
        lay = LAYOUTS.get(data.get("layout", ""))
        for old, new, labels, perm in (("in_dyn", "input_dyn", input_labels, "input_perm"),
                                       ("filt_dyn", "filter_dyn", filter_labels, "filter_perm")):
            if old in data and new not in data and lay is not None:
                flags = data.pop(old)
                data[new] = [bool(flags[lab]) for lab in _permuted(labels(lay), tuple(data.get(perm, ())))]
        return data

    @property
    def in_dyn(self) -> dict[str, bool]:
        return dict(zip(boundary_labels(self)[0], self.input_dyn))

    @property
    def filt_dyn(self) -> dict[str, bool]:
        return dict(zip(boundary_labels(self)[1], self.filter_dyn))


def _permuted(labels: list[str], perm: tuple[int, ...]) -> list[str]:
    return [labels[i] for i in perm] if perm else list(labels)


def boundary_labels(p: Params) -> tuple[list[str], list[str], list[str]]:
    """The (input, filter, output) dim labels of the function's arguments and result."""
    io = LAYOUTS[p.layout]
    return (_permuted(input_labels(io), p.input_perm), _permuted(filter_labels(io), p.filter_perm),
            _permuted(output_labels(io), p.output_perm))


def compute_labels(p: Params) -> tuple[list[str], list[str], list[str]]:
    """The (input, filter, output) dim labels the convolution op itself takes."""
    if p.perm_compute:
        return boundary_labels(p)
    cl = LAYOUTS[p.compute_layout]
    return input_labels(cl), filter_labels(cl), output_labels(cl)


# --------------------------------------------------------------------------------------------
# Sizes


def out_size(size: int, k: int, stride: int, dil: int, lo: int, hi: int) -> int:
    return (size + lo + hi - dil * (k - 1) - 1) // stride + 1


def out_spatial(p: Params) -> list[int]:
    return [
        out_size(s, k, st_, d, lo, hi)
        for s, k, st_, d, lo, hi in zip(
            p.spatial, p.kernel, p.strides, p.dilations, p.pad_lo, p.pad_hi
        )
    ]


def _label_size(p: Params, label: str) -> int:
    if label in ("n", "g", "c", "f", "m"):
        return p[label]
    i = int(label[1:])
    if label[0] == "s":
        return p.spatial[i]
    if label[0] == "k":
        return p.kernel[i]
    if label[0] == "p":
        return p.spatial[i] + p.pad_lo[i] + p.pad_hi[i]
    if label[0] == "o":
        return out_spatial(p)[i]
    raise AssertionError(label)


def input_shape(p: Params) -> list[int]:
    return [_label_size(p, lab) for lab in boundary_labels(p)[0]]


def filter_shape(p: Params) -> list[int]:
    return [_label_size(p, lab) for lab in boundary_labels(p)[1]]


def output_shape(p: Params) -> list[int]:
    return [_label_size(p, lab) for lab in boundary_labels(p)[2]]


def bias_labels(kind: str) -> list[str]:
    return {"regular": ["f"], "grouped": ["g", "f"], "depthwise": ["c"], "depthwise_m": ["c", "m"]}[kind]


def bias_shape(p: Params) -> list[int]:
    return [p[lab] for lab in bias_labels(p.kind)]


def _declared_out_dyn(p: Params, label: str) -> bool:
    """Whether an output dim is `?` in the IR's types: `result_dyn` when given, else derived."""
    if p.result_dyn:
        return p.result_dyn[boundary_labels(p)[2].index(label)]
    return _out_dyn(p, label)


def _out_dyn(p: Params, label: str) -> bool:
    """Whether an output dim is `?`: only when no operand gives its size statically."""
    ind, fd = p.in_dyn, p.filt_dyn
    if label == "n":
        return ind["n"]
    if label == "g":
        return ind["g"] and fd["g"]
    if label == "c":  # depthwise: a parallel dim of input and filter
        return ind["c"] and fd["c"]
    if label in ("f", "m"):
        return fd[label]
    i = label[1:]
    return ind["s" + i] or fd["k" + i]


def reduction_size(p: Params) -> int:
    size = int(np.prod(p.kernel))
    if p.kind in ("regular", "grouped"):
        size *= p.c
    return size


# --------------------------------------------------------------------------------------------
# Rendering


def _shape_str(sizes: list[int], dyn: list[bool], elem: str) -> str:
    return tensor_type(sizes, elem, dyn)


_affine_expr = affine_expr


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


def _loop_labels(kind: str, rank: int) -> tuple[list[str], list[str]]:
    """(parallel loop labels, reduction loop labels) in canonical order."""
    outs = [f"o{i}" for i in range(rank)]
    ks = [f"k{i}" for i in range(rank)]
    if kind == "regular":
        return ["n", "f", *outs], ["c", *ks]
    if kind == "grouped":
        return ["n", "g", "f", *outs], ["c", *ks]
    if kind == "depthwise":
        return ["n", "c", *outs], ks
    return ["n", "c", "m", *outs], ks


def _index_expr(label: str, d: dict[str, str], p: Params) -> str:
    if label[0] == "s":  # input spatial (padded): o * stride + k * dilation
        i = label[1:]
        stride, dil = p.strides[int(i)], p.dilations[int(i)]
        o = d["o" + i] if stride == 1 else f"{d['o' + i]} * {stride}"
        k = d["k" + i] if dil == 1 else f"{d['k' + i]} * {dil}"
        return f"{o} + {k}"
    return d[label]


def _elem_literal(value, elem: str) -> str:
    if _is_float(elem):
        return repr(float(value))
    return str(int(value))


def render(p: Params) -> str:
    io = LAYOUTS[p.layout]
    cl = LAYOUTS[p.compute_layout]
    rank, kind, dtype, acc = p.rank, p.kind, p.dtype, p.acc
    in_dyn, filt_dyn = p.in_dyn, p.filt_dyn

    def tensor(name, labels, dynmap, elem):
        sizes = [_label_size(p, lab) for lab in labels]
        return _Tensor(name, labels, sizes, [dynmap(lab) for lab in labels], elem)

    b_in, b_filt, b_out = boundary_labels(p)
    c_in, c_filt, c_out = compute_labels(p)
    inp = tensor("%input", b_in, lambda lab: in_dyn[lab], dtype)
    filt = tensor("%filter", b_filt, lambda lab: filt_dyn[lab], dtype)
    b = _Builder(p, inp, filt)
    args = [{"name": inp.name, "type": inp.type}, {"name": filt.name, "type": filt.type}]
    bias = None
    if p.bias != "none":
        bias = tensor("%bias", bias_labels(kind), lambda lab: _out_dyn(p, lab), acc)
        args.append({"name": bias.name, "type": bias.type})
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
        padded = _Tensor("%padded", cin.labels, [_label_size(p, lab) for lab in pad_labels],
                         list(cin.dyn), dtype)
        lows = [p.pad_lo[int(lab[1:])] if lab[0] == "s" else 0 for lab in cin.labels]
        highs = [p.pad_hi[int(lab[1:])] if lab[0] == "s" else 0 for lab in cin.labels]
        step = {"op": p.pad_form, "src": cin, "dst": padded, "lows": lows, "highs": highs,
                "value": _elem_literal(p.pad_value, dtype)}
        if p.pad_form == "insert":
            step["dyn_values"] = [b.value("pad", lab) for lab, d in zip(pad_labels, cin.dyn) if d]
            step["sizes"] = [b.value("in", lab) if d else str(s)
                             for lab, d, s in zip(cin.labels, cin.dyn, cin.sizes)]
        steps.append(step)
        conv_in = padded

    # Accumulator init.
    out_c = tensor("%conv", c_out, lambda lab: _declared_out_dyn(p, lab), acc)
    init = _Tensor("%init", out_c.labels, out_c.sizes, out_c.dyn, acc)
    out_dyn_values = b.dyn_values("out", out_c)
    if p.bias == "init":
        assert bias is not None
        steps.append({"op": "bias_init", "bias": bias, "dst": init, "dyn_values": out_dyn_values,
                      "bias_map": _broadcast_map(out_c.labels, bias.labels)})
    else:
        steps.append({"op": "fill", "dst": init, "dyn_values": out_dyn_values,
                      "value": _elem_literal(0, acc)})

    # The convolution.
    conv = {"op": p.form, "inp": conv_in, "filt": cfilt, "init": init, "dst": out_c,
            "acc": acc, "dtype": dtype}
    if p.form == "named":
        assert cl.named_op is not None
        conv["named_op"] = cl.named_op
        conv["strides"] = ", ".join(map(str, p.strides))
        conv["dilations"] = ", ".join(map(str, p.dilations))
        conv["rank"] = rank
    else:
        par, red = _loop_labels(kind, rank)
        canon = par + red
        order = [canon[i] for i in p.loop_perm]
        d = {lab: f"d{order.index(lab)}" for lab in canon}
        dims = ", ".join(f"d{i}" for i in range(len(order)))
        in_lab = [lab if lab[0] != "s" else lab for lab in conv_in.labels]
        conv["maps"] = [
            f"affine_map<({dims}) -> ({', '.join(_index_expr(lab, d, p) for lab in in_lab)})>",
            f"affine_map<({dims}) -> ({', '.join(d[lab] for lab in cfilt.labels)})>",
            f"affine_map<({dims}) -> ({', '.join(d[lab] for lab in out_c.labels)})>",
        ]
        conv["iterators"] = ", ".join(
            '"parallel"' if lab in par else '"reduction"' for lab in order)
    conv["ext"] = _ext_op(dtype, acc)
    steps.append(conv)

    # Back to the boundary layout.
    result = out_c
    out_io = b_out
    if out_c.labels != out_io:
        res = tensor("%conv_t", out_io, lambda lab: _declared_out_dyn(p, lab), acc)
        steps.append({"op": "transpose", "src": out_c, "dst": res, "init": "%conv_t_init",
                      "dyn_values": b.dyn_values("out", res),
                      "perm": _transpose_perm(out_c.labels, out_io)})
        result = res

    # Epilogue: bias add and/or relu.
    if p.bias == "epilogue" or p.epilogue != "none":
        res = _Tensor("%result", result.labels, result.sizes, result.dyn, acc)
        ident = f"affine_map<({', '.join(f'd{i}' for i in range(len(res.labels)))}) -> " \
                f"({', '.join(f'd{i}' for i in range(len(res.labels)))})>"
        step = {"op": "epilogue", "src": result, "dst": res, "init": "%result_init",
                "dyn_values": b.dyn_values("out", res), "ident": ident,
                "bias": bias if p.bias == "epilogue" else None,
                "relu": p.epilogue == "relu", "acc": acc, "float": _is_float(acc),
                "zero": _elem_literal(0, acc)}
        if step["bias"] is not None:
            step["bias_map"] = _broadcast_map(res.labels, bias.labels)
        steps.append(step)
        result = res

    return render_template(
        "conv.mlir.j2", args=args, result=result, index=b.index.ops(), steps=steps)


def _broadcast_map(labels: list[str], bias_labels_: list[str]) -> str:
    dims = ", ".join(f"d{i}" for i in range(len(labels)))
    picks = ", ".join(f"d{labels.index(lab)}" for lab in bias_labels_)
    return f"affine_map<({dims}) -> ({picks})>"


def _ext_op(dtype: str, acc: str) -> str | None:
    if dtype == acc:
        return None
    return "arith.extf" if _is_float(dtype) else "arith.extsi"


# --------------------------------------------------------------------------------------------
# Inputs, reference, comparison


def make_inputs(p: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    dtype = p.dtype

    def draw(shape, acc_type=False):
        if _is_float(dtype):
            # Small multiples of 1/4: f32 products and sums are exact.
            vals = rng.integers(-4, 5, size=shape) / 4.0
            return vals.astype(np_dtype(p.acc if acc_type else dtype))
        lim = 4 if dtype == "i8" else 8
        vals = rng.integers(-lim, lim + 1, size=shape)
        return vals.astype(np.int32 if acc_type else np_dtype(dtype))

    arrays = [draw(input_shape(p)), draw(filter_shape(p))]
    if p.bias != "none":
        arrays.append(draw(bias_shape(p), acc_type=True))
    return arrays


def _canonical_names(kind: str) -> dict[str, str]:
    if kind in ("depthwise", "depthwise_m"):
        return {"n": "n", "c": "G", "m": "F"}
    return {"n": "n", "g": "G", "c": "C", "f": "F"}


def _to_canonical(arr: np.ndarray, labels: list[str], order: list[str], kind: str) -> np.ndarray:
    names = _canonical_names(kind)
    cur = [names.get(lab, lab) for lab in labels]
    for lab in order:
        if lab not in cur:
            arr = arr[..., None]
            cur.append(lab)
    return np.transpose(arr, [cur.index(lab) for lab in order])


def _from_canonical(arr: np.ndarray, order: list[str], labels: list[str], kind: str) -> np.ndarray:
    names = _canonical_names(kind)
    want = [names.get(lab, lab) for lab in labels]
    drop = tuple(i for i, lab in enumerate(order) if lab not in want)
    arr = arr.reshape([s for i, s in enumerate(arr.shape) if i not in drop])
    kept = [lab for lab in order if lab in want]
    return np.transpose(arr, [kept.index(lab) for lab in want])


def _conv_canonical(p: Params, x: np.ndarray, w: np.ndarray, pad_value) -> np.ndarray:
    """x [n, G, C, *S], w [G, F, C, *K] -> [n, G, F, *O], in x's dtype (float64/int64)."""
    rank = p.rank
    pads = [(0, 0)] * 3 + list(zip(p.pad_lo, p.pad_hi))
    xp = np.pad(x, pads, mode="constant", constant_values=pad_value)
    outs = out_spatial(p)
    n, g, _, *_ = x.shape
    f = w.shape[1]
    out = np.zeros([n, g, f, *outs], dtype=x.dtype)
    for kpos in itertools.product(*[range(k) for k in p.kernel]):
        sl = tuple(
            slice(kpos[i] * p.dilations[i],
                  kpos[i] * p.dilations[i] + (outs[i] - 1) * p.strides[i] + 1,
                  p.strides[i])
            for i in range(rank))
        xs = xp[(slice(None),) * 3 + sl]
        wk = w[(slice(None),) * 3 + tuple(kpos)]
        out += np.einsum("ngc...,gfc->ngf...", xs, wk)
    return out


def _exact_result(p: Params, inputs: list[np.ndarray], absolute: bool = False) -> np.ndarray:
    """The mathematically exact result (float64 / int64) in the boundary output layout;
    with `absolute`, the same computation on |x|, |w|, |bias| (an error bound's scale)."""
    io = LAYOUTS[p.layout]
    kind = p.kind
    wide = np.float64 if _is_float(p.dtype) else np.int64
    x = inputs[0].astype(wide)
    w = inputs[1].astype(wide)
    pad_value = wide(np_dtype(p.dtype).type(p.pad_value))
    if absolute:
        x, w, pad_value = np.abs(x), np.abs(w), abs(pad_value)
    b_in, b_filt, b_out = boundary_labels(p)
    xc = _to_canonical(x, b_in, ["n", "G", "C", *[f"s{i}" for i in range(p.rank)]], kind)
    wc = _to_canonical(w, b_filt, ["G", "F", "C", *[f"k{i}" for i in range(p.rank)]], kind)
    oc = _conv_canonical(p, xc, wc, pad_value)
    out = _from_canonical(oc, ["n", "G", "F", *[f"o{i}" for i in range(p.rank)]],
                          b_out, kind)
    if p.bias != "none":
        bias = inputs[2].astype(wide)
        if absolute:
            bias = np.abs(bias)
        labels = b_out
        blabs = bias_labels(kind)
        shape = [out.shape[i] if lab in blabs else 1 for i, lab in enumerate(labels)]
        order = [lab for lab in labels if lab in blabs]
        bias = np.transpose(bias, [blabs.index(lab) for lab in order]).reshape(shape)
        out = out + bias
    if p.epilogue == "relu" and not absolute:
        out = np.maximum(out, 0)
    return out


def reference(p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    exact = _exact_result(p, inputs)
    acc = p.acc
    if acc == "i32":  # two's-complement wraparound, as arith.addi/muli do
        return [exact.astype(np.int64).astype(np.int32)]
    return [exact.astype(np_dtype(acc))]


def _needs_tolerance(p: Params) -> bool:
    return p.acc == "f16"


def compare(p: Params, inputs: list[np.ndarray], expected: list[np.ndarray],
            actual: list[np.ndarray]) -> Mismatch | None:
    problem = count_mismatch(expected, actual) or shape_mismatch(0, expected[0], np.asarray(actual[0]))
    if problem:
        return problem
    act = np.asarray(actual[0])
    if _needs_tolerance(p):
        # f16 accumulation: each of the K additions (and the bias add) rounds with unit
        # roundoff 2^-11 relative to the running magnitude; bound by (K + 2) * u * sum(|terms|).
        scale = _exact_result(p, inputs, absolute=True)
        exact = _exact_result(p, inputs)
        tol = (reduction_size(p) + 2) * 2.0 ** -11 * scale * 2 + 2.0 ** -14
        return values_mismatch(0, exact, act, atol=tol)
    return values_mismatch(0, expected[0], act)


def export_rule(p: Params) -> dict:
    """Exact, as `compare`; f16 accumulation gets the dtype's tolerance (the per-element bound
    `compare` computes needs the exact result, which an exported test does not have)."""
    return dict(DTYPE_TOLERANCE if _needs_tolerance(p) else EXACT)


# --------------------------------------------------------------------------------------------
# Strategy

SPATIAL = [1, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17]
CHANNELS = [1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32]
BATCH = [1, 1, 1, 2, 3]
KERNEL = [1, 1, 2, 3, 3, 5]
STRIDE = [1, 1, 1, 2, 3]
DILATION = [1, 1, 1, 2, 3]
PAD = [0, 0, 0, 1, 1, 2, 3]
BIG_SPATIAL = [31, 33, 64, 65, 127, 129]
BIG_CHANNELS = [31, 33, 64, 65, 128, 129, 257]
# Multiply-accumulates allowed per case, so the NumPy reference (and a CPU run) stays quick;
# big cases are meant for compile-only GPU targets but still get a reference.
MAX_MACS = 2_000_000
MAX_MACS_BIG = 200_000_000
# The large regime (for compile-only lanes): spatial 32-64, channels 64-512, inputs over 64 KB.
LARGE_SPATIAL = [32, 33, 40, 48, 63, 64]
LARGE_CHANNELS = [64, 65, 96, 128, 255, 256, 512]
LARGE_MIN_INPUT_BYTES = 64 * 1024
LARGE_MAX_INPUT_BYTES = 16 << 20  # inputs are still made (and a reference computed) in memory


def macs(p: Params) -> int:
    per_out = int(np.prod(p.kernel)) * (p.c if p.kind in ("regular", "grouped") else 1)
    return int(np.prod(output_shape(p))) * per_out


def _fit_budget(d: dict, regime: str = "small") -> None:
    """Halve the largest spatial size (keeping the output >= 1), then channels, until the case
    (a params dict being drawn) is within its multiply-accumulate budget. The large regime
    halves channels first (down to 64), keeping its spatial sizes."""
    cap = MAX_MACS_BIG if d["big"] else MAX_MACS
    while macs(Params.from_json(d)) > cap:
        if regime == "large":
            key = max(("c", "f"), key=lambda k: d[k])
            if d[key] > 64:
                d[key] = max(64, d[key] // 2)
                continue
        sp = d["spatial"]
        i = max(range(d["rank"]), key=lambda j: sp[j])
        need = max(1, d["dilations"][i] * (d["kernel"][i] - 1) + 1 - d["pad_lo"][i] - d["pad_hi"][i])
        if sp[i] // 2 >= need and sp[i] > 1:
            sp[i] //= 2
            continue
        key = max(("c", "f", "g", "n", "m"), key=lambda k: d[k])
        if d[key] == 1:
            break
        d[key] = (d[key] + 1) // 2


def _labels_of(layout: Layout) -> tuple[set[str], set[str]]:
    return set(input_labels(layout)), set(filter_labels(layout))


def _default_dyn(layout: Layout, value: bool = False) -> tuple[dict, dict]:
    return ({lab: value for lab in input_labels(layout)},
            {lab: value for lab in filter_labels(layout)})


def pick(rng: random.Random, seq):
    seq = list(seq)
    return seq[rng.randrange(len(seq))]


_LAYOUT_DRAWS = sorted(LAYOUTS) + ["ncdhw_fcdhw", "ncdhw_fcdhw", "ncdhw_fcdhw", "nchw_fchw",
                                   "nhwc_hwcf", "ndhwc_dhwcf", "ngchw_gfchw", "ncdhw_cdhw"]


def _grow_input(d: dict, min_bytes: int) -> None:
    """Double the channels (then the batch) until the input is over `min_bytes`."""
    p = Params.from_json(d)
    while int(np.prod(input_shape(p))) * np_dtype(d["dtype"]).itemsize <= min_bytes:
        key = "c" if d["c"] < 512 else "n"
        d[key] *= 2
        p = Params.from_json(d)


def params_from_seed(seed: int, regime: str = "small") -> Params:
    """One valid case, drawn from a seeded generator.

    Hypothesis supplies only the seed: drawing each categorical choice through Hypothesis
    left whole layouts unreached in hundreds of derandomized draws (its mutations correlate the
    choices), while independent uniform choices reach every layout and feature. Structured
    shrinking is this family's `shrink_candidates`, not Hypothesis's."""
    rng = random.Random(seed)
    big = regime == "large" or pick(rng, [False] * 29 + [True])  # about 1 in 30
    # Every layout, plus extra weight on the common ones and on the class-1 bug's layout
    # (3-D channels-first with a size-1 kernel dim).
    layout = LAYOUTS[pick(rng, _LAYOUT_DRAWS)]
    rank, kind = layout.rank, layout.kind
    choices = layouts_for(rank, kind)
    compute = layout
    if pick(rng, (False, False, False, True)):
        compute = pick(rng, choices)
    form = "generic"
    if compute.named_op is not None and pick(rng, (False, True)):
        form = "named"
    par, red = _loop_labels(kind, rank)
    nloops = len(par) + len(red)
    if form == "generic" and pick(rng, (False, True)):
        loop_perm = list(range(nloops))
        rng.shuffle(loop_perm)
    else:
        loop_perm = list(range(nloops))
    if form == "named":
        loop_perm = []
    dtype = pick(rng, ["f32", "f32", "f16", "i32", "i8"])
    acc = pick(rng, DTYPES[dtype])

    chans = LARGE_CHANNELS if regime == "large" else BIG_CHANNELS if big else CHANNELS
    spat_choices = LARGE_SPATIAL if regime == "large" else BIG_SPATIAL if big else SPATIAL
    n = pick(rng, BATCH)
    g = pick(rng, [2, 2, 3, 4, 5, 1] + ([8, 17] if big else [])) if kind == "grouped" else 1
    c = pick(rng, chans)
    f = pick(rng, chans) if kind in ("regular", "grouped") else 1
    m = pick(rng, [1, 2, 3, 4]) if kind == "depthwise_m" else 1
    if big and kind == "grouped" and regime != "large":  # keep the total channel count moderate
        c = min(c, 33)
        f = min(f, 33)

    kernel, strides, dils, lo, hi, spatial = [], [], [], [], [], []
    for _ in range(rank):
        k = pick(rng, KERNEL)
        s = pick(rng, STRIDE)
        d = pick(rng, DILATION)
        a = pick(rng, PAD)
        z = pick(rng, PAD + [a, a])  # symmetric padding is common
        need = max(1, d * (k - 1) + 1 - a - z)
        size = max(pick(rng, spat_choices), need)
        kernel.append(k), strides.append(s), dils.append(d), lo.append(a), hi.append(z)
        spatial.append(size)
    if rank >= 2 and pick(rng, (False, False, True)):  # force a size-1 kernel dim
        kernel[pick(rng, range(rank))] = 1
    any_pad = any(lo) or any(hi)
    if any_pad:
        pad_form = pick(rng, ["pad", "pad", "insert"])
    else:
        pad_form = pick(rng, ["none", "none", "pad", "insert"])
    pad_value = 0
    if pad_form != "none" and pick(rng, (False, False, False, True)):
        pad_value = pick(rng, [1, -2, 0.5] if _is_float(dtype) else [1, -2, 3])

    in_dyn, filt_dyn = _default_dyn(layout)
    mode = pick(rng, ["none", "all", "mixed", "mixed"])
    if mode == "all":
        in_dyn, filt_dyn = _default_dyn(layout, True)
    elif mode == "mixed":
        for dmap in (in_dyn, filt_dyn):
            for lab in dmap:
                dmap[lab] = pick(rng, (False, True))
    bias = pick(rng, ["none", "none", "epilogue", "init"])
    epilogue = pick(rng, ["none", "none", "relu"])
    # Free operand dim orders (drawn last, so every earlier choice of a seed stays as it was):
    # about one generic case in three takes its input / filter / output in other dim orders,
    # half of those with the linalg.generic itself in that order.
    perms: dict[str, list[int]] = {"input_perm": [], "filter_perm": [], "output_perm": []}
    perm_compute = False
    if form == "generic" and pick(rng, (False, False, True)):
        for key, labels in (("input_perm", input_labels(layout)), ("filter_perm", filter_labels(layout)),
                            ("output_perm", output_labels(layout))):
            if pick(rng, (False, True, True)):
                perm = list(range(len(labels)))
                rng.shuffle(perm)
                perms[key] = [] if perm == sorted(perm) else perm
        perm_compute = compute.name == layout.name and any(perms.values()) and pick(rng, (False, True))
    # Result types not derived from the operands: about one case in five declares some output
    # dims static where the operands leave them `?`, or `?` where the operands fix them.
    flip_result = pick(rng, (False, False, False, False, True))
    flips = [pick(rng, (False, True)) for _ in output_labels(layout)]
    b_in = _permuted(input_labels(layout), tuple(perms["input_perm"]))
    b_filt = _permuted(filter_labels(layout), tuple(perms["filter_perm"]))
    params = {
        "rank": rank, "kind": kind, "layout": layout.name, "compute_layout": compute.name,
        "form": form, "loop_perm": loop_perm, "dtype": dtype, "acc": acc,
        "n": n, "g": g, "c": c, "f": f, "m": m,
        "spatial": spatial, "kernel": kernel, "strides": strides, "dilations": dils,
        "pad_lo": lo, "pad_hi": hi, "pad_form": pad_form, "pad_value": pad_value,
        "input_dyn": [in_dyn[lab] for lab in b_in],
        "filter_dyn": [filt_dyn[lab] for lab in b_filt],
        "bias": bias, "epilogue": epilogue, "big": big, **perms, "perm_compute": perm_compute,
    }
    if flip_result:
        typed = Params.from_json(params)
        derived = [_out_dyn(typed, lab) for lab in boundary_labels(typed)[2]]
        declared = [d != f for d, f in zip(derived, flips)]
        params["result_dyn"] = declared if declared != derived else []
    _fit_budget(params, regime)
    if regime == "large":
        _grow_input(params, LARGE_MIN_INPUT_BYTES)
        while _input_bytes(params) > LARGE_MAX_INPUT_BYTES and max(params["c"], params["n"]) > 64:
            params["c"] = max(64, params["c"] // 2)
        while _input_bytes(params) > LARGE_MAX_INPUT_BYTES:
            sp = params["spatial"]
            sp[max(range(len(sp)), key=lambda j: sp[j])] //= 2
    return Params.from_json(params)


def _input_bytes(d: dict) -> int:
    return int(np.prod(input_shape(Params.from_json(d)))) * np_dtype(d["dtype"]).itemsize


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return st.integers(0, 2**63 - 1).map(lambda seed: params_from_seed(seed, regime))


# --------------------------------------------------------------------------------------------
# Metamorphic forms, features, shrinking


def _with(p: Params, **changes) -> Params:
    return p.replace(**changes)


def _canonical_loop_perm(p: Params) -> list[int]:
    par, red = _loop_labels(p.kind, p.rank)
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
    nloops = len(_canonical_loop_perm(p))
    if p.form == "named":
        forms.append(_with(p, form="generic", loop_perm=list(range(nloops))))
        forms.append(_with(p, form="generic", loop_perm=list(reversed(range(nloops)))))
    elif LAYOUTS[p.compute_layout].named_op is not None:
        forms.append(_with(p, form="named", loop_perm=[]))
    for lay in layouts_for(p.rank, p.kind):
        if lay.name == p.compute_layout:
            continue
        if lay.named_op is not None:
            forms.append(_with(p, compute_layout=lay.name, form="named", loop_perm=[]))
        else:
            forms.append(_with(p, compute_layout=lay.name, form="generic",
                               loop_perm=list(range(nloops))))
    other_pad = {"pad": "insert", "insert": "pad", "none": "pad"}[p.pad_form]
    forms.append(_with(p, pad_form=other_pad))
    if p.bias != "none":
        forms.append(_with(p, bias="init" if p.bias == "epilogue" else "epilogue"))
    return [q for q in forms if q != p]


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    "dyn:none", "dyn:all", "dyn:mixed", "form:named", "form:generic", "loops:permuted",
    "rank:1", "rank:2", "rank:3", "kind:regular", "kind:grouped", "kind:depthwise",
    "kind:depthwise_m", "groups>1", "transposed", "pad:zero", "pad:sym", "pad:asym",
    "pad_form:none", "pad_form:pad", "pad_form:insert", "pad_value:nonzero", "stride>1",
    "dilation>1", "kernel:has1", "filter:dyn", "bias:epilogue", "bias:init", "epilogue:relu",
    "dtype:f32", "dtype:f16", "dtype:i32", "dtype:i8", "acc:f16", "big",
    "class1:ncdhw-kernel1", "perm:input", "perm:filter", "perm:output", "perm:compute", "red-order:differs",
    "result:static-of-dyn", "result:dyn-of-static",
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
        f"rank:{p['rank']}", f"kind:{p['kind']}", f"form:{p['form']}", f"layout:{p['layout']}",
        f"dtype:{p['dtype']}", f"acc:{p['acc']}", dyn, pad, f"pad_form:{p['pad_form']}",
        f"bias:{p['bias']}", f"epilogue:{p['epilogue']}",
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
        derived = [_out_dyn(p, lab) for lab in boundary_labels(p)[2]]
        if any(d and not r for d, r in zip(derived, p.result_dyn)):
            feats.append("result:static-of-dyn")
        if any(r and not d for d, r in zip(derived, p.result_dyn)):
            feats.append("result:dyn-of-static")
    if _reduction_orders_differ(p):
        feats.append("red-order:differs")
    if p.rank == 3 and LAYOUTS[p.layout].input.startswith("nc") and 1 in p.kernel:
        feats.append("class1:ncdhw-kernel1")
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
    return all(o >= 1 for o in out_spatial(p)) and all(s >= 1 for s in p.spatial)


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

    q = _with(p, rank=rank, layout=new_io.name, compute_layout=new_cl.name, form=form, result_dyn=(),
              **{key: [p[key][i] for i in keep] for key in ("spatial", "kernel", "strides",
                                                          "dilations", "pad_lo", "pad_hi")},
              input_dyn=[renamed(p.in_dyn, lab) for lab in input_labels(new_io)],
              filter_dyn=[renamed(p.filt_dyn, lab) for lab in filter_labels(new_io)])
    return _with(q, loop_perm=[] if form == "named" else _canonical_loop_perm(q))


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(input_dyn=[False] * len(p.input_dyn), filter_dyn=[False] * len(p.filter_dyn)),
    "f32": lambda p: p.replace(dtype="f32", acc="f32"),
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
    return q if form == "named" else q.replace(loop_perm=_canonical_loop_perm(q))


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
        cands.append(_with(p, big=False))
    if any(p.input_dyn) or any(p.filter_dyn):
        cands.append(_with(p, input_dyn=[False] * len(p.input_dyn), filter_dyn=[False] * len(p.filter_dyn)))
    for key in ("input_dyn", "filter_dyn"):
        for i, v in enumerate(p[key]):
            if v:
                cands.append(_with(p, **{key: with_item(p[key], i, False)}))
    if p.compute_layout != p.layout:
        lay = LAYOUTS[p.layout]
        form = p.form if lay.named_op is not None else "generic"
        cands.append(_with(p, compute_layout=p.layout, form=form,
                           loop_perm=[] if form == "named" else _canonical_loop_perm(p)))
    if p.form == "generic" and list(p.loop_perm) != _canonical_loop_perm(p):
        cands.append(_with(p, loop_perm=_canonical_loop_perm(p)))
    if p.form == "generic" and LAYOUTS[p.compute_layout].named_op is not None:
        cands.append(_with(p, form="named", loop_perm=[]))
    if p.kind == "grouped" and p.g > 1:
        cands.append(_with(p, g=1))
    for key in ("n", "g", "c", "f", "m"):
        if p[key] > 1:
            cands.append(_with(p, **{key: 1}))
            if p[key] > 2:
                cands.append(_with(p, **{key: p[key] // 2}))
    for i in range(p.rank):
        for key, target in (("pad_lo", 0), ("pad_hi", 0), ("strides", 1), ("dilations", 1),
                            ("kernel", 1), ("spatial", 1)):
            if p[key][i] != target:
                vals = list(p[key])
                vals[i] = target
                cands.append(_with(p, **{key: vals}))
                if key in ("spatial", "kernel") and p[key][i] > 2:
                    vals = list(p[key])
                    vals[i] = p[key][i] // 2
                    cands.append(_with(p, **{key: vals}))
    if p.pad_value != 0:
        cands.append(_with(p, pad_value=0))
    if p.pad_form != "none" and not any(p.pad_lo) and not any(p.pad_hi):
        cands.append(_with(p, pad_form="none", pad_value=0))
    if p.pad_form == "insert":
        cands.append(_with(p, pad_form="pad"))
    if p.bias != "none":
        cands.append(_with(p, bias="none"))
    if p.epilogue != "none":
        cands.append(_with(p, epilogue="none"))
    if p.dtype != "f32":
        cands.append(_with(p, dtype="f32", acc="f32",
                           pad_value=p.pad_value if _is_float(p.dtype) else p.pad_value))
    return [_with(q, pad_form="pad") if q.pad_form == "none" and (any(q.pad_lo) or any(q.pad_hi)) else q
            for q in cands]


FAMILY = Family.define("conv", Params, globals())
