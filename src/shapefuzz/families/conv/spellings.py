"""The conv family's frontend spellings (float cases, and quantized i8 ones where the frontend
has a form: PyTorch has no integer convolution but PT2E's dequantize before a float one, ONNX has
ConvInteger and DequantizeLinear; the boundary types are the linalg form's, so both take and
return the same arrays):

- torch: boundary layout -> NC<spatial> with `torch.aten.permute`, group dims merged with
  `flatten.using_ints`; asymmetric or non-zero padding as `torch.aten.constant_pad_nd` (torch's
  own padding is symmetric zeros), else conv padding; bias (or `torch.constant.none`) and groups
  passed to `torch.aten.convolution`, strides/paddings/dilations through `torch.prim.ListConstruct`;
  the output unflattened and permuted back; `relu` epilogue. f16 inputs with an f32 accumulator
  are cast up first. A qdq case: `quantized_decomposed.dequantize_per_tensor` of the input and
  the filter, the f32 convolution (padding in real values: the input's zero point is a real 0),
  `mul.Scalar` by the scales' inverse and `to.dtype` i32; no bias.
- onnx: `onnx.Conv` (NC<spatial>, so `onnx.Transpose` at the boundary; asymmetric `pads` are
  native), regular and depthwise (`onnx.Unsqueeze` of the filter) cases with zero padding
  values; f16 inputs with an f32 accumulator through `onnx.Cast`; `onnx.Relu` epilogue. As a real
  ONNX model (`Transpose` + `Conv`, ...) imported by iree-import-onnx (`_onnx_model`); the
  hand-written text only where the importer rejects the model. An i8 case: `ConvInteger` with
  int8 scalar zero points (padding is the input's zero point, symmetric: 3.13 does not lower
  asymmetric pads), or for the qdq form `DequantizeLinear` on both, `Conv`, `Mul` and `Cast`; no bias."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.conv.params import (
    I8_MAX, I8_MIN, LAYOUTS, QDQ_SCALES, Params, filter_labels, input_labels, output_labels)
from shapefuzz.families.conv.shapes import bias_shape, filter_shape, input_shape, out_spatial
from shapefuzz.families.onnx_forms import ONNX_FLOAT_CODE, imported, transpose, unsqueeze
from shapefuzz.families.onnx_models import ONNX_TYPE, Graph, ModelSpelling
from shapefuzz.families.torch_forms import FLOATS, Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder, si64s

if TYPE_CHECKING:
    import onnx


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    # 3-D convs with one input channel per group take torch-mlir's depthwise path, which 3.13 does
    # not lower for 3-D ("failed to legalize 'torch.aten.convolution'"; dynamic dims instead give
    # "slice ... runs out-of-bounds" from the same gap): left out rather than drawn and set aside.
    per_group = {"regular": p.c, "grouped": p.c, "depthwise": 1, "depthwise_m": 1}[p.kind]
    free_orders = p.input_perm or p.filter_perm or p.output_perm or p.result_dyn  # types as linalg
    quantized = p.dtype == "i8" and p.qdq and p.bias == "none"  # PT2E's dequantize, then a float conv
    return (p.dtype in FLOATS or quantized) and not (p.rank == 3 and per_group == 1) and not free_orders


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    lay = LAYOUTS[p.layout]
    named = lay.named_op is not None
    out, filt = output_labels(lay), filter_labels(lay)
    loops = len(out) + len([lab for lab in filt if lab not in out])  # parallel + reduction
    any_pad = any(p.pad_lo) or any(p.pad_hi)
    return p.replace(compute_layout=p.layout, form="named" if named else "generic",
                loop_perm=[] if named else list(range(loops)),
                pad_form="pad" if any_pad else "none", pad_value=p.pad_value if any_pad else 0,
                bias="epilogue" if p.bias != "none" else "none")


def _arguments(b: TorchBuilder, p: Params, bnd: Boundary) -> list[TV]:
    """The function's arguments (input, filter, bias if any), as both spellings take them."""
    sizes = [input_shape(p), filter_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    return boundary_args(b, bnd, sizes, ["%input", "%filter", "%bias"])


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    lay = LAYOUTS[p.layout]
    kind, rank, acc = p.kind, p.rank, p.acc
    b = TorchBuilder()
    args = _arguments(b, p, bnd)
    x, w = args[0], args[1]
    spatial_in = [f"s{i}" for i in range(rank)]
    spatial_k = [f"k{i}" for i in range(rank)]
    in_labels, f_labels = input_labels(lay), filter_labels(lay)
    # Input to [n, (g,) c, S...], groups merged into channels.
    in_order = {"regular": ["n", "c"], "grouped": ["n", "g", "c"], "depthwise": ["n", "c"],
                "depthwise_m": ["n", "c"]}[kind] + spatial_in
    real = 0.0  # the padding's value in the values the convolution reads
    if p.qdq:  # PT2E's dequantize of the stored input and filter: a real-valued conv follows
        x, w = _torch_dequantize(b, x, QDQ_SCALES[0], p.input_zp), _torch_dequantize(b, w, QDQ_SCALES[1], p.filter_zp)
        real = (p.pad_value - p.input_zp) * QDQ_SCALES[0]
    x = b.permute(x, [in_labels.index(lab) for lab in in_order], "x_nc")
    if kind == "grouped":
        x = b.flatten(x, 1, 2, "x_grp")
    # Filter to [F_total, C/groups, K...].
    f_order = {"regular": ["f", "c"], "grouped": ["g", "f", "c"], "depthwise": ["c"],
               "depthwise_m": ["c", "m"]}[kind] + spatial_k
    w = b.permute(w, [f_labels.index(lab) for lab in f_order], "w_fc")
    if kind == "grouped":
        w = b.flatten(w, 0, 1, "w_grp")
    elif kind == "depthwise_m":
        w = b.flatten(w, 0, 1, "w_grp")
    if kind.startswith("depthwise"):
        w = b.unsqueeze(w, 1, "w_dw")
    compute = "f32" if p.qdq else acc
    if compute != x.elt:  # f16 inputs, f32 accumulation: PyTorch casts the operands up
        x, w = b.to_dtype(x, acc, "x_f"), b.to_dtype(w, acc, "w_f")
    # Padding: torch pads symmetrically with zeros; anything else is an explicit pad.
    lo, hi = p.pad_lo, p.pad_hi
    pad_value = real if p.qdq else p.pad_value
    if lo != hi or (pad_value != 0 and (any(lo) or any(hi))):
        pads: list[int] = []
        for i in reversed(range(rank)):  # constant_pad_nd lists the last dim first
            pads += [lo[i], hi[i]]
        lst = b.int_list(pads)
        dims = list(x.dims[:2]) + [(s + lo[i] + hi[i], d) for i, (s, d) in enumerate(x.dims[2:])]
        x = b.op("torch.aten.constant_pad_nd",
                 [(x.name, x.type), (lst, "!torch.list<int>"), (b.float(float(pad_value)), "!torch.float")],
                 x.with_dims(b.fresh("x_pad"), dims))
        conv_pad = [0] * rank
    else:
        conv_pad = list(lo)
    if p.bias != "none":
        bias = args[2]
        if bias.rank == 2:
            bias = b.flatten(bias, 0, 1, "b_flat")
        bias_operand = (bias.name, bias.type)
    else:
        bias_operand = (b.none(), "!torch.none")
    groups = {"regular": 1, "grouped": p.g, "depthwise": p.c, "depthwise_m": p.c}[kind]
    out_sp = out_spatial(p)
    out_dims = [x.dims[0], (w.dims[0][0], w.dims[0][1])] + [
        (o, x.dims[2 + i][1] or w.dims[2 + i][1]) for i, o in enumerate(out_sp)]
    y = b.op("torch.aten.convolution", [
        (x.name, x.type), (w.name, w.type), bias_operand,
        (b.int_list(p.strides), "!torch.list<int>"), (b.int_list(conv_pad), "!torch.list<int>"),
        (b.int_list(p.dilations), "!torch.list<int>"), (b.bool(False), "!torch.bool"),
        (b.int_list([0] * rank), "!torch.list<int>"), (b.int(groups), "!torch.int")],
        TV(b.fresh("conv"), tuple(out_dims), compute))
    # Back to the boundary layout.
    out_labels = output_labels(lay)
    if kind == "grouped":
        y, canon = b.unflatten(y, 1, [p.g, p.f], "y_grp"), ["n", "g", "f"]
    elif kind == "depthwise_m":
        y, canon = b.unflatten(y, 1, [p.c, p.m], "y_grp"), ["n", "c", "m"]
    else:
        canon = ["n", "f" if kind == "regular" else "c"]
    canon += [f"o{i}" for i in range(rank)]
    y = b.permute(y, [canon.index(lab) for lab in out_labels], "y_out")
    if p.epilogue == "relu":
        y = b.unary("torch.aten.relu", y, "relu")
    if p.qdq:  # the scales' product out again, then the integers the boundary returns
        inverse = 1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1])
        y = b.op("torch.aten.mul.Scalar", [(y.name, y.type), (b.float(inverse), "!torch.float")],
                 y.with_dims(b.fresh("unscaled"), y.dims))
        y = b.to_dtype(y, acc, "y_int")
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


def _torch_dequantize(b: TorchBuilder, x: TV, scale: float, zero_point: int) -> TV:
    """PT2E's per-tensor dequantize of an i8 value to f32: (x - zero_point) * scale."""
    return b.op("torch.quantized_decomposed.dequantize_per_tensor",
                [(x.name, x.type), (b.float(scale), "!torch.float"), (b.int(zero_point), "!torch.int"),
                 (b.int(I8_MIN), "!torch.int"), (b.int(I8_MAX), "!torch.int"), (b.int(1), "!torch.int"),
                 (b.none(), "!torch.none")], x.with_dims(b.fresh("real"), x.dims, "f32"))


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    pads = any(p.pad_lo) or any(p.pad_hi)
    free_orders = p.input_perm or p.filter_perm or p.output_perm or p.result_dyn  # types as linalg
    if p.dtype == "i8":  # ConvInteger (symmetric pads: 3.13 does not lower others) or DequantizeLinear
        return (p.kind in ("regular", "depthwise") and p.bias == "none" and not free_orders
                and not (pads and p.pad_value != p.input_zp) and (p.qdq or p.pad_lo == p.pad_hi))
    return (p.dtype in FLOATS and p.kind in ("regular", "depthwise") and not (pads and p.pad_value != 0)
            and not free_orders)


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    if p.dtype == "i8":  # no hand-written ConvInteger / DequantizeLinear text: the linalg form
        from shapefuzz.families.conv.render import render

        return f"// no hand-written ONNX text for a quantized conv\n{render(p.replace(frontend='linalg'))}"
    lay = LAYOUTS[p.layout]
    rank, acc, kind = p.rank, p.acc, p.kind
    b = TorchBuilder()
    args = _arguments(b, p, bnd)
    x, w = args[0], args[1]
    in_labels, f_labels = input_labels(lay), filter_labels(lay)
    x = transpose(b, x, [in_labels.index(lab) for lab in ["n", "c"] + [f"s{i}" for i in range(rank)]], "x_nc")
    f_order = (["f", "c"] if kind == "regular" else ["c"]) + [f"k{i}" for i in range(rank)]
    w = transpose(b, w, [f_labels.index(lab) for lab in f_order], "w_fc")
    if kind == "depthwise":
        w = unsqueeze(b, w, 1, "w_dw")
    if acc != p.dtype:
        x = b.onnx("Cast", [x], [x.with_dims(b.fresh("x_f"), x.dims, acc)], {"to": f"{ONNX_FLOAT_CODE[acc]} : si64"})[0]
        w = b.onnx("Cast", [w], [w.with_dims(b.fresh("w_f"), w.dims, acc)], {"to": f"{ONNX_FLOAT_CODE[acc]} : si64"})[0]
    operands = [x, w] + ([args[2]] if p.bias != "none" else [])
    out_dims = [x.dims[0], w.dims[0]] + [
        (o, x.dims[2 + i][1] or w.dims[2 + i][1]) for i, o in enumerate(out_spatial(p))]
    attrs = {"dilations": si64s(p.dilations), "group": f"{p.c if kind == 'depthwise' else 1} : si64",
             "kernel_shape": si64s(p.kernel), "pads": si64s(list(p.pad_lo) + list(p.pad_hi)),
             "strides": si64s(p.strides)}
    y = b.onnx("Conv", operands, [TV(b.fresh("conv"), tuple(out_dims), acc)], attrs)[0]
    canon = ["n", "f" if kind == "regular" else "c"] + [f"o{i}" for i in range(rank)]
    y = transpose(b, y, [canon.index(lab) for lab in output_labels(lay)], "y_out")
    if p.epilogue == "relu":
        y = b.onnx("Relu", [y], [y.with_dims(b.fresh("relu"), y.dims)])[0]
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y], ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary) -> "onnx.ModelProto":
    assert isinstance(p, Params)
    lay = LAYOUTS[p.layout]
    rank, acc, kind = p.rank, p.acc, p.kind
    names = ["input", "filter"] + (["bias"] if p.bias != "none" else [])
    g = Graph(bnd, names)
    in_labels, f_labels = input_labels(lay), filter_labels(lay)
    x = g.transpose("input", [in_labels.index(lab) for lab in ["n", "c"] + [f"s{i}" for i in range(rank)]])
    f_order = (["f", "c"] if kind == "regular" else ["c"]) + [f"k{i}" for i in range(rank)]
    w = g.transpose("filter", [f_labels.index(lab) for lab in f_order])
    if kind == "depthwise":
        w = g.unsqueeze(w, 1)
    if acc != p.dtype and p.dtype != "i8":
        x, w = g.one("Cast", [x], to=ONNX_TYPE[acc]), g.one("Cast", [w], to=ONNX_TYPE[acc])
    attrs = dict(dilations=list(p.dilations), group=p.c if kind == "depthwise" else 1, kernel_shape=list(p.kernel),
                 pads=list(p.pad_lo) + list(p.pad_hi), strides=list(p.strides))
    if p.dtype == "i8" and not p.qdq:  # ConvInteger pads with the input's zero point (a real zero)
        zps = [g.const([p.input_zp], "i8", shape=[]), g.const([p.filter_zp], "i8", shape=[])]
        y = g.one("ConvInteger", [x, w] + zps, **attrs)
    elif p.dtype == "i8":  # QDQ: both dequantized, a float Conv, the scales' product out again
        x, w = (g.one("DequantizeLinear", [v, g.const([scale], "f32", shape=[]), g.const([zp], "i8", shape=[])])
                for v, scale, zp in ((x, QDQ_SCALES[0], p.input_zp), (w, QDQ_SCALES[1], p.filter_zp)))
        y = g.one("Conv", [x, w], **attrs)
        y = g.one("Mul", [y, g.const([1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1])], "f32", shape=[])])
    else:
        y = g.one("Conv", [x, w] + names[2:], **attrs)
    canon = ["n", "f" if kind == "regular" else "c"] + [f"o{i}" for i in range(rank)]
    y = g.transpose(y, [canon.index(lab) for lab in output_labels(lay)])
    if p.epilogue == "relu":
        y = g.one("Relu", [y])
    return g.model([(y, "f32" if p.qdq else acc)])  # the model's Cast makes a qdq result i32


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("conv", "torch", _torch_expressible, _normalize, _torch_build),
    Spelling("conv", "onnx", _onnx_expressible, _normalize, imported("conv", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("conv", _onnx_model)
