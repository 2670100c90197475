"""The matmul family's frontend spellings, on the linalg form's boundary (bf16 operands arrive as
f32 and are cast to bf16 first; an f32 result of narrower operands casts them up first, as
exporters do; i8 operands with zero points are widened to i32 and shifted in torch, which has no
MatMulInteger):

- torch: `torch.aten.mm` (`addmm` with a bias, `mul.Scalar` for alpha alone), `bmm`, `matmul`
  for broadcast or two batch dims, `mv` and `matmul` on a 1-D operand for the vector edges (a
  batched vector unsqueezed and squeezed back); a transposed operand is `transpose.int`. i8:
  widened and shifted (`sub.Scalar`, `sub.Tensor` by a per-row / per-column literal), or for the
  qdq form as PT2E exports it: `quantized_decomposed.dequantize_per_tensor` / `_per_channel`,
  the f32 product, `mul.Scalar` by the scales' inverse, `to.dtype` i32; no u8 operand.
- onnx: `MatMulInteger` for i8 / u8 (zero points of the operand's type: scalars, an [M] vector
  per row of A, an [N] one per column of B), for the qdq form `DequantizeLinear` (per axis for
  a vector) on both, `MatMul`, `Mul` and `Cast`; `Gemm` (transA, transB, alpha,
  beta, C) for a 2-D float case with a transpose or an epilogue, `MatMul` otherwise (with
  `Transpose` nodes); no bf16 (ONNX's reference cannot run it on our .npy arrays)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.matmul.params import (
    I8_MAX, I8_MIN, QDQ_SCALES, Params, a_shape, b_shape, bias_shape, zero_points)
from shapefuzz.families.matmul.reference import boundary_elt
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_forms import transpose as onnx_transpose
from shapefuzz.families.onnx_models import ONNX_TYPE, ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder


def _normalize(p: FamilyParams) -> FamilyParams:
    """The linalg form a spelling stands for: the generic one, the qdq form kept (it is spelled
    with dequantizes: the frontends' QDQ pattern)."""
    assert isinstance(p, Params)
    return p.replace(form="qdq" if p.form == "qdq" else "generic")


def _compute_elt(p: Params) -> str:
    """The element type the frontend's op computes in."""
    return ("f32" if p.form == "qdq" else "i32") if p.quantized else p.out


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return not p.a_unsigned and not p.b_unsigned  # PyTorch's uint8 operands: not written here


def _per_axis(p: Params, name: str) -> int | None:
    """The stored operand's dim its per-row / per-column zero points run along (None: one zero point)."""
    if name == "a":
        return None if p.a_zp_per == "tensor" else (1 if p.trans_a else 0)
    return None if p.b_zp_per == "tensor" else (0 if p.trans_b else 1)


def _torch_literal(b: TorchBuilder, values: list, elt: str, shape: list[int]) -> TV:
    """A `torch.vtensor.literal` of `shape` (values in row-major order)."""
    from shapefuzz.families.torch_ir import TORCH_ELT

    items = [repr(float(v)) if elt.startswith("f") else str(int(v)) for v in values]
    lit = ", ".join(f"[{v}]" for v in items) if shape[1:] == [1] else ", ".join(items)  # [n, 1]: nested
    out = TV(b.fresh("lit"), tuple((n, False) for n in shape), elt)
    ttype = "tensor<" + "".join(f"{n}x" for n in shape) + TORCH_ELT[elt] + ">"
    b.body.append(f"{out.name} = torch.vtensor.literal(dense<[{lit}]> : {ttype}) : {out.type}")
    return out


def _torch_shift(b: TorchBuilder, p: Params, name: str, x: TV) -> TV:
    """x (widened to i32, as stored) minus its zero points: `sub.Scalar`, or `sub.Tensor` by a
    literal shaped to broadcast along the stored operand's other dim."""
    zps, axis = zero_points(p, name), _per_axis(p, name)
    y = x.with_dims(b.fresh("shifted"), x.dims)
    if axis is None:
        if not zps[0]:
            return x
        return b.op("torch.aten.sub.Scalar", [(x.name, x.type), (b.int(zps[0]), "!torch.int"), (b.int(1), "!torch.int")], y)
    lit = _torch_literal(b, zps, "i32", [len(zps), 1] if axis == 0 else [len(zps)])
    return b.op("torch.aten.sub.Tensor", [(x.name, x.type), (lit.name, lit.type), (b.int(1), "!torch.int")], y)


def _torch_dequantize(b: TorchBuilder, p: Params, name: str, x: TV) -> TV:
    """PT2E's dequantize of a stored i8 operand to f32: per tensor (a float scale, an int zero
    point) or per channel along the dim its zero points run (f32 and si64 literals)."""
    zps, axis = zero_points(p, name), _per_axis(p, name)
    scale = QDQ_SCALES[0 if name == "a" else 1]
    y = x.with_dims(b.fresh("real"), x.dims, "f32")
    qrange = [(b.int(I8_MIN), "!torch.int"), (b.int(I8_MAX), "!torch.int"), (b.int(1), "!torch.int")]
    if axis is None:
        return b.op("torch.quantized_decomposed.dequantize_per_tensor",
                    [(x.name, x.type), (b.float(scale), "!torch.float"), (b.int(zps[0]), "!torch.int")] + qrange
                    + [(b.none(), "!torch.none")], y)
    scales, points = _torch_literal(b, [scale] * len(zps), "f32", [len(zps)]), _torch_literal(b, zps, "i64", [len(zps)])
    return b.op("torch.quantized_decomposed.dequantize_per_channel",
                [(x.name, x.type), (scales.name, scales.type), (points.name, points.type), (b.int(axis), "!torch.int")]
                + qrange + [(b.none(), "!torch.none")], y)


def _swap_last(x: TV) -> list[int]:
    return list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    shapes = [a_shape(p), b_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    args = boundary_args(b, bnd, shapes, ["%a", "%b", "%bias"][: len(shapes)])
    elt = _compute_elt(p)
    ops = []
    for x, name, trans in ((args[0], "a", p.trans_a), (args[1], "b", p.trans_b)):
        if p.dtype == "bf16":
            x = b.to_dtype(x, "bf16", "bf")
        if p.form == "qdq":
            x = _torch_dequantize(b, p, name, x)
        else:
            x = b.to_dtype(x, elt, "wide")
            x = _torch_shift(b, p, name, x) if p.quantized else x
        ops.append(b.permute(x, _swap_last(x), "t") if trans else x)
    x, w = ops
    if p.vec == "matvec" and not p.batch:
        y = b.op("torch.aten.mv", [(x.name, x.type), (w.name, w.type)], x.with_dims(b.fresh("mv"), x.dims[:1]))
    elif p.vec:
        # a batched vector is unsqueezed into a matrix (a 1-D one torch.matmul takes as it is)
        col = p.vec == "matvec"
        vx = (w if col else x)
        if p.batch:
            vx = b.unsqueeze(vx, -1 if col else -2)
        x, w = (x, vx) if col else (vx, w)
        y = _torch_matmul(b, p, x, w, squeeze=bool(p.batch))
    elif not p.batch and p.bias != "none":
        c = b.to_dtype(b.to_dtype(args[2], "bf16", "bf") if p.dtype == "bf16" else args[2], elt, "wide")
        dims = (x.dims[0], w.dims[1])
        y = b.op("torch.aten.addmm", [(c.name, c.type), (x.name, x.type), (w.name, w.type),
                                      (b.float(p.beta), "!torch.float"), (b.float(p.alpha), "!torch.float")],
                 x.with_dims(b.fresh("addmm"), dims))
    elif not p.batch:
        y = b.op("torch.aten.mm", [(x.name, x.type), (w.name, w.type)], x.with_dims(b.fresh("mm"), (x.dims[0], w.dims[1])))
        if p.alpha != 1.0:
            y = b.op("torch.aten.mul.Scalar", [(y.name, y.type), (b.float(p.alpha), "!torch.float")],
                     y.with_dims(b.fresh("scaled"), y.dims))
    elif len(p.batch) == 1 and p.bcast == "none":
        y = b.op("torch.aten.bmm", [(x.name, x.type), (w.name, w.type)],
                 x.with_dims(b.fresh("bmm"), (x.dims[0], x.dims[1], w.dims[2])))
    else:
        y = _torch_matmul(b, p, x, w, squeeze=False)
    if p.form == "qdq":  # the scales' product out again: exact integers
        inverse = 1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1])
        y = b.op("torch.aten.mul.Scalar", [(y.name, y.type), (b.float(inverse), "!torch.float")],
                 y.with_dims(b.fresh("unscaled"), y.dims))
    y = b.to_dtype(y, bnd.results[0][1], "res")
    return b.render("main", args, [b.cast_to(y, bnd.results[0][0])])


def _batch_dims(p: Params, x: TV, w: TV) -> tuple:
    """The result's batch dims: from the operand that has them."""
    nb = len(p.batch)
    return (w if p.bcast == "a" else x).dims[:nb]


def _torch_matmul(b: TorchBuilder, p: Params, x: TV, w: TV, squeeze: bool) -> TV:
    """`torch.aten.matmul`, broadcasting; squeeze: drop the unit dim a batched vector brought."""
    if x.rank == 1:
        dims = w.dims[-1:]
    elif w.rank == 1:
        dims = x.dims[-2:-1]
    else:
        dims = _batch_dims(p, x, w) + (x.dims[-2], w.dims[-1])
    y = b.op("torch.aten.matmul", [(x.name, x.type), (w.name, w.type)], x.with_dims(b.fresh("matmul"), dims))
    if squeeze:
        axis = -1 if p.vec == "matvec" else -2
        kept = y.dims[:-1] if axis == -1 else y.dims[:-2] + y.dims[-1:]
        y = b.op("torch.aten.squeeze.dim", [(y.name, y.type), (b.int(axis), "!torch.int")], y.with_dims(b.fresh("sq"), kept))
    return y


# ----------------------------------------------------------------------------- ONNX


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return p.dtype != "bf16"


def _uses_gemm(p: Params) -> bool:
    return not p.batch and not p.vec and not p.quantized and (p.trans_a or p.trans_b or p.epilogue)


def _onnx_model(p: FamilyParams, bnd: Boundary):
    """The case as a real ONNX model (`onnx_models`), which iree-import-onnx imports."""
    assert isinstance(p, Params)
    from shapefuzz.families.onnx_models import Graph

    names = ["a", "b", "bias"][: len(bnd.args)]
    g = Graph(bnd, names)
    for value, unsigned in zip(g.inputs, (p.a_unsigned, p.b_unsigned)):
        if unsigned:  # the i8 storage read as uint8: ONNX's own type for it (the arrays are uint8)
            value.type.tensor_type.elem_type = ONNX_TYPE["u8"]
    elt = _compute_elt(p)
    x, w = "a", "b"
    if not p.quantized and elt != p.dtype:  # f16 operands, an f32 result: cast up first
        x, w = g.one("Cast", [x], to=1), g.one("Cast", [w], to=1)
    if p.form == "qdq":  # DequantizeLinear on each stored operand (per axis for a vector of zero points)
        x, w = (_onnx_dequantize(g, p, name, value) for name, value in (("a", x), ("b", w)))
    if _uses_gemm(p):
        ins = [x, w] + (["bias"] if p.bias != "none" else [])
        y = g.one("Gemm", ins, transA=int(p.trans_a), transB=int(p.trans_b), alpha=float(p.alpha), beta=float(p.beta))
        return g.model([(y, elt)])
    nb = len(p.batch)
    ra, rb = len(a_shape(p)), len(b_shape(p))
    if p.trans_a:
        x = g.transpose(x, list(range(ra - 2)) + [ra - 1, ra - 2])
    if p.trans_b:
        w = g.transpose(w, list(range(rb - 2)) + [rb - 1, rb - 2])
    squeeze = None
    if p.vec and nb:  # a batched vector: a matrix with a unit dim, squeezed away after
        if p.vec == "matvec":
            w, squeeze = g.unsqueeze(w, -1), -1
        else:
            x, squeeze = g.unsqueeze(x, -2), -2
    if p.quantized and p.form != "qdq":
        zps = []
        if zero_points(p, "a") != [0] or zero_points(p, "b") != [0]:
            zps = [_onnx_zero_points(g, p, "a"), _onnx_zero_points(g, p, "b")]
        y = g.one("MatMulInteger", [x, w] + zps)
    else:
        y = g.one("MatMul", [x, w])
    if squeeze is not None:
        y = g.one("Squeeze", [y, g.const([squeeze], "i64")])
    if p.form == "qdq":  # the scales' product out again; the model's Cast makes it i32
        y = g.one("Mul", [y, g.const([1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1])], "f32", shape=[])])
    return g.model([(y, elt)])


def _onnx_zero_points(g, p: Params, name: str) -> str:
    """An operand's zero points as ONNX takes them: of its type (int8 / uint8), a scalar, or an
    [M] vector (per row of A) / [N] vector (per column of B)."""
    zps = zero_points(p, name)
    elt = "u8" if (p.a_unsigned if name == "a" else p.b_unsigned) else "i8"
    return g.const(zps, elt, shape=[] if _per_axis(p, name) is None else None)


def _onnx_dequantize(g, p: Params, name: str, x: str) -> str:
    """DequantizeLinear of a stored operand: a scalar scale and zero point, or per axis (the
    stored dim its zero points run along) a vector of each."""
    axis, scale = _per_axis(p, name), QDQ_SCALES[0 if name == "a" else 1]
    zps = _onnx_zero_points(g, p, name)
    if axis is None:
        return g.one("DequantizeLinear", [x, g.const([scale], "f32", shape=[]), zps])
    scales = g.const([scale] * len(zero_points(p, name)), "f32")
    return g.one("DequantizeLinear", [x, scales, zps], axis=axis)


def _reference_gap(p: FamilyParams) -> str:
    """onnx 1.23.2's reference MatMulInteger subtracts `a_zero_point` by NumPy broadcasting, so
    an [M] vector (the spec's per-row form for a 2-D A) is taken per column of A, along K
    (measured: M = K = 4 gives other values, M != K raises); NumPy follows the spec."""
    assert isinstance(p, Params)
    if p.quantized and p.form != "qdq" and p.a_zp_per == "row":
        return "onnx.reference's MatMulInteger broadcasts a per-row a_zero_point along K"
    return ""


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    """The hand-written text (kept for a model the importer rejects), as the importer leaves it."""
    assert isinstance(p, Params)
    b = TorchBuilder()
    shapes = [a_shape(p), b_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    args = boundary_args(b, bnd, shapes, ["%a", "%b", "%bias"][: len(shapes)])
    elt = _compute_elt(p)
    x, w = args[0], args[1]
    if not p.quantized and elt != p.dtype:
        x, w = (b.onnx("Cast", [v], [v.with_dims(b.fresh("up"), v.dims, "f32")], {"to": "1 : si64"})[0] for v in (x, w))
    result = bnd.results[0]
    out = TV(b.fresh("y"), tuple((s, d is None) for s, d in zip(_result_sizes(p), result[0])), elt)
    if _uses_gemm(p):
        attrs = {"transA": f"{int(p.trans_a)} : si64", "transB": f"{int(p.trans_b)} : si64",
                 "alpha": f"{float(p.alpha)!r} : f32", "beta": f"{float(p.beta)!r} : f32"}
        y = b.onnx("Gemm", [x, w] + args[2:], [out], attrs)[0]
        return b.render("main", args, [y], ONNX_META)
    if p.trans_a:
        x = onnx_transpose(b, x, _swap_last(x), "ta")
    if p.trans_b:
        w = onnx_transpose(b, w, _swap_last(w), "tb")
    if p.vec and p.batch:
        return f"// no hand-written ONNX text for a batched vector operand\n{_torch_build(p, bnd)}"
    if p.form == "qdq" or p.a_unsigned or p.b_unsigned:
        return f"// no hand-written ONNX text for the qdq form or a u8 operand\n{_torch_build(p.replace(a_unsigned=False, b_unsigned=False), bnd)}"
    if p.quantized:
        zps = [b.onnx_const(zero_points(p, n), "i8", shape=[] if _per_axis(p, n) is None else None, stem=f"{n}zp")
               for n in ("a", "b")]
        shifted = zero_points(p, "a") != [0] or zero_points(p, "b") != [0]
        y = b.onnx("MatMulInteger", [x, w] + (zps if shifted else []), [out])[0]
    else:
        y = b.onnx("MatMul", [x, w], [out])[0]
    return b.render("main", args, [y], ONNX_META)


def _result_sizes(p: Params) -> list[int]:
    from shapefuzz.families.matmul.params import c_shape

    return c_shape(p)


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("matmul", "torch", _torch_expressible, _normalize, _torch_build),
    Spelling("matmul", "onnx", _onnx_expressible, _normalize, imported("matmul", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("matmul", _onnx_model, reference_gap=_reference_gap)
