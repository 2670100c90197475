"""Torch-dialect spellings of each family's cases: the computation a PyTorch model exported
through torch-mlir (fx importer) would hand to `iree-compile`, taking and returning the same
arrays as the case's linalg forms, so the family's NumPy reference judges both.

Per family, a `Spelling` says which cases PyTorch can write (`expressible`), which parameters
only choose among linalg formulations and are set to one value (`normalize`, so two linalg forms
of one case share one torch form), and builds the function from the linalg form's boundary types:

- conv: boundary layout -> NC<spatial> with `torch.aten.permute`, group dims merged with
  `flatten.using_ints`; asymmetric or non-zero padding as `torch.aten.constant_pad_nd` (torch's
  own padding is symmetric zeros), else conv padding; bias (or `torch.constant.none`) and groups
  passed to `torch.aten.convolution`, strides/paddings/dilations through `torch.prim.ListConstruct`;
  the output unflattened and permuted back; `relu` epilogue. Float cases only (PyTorch has no
  integer convolution); f16 inputs with an f32 accumulator are cast up first.
- conv_transpose: `torch.aten.convolution` with `transposed = true`, `output_padding`, groups; the
  stored filter permuted to torch's [Cin, Cout/G, k...]; unequal low/high padding as padding 0 and
  a `torch.aten.slice.Tensor` per spatial dim.
- scatter, indexing depth >= 2 (overwrite, add, sub): `torch.aten.index_put` with one `select.int`
  column of the indices per indexed dim (accumulate for add; sub as add of `neg`).
- scatter, indexing depth 1: `torch.aten.scatter.src` (overwrite), `scatter_add` (add; sub as
  add of `neg`), `scatter_reduce.two` with "amax"/"amin"/"prod" and include_self; the index tensor
  is the case's indices flattened, unsqueezed and `expand`ed over the window, the updates flattened
  over the batch dims. si64 indices, as PyTorch requires.
- one_hot: `torch.aten.one_hot` (si64 0/1, classes last) on si64 indices (negative ones wrapped
  first with `lt.Scalar`/`add.Scalar`/`where.self`), cast to the element type, scaled to on/off,
  moved to the class axis with `permute`; the consumer as `mul.Tensor` + `sum.dim_IntList`. Cases
  with indices outside [-depth, depth) are left out: PyTorch rejects them, so no answer is right.
- topk: `torch.aten.topk` (largest, sorted) or `torch.aten.sort` + `slice.Tensor` (form "sort"),
  along the case's dim; si64 indices, mapped through `torch.aten.gather` when the case passes its
  own labels. Ties are judged by the family's compare (indices by the values they select).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_ir import INT64_MAX, TV, Boundary, TorchBuilder, dims_of

FLOATS = ("f32", "f16")


@dataclass(frozen=True)
class Spelling:
    """One frontend's way to write a family's cases."""

    family: str
    frontend: str  # "torch" (aten ops) | "onnx" (torch.operator "onnx.*")
    expressible: Callable[[Params], bool]
    normalize: Callable[[Params], Params]  # linalg-only choices set to one value, dtypes as the frontend needs
    build: Callable[[Params, Boundary], str]  # the module text, given the linalg form's boundary types


def boundary_args(b: TorchBuilder, bnd: Boundary, sizes: list[list[int]], names: list[str]) -> list[TV]:
    return [TV(n, dims_of(shape, sz), elt) for n, (shape, elt), sz in zip(names, bnd.args, sizes)]


# ============================================================================ scatter

_SCATTER_REDUCE = {"max": "amax", "min": "amin", "mul": "prod"}


def _scatter_expressible(p: Params) -> bool:
    # Depth 1: the scatter ops. Deeper: `index_put`, which only overwrites or accumulates.
    return p["depth"] == 1 or p["combiner"] in ("overwrite", "add", "sub")


def _scatter_normalize(p: Params) -> Params:
    return p.replace(form="linalg_ext", index_dtype="i64")


def _scatter_build(p: Params, bnd: Boundary) -> str:
    batch, d = list(p["batch_shape"]), p["depth"]
    shapes = [list(p["orig_shape"]), batch + ([] if p["implicit_depth"] else [d]), batch + list(p["orig_shape"][d:])]
    b = TorchBuilder()
    args = boundary_args(b, bnd, shapes, ["%original", "%indices", "%updates"])
    orig, idx, upd = args
    if d > 1:
        return _index_put(b, p, bnd, args)
    r, k = len(p["orig_shape"]), len(p["batch_shape"])
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
    comb = p["combiner"]
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
            (src.name, src.type), (b.str(_SCATTER_REDUCE[comb]), "!torch.str"), (b.bool(True), "!torch.bool")], out)
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


def _index_put(b: TorchBuilder, p: Params, bnd: Boundary, args: list[TV]) -> str:
    """`original[i_0, ..., i_{d-1}] = updates` (`+=` with accumulate): what PyTorch records for
    advanced-index assignment. Index tensor for original dim q is column j of the indices with
    dimension_map[j] == q, taken with `select.int`; a neg first for sub."""
    orig, idx, upd = args
    d = p["depth"]
    cols = []
    for q in range(d):
        j = list(p["dimension_map"]).index(q)
        col = idx.with_dims(b.fresh(f"col{q}_"), idx.dims[:-1])
        cols.append(b.op("torch.aten.select.int", [(idx.name, idx.type), (b.int(-1), "!torch.int"), (b.int(j), "!torch.int")], col))
    lst = b.fresh("index_list")
    b.body.append(f"{lst} = torch.prim.ListConstruct {', '.join(c.name for c in cols)} : "
                  f"({', '.join(c.type for c in cols)}) -> !torch.list<optional<vtensor>>")
    if p["combiner"] == "sub":
        upd = b.unary("torch.aten.neg", upd, "neg")
    y = b.op("torch.aten.index_put", [(orig.name, orig.type), (lst, "!torch.list<optional<vtensor>>"),
                                      (upd.name, upd.type), (b.bool(p["combiner"] != "overwrite"), "!torch.bool")],
             orig.with_dims(b.fresh("scattered"), orig.dims))
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


# ============================================================================ one_hot


def _one_hot_expressible(p: Params) -> bool:
    return p["range"] in ("valid", "wrap")


def _one_hot_normalize(p: Params) -> Params:
    return p.replace(form="generic", index_dtype="i64", dimension_map=list(range(len(p["index_shape"]) + 1)))


def one_hot_args(b: TorchBuilder, p: Params, bnd: Boundary) -> list[TV]:
    """A one_hot case's function arguments, in the linalg form's order (both spellings share it)."""
    from shapefuzz.families import one_hot

    names, sizes = ["%indices"], [list(p["index_shape"])]
    if p["depth_dyn"]:
        names.append("%depth_t"), sizes.append([])
    if p["values"] == "input":
        names += ["%on_t", "%off_t"]
        sizes += [[], []]
    if p["consumer"] != "none":
        names.append("%weights"), sizes.append(one_hot.out_shape(p))
    return boundary_args(b, bnd, sizes, names)


def _one_hot_build(p: Params, bnd: Boundary) -> str:
    from shapefuzz.families import one_hot

    b = TorchBuilder()
    r, a = len(p["index_shape"]), one_hot.out_axis(p)
    elt = p["dtype"]
    args = one_hot_args(b, p, bnd)
    by_name = {t.name: t for t in args}
    idx = by_name["%indices"]
    if p["depth_dyn"]:
        depth = b.fresh("depth")
        dt = by_name["%depth_t"]
        b.body.append(f"{depth} = torch.aten.item {dt.name} : {dt.type} -> !torch.int")
    else:
        depth = b.int(p["depth"])
    if p["range"] == "wrap":  # negative indices count from the end, once
        neg = b.op("torch.aten.lt.Scalar", [(idx.name, idx.type), (b.int(0), "!torch.int")],
                   idx.with_dims(b.fresh("neg"), idx.dims, "i1"))
        up = b.op("torch.aten.add.Scalar", [(idx.name, idx.type), (depth, "!torch.int"), (b.int(1), "!torch.int")],
                  idx.with_dims(b.fresh("up"), idx.dims))
        idx = b.op("torch.aten.where.self", [(neg.name, neg.type), (up.name, up.type), (idx.name, idx.type)],
                   idx.with_dims(b.fresh("wrapped"), idx.dims))
    hot = b.op("torch.aten.one_hot", [(idx.name, idx.type), (depth, "!torch.int")],
               idx.with_dims(b.fresh("hot"), list(idx.dims) + [(p["depth"], p["depth_dyn"])]))
    y = b.to_dtype(hot, elt, "hot_c")
    # 0/1 -> off/on: hot * (on - off) + off, exact for the values the family draws.
    if p["values"] == "input":
        on, off = by_name["%on_t"], by_name["%off_t"]
        diff = b.op("torch.aten.sub.Tensor", [(on.name, on.type), (off.name, off.type), (b.int(1), "!torch.int")],
                    on.with_dims(b.fresh("diff"), ()))
        y = b.op("torch.aten.mul.Tensor", [(y.name, y.type), (diff.name, diff.type)], y.with_dims(b.fresh("scaled"), y.dims))
        y = b.op("torch.aten.add.Tensor", [(y.name, y.type), (off.name, off.type), (b.int(1), "!torch.int")],
                 y.with_dims(b.fresh("onoff"), y.dims))
    else:
        diff_v = p["on"] - p["off"]
        if diff_v != 1:
            y = b.op("torch.aten.mul.Scalar", [(y.name, y.type), (b.scalar(diff_v, elt), _scalar_type(elt))],
                     y.with_dims(b.fresh("scaled"), y.dims))
        if p["off"] != 0:
            y = b.op("torch.aten.add.Scalar", [(y.name, y.type), (b.scalar(p["off"], elt), _scalar_type(elt)),
                                               (b.int(1), "!torch.int")], y.with_dims(b.fresh("onoff"), y.dims))
    y = b.permute(y, list(range(a)) + [r] + list(range(a, r)), "moved")
    results = []
    if p["consumer"] in ("none", "both"):
        results.append(b.cast_to(y, bnd.results[0][0], "onehot"))
    if p["consumer"] in ("reduce", "both"):
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


# ============================================================================ topk


def _topk_expressible(p: Params) -> bool:
    return not p["result_dyn"]  # result types as the linalg form declares them


def _topk_normalize(p: Params) -> Params:
    return p.replace(transpose=False)


def _topk_build(p: Params, bnd: Boundary) -> str:
    b = TorchBuilder()
    shape, dim, k = p["shape"], p["dim"], p["k"]
    names = ["%input"] + (["%labels"] if p["indices"] == "arg" else [])
    args = boundary_args(b, bnd, [list(shape)] * len(names), names)
    x = args[0]
    out_dims = list(x.dims)
    out_dims[dim] = (k, False)
    vals = x.with_dims(b.fresh("values"), out_dims)
    idx = x.with_dims(b.fresh("indices"), out_dims, "i64")
    largest = bool(p["largest"])
    if p["form"] == "sort":
        sv = x.with_dims(b.fresh("sorted"), x.dims)
        si = x.with_dims(b.fresh("order"), x.dims, "i64")
        b.op2("torch.aten.sort", [(x.name, x.type), (b.int(dim), "!torch.int"), (b.bool(largest), "!torch.bool")], sv, si)
        for src, dst in ((sv, vals), (si, idx)):
            b.op("torch.aten.slice.Tensor", [(src.name, src.type), (b.int(dim), "!torch.int"), (b.int(0), "!torch.int"),
                                             (b.int(k), "!torch.int"), (b.int(1), "!torch.int")], dst)
    else:
        b.op2("torch.aten.topk", [(x.name, x.type), (b.int(k), "!torch.int"), (b.int(dim), "!torch.int"),
                                  (b.bool(largest), "!torch.bool"), (b.bool(True), "!torch.bool")], vals, idx)
    if p["indices"] == "arg":
        labels = args[1]
        idx = b.op("torch.aten.gather", [(labels.name, labels.type), (b.int(dim), "!torch.int"), (idx.name, idx.type),
                                         (b.bool(False), "!torch.bool")], labels.with_dims(b.fresh("picked"), out_dims))
    results = []
    pos = 0
    if p["use"] in ("values", "both"):
        results.append(b.cast_to(vals, bnd.results[pos][0], "values_c"))
        pos += 1
    if p["use"] in ("indices", "both"):
        results.append(b.cast_to(idx, bnd.results[pos][0], "indices_c"))
    return b.render("main", args, results)


SPELLINGS: dict[str, Spelling] = {
    s.family: s
    for s in (
        Spelling("scatter", "torch", _scatter_expressible, _scatter_normalize, _scatter_build),
        Spelling("one_hot", "torch", _one_hot_expressible, _one_hot_normalize, _one_hot_build),
        Spelling("topk", "torch", _topk_expressible, _topk_normalize, _topk_build),
    )
}

