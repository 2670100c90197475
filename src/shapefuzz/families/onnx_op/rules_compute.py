"""Rules of the reductions, contractions, normalizations, pools and quantization (see `rules.py`)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from shapefuzz.families.onnx_op import vocabulary as v
from shapefuzz.families.onnx_op.params import NONE, Params, const, scalar, x
from shapefuzz.families.onnx_op.rule_kit import attrs_of, graph_input, maybe, elem_type, rule

# ----------------------------------------------------------------------------- reductions and scans


@rule("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "ReduceSumSquare")
def reduce(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    t = elem_type(draw, op)
    data = (0.25, 4) if op == "ReduceLogSum" and t in ("f32", "f16") else (-2, 2) if op == "ReduceProd" else ()
    if t not in ("f32", "f16") and op in ("ReduceProd", "ReduceSumSquare"):
        data = (-2, 2)
    ops = [graph_input(draw, t, dims, data)]
    how = draw(st.integers(0, 3))
    if how == 0:
        pass  # no axes: every axis (or none, with noop_with_empty_axes)
    elif how == 1:
        ops.append(const("i64", []))  # an empty axes input
    else:
        chosen = sorted(draw(st.permutations(range(rank)))[:draw(st.integers(1, rank))])
        ops.append(const("i64", [a - rank if draw(st.booleans()) else a for a in chosen]))
    return Params(op, tuple(ops), attrs_of(keepdims=maybe(draw, draw(st.integers(0, 1))),
                                          noop_with_empty_axes=maybe(draw, draw(st.integers(0, 1)))), big=large)


@rule("ArgMax", "ArgMin")
def arg(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    t = elem_type(draw, op)
    data = (-1, 1) if draw(st.booleans()) else ()  # few distinct values: ties, where select_last_index matters
    return Params(op, (graph_input(draw, t, dims, data),),
                  attrs_of(axis=v.axis(draw, rank), keepdims=maybe(draw, draw(st.integers(0, 1))),
                         select_last_index=maybe(draw, draw(st.integers(0, 1)))), big=large)


@rule("CumSum")
def cumsum(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), scalar(v.pick(draw, ("i64", "i32")), v.axis(draw, rank))),
                  attrs_of(exclusive=maybe(draw, draw(st.integers(0, 1))), reverse=maybe(draw, draw(st.integers(0, 1)))),
                  big=large)


@rule("Softmax", "LogSoftmax", "Hardmax")
def softmax(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    return Params(op, (graph_input(draw, elem_type(draw, op), dims),), attrs_of(axis=maybe(draw, v.axis(draw, rank))), big=large)


# ----------------------------------------------------------------------------- contractions


@rule("MatMul")
def matmul(draw: Any, op: str, large: bool) -> Params:
    m, k, n = v.size(draw, large), v.size(draw, large), v.size(draw, large)
    batch = v.shape(draw, draw(st.integers(0, 2)), False)
    ba, bb = v.broadcast(draw, batch, 2) if batch else ([], [])
    a = ba + [m, k] if draw(st.integers(0, 4)) else [k]
    b = bb + [k, n] if draw(st.integers(0, 4)) else [k]
    t = elem_type(draw, op)
    data = (-2, 2) if t not in ("f32", "f16") else ()
    return Params(op, (graph_input(draw, t, a, data), graph_input(draw, t, b, data)), big=large)


@rule("MatMulInteger")
def matmul_integer(draw: Any, op: str, large: bool) -> Params:
    m, k, n = v.size(draw, large), v.size(draw, large), v.size(draw, large)
    ta, tb = v.pick(draw, ("u8", "i8")), v.pick(draw, ("u8", "i8"))
    ops = [graph_input(draw, ta, [m, k]), graph_input(draw, tb, [k, n])]
    extreme = {"u8": (0, 255, 128, 1), "i8": (-128, 127, 0, -1)}
    zps = []
    for t, count in ((ta, m), (tb, n)):
        zp = v.pick(draw, extreme[t]) if draw(st.booleans()) else draw(st.integers(*((0, 255) if t == "u8" else (-128, 127))))
        how = draw(st.integers(0, 3))
        zps.append(NONE if how == 0 else scalar(t, zp) if how == 1 else const(t, [zp] * (1 if how == 2 else count)))
    if zps[1] != NONE:
        ops += zps
    elif zps[0] != NONE:
        ops.append(zps[0])
    return Params(op, tuple(ops), big=large)


@rule("Gemm")
def gemm(draw: Any, op: str, large: bool) -> Params:
    m, k, n = v.size(draw, large), v.size(draw, large), v.size(draw, large)
    ta, tb = draw(st.integers(0, 1)), draw(st.integers(0, 1))
    t = elem_type(draw, op, floats_only=True)
    ops = [graph_input(draw, t, [k, m] if ta else [m, k]), graph_input(draw, t, [n, k] if tb else [k, n])]
    if draw(st.booleans()):
        (c,) = v.broadcast(draw, [m, n], 2)[1:]
        ops.append(graph_input(draw, t, c))
    return Params(op, tuple(ops), attrs_of(transA=maybe(draw, ta) if not ta else ta, transB=tb or None,
                                          alpha=maybe(draw, v.pick(draw, (0.5, 2.0, -1.0))),
                                          beta=maybe(draw, v.pick(draw, (0.5, 0.0, 2.0)))), big=large)


EINSUMS = (("ij,jk->ik", 2), ("bij,bjk->bik", 3), ("ij->ji", 1), ("ii->i", 1), ("ij->", 1), ("i,j->ij", 2),
           ("i,i->", 2), ("bij->bj", 1), ("ijk,ikl->jl", 3), ("...ij,...jk->...ik", 4), ("ij,ij->ij", 2), ("i...->...", 3))


@rule("Einsum")
def einsum(draw: Any, op: str, large: bool) -> Params:
    equation, _ = v.pick(draw, EINSUMS)
    letters: dict[str, int] = {}
    ell = v.shape(draw, draw(st.integers(0, 2)), large)
    shapes = []
    for term in equation.split("->")[0].split(","):
        dims: list[int] = []
        for ch in term.replace("...", "*"):
            if ch == "*":
                dims += ell
            else:
                letters.setdefault(ch, v.size(draw, large))
                dims.append(letters[ch])
        shapes.append(dims)
    t = elem_type(draw, op, floats_only=True)
    return Params(op, tuple(graph_input(draw, t, s) for s in shapes), attrs_of(equation=equation), big=large)


# ----------------------------------------------------------------------------- normalization and pooling


@rule("InstanceNormalization")
def instance_norm(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(3, 4))
    dims = v.shape(draw, rank, large)
    t = elem_type(draw, op)
    c = dims[1]
    return Params(op, (graph_input(draw, t, dims), x(t, [c], [False]), x(t, [c], [False])),
                  attrs_of(epsilon=maybe(draw, v.pick(draw, (1e-3, 1e-2)))), big=large)


@rule("LayerNormalization")
def layer_norm(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    t = elem_type(draw, op, "T")
    normalized = dims[ax:]
    ops = [graph_input(draw, t, dims), x(t, normalized, [False] * len(normalized))]
    if draw(st.booleans()):
        ops.append(x(t, normalized, [False] * len(normalized)))
    return Params(op, tuple(ops), attrs_of(axis=ax if ax != -1 else maybe(draw, ax),
                                          epsilon=maybe(draw, v.pick(draw, (1e-3, 1e-2)))),
                  outputs=draw(st.integers(1, 3)) if t == "f32" else 1, big=large)


@rule("MaxPool", "AveragePool")
def pool(draw: Any, op: str, large: bool) -> Params:
    nsp = draw(st.integers(1, 3))
    dims = [v.pick(draw, (1, 2)), v.pick(draw, (1, 2, 3))] + [v.pick(draw, (3, 4, 5, 7, 8)) for _ in range(nsp)]
    kernel = [draw(st.integers(1, min(3, d))) for d in dims[2:]]
    strides = [v.pick(draw, (1, 2, 3)) for _ in kernel]
    pads = [draw(st.integers(0, k - 1)) for k in kernel] + [draw(st.integers(0, k - 1)) for k in kernel]
    attrs: dict[str, Any] = {"kernel_shape": kernel, "strides": maybe(draw, strides), "pads": maybe(draw, pads),
                             "ceil_mode": maybe(draw, 1)}
    if op == "AveragePool":
        attrs["count_include_pad"] = maybe(draw, 1)
    elif draw(st.booleans()):
        attrs["dilations"] = [v.pick(draw, (1, 2)) for _ in kernel]
    t = elem_type(draw, op, floats_only=True)
    return Params(op, (graph_input(draw, t, dims),), attrs_of(**attrs), big=large)


@rule("QuantizeLinear", "DequantizeLinear")
def quantize(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    q = v.pick(draw, ("u8", "i8"))
    zp_range = (0, 255) if q == "u8" else (-128, 127)
    per_axis = draw(st.booleans())
    ax = v.axis(draw, rank)
    n = dims[ax] if per_axis else 1
    scales = [v.pick(draw, (0.25, 0.5, 1.0, 2.0, 0.125)) for _ in range(n)]
    zps = [v.pick(draw, zp_range + (0, 1, -1 if q == "i8" else 128)) for _ in range(n)]
    scale = const("f32", scales) if per_axis else scalar("f32", scales[0])
    zp = const(q, zps) if per_axis else scalar(q, zps[0])
    if op == "QuantizeLinear":
        data = graph_input(draw, "f32", dims, (-40, 40))  # past the range: saturation; halves: ties to even
    else:
        data = graph_input(draw, q, dims)
    ops = [data, scale] + ([zp] if draw(st.integers(0, 3)) else [])
    return Params(op, tuple(ops), attrs_of(axis=ax if per_axis else None), big=large)


@rule("Flatten")
def flatten(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(0, 4))
    dims = v.shape(draw, rank, large)
    ax = draw(st.integers(-rank, rank)) if rank else 0
    return Params(op, (graph_input(draw, elem_type(draw, op), dims),), attrs_of(axis=maybe(draw, ax)), big=large)


@rule("OneHot")
def one_hot(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 2))
    dims = v.shape(draw, rank, large)
    depth = v.pick(draw, (1, 2, 3, 5, 8))
    t = v.float_type(draw, ("f32", "i64", "i32"))
    values = const(t, [0, 1] if t != "f32" else [-0.5, 2.0])
    return Params(op, (graph_input(draw, "i64", dims, (-depth, depth - 1)), scalar("i64", depth), values),
                  attrs_of(axis=maybe(draw, draw(st.integers(-rank - 1, rank)))), big=large)


@rule("Constant")
def constant(draw: Any, op: str, large: bool) -> Params:
    return Params(op, (), attrs_of(value_float=draw(st.integers(-8, 8)) / 4) if draw(st.booleans()) else
                  attrs_of(value_ints=[draw(st.integers(-5, 5)) for _ in range(draw(st.integers(1, 4)))]), big=large)
