"""The conv_transpose family's frontend spellings (float cases, channels-first `x` only, the
layout both frontends take):

- torch: `torch.aten.convolution` with `transposed = true`, `output_padding`, groups; the stored
  filter permuted to torch's [Cin, Cout/G, k...]; unequal low/high padding as padding 0 and a
  `torch.aten.slice.Tensor` per spatial dim.
- onnx: `onnx.ConvTranspose` with `group`, `output_padding` and equal low/high pads (3.13 does not
  lower unequal ones: "failed to legalize 'torch.operator'"), as a real ONNX model imported by
  iree-import-onnx (`_onnx_model`); the hand-written text only where the importer rejects it."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.conv_transpose import EXAMPLE
from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import named_allowed, out_shape, w_shape, x_shape
from shapefuzz.families.onnx_forms import imported, transpose
from shapefuzz.families.onnx_models import Graph, ModelSpelling
from shapefuzz.families.torch_forms import FLOATS, Spelling, boundary_args
from shapefuzz.families.torch_ir import INT64_MAX, ONNX_META, TV, Boundary, TorchBuilder, si64s

if TYPE_CHECKING:
    import onnx


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return p.dtype in FLOATS and p.x_layout == "nc"  # torch's layout is channels-first


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    n_fwd = (3 if p.groups > 1 else 2) + p.rank  # forward filter dims [G?, F, C, K...]
    return p.replace(form="named" if named_allowed(p) else "generic", flip="extract", pad_mode="pad",
                x_expand="late", w_order="fused", fwd_layout=list(range(n_fwd)), zero_dest="fill")


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    r = p.rank
    b = TorchBuilder()
    args = boundary_args(b, bnd, [x_shape(p), w_shape(p)], ["%x", "%w"])
    x, w = args
    w = b.permute(w, [p.w_layout.index(j) for j in range(r + 2)], "w_t")
    lo, hi, op = p.pad_lo, p.pad_hi, p.out_pad
    symmetric = lo == hi
    pad = list(lo) if symmetric else [0] * r
    out_pad = list(op) if symmetric else [max(0, o - h) for o, h in zip(op, hi)]
    full = [(h - 1) * s + 1 + d * (k - 1) - 2 * q + o for h, s, d, k, q, o in
            zip(p.spatial, p.strides, p.dilations, p.kernel, pad, out_pad)]
    dims = [x.dims[0], (w.dims[1][0] * p.groups, False)] + [
        (f, x.dims[2 + t][1]) for t, f in enumerate(full)]
    y = b.op("torch.aten.convolution", [
        (x.name, x.type), (w.name, w.type), (b.none(), "!torch.none"),
        (b.int_list(p.strides), "!torch.list<int>"), (b.int_list(pad), "!torch.list<int>"),
        (b.int_list(p.dilations), "!torch.list<int>"), (b.bool(True), "!torch.bool"),
        (b.int_list(out_pad), "!torch.list<int>"), (b.int(p.groups), "!torch.int")],
        TV(b.fresh("convt"), tuple(dims), p.dtype))
    if not symmetric:
        want = out_shape(p)[2:]
        for t in range(r):
            cut_end = full[t] - lo[t] - want[t]  # what is left after the window, >= 0
            if lo[t] == 0 and cut_end == 0:
                continue
            end = INT64_MAX if cut_end == 0 else -cut_end
            new = list(y.dims)
            new[2 + t] = (want[t], y.dims[2 + t][1])
            y = b.op("torch.aten.slice.Tensor", [
                (y.name, y.type), (b.int(2 + t), "!torch.int"), (b.int(lo[t]), "!torch.int"),
                (b.int(end), "!torch.int"), (b.int(1), "!torch.int")], y.with_dims(b.fresh("crop"), new))
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return p.dtype in FLOATS and p.pad_lo == p.pad_hi and p.x_layout == "nc"  # ONNX is channels-first


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    r = p.rank
    b = TorchBuilder()
    args = boundary_args(b, bnd, [x_shape(p), w_shape(p)], ["%x", "%w"])
    x, w = args
    w = transpose(b, w, [p.w_layout.index(j) for j in range(r + 2)], "w_t")
    out = out_shape(p)
    dims = [x.dims[0], (out[1], False)] + [(o, x.dims[2 + t][1]) for t, o in enumerate(out[2:])]
    attrs = {"dilations": si64s(p.dilations), "group": f"{p.groups} : si64", "kernel_shape": si64s(p.kernel),
             "output_padding": si64s(p.out_pad), "pads": si64s(list(p.pad_lo) + list(p.pad_hi)),
             "strides": si64s(p.strides)}
    y = b.onnx("ConvTranspose", [x, w], [TV(b.fresh("convt"), tuple(dims), p.dtype)], attrs)[0]
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y], ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary) -> "onnx.ModelProto":
    assert isinstance(p, Params)
    r = p.rank
    g = Graph(bnd, ["x", "w"])
    w = g.transpose("w", [p.w_layout.index(j) for j in range(r + 2)])
    y = g.one("ConvTranspose", ["x", w], dilations=list(p.dilations), group=p.groups,
              kernel_shape=list(p.kernel), output_padding=list(p.out_pad),
              pads=list(p.pad_lo) + list(p.pad_hi), strides=list(p.strides))
    return g.model([(y, p.dtype)])


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("conv_transpose", "torch", _torch_expressible, _normalize, _torch_build),
    Spelling("conv_transpose", "onnx", _onnx_expressible, _normalize, imported("conv_transpose", _onnx_build),
             example=dict(EXAMPLE, pad_lo=[1], pad_hi=[1], out_pad=[1])),  # equal pads: 3.13 converts no others
)
# onnx.reference's ConvTranspose runs in Python loops, about a hundred times slower than its Conv:
# measured on onnx 1.23.2, 0.1M multiply-adds 0.15 s, 2.4M 1.2 s, 38M 8 s (12 s in a campaign's
# worker, a twentieth of a 2-minute campaign's worker time); above this it is not asked.
JUDGE_MAX_MACS = 1_000_000


def _reference_gap(p: FamilyParams) -> str:
    assert isinstance(p, Params)
    macs = p.n * p.groups * p.ci * p.co * math.prod(p.spatial) * math.prod(p.kernel)
    if macs > JUDGE_MAX_MACS:
        return (f"onnx.reference's ConvTranspose runs in Python loops: not asked for {macs:,} multiply-adds "
                f"(over {JUDGE_MAX_MACS:,})")
    return ""


ONNX_MODEL = ModelSpelling("conv_transpose", _onnx_model, reference_gap=_reference_gap)
