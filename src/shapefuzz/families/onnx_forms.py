"""ONNX spellings of each family's cases. Each is a real ONNX model (`onnx_models`) imported by
IREE's own `iree-import-onnx` (`onnx_import`); the hand-written text below, in the shape that
importer leaves a model, is kept for a family without a model builder and for a model the
importer rejects, and then says so in its first line (`HAND_WRITTEN`). The hand-written form: `torch.operator
"onnx.*"` ops on `!torch.vtensor` values, attributes `torch.onnx.*`, opset metadata on the
function (opset 18). IREE 3.13 turns them into torch ops (TorchOnnxToTorch) and then lowers those,
so this is a second frontend path in front of the same linalg. Same boundary types, inputs and
NumPy reference as the case's linalg forms; which cases each op can write:

- conv: `onnx.Conv` (NC<spatial>, so `onnx.Transpose` at the boundary; asymmetric `pads` are
  native), regular and depthwise (`onnx.Unsqueeze` of the filter) float cases with zero padding
  values; f16 inputs with an f32 accumulator through `onnx.Cast`; `onnx.Relu` epilogue.
- conv_transpose: `onnx.ConvTranspose` with `group`, `output_padding` and equal low/high pads
  (3.13 does not lower unequal ones: "failed to legalize 'torch.operator'").
- scatter: `onnx.ScatterND` (the linalg_ext scatter's own semantics: index columns address the
  leading dims in order, so only the identity dimension_map; at least one batch dim), reductions
  none/add/mul/max/min, sub as `onnx.Neg` + add; an implicit depth as `onnx.Unsqueeze`; int64
  indices.
- one_hot: `onnx.OneHot` is the family's definition (negative indices wrap once, anything still
  outside [0, depth) gives an all-off row), `axis` native, values `[off, on]` a constant or
  `onnx.Concat` of the inputs; the consumer as `onnx.Mul` + `onnx.ReduceSum`.
- topk: `onnx.TopK` (K a 1-element constant; largest, sorted), `onnx.GatherElements` for labels.
"""

from __future__ import annotations

from typing import Callable

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_forms import FLOATS, Spelling, boundary_args, one_hot_args
from shapefuzz.families.torch_ir import ONNX_META, TV, Boundary, TorchBuilder, si64s

ONNX_FLOAT_CODE = {"f32": 1, "f16": 10}  # TensorProto.DataType


def transpose(b: TorchBuilder, x: TV, perm: list[int], stem: str) -> TV:
    if perm == list(range(x.rank)):
        return x
    out = x.with_dims(b.fresh(stem), [x.dims[i] for i in perm])
    return b.onnx("Transpose", [x], [out], {"perm": si64s(perm)})[0]


def unsqueeze(b: TorchBuilder, x: TV, axis: int, stem: str) -> TV:
    axes = b.onnx_const([axis], "i64", stem="axes")
    pos = axis if axis >= 0 else x.rank + 1 + axis
    dims = list(x.dims)
    dims.insert(pos, (1, False))
    return b.onnx("Unsqueeze", [x, axes], [x.with_dims(b.fresh(stem), dims)])[0]


# ============================================================================ scatter

_REDUCTION = {"overwrite": None, "add": "add", "sub": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter_expressible(p: Params) -> bool:
    # No batch dims (indices [depth], a 0-d update) is left out: 3.13 does not convert that ScatterND.
    return list(p["dimension_map"]) == list(range(p["depth"])) and len(p["batch_shape"]) > 0


def _scatter_normalize(p: Params) -> Params:
    return p.replace(form="linalg_ext", index_dtype="i64")


def _scatter_build(p: Params, bnd: Boundary) -> str:
    batch, d = list(p["batch_shape"]), p["depth"]
    shapes = [list(p["orig_shape"]), batch + ([] if p["implicit_depth"] else [d]), batch + list(p["orig_shape"][d:])]
    b = TorchBuilder()
    args = boundary_args(b, bnd, shapes, ["%original", "%indices", "%updates"])
    orig, idx, upd = args
    if p["implicit_depth"]:
        idx = unsqueeze(b, idx, -1, "idx_col")
    if p["combiner"] == "sub":
        upd = b.onnx("Neg", [upd], [upd.with_dims(b.fresh("neg"), upd.dims)])[0]
    reduction = _REDUCTION[p["combiner"]]
    attrs = {"reduction": f'"{reduction}"'} if reduction else None
    y = b.onnx("ScatterND", [orig, idx, upd], [orig.with_dims(b.fresh("scattered"), orig.dims)], attrs)[0]
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y], ONNX_META)


# ============================================================================ one_hot


def _one_hot_normalize(p: Params) -> Params:
    return p.replace(form="generic", dimension_map=list(range(len(p["index_shape"]) + 1)))


def _one_hot_build(p: Params, bnd: Boundary) -> str:
    from shapefuzz.families import one_hot

    b = TorchBuilder()
    elt, a = p["dtype"], one_hot.out_axis(p)
    args = one_hot_args(b, p, bnd)
    by_name = {t.name: t for t in args}
    idx = by_name["%indices"]
    depth = by_name["%depth_t"] if p["depth_dyn"] else b.onnx_const([p["depth"]], "i64", shape=[], stem="depth")
    if p["values"] == "input":
        off = unsqueeze(b, by_name["%off_t"], 0, "off1")
        on = unsqueeze(b, by_name["%on_t"], 0, "on1")
        values = b.onnx("Concat", [off, on], [TV(b.fresh("values"), ((2, False),), elt)], {"axis": "0 : si64"})[0]
    else:
        values = b.onnx_const([p["off"], p["on"]], elt, stem="values")
    dims = list(idx.dims)
    dims.insert(a, (p["depth"], p["depth_dyn"]))
    hot = b.onnx("OneHot", [idx, depth, values], [TV(b.fresh("hot"), tuple(dims), elt)], {"axis": f"{p['axis']} : si64"})[0]
    results = []
    if p["consumer"] in ("none", "both"):
        results.append(b.cast_to(hot, bnd.results[0][0], "onehot"))
    if p["consumer"] in ("reduce", "both"):
        wts = by_name["%weights"]
        prod = b.onnx("Mul", [hot, wts], [hot.with_dims(b.fresh("weighted"), [(s, d and wd) for (s, d), (_, wd) in zip(hot.dims, wts.dims)])])[0]
        axes = b.onnx_const([a], "i64", stem="axes")
        red = b.onnx("ReduceSum", [prod, axes], [prod.with_dims(b.fresh("reduced"), [x for i, x in enumerate(prod.dims) if i != a])],
                     {"keepdims": "0 : si64"})[0]
        results.append(b.cast_to(red, bnd.results[-1][0], "reduced_c"))
    return b.render("main", args, results, ONNX_META)


# ============================================================================ topk


def _topk_build(p: Params, bnd: Boundary) -> str:
    b = TorchBuilder()
    shape, dim, k = p["shape"], p["dim"], p["k"]
    names = ["%input"] + (["%labels"] if p["indices"] == "arg" else [])
    args = boundary_args(b, bnd, [list(shape)] * len(names), names)
    x = args[0]
    out_dims = list(x.dims)
    out_dims[dim] = (k, False)
    kk = b.onnx_const([k], "i64", stem="k")
    vals, idx = b.onnx("TopK", [x, kk], [x.with_dims(b.fresh("values"), out_dims), x.with_dims(b.fresh("indices"), out_dims, "i64")],
                       {"axis": f"{dim} : si64", "largest": f"{int(bool(p['largest']))} : si64", "sorted": "1 : si64"})
    if p["indices"] == "arg":
        labels = args[1]
        idx = b.onnx("GatherElements", [labels, idx], [labels.with_dims(b.fresh("picked"), out_dims)], {"axis": f"{dim} : si64"})[0]
    results, pos = [], 0
    if p["use"] in ("values", "both"):
        results.append(b.cast_to(vals, bnd.results[pos][0], "values_c"))
        pos += 1
    if p["use"] in ("indices", "both"):
        results.append(b.cast_to(idx, bnd.results[pos][0], "indices_c"))
    return b.render("main", args, results, ONNX_META)


HAND_WRITTEN = "// hand-written ONNX spelling"


def imported(family: str, hand_written: Callable[[Params, Boundary], str]) -> Callable[[Params, Boundary], str]:
    """The spelling as `iree-import-onnx` makes it of a real model (`onnx_models`); the
    hand-written text only for a family without a model builder, or a model the importer
    rejects, and then it says so in its first line."""

    def build(p: Params, bnd: Boundary) -> str:
        from shapefuzz.families.onnx_models import model_spelling
        from shapefuzz.onnx_import import ImportFailure, import_model

        spelling = model_spelling(family)
        if spelling is None:
            return f"{HAND_WRITTEN}: no ONNX model builder for {family}\n" + hand_written(p, bnd)
        if spelling.refuse(p):
            return f"{HAND_WRITTEN}: {spelling.refuse(p)}\n" + hand_written(p, bnd)
        try:
            return import_model(spelling.build(p, bnd))
        except ImportFailure as error:
            return f"{HAND_WRITTEN}: {str(error).splitlines()[0]}\n" + hand_written(p, bnd)

    return build


ONNX_SPELLINGS: tuple[Spelling, ...] = (
    Spelling("scatter", "onnx", _scatter_expressible, _scatter_normalize, imported("scatter", _scatter_build)),
    Spelling("one_hot", "onnx", lambda p: True, _one_hot_normalize, imported("one_hot", _one_hot_build)),
    Spelling("topk", "onnx", lambda p: not p["result_dyn"], lambda p: p.replace(form="topk", transpose=False),
             imported("topk", _topk_build)),
)
