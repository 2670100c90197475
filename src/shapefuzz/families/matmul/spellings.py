"""The matmul family's frontend spellings, on the linalg form's boundary (bf16 operands arrive as
f32 and are cast to bf16 first; an f32 result of narrower operands casts them up first, as
exporters do; i8 operands with zero points are widened to i32 and shifted in torch, which has no
MatMulInteger):

- torch: `torch.aten.mm` (`addmm` with a bias, `mul.Scalar` for alpha alone), `bmm`, `matmul`
  for broadcast or two batch dims, `mv` and `matmul` on a 1-D operand for the vector edges (a
  batched vector unsqueezed and squeezed back); a transposed operand is `transpose.int`.
- onnx: `MatMulInteger` for i8 (zero points as int8 scalars), `Gemm` (transA, transB, alpha,
  beta, C) for a 2-D float case with a transpose or an epilogue, `MatMul` otherwise (with
  `Transpose` nodes); no bf16 (ONNX's reference cannot run it on our .npy arrays)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.matmul.params import Params, a_shape, b_shape, bias_shape
from shapefuzz.families.matmul.reference import boundary_elt
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_forms import transpose as onnx_transpose
from shapefuzz.families.onnx_models import ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic")


def _compute_elt(p: Params) -> str:
    """The element type the frontend's op computes in."""
    return "i32" if p.quantized else p.out


def _swap_last(x: TV) -> list[int]:
    return list(range(x.rank - 2)) + [x.rank - 1, x.rank - 2]


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    shapes = [a_shape(p), b_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    args = boundary_args(b, bnd, shapes, ["%a", "%b", "%bias"][: len(shapes)])
    elt = _compute_elt(p)
    ops = []
    for x, zp, trans in ((args[0], p.a_zp, p.trans_a), (args[1], p.b_zp, p.trans_b)):
        if p.dtype == "bf16":
            x = b.to_dtype(x, "bf16", "bf")
        x = b.to_dtype(x, elt, "wide")
        if zp:
            y = x.with_dims(b.fresh("shifted"), x.dims)
            x = b.op("torch.aten.sub.Scalar", [(x.name, x.type), (b.int(zp), "!torch.int"), (b.int(1), "!torch.int")], y)
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
    elt = _compute_elt(p)
    x, w = "a", "b"
    if not p.quantized and elt != p.dtype:  # f16 operands, an f32 result: cast up first
        x, w = g.one("Cast", [x], to=1), g.one("Cast", [w], to=1)
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
    if p.quantized:
        zps = []
        if p.a_zp or p.b_zp:
            zps = [g.const([p.a_zp], "i8", shape=[]), g.const([p.b_zp], "i8", shape=[])]
        y = g.one("MatMulInteger", [x, w] + zps)
    else:
        y = g.one("MatMul", [x, w])
    if squeeze is not None:
        y = g.one("Squeeze", [y, g.const([squeeze], "i64")])
    return g.model([(y, elt)])


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
    if p.quantized:
        zps = [b.onnx_const([p.a_zp], "i8", shape=[], stem="azp"), b.onnx_const([p.b_zp], "i8", shape=[], stem="bzp")]
        y = b.onnx("MatMulInteger", [x, w] + (zps if p.a_zp or p.b_zp else []), [out])[0]
    else:
        y = b.onnx("MatMul", [x, w], [out])[0]
    return b.render("main", args, [y], ONNX_META)


def _result_sizes(p: Params) -> list[int]:
    from shapefuzz.families.matmul.params import c_shape

    return c_shape(p)


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("matmul", "torch", lambda p: True, _normalize, _torch_build),
    Spelling("matmul", "onnx", _onnx_expressible, _normalize, imported("matmul", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("matmul", _onnx_model)
