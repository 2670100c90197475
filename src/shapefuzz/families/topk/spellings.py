"""The topk family's frontend spellings (si64 indices; result types as the linalg form declares
them, so not a case with declared result dims):

- torch: `torch.aten.topk` (largest, sorted) or `torch.aten.sort` + `slice.Tensor` (form "sort"),
  along the case's dim; indices mapped through `torch.aten.gather` when the case passes its own
  labels.
- onnx: `onnx.TopK` (K a 1-element constant; largest, sorted), `onnx.GatherElements` for labels,
  as a real ONNX model imported by iree-import-onnx (`_onnx_model`); the hand-written text only
  where the importer rejects it.

Ties are judged by the family's compare (indices by the values they select)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_models import Graph, ModelSpelling
from shapefuzz.families.topk.params import Params
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder

if TYPE_CHECKING:
    import onnx


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return not p.result_dyn  # result types as the linalg form declares them


def _torch_normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(transpose=False)


def _arguments(b: TorchBuilder, p: Params, bnd: Boundary) -> tuple[list[TV], list[tuple[int, bool]]]:
    """The function's arguments (the input, and the labels when the case passes its own) and the
    dims of its top-k results (the input's, k along the case's dim)."""
    names = ["%input"] + (["%labels"] if p.indices == "arg" else [])
    args = boundary_args(b, bnd, [list(p.shape)] * len(names), names)
    out_dims = list(args[0].dims)
    out_dims[p.dim] = (p.k, False)
    return args, out_dims


def _results(b: TorchBuilder, p: Params, bnd: Boundary, vals: TV, idx: TV) -> list[TV]:
    """The values and/or indices the case returns, cast to its result types."""
    results, pos = [], 0
    if p.use in ("values", "both"):
        results.append(b.cast_to(vals, bnd.results[pos][0], "values_c"))
        pos += 1
    if p.use in ("indices", "both"):
        results.append(b.cast_to(idx, bnd.results[pos][0], "indices_c"))
    return results


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    dim, k = p.dim, p.k
    args, out_dims = _arguments(b, p, bnd)
    x = args[0]
    vals = x.with_dims(b.fresh("values"), out_dims)
    idx = x.with_dims(b.fresh("indices"), out_dims, "i64")
    largest = bool(p.largest)
    if p.form == "sort":
        sv = x.with_dims(b.fresh("sorted"), x.dims)
        si = x.with_dims(b.fresh("order"), x.dims, "i64")
        b.op2("torch.aten.sort", [(x.name, x.type), (b.int(dim), "!torch.int"), (b.bool(largest), "!torch.bool")], sv, si)
        for src, dst in ((sv, vals), (si, idx)):
            b.op("torch.aten.slice.Tensor", [(src.name, src.type), (b.int(dim), "!torch.int"), (b.int(0), "!torch.int"),
                                             (b.int(k), "!torch.int"), (b.int(1), "!torch.int")], dst)
    else:
        b.op2("torch.aten.topk", [(x.name, x.type), (b.int(k), "!torch.int"), (b.int(dim), "!torch.int"),
                                  (b.bool(largest), "!torch.bool"), (b.bool(True), "!torch.bool")], vals, idx)
    if p.indices == "arg":
        labels = args[1]
        idx = b.op("torch.aten.gather", [(labels.name, labels.type), (b.int(dim), "!torch.int"), (idx.name, idx.type),
                                         (b.bool(False), "!torch.bool")], labels.with_dims(b.fresh("picked"), out_dims))
    return b.render("main", args, _results(b, p, bnd, vals, idx))


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    dim, k = p.dim, p.k
    args, out_dims = _arguments(b, p, bnd)
    x = args[0]
    kk = b.onnx_const([k], "i64", stem="k")
    vals, idx = b.onnx("TopK", [x, kk], [x.with_dims(b.fresh("values"), out_dims), x.with_dims(b.fresh("indices"), out_dims, "i64")],
                       {"axis": f"{dim} : si64", "largest": f"{int(bool(p.largest))} : si64", "sorted": "1 : si64"})
    if p.indices == "arg":
        labels = args[1]
        idx = b.onnx("GatherElements", [labels, idx], [labels.with_dims(b.fresh("picked"), out_dims)], {"axis": f"{dim} : si64"})[0]
    return b.render("main", args, _results(b, p, bnd, vals, idx), ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary) -> "onnx.ModelProto":
    assert isinstance(p, Params)
    dim = p.dim
    g = Graph(bnd, ["input"] + (["labels"] if p.indices == "arg" else []))
    vals, idx = g.node("TopK", ["input", g.const([p.k], "i64")], outputs=2, axis=dim,
                       largest=int(bool(p.largest)), sorted=1)
    idx_elt = "i64"
    if p.indices == "arg":
        idx = g.one("GatherElements", ["labels", idx], axis=dim)
        idx_elt = bnd.args[1][1]
    outputs = []
    if p.use in ("values", "both"):
        outputs.append((vals, bnd.args[0][1]))
    if p.use in ("indices", "both"):
        outputs.append((idx, idx_elt))
    return g.model(outputs)


def _onnx_normalize(p: FamilyParams) -> FamilyParams:
    return p.replace(form="topk", transpose=False)


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("topk", "torch", _torch_expressible, _torch_normalize, _torch_build),
    Spelling("topk", "onnx", _torch_expressible, _onnx_normalize, imported("topk", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("topk", _onnx_model)
