"""The one_hot family's frontend spellings (both take the linalg form's arguments, in its order):

- torch: `torch.aten.one_hot` (si64 0/1, classes last) on si64 indices (negative ones wrapped
  first with `lt.Scalar`/`add.Scalar`/`where.self`), cast to the element type, scaled to on/off,
  moved to the class axis with `permute`; the consumer as `mul.Tensor` + `sum.dim_IntList`. Cases
  with indices outside [-depth, depth) are left out: PyTorch rejects them, so no answer is right.
- onnx: `onnx.OneHot` is the family's definition (negative indices wrap once, anything still
  outside [0, depth) gives an all-off row), `axis` native, values `[off, on]` a constant or
  `onnx.Concat` of the inputs; the consumer as `onnx.Mul` + `onnx.ReduceSum`. As a real ONNX model
  imported by iree-import-onnx (`_onnx_model`), except 0-d indices, which ONNX's OneHot refuses
  (the hand-written text then)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.one_hot.params import Params, out_axis, out_shape
from shapefuzz.families.onnx_forms import imported, unsqueeze
from shapefuzz.families.onnx_models import Graph, ModelSpelling
from shapefuzz.families.torch_forms import FLOATS, Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder

if TYPE_CHECKING:
    import onnx


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return p.range in ("valid", "wrap")


def _torch_normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic", index_dtype="i64", dimension_map=list(range(len(p.index_shape) + 1)))


def _arguments(b: TorchBuilder, p: Params, bnd: Boundary) -> list[TV]:
    """A one_hot case's function arguments, in the linalg form's order (both spellings share it)."""
    names, sizes = ["%indices"], [list(p.index_shape)]
    if p.depth_dyn:
        names.append("%depth_t")
        sizes.append([])
    if p.values == "input":
        names += ["%on_t", "%off_t"]
        sizes += [[], []]
    if p.consumer != "none":
        names.append("%weights")
        sizes.append(out_shape(p))
    return boundary_args(b, bnd, sizes, names)


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    r, a = len(p.index_shape), out_axis(p)
    elt = p.dtype
    args = _arguments(b, p, bnd)
    by_name = {t.name: t for t in args}
    idx = by_name["%indices"]
    if p.depth_dyn:
        depth = b.fresh("depth")
        dt = by_name["%depth_t"]
        b.body.append(f"{depth} = torch.aten.item {dt.name} : {dt.type} -> !torch.int")
    else:
        depth = b.int(p.depth)
    if p.range == "wrap":  # negative indices count from the end, once
        neg = b.op("torch.aten.lt.Scalar", [(idx.name, idx.type), (b.int(0), "!torch.int")],
                   idx.with_dims(b.fresh("neg"), idx.dims, "i1"))
        up = b.op("torch.aten.add.Scalar", [(idx.name, idx.type), (depth, "!torch.int"), (b.int(1), "!torch.int")],
                  idx.with_dims(b.fresh("up"), idx.dims))
        idx = b.op("torch.aten.where.self", [(neg.name, neg.type), (up.name, up.type), (idx.name, idx.type)],
                   idx.with_dims(b.fresh("wrapped"), idx.dims))
    hot = b.op("torch.aten.one_hot", [(idx.name, idx.type), (depth, "!torch.int")],
               idx.with_dims(b.fresh("hot"), list(idx.dims) + [(p.depth, p.depth_dyn)]))
    y = b.to_dtype(hot, elt, "hot_c")
    # 0/1 -> off/on: hot * (on - off) + off, exact for the values the family draws.
    if p.values == "input":
        on, off = by_name["%on_t"], by_name["%off_t"]
        diff = b.op("torch.aten.sub.Tensor", [(on.name, on.type), (off.name, off.type), (b.int(1), "!torch.int")],
                    on.with_dims(b.fresh("diff"), ()))
        y = b.op("torch.aten.mul.Tensor", [(y.name, y.type), (diff.name, diff.type)], y.with_dims(b.fresh("scaled"), y.dims))
        y = b.op("torch.aten.add.Tensor", [(y.name, y.type), (off.name, off.type), (b.int(1), "!torch.int")],
                 y.with_dims(b.fresh("onoff"), y.dims))
    else:
        diff_v = p.on - p.off
        if diff_v != 1:
            y = b.op("torch.aten.mul.Scalar", [(y.name, y.type), (b.scalar(diff_v, elt), _scalar_type(elt))],
                     y.with_dims(b.fresh("scaled"), y.dims))
        if p.off != 0:
            y = b.op("torch.aten.add.Scalar", [(y.name, y.type), (b.scalar(p.off, elt), _scalar_type(elt)),
                                               (b.int(1), "!torch.int")], y.with_dims(b.fresh("onoff"), y.dims))
    y = b.permute(y, list(range(a)) + [r] + list(range(a, r)), "moved")
    results = []
    if p.consumer in ("none", "both"):
        results.append(b.cast_to(y, bnd.results[0][0], "onehot"))
    if p.consumer in ("reduce", "both"):
        wts = by_name["%weights"]
        prod = b.op("torch.aten.mul.Tensor", [(y.name, y.type), (wts.name, wts.type)],
                    y.with_dims(b.fresh("weighted"), [(s, d and wd) for (s, d), (_, wd) in zip(y.dims, wts.dims)]))
        lst = b.int_list([a])
        red = b.op("torch.aten.sum.dim_IntList", [(prod.name, prod.type), (lst, "!torch.list<int>"),
                                                   (b.bool(False), "!torch.bool"), (b.none(), "!torch.none")],
                   prod.with_dims(b.fresh("reduced"), [d for i, d in enumerate(prod.dims) if i != a]))
        results.append(b.cast_to(red, bnd.results[-1][0], "reduced_c"))
    return b.render("main", args, results)


def _scalar_type(elt: str) -> str:
    return "!torch.float" if elt in FLOATS else "!torch.int"


def _onnx_normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic", dimension_map=list(range(len(p.index_shape) + 1)))


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    elt, a = p.dtype, out_axis(p)
    args = _arguments(b, p, bnd)
    by_name = {t.name: t for t in args}
    idx = by_name["%indices"]
    depth = by_name["%depth_t"] if p.depth_dyn else b.onnx_const([p.depth], "i64", shape=[], stem="depth")
    if p.values == "input":
        off = unsqueeze(b, by_name["%off_t"], 0, "off1")
        on = unsqueeze(b, by_name["%on_t"], 0, "on1")
        values = b.onnx("Concat", [off, on], [TV(b.fresh("values"), ((2, False),), elt)], {"axis": "0 : si64"})[0]
    else:
        values = b.onnx_const([p.off, p.on], elt, stem="values")
    dims = list(idx.dims)
    dims.insert(a, (p.depth, p.depth_dyn))
    hot = b.onnx("OneHot", [idx, depth, values], [TV(b.fresh("hot"), tuple(dims), elt)], {"axis": f"{p.axis} : si64"})[0]
    results = []
    if p.consumer in ("none", "both"):
        results.append(b.cast_to(hot, bnd.results[0][0], "onehot"))
    if p.consumer in ("reduce", "both"):
        wts = by_name["%weights"]
        prod = b.onnx("Mul", [hot, wts], [hot.with_dims(b.fresh("weighted"), [(s, d and wd) for (s, d), (_, wd) in zip(hot.dims, wts.dims)])])[0]
        axes = b.onnx_const([a], "i64", stem="axes")
        red = b.onnx("ReduceSum", [prod, axes], [prod.with_dims(b.fresh("reduced"), [x for i, x in enumerate(prod.dims) if i != a])],
                     {"keepdims": "0 : si64"})[0]
        results.append(b.cast_to(red, bnd.results[-1][0], "reduced_c"))
    return b.render("main", args, results, ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary) -> "onnx.ModelProto":
    assert isinstance(p, Params)
    elt, a = p.dtype, out_axis(p)
    names = ["indices"] + (["depth_t"] if p.depth_dyn else []) + (["on_t", "off_t"] if p.values == "input" else [])
    names += ["weights"] if p.consumer != "none" else []
    g = Graph(bnd, names)
    depth = "depth_t" if p.depth_dyn else g.const([p.depth], "i64", shape=[])
    if p.values == "input":
        values = g.one("Concat", [g.unsqueeze("off_t", 0), g.unsqueeze("on_t", 0)], axis=0)
    else:
        values = g.const([p.off, p.on], elt)
    hot = g.one("OneHot", ["indices", depth, values], axis=p.axis)
    outputs = []
    if p.consumer in ("none", "both"):
        outputs.append((hot, elt))
    if p.consumer in ("reduce", "both"):
        prod = g.one("Mul", [hot, "weights"])
        outputs.append((g.one("ReduceSum", [prod, g.const([a], "i64")], keepdims=0), elt))
    return g.model(outputs)


def _everything(p: FamilyParams) -> bool:
    return True


def _refuse(p: FamilyParams) -> str:
    # ONNX rejects 0-d OneHot indices (its shape inference: "Indices tensor must have rank >= 1").
    assert isinstance(p, Params)
    return "" if p.index_shape else "ONNX OneHot needs indices of rank >= 1"


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("one_hot", "torch", _torch_expressible, _torch_normalize, _torch_build),
    Spelling("one_hot", "onnx", _everything, _onnx_normalize, imported("one_hot", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("one_hot", _onnx_model, _refuse)
