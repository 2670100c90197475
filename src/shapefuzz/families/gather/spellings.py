"""The gather family's frontend spellings (si64 indices, as both frontends take them). The index
argument is first brought to [B..., depth] the way the case lays it out (a permute / Transpose, a
stride-2 slice), then:

- torch: `torch.aten.embedding` (depth 1 into a 2-D table), `torch.aten.index_select` (depth 1,
  one batch dim), else `torch.aten.index.Tensor` with one index column (`select.int`) per
  gathered dim, in the dimension_map's order. At least one batch dim.
- onnx: `onnx.Gather` (axis 0) for an implicit depth, `onnx.GatherND` (batch_dims 0) for index
  vectors addressing the leading dims in order (identity dimension_map)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.gather.params import Params, arg_index_shape, out_shape
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_models import ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import INT64_MAX, ONNX_META, TV, Boundary, TorchBuilder, si64s


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="linalg_ext", index_dtype="i64")


def _out(b: TorchBuilder, p: Params, src: TV, idx: TV) -> TV:
    nb = len(p.batch_shape)
    dims = list(idx.dims[:nb]) + list(src.dims[p.depth:])
    assert [s for s, _ in dims] == out_shape(p)
    return TV(b.fresh("gathered"), tuple(dims), p.dtype)


def _torch_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return len(p.batch_shape) >= 1


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = boundary_args(b, bnd, [list(p.src_shape), arg_index_shape(p)], ["%source", "%indices"])
    src, idx = args
    idx = b.to_dtype(idx, "i64", "idx64")  # a swarm-narrowed case passes i32 indices: cast as a model would
    nb = len(p.batch_shape)
    if p.index_layout == "transposed":
        idx = b.permute(idx, list(range(1, idx.rank)) + [0], "idx_t")
    elif p.index_layout == "strided":
        dims = list(idx.dims)
        dims[0] = (p.batch_shape[0], dims[0][1])
        idx = b.op("torch.aten.slice.Tensor", [(idx.name, idx.type), (b.int(0), "!torch.int"), (b.int(0), "!torch.int"),
                                               (b.int(INT64_MAX), "!torch.int"), (b.int(2), "!torch.int")],
                   idx.with_dims(b.fresh("idx_s"), dims))
    cols = []
    for q in range(p.depth):
        if p.implicit_depth:
            cols.append(idx)
            continue
        j = list(p.dimension_map).index(q)
        cols.append(b.op("torch.aten.select.int", [(idx.name, idx.type), (b.int(-1), "!torch.int"), (b.int(j), "!torch.int")],
                         idx.with_dims(b.fresh(f"col{q}_"), idx.dims[:-1])))
    out = _out(b, p, src, cols[0])
    if p.depth == 1 and len(p.src_shape) == 2:
        y = b.op("torch.aten.embedding", [(src.name, src.type), (cols[0].name, cols[0].type), (b.int(-1), "!torch.int"),
                                          (b.bool(False), "!torch.bool"), (b.bool(False), "!torch.bool")], out)
    elif p.depth == 1 and nb == 1:
        y = b.op("torch.aten.index_select", [(src.name, src.type), (b.int(0), "!torch.int"), (cols[0].name, cols[0].type)], out)
    else:
        lst = b.fresh("index_list")
        b.body.append(f"{lst} = torch.prim.ListConstruct {', '.join(c.name for c in cols)} : "
                      f"({', '.join(c.type for c in cols)}) -> !torch.list<optional<vtensor>>")
        y = b.op("torch.aten.index.Tensor", [(src.name, src.type), (lst, "!torch.list<optional<vtensor>>")], out)
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return p.implicit_depth or list(p.dimension_map) == list(range(p.depth))


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    args = boundary_args(b, bnd, [list(p.src_shape), arg_index_shape(p)], ["%source", "%indices"])
    src, idx = args
    if idx.elt != "i64":
        idx = b.onnx("Cast", [idx], [idx.with_dims(b.fresh("idx64"), idx.dims, "i64")], {"to": "7 : si64"})[0]
    if p.index_layout == "transposed":
        perm = list(range(1, idx.rank)) + [0]
        idx = b.onnx("Transpose", [idx], [idx.with_dims(b.fresh("idx_t"), [idx.dims[i] for i in perm])],
                     {"perm": si64s(perm)})[0]
    elif p.index_layout == "strided":
        dims = list(idx.dims)
        dims[0] = (p.batch_shape[0], dims[0][1])
        consts = [b.onnx_const([v], "i64", stem=stem) for v, stem in ((0, "starts"), (INT64_MAX, "ends"), (0, "axes"), (2, "steps"))]
        idx = b.onnx("Slice", [idx, *consts], [idx.with_dims(b.fresh("idx_s"), dims)])[0]
    if p.implicit_depth:
        out = _out(b, p, src, idx)
        y = b.onnx("Gather", [src, idx], [out], {"axis": "0 : si64"})[0]
    else:
        out = _out(b, p, src, idx.with_dims(idx.name, idx.dims[:-1]))
        y = b.onnx("GatherND", [src, idx], [out], {"batch_dims": "0 : si64"})[0]
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y], ONNX_META)


def _onnx_model(p: FamilyParams, bnd: Boundary):
    """The same graph as a real ONNX model (`onnx_models`), which iree-import-onnx imports."""
    assert isinstance(p, Params)
    from shapefuzz.families.onnx_models import ONNX_TYPE, Graph

    g = Graph(bnd, ["source", "indices"])
    idx = "indices"
    if bnd.args[1][1] != "i64":
        idx = g.one("Cast", [idx], to=ONNX_TYPE["i64"])
    rank = len(arg_index_shape(p))
    if p.index_layout == "transposed":
        idx = g.transpose(idx, list(range(1, rank)) + [0])
    elif p.index_layout == "strided":
        idx = g.one("Slice", [idx] + [g.const([v], "i64") for v in (0, INT64_MAX, 0, 2)])
    y = g.one("Gather", ["source", idx], axis=0) if p.implicit_depth else g.one("GatherND", ["source", idx], batch_dims=0)
    return g.model([(y, bnd.args[0][1])])


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("gather", "torch", _torch_expressible, _normalize, _torch_build),
    Spelling("gather", "onnx", _onnx_expressible, _normalize, imported("gather", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("gather", _onnx_model)
