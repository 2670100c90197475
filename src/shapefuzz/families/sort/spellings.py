"""The sort family's frontend spellings (si64 indices, as PyTorch and ONNX return them; labels
passed in are mapped through a gather of the returned positions):

- torch: `torch.aten.sort` (dim, descending), `torch.aten.argsort` when only the indices are
  used; unstable cases only (IREE 3.13's torch dialect has no `torch.aten.sort.stable`).
- onnx: `onnx.TopK` with K = n (largest = descending, sorted), `onnx.GatherElements` for labels;
  unstable cases only (ties judged by the values selected)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.sort.params import Params
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_models import ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="sort", transpose=False, index_dtype="i64")


def _args(b: TorchBuilder, p: Params, bnd: Boundary) -> list[TV]:
    names = ["%input"] + (["%labels"] if p.payload == "arg" else [])
    return boundary_args(b, bnd, [list(p.shape)] * len(names), names)


def _results(b: TorchBuilder, p: Params, bnd: Boundary, vals: TV, idx: TV, onnx: bool = False) -> list[TV]:
    """The results in the boundary's types; i32 indices (a swarm-narrowed case) cast down from si64."""
    out, pos = [], 0
    if p.use in ("values", "both"):
        out.append(b.cast_to(vals, bnd.results[pos][0], "values_c"))
        pos += 1
    if p.use in ("indices", "both"):
        shape, elt = bnd.results[pos]
        if idx.elt != elt and onnx:
            idx = b.onnx("Cast", [idx], [idx.with_dims(b.fresh("idx32"), idx.dims, elt)], {"to": "6 : si64"})[0]
        elif idx.elt != elt:
            idx = b.to_dtype(idx, elt, "idx32")
        out.append(b.cast_to(idx, shape, "indices_c"))
    return out


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = _args(b, p, bnd)
    x = args[0]
    vals, idx = x.with_dims(b.fresh("values"), x.dims), x.with_dims(b.fresh("indices"), x.dims, "i64")
    dim, desc = (b.int(p.dim), "!torch.int"), (b.bool(p.descending), "!torch.bool")
    if p.use == "indices":
        b.op("torch.aten.argsort", [(x.name, x.type), dim, desc], idx)
    else:
        b.op2("torch.aten.sort", [(x.name, x.type), dim, desc], vals, idx)
    if p.payload == "arg" and p.use != "values":
        labels = args[1]
        idx = b.op("torch.aten.gather", [(labels.name, labels.type), dim, (idx.name, idx.type), (b.bool(False), "!torch.bool")],
                   labels.with_dims(b.fresh("picked"), x.dims))
    return b.render("main", args, _results(b, p, bnd, vals, idx))


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = _args(b, p, bnd)
    x = args[0]
    n = b.onnx_const([p.shape[p.dim]], "i64", stem="k")
    vals, idx = b.onnx("TopK", [x, n], [x.with_dims(b.fresh("values"), x.dims), x.with_dims(b.fresh("indices"), x.dims, "i64")],
                       {"axis": f"{p.dim} : si64", "largest": f"{int(p.descending)} : si64", "sorted": "1 : si64"})
    if p.payload == "arg" and p.use != "values":
        idx = b.onnx("GatherElements", [args[1], idx], [args[1].with_dims(b.fresh("picked"), x.dims)], {"axis": f"{p.dim} : si64"})[0]
    return b.render("main", args, _results(b, p, bnd, vals, idx, onnx=True), ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary):
    """The same graph as a real ONNX model (`onnx_models`), which iree-import-onnx imports."""
    assert isinstance(p, Params)
    from shapefuzz.families.onnx_models import Graph

    g = Graph(bnd, ["input"] + (["labels"] if p.payload == "arg" else []))
    vals, idx = g.node("TopK", ["input", g.const([p.shape[p.dim]], "i64")], outputs=2, axis=p.dim,
                       largest=int(p.descending), sorted=1)
    idx_elt = "i64"
    if p.payload == "arg" and p.use != "values":
        idx, idx_elt = g.one("GatherElements", ["labels", idx], axis=p.dim), bnd.args[1][1]
    outputs = ([(vals, bnd.args[0][1])] if p.use in ("values", "both") else []) + \
        ([(idx, idx_elt)] if p.use in ("indices", "both") else [])
    return g.model(outputs)


ONNX_MODEL = ModelSpelling("sort", _onnx_model)
SPELLINGS: tuple[Spelling, ...] = (
    Spelling("sort", "torch", lambda p: not p["stable"], _normalize, _torch_build),
    Spelling("sort", "onnx", lambda p: not p["stable"], _normalize, imported("sort", _onnx_build)),
)
