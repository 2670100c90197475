"""The scatter family's frontend spellings (si64 indices, as both frontends take them):

- torch, indexing depth >= 2 (overwrite, add, sub): `torch.aten.index_put` with one `select.int`
  column of the indices per indexed dim (accumulate for add; sub as add of `neg`).
- torch, indexing depth 1: `torch.aten.scatter.src` (overwrite), `scatter_add` (add; sub as add
  of `neg`), `scatter_reduce.two` with "amax"/"amin"/"prod" and include_self; the index tensor is
  the case's indices flattened, unsqueezed and `expand`ed over the window, the updates flattened
  over the batch dims.
- onnx: `onnx.ScatterND` (the linalg_ext scatter's own semantics: index columns address the
  leading dims in order, so only the identity dimension_map; at least one batch dim), reductions
  none/add/mul/max/min, sub as `onnx.Neg` + add; an implicit depth as `onnx.Unsqueeze`. As a real
  ONNX model imported by iree-import-onnx (`_onnx_model`); the hand-written text only where the
  importer rejects it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.onnx_forms import imported, unsqueeze
from shapefuzz.families.onnx_models import Graph, ModelSpelling
from shapefuzz.families.scatter.params import Params
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder

if TYPE_CHECKING:
    import onnx


_TORCH_REDUCE = {"max": "amax", "min": "amin", "mul": "prod"}


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    # Depth 1: the scatter ops. Deeper: `index_put`, which only overwrites or accumulates.
    return p.depth == 1 or p.combiner in ("overwrite", "add", "sub")


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="linalg_ext", index_dtype="i64")


def _arguments(b: TorchBuilder, p: Params, bnd: Boundary) -> list[TV]:
    """The function's arguments (original, indices, updates), as both spellings take them."""
    batch, d = list(p.batch_shape), p.depth
    shapes = [list(p.orig_shape), batch + ([] if p.implicit_depth else [d]), batch + list(p.orig_shape[d:])]
    return boundary_args(b, bnd, shapes, ["%original", "%indices", "%updates"])


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = _arguments(b, p, bnd)
    orig, idx, upd = args
    if p.depth > 1:
        return _index_put(b, p, bnd, args)
    r, k = len(p.orig_shape), len(p.batch_shape)
    # Updates [batch..., window...] -> [nb, window...].
    if k == 0:
        src = b.unsqueeze(upd, 0, "src")
    else:
        src = b.flatten(upd, 0, k - 1, "src")
    # Indices [batch..., (1)] -> [nb] -> [nb, 1, ...] -> expanded over the window.
    flat = b.flatten(idx, 0, idx.rank - 1, "idx_flat") if idx.rank > 1 else idx
    for _ in range(r - 1):
        flat = b.unsqueeze(flat, -1, "idx_col")
    sizes: list[int | str] = [-1] + [b.size(src, i) for i in range(1, r)]
    if r > 1:
        lst = b.int_list(sizes)
        index = b.op("torch.aten.expand", [(flat.name, flat.type), (lst, "!torch.list<int>"), (b.bool(False), "!torch.bool")],
                     flat.with_dims(b.fresh("index"), [flat.dims[0]] + list(src.dims[1:])))
    else:
        index = flat
    comb = p.combiner
    dim = (b.int(0), "!torch.int")
    operands = [(orig.name, orig.type), dim, (index.name, index.type)]
    out = orig.with_dims(b.fresh("scattered"), orig.dims)
    if comb == "overwrite":
        y = b.op("torch.aten.scatter.src", operands + [(src.name, src.type)], out)
    elif comb in ("add", "sub"):
        if comb == "sub":
            src = b.unary("torch.aten.neg", src, "neg")
        y = b.op("torch.aten.scatter_add", operands + [(src.name, src.type)], out)
    else:
        y = b.op("torch.aten.scatter_reduce.two", operands + [
            (src.name, src.type), (b.str(_TORCH_REDUCE[comb]), "!torch.str"), (b.bool(True), "!torch.bool")], out)
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


def _index_put(b: TorchBuilder, p: Params, bnd: Boundary, args: list[TV]) -> str:
    """`original[i_0, ..., i_{d-1}] = updates` (`+=` with accumulate): what PyTorch records for
    advanced-index assignment. Index tensor for original dim q is column j of the indices with
    dimension_map[j] == q, taken with `select.int`; a neg first for sub."""
    orig, idx, upd = args
    d = p.depth
    cols = []
    for q in range(d):
        j = list(p.dimension_map).index(q)
        col = idx.with_dims(b.fresh(f"col{q}_"), idx.dims[:-1])
        cols.append(b.op("torch.aten.select.int", [(idx.name, idx.type), (b.int(-1), "!torch.int"), (b.int(j), "!torch.int")], col))
    lst = b.fresh("index_list")
    b.body.append(f"{lst} = torch.prim.ListConstruct {', '.join(c.name for c in cols)} : "
                  f"({', '.join(c.type for c in cols)}) -> !torch.list<optional<vtensor>>")
    if p.combiner == "sub":
        upd = b.unary("torch.aten.neg", upd, "neg")
    y = b.op("torch.aten.index_put", [(orig.name, orig.type), (lst, "!torch.list<optional<vtensor>>"),
                                      (upd.name, upd.type), (b.bool(p.combiner != "overwrite"), "!torch.bool")],
             orig.with_dims(b.fresh("scattered"), orig.dims))
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


_ONNX_REDUCTION = {"overwrite": None, "add": "add", "sub": "add", "mul": "mul", "max": "max", "min": "min"}


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    # No batch dims (indices [depth], a 0-d update) is left out: 3.13 does not convert that ScatterND.
    return list(p.dimension_map) == list(range(p.depth)) and len(p.batch_shape) > 0


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = _arguments(b, p, bnd)
    orig, idx, upd = args
    if p.implicit_depth:
        idx = unsqueeze(b, idx, -1, "idx_col")
    if p.combiner == "sub":
        upd = b.onnx("Neg", [upd], [upd.with_dims(b.fresh("neg"), upd.dims)])[0]
    reduction = _ONNX_REDUCTION[p.combiner]
    attrs = {"reduction": f'"{reduction}"'} if reduction else None
    y = b.onnx("ScatterND", [orig, idx, upd], [orig.with_dims(b.fresh("scattered"), orig.dims)], attrs)[0]
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y], ONNX_META)


_MODEL_REDUCTION = {"overwrite": "none", "add": "add", "sub": "add", "mul": "mul", "max": "max", "min": "min"}


def _onnx_model(p: FamilyParams, bnd: Boundary) -> "onnx.ModelProto":
    assert isinstance(p, Params)
    g = Graph(bnd, ["original", "indices", "updates"])
    idx, upd = "indices", "updates"
    if p.implicit_depth:
        idx = g.unsqueeze(idx, -1)
    if p.combiner == "sub":
        upd = g.one("Neg", [upd])
    reduction = _MODEL_REDUCTION[p.combiner]
    attrs = {"reduction": reduction} if reduction != "none" else {}
    y = g.one("ScatterND", ["original", idx, upd], **attrs)
    return g.model([(y, bnd.args[0][1])])


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("scatter", "torch", _torch_expressible, _normalize, _torch_build),
    Spelling("scatter", "onnx", _onnx_expressible, _normalize, imported("scatter", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("scatter", _onnx_model)
