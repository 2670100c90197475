"""The reduce family's frontend spellings (si64 indices from both frontends, cast to the case's
index type; an f16 sum accumulated in f32 casts its input up first, as exporters do):

- torch: `torch.aten.sum.dim_IntList`, `amax` / `amin` (several dims, keepdim), `argmax` /
  `argmin` for an index alone, `max.dim` / `min.dim` for the value and its index.
- onnx: `onnx.ReduceSum` / `ReduceMax` / `ReduceMin` (axes as an input, opset 18, keepdims),
  `onnx.ArgMax` / `ArgMin` (select_last_index 0), with the Reduce op for the value."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.reduce.params import ARG_KINDS, Params, out_shape
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_models import ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic")


def _out(b: TorchBuilder, p: Params, x: TV, elt: str, stem: str) -> TV:
    dims = [(1, False) if i in p.dims else x.dims[i] for i in range(p.rank)]
    if not p.keepdims:
        dims = [x.dims[i] for i in range(p.rank) if i not in p.dims]
    assert [s for s, _ in dims] == out_shape(p)
    return TV(b.fresh(stem), tuple(dims), elt)


def _finish(b: TorchBuilder, p: Params, bnd: Boundary, outs: list[TV], onnx: bool) -> list[TV]:
    results = []
    for t, (shape, elt) in zip(outs, bnd.results):
        if t.elt != elt:
            if onnx:
                code = {"i32": 6, "i64": 7}[elt]
                t = b.onnx("Cast", [t], [t.with_dims(b.fresh("cast"), t.dims, elt)], {"to": f"{code} : si64"})[0]
            else:
                t = b.to_dtype(t, elt, "cast")
        results.append(b.cast_to(t, shape))
    return results


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = boundary_args(b, bnd, [list(p.shape)], ["%input"])
    x = args[0]
    keep = (b.bool(p.keepdims), "!torch.bool")
    xin = (x.name, x.type)
    if p.kind == "sum":
        if p.acc:
            x = b.to_dtype(x, p.acc, "x_f32")
            xin = (x.name, x.type)
        y = b.op("torch.aten.sum.dim_IntList", [xin, (b.int_list(list(p.dims)), "!torch.list<int>"), keep,
                                                (b.none(), "!torch.none")], _out(b, p, x, p.out_elt, "sum"))
        outs = [y]
    elif p.kind in ("max", "min"):
        y = b.op(f"torch.aten.a{p.kind}", [xin, (b.int_list(list(p.dims)), "!torch.list<int>"), keep],
                 _out(b, p, x, p.dtype, p.kind))
        outs = [y]
    else:
        dim = (b.int(p.dims[0]), "!torch.int")
        if p.use == "indices":
            outs = [b.op(f"torch.aten.{p.kind}", [xin, dim, keep], _out(b, p, x, "i64", p.kind))]
        else:
            v, i = _out(b, p, x, p.dtype, "value"), _out(b, p, x, "i64", "index")
            b.op2(f"torch.aten.{p.kind[3:]}.dim", [xin, dim, keep], v, i)
            outs = [v, i]
    return b.render("main", args, _finish(b, p, bnd, outs, onnx=False))


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = boundary_args(b, bnd, [list(p.shape)], ["%input"])
    x = args[0]
    if p.acc:
        x = b.onnx("Cast", [x], [x.with_dims(b.fresh("x_f32"), x.dims, p.acc)], {"to": "1 : si64"})[0]
    keep = {"keepdims": f"{int(p.keepdims)} : si64"}
    outs = []
    if p.kind not in ARG_KINDS or p.use == "both":
        op = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin", "argmax": "ReduceMax", "argmin": "ReduceMin"}[p.kind]
        axes = b.onnx_const(list(p.dims), "i64", stem="axes")
        outs.append(b.onnx(op, [x, axes], [_out(b, p, x, p.out_elt, "red")], keep)[0])
    if p.kind in ARG_KINDS:
        attrs = dict(keep, axis=f"{p.dims[0]} : si64", select_last_index="0 : si64")
        outs.append(b.onnx("ArgMax" if p.kind == "argmax" else "ArgMin", [x], [_out(b, p, x, "i64", "arg")], attrs)[0])
    return b.render("main", args, _finish(b, p, bnd, outs, onnx=True), ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary):
    """The same graph as a real ONNX model (`onnx_models`), which iree-import-onnx imports."""
    assert isinstance(p, Params)
    from shapefuzz.families.onnx_models import ONNX_TYPE, Graph

    g = Graph(bnd, ["input"])
    x, elt = "input", bnd.args[0][1]
    if p.acc:
        x, elt = g.one("Cast", [x], to=ONNX_TYPE[p.acc]), p.acc
    outs = []
    if p.kind not in ARG_KINDS or p.use == "both":
        op = {"sum": "ReduceSum", "max": "ReduceMax", "min": "ReduceMin", "argmax": "ReduceMax", "argmin": "ReduceMin"}[p.kind]
        outs.append((g.one(op, [x, g.const(list(p.dims), "i64")], keepdims=int(p.keepdims)), elt))
    if p.kind in ARG_KINDS:
        op = "ArgMax" if p.kind == "argmax" else "ArgMin"
        outs.append((g.one(op, [x], keepdims=int(p.keepdims), axis=p.dims[0], select_last_index=0), "i64"))
    return g.model(outs)


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("reduce", "torch", lambda p: True, _normalize, _torch_build),
    Spelling("reduce", "onnx", lambda p: True, _normalize, imported("reduce", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("reduce", _onnx_model)
