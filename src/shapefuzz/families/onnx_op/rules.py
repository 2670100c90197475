"""Per-op rules: what a schema cannot say (valid ranks, attribute values, which operands are
constants, index ranges), for the ops whose semantics real IREE bugs need. Each rule draws one
case, `rule(draw, large) -> Params`, in the families' shape vocabulary; ONNX's shape inference
still has the last word (`model.drawable`). Ops without a rule are drawn from their schema
(`generic.py`)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.onnx_op import vocabulary as v
from shapefuzz.families.onnx_op.generic import DOMAIN
from shapefuzz.families.onnx_op.params import NONE, Params, const, scalar, x
from shapefuzz.families.onnx_op.schema import type_choices

Rule = Callable[[Any, bool], Params]
RULES: dict[str, Rule] = {}
INT64_MAX, INT64_MIN = (1 << 63) - 1, -(1 << 63)


def rule(*ops: str) -> Callable[[Callable[..., Params]], Callable[..., Params]]:
    def register(fn: Callable[..., Params]) -> Callable[..., Params]:
        for op in ops:
            RULES[op] = (lambda draw, large, _op=op: fn(draw, _op, large))
        return fn
    return register


def _attrs(**kw: Any) -> tuple:
    return tuple(sorted((k, val) for k, val in kw.items() if val is not None))


def _maybe(draw: Any, value: Any) -> Any:
    """`value`, or None (the attribute left at its default) half the time."""
    return value if draw(st.booleans()) else None


def _input(draw: Any, dtype: str, dims: list[int], data: tuple = ()) -> tuple:
    return x(dtype, dims, v.dyn(draw, len(dims)), data)


def _T(draw: Any, op: str, param: str = "T", floats_only: bool = False) -> str:
    allowed = type_choices(op)[param]
    if floats_only:
        allowed = tuple(t for t in allowed if t in ("f32", "f16")) or allowed
    return v.float_type(draw, allowed) if draw(st.integers(0, 3)) else v.pick(draw, allowed)


# ----------------------------------------------------------------------------- elementwise


@rule("Add", "Sub", "Mul", "Div", "Max", "Min", "Sum", "Mean", "Equal", "Less", "Greater", "LessOrEqual",
      "GreaterOrEqual", "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Pow", "Mod", "PRelu")
def binary(draw: Any, op: str, large: bool) -> Params:
    variadic = op in ("Max", "Min", "Sum", "Mean")
    n = draw(st.integers(1, 3)) if variadic else 2
    full = v.shape(draw, draw(st.integers(0, 4)), large)
    shapes = v.broadcast(draw, full, n)
    if op == "PRelu":  # the slope broadcasts to X (unidirectionally)
        shapes = [full, shapes[1] if len(shapes[1]) <= len(full) else full]
    t = _T(draw, op, "T")
    t2 = _T(draw, op, "T1") if op == "Pow" else t
    data = [()] * n
    attrs: dict[str, Any] = {}
    if op in ("Div", "Mod"):
        data[1] = (-4, 4, "nonzero") if t in ("f32", "f16") else (-9, 9, "nonzero")
    if op == "Mod":
        attrs["fmod"] = 1 if t in ("f32", "f16") else draw(st.integers(0, 1))
    if op == "Pow":
        data = [(0.25, 4), (-2, 2)] if t2 in ("f32", "f16") else [(0.25, 4), (0, 3)]
        if t not in ("f32", "f16"):
            data[0] = (-4, 4)
    ops = [_input(draw, tt, s, d) for tt, s, d in zip([t, t2] + [t] * (n - 2), shapes, data)]
    return Params(op, tuple(ops), _attrs(**attrs), big=large)


@rule("BitShift")
def bitshift(draw: Any, op: str, large: bool) -> Params:
    full = v.shape(draw, draw(st.integers(0, 3)), large)
    a, b = v.broadcast(draw, full, 2)
    return Params(op, (_input(draw, "u8", a), _input(draw, "u8", b, (0, 7))),
                  _attrs(direction=v.pick(draw, ("LEFT", "RIGHT"))), big=large)


@rule("Where")
def where(draw: Any, op: str, large: bool) -> Params:
    full = v.shape(draw, draw(st.integers(0, 4)), large)
    c, a, b = v.broadcast(draw, full, 3)
    t = _T(draw, op)
    return Params(op, (_input(draw, "i1", c), _input(draw, t, a), _input(draw, t, b)), big=large)


@rule("Clip")
def clip(draw: Any, op: str, large: bool) -> Params:
    t = _T(draw, op)
    dims = v.shape(draw, draw(st.integers(0, 4)), large)
    lo, hi = sorted(draw(st.integers(-16, 16)) / 4 for _ in range(2))
    if draw(st.integers(0, 5)) == 0:
        lo, hi = hi, lo  # min above max: every element is max
    if t not in ("f32", "f16"):
        lo, hi = int(lo), int(hi)
    bounds = [scalar(t, lo) if draw(st.booleans()) else NONE, scalar(t, hi) if draw(st.booleans()) else NONE]
    if bounds[1] == NONE and bounds[0] == NONE:
        bounds = []
    elif bounds[1] == NONE:
        bounds = bounds[:1]
    return Params(op, (_input(draw, t, dims), *bounds), big=large)


@rule("Cast")
def cast(draw: Any, op: str, large: bool) -> Params:
    ours = ("f32", "f16", "i32", "i64", "i8", "u8", "i1")
    t, to = v.pick(draw, ours), v.pick(draw, ours)
    from shapefuzz.families.onnx_op.params import ONNX_TYPE

    dims = v.shape(draw, draw(st.integers(0, 3)), large)
    data = (-8, 8) if t in ("f32", "f16") and to in ("u8",) else ()  # out-of-range casts are undefined
    if to == "u8" and t not in ("f32", "f16", "u8", "i1"):
        data = (0, 8)
    return Params(op, (_input(draw, t, dims, data),), _attrs(to=ONNX_TYPE[to]), big=large)


# ----------------------------------------------------------------------------- data movement


@rule("Slice")
def slice_(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    k = draw(st.integers(1, rank))
    axes = draw(st.permutations(range(rank)))[:k]
    starts, ends, steps = [], [], []
    for a in axes:
        n = dims[a]
        step = v.pick(draw, (1, 1, 2, 3, -1, -1, -2, -3))
        # edge and clamped coordinates: past either end, the int64 extremes, negative from the end
        edge = (0, n, n - 1, -1, -n, -n - 3, n + 5, INT64_MAX, INT64_MIN, 1)
        start = v.pick(draw, edge) if draw(st.booleans()) else draw(st.integers(-n, max(0, n - 1)))
        end = v.pick(draw, edge) if draw(st.booleans()) else draw(st.integers(-n, n))
        starts.append(start)
        ends.append(end)
        steps.append(step)
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    with_axes = draw(st.integers(0, 3)) != 0 or axes != list(range(k))
    with_steps = with_axes and (draw(st.booleans()) or any(s != 1 for s in steps))
    ops = [_input(draw, _T(draw, op), dims), const("i64", starts), const("i64", ends)]
    if with_axes:
        ops.append(const("i64", axes))
    if with_steps:
        ops.append(const("i64", steps))
    return Params(op, tuple(ops), big=large)


@rule("Gather")
def gather(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    n = dims[ax]
    idx = v.shape(draw, draw(st.integers(0, 2)), large)
    return Params(op, (_input(draw, _T(draw, op), dims), _input(draw, v.pick(draw, ("i64", "i32")), idx, (-n, n - 1))),
                  _attrs(axis=_maybe(draw, ax)) if ax == 0 else _attrs(axis=ax), big=large)


@rule("GatherElements")
def gather_elements(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    idx = [draw(st.integers(1, d)) if i != (ax % rank) else size for i, (d, size) in
           enumerate(zip(dims, [v.size(draw, large) for _ in dims]))]
    n = dims[ax]
    return Params(op, (_input(draw, _T(draw, op), dims), _input(draw, v.pick(draw, ("i64", "i32")), idx, (-n, n - 1))),
                  _attrs(axis=ax), big=large)


@rule("GatherND")
def gather_nd(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    b = draw(st.integers(0, rank - 1))
    depth = draw(st.integers(1, rank - b))
    lead = v.shape(draw, draw(st.integers(0, 2)), large)
    idx = dims[:b] + lead + [depth]
    lo, hi = -min(dims[b:b + depth]), min(dims[b:b + depth]) - 1  # in range for every addressed dim
    return Params(op, (_input(draw, _T(draw, op), dims), _input(draw, "i64", idx, (lo, hi))),
                  _attrs(batch_dims=b if b else _maybe(draw, 0)), big=large)


@rule("Transpose")
def transpose(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 5))
    dims = v.shape(draw, rank, large)
    perm = list(draw(st.permutations(range(rank)))) if draw(st.integers(0, 3)) else None
    return Params(op, (_input(draw, _T(draw, op), dims),), _attrs(perm=perm), big=large)


@rule("Reshape")
def reshape(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(0, 4))
    dims = v.shape(draw, rank, large)
    total = int(np.prod(dims))
    # a target: the factors of total, regrouped; one dim copied (0) or inferred (-1)
    factors = [f for d in dims for f in _factor(d)] or [1]
    target: list[int] = []
    for f in factors:
        if target and draw(st.booleans()):
            target[-1] *= f
        else:
            target.append(f)
    if draw(st.booleans()):
        target.insert(draw(st.integers(0, len(target))), 1)
    spec = list(target)
    if spec and draw(st.booleans()):
        spec[draw(st.integers(0, len(spec) - 1))] = -1
    for i in range(min(len(spec), rank)):  # 0 copies the input's dim i (allowzero=0)
        if spec[i] == dims[i] and draw(st.integers(0, 2)) == 0:
            spec[i] = 0
    assert int(np.prod(target)) == total
    return Params(op, (_input(draw, _T(draw, op), dims), const("i64", spec)), big=large)


def _factor(n: int) -> list[int]:
    out, f = [], 2
    while n > 1 and f * f <= n:
        while n % f == 0:
            out.append(f)
            n //= f
        f += 1
    return out + ([n] if n > 1 else [])


@rule("Expand")
def expand(draw: Any, op: str, large: bool) -> Params:
    full = v.shape(draw, draw(st.integers(1, 4)), large)
    (small,) = v.broadcast(draw, full, 2)[1:] if draw(st.booleans()) else [full]
    target = [1 if draw(st.integers(0, 4)) == 0 and i >= len(full) - len(small) else d for i, d in enumerate(full)]
    return Params(op, (_input(draw, _T(draw, op), small), const("i64", target)), big=large)


@rule("Concat")
def concat(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    t = _T(draw, op)
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        d = list(dims)
        d[ax] = v.pick(draw, (0, 1, 2, 3, 5, 8)) if draw(st.integers(0, 5)) else 0
        parts.append(_input(draw, t, d))
    return Params(op, tuple(parts), _attrs(axis=ax), big=large)


@rule("Split")
def split(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    n = dims[ax]
    x0 = _input(draw, _T(draw, op), dims)
    if draw(st.booleans()):  # sizes given
        k = draw(st.integers(1, min(4, n + 1)))
        cuts = sorted(draw(st.integers(0, n)) for _ in range(k - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        return Params(op, (x0, const("i64", sizes)), _attrs(axis=ax), outputs=k, big=large)
    k = draw(st.integers(1, min(4, n)))  # num_outputs: the last part is smaller when n % k != 0
    return Params(op, (x0,), _attrs(axis=ax, num_outputs=k), outputs=k, big=large)


@rule("Squeeze", "Unsqueeze")
def squeeze(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(0 if op == "Unsqueeze" else 1, 4))
    dims = v.shape(draw, rank, large)
    if op == "Squeeze":
        ones = [i for i in range(rank) if dims[i] == 1]
        if not ones:
            i = draw(st.integers(0, rank - 1))
            dims[i] = 1
            ones = [i]
        chosen = [i for i in ones if draw(st.booleans())] or ones[:1]
        axes = [i - rank if draw(st.booleans()) else i for i in chosen]
        if draw(st.integers(0, 4)) == 0:
            return Params(op, (x(_T(draw, op), dims, [False] * rank),), big=large)  # every unit dim, statically known
    else:
        out_rank = rank + draw(st.integers(1, 2))
        chosen = sorted(draw(st.permutations(range(out_rank)))[:out_rank - rank])
        axes = [i - out_rank if draw(st.booleans()) else i for i in chosen]
    axes = list(draw(st.permutations(axes)))
    return Params(op, (_input(draw, _T(draw, op), dims), const("i64", axes)), big=large)


@rule("Tile")
def tile(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    reps = [v.pick(draw, (1, 1, 2, 3, 0)) for _ in range(rank)]
    return Params(op, (_input(draw, _T(draw, op), dims), const("i64", reps)), big=large)


@rule("Pad")
def pad(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    mode = v.pick(draw, ("constant", "reflect", "edge"))
    use_axes = draw(st.booleans())
    axes = sorted(draw(st.permutations(range(rank)))[:draw(st.integers(1, rank))]) if use_axes else list(range(rank))
    pads_lo, pads_hi = [], []
    for a in axes:
        top = dims[a] - 1 if mode == "reflect" else 3
        lo_min = 0 if mode != "constant" else -min(dims[a], 2)  # a negative pad crops
        pads_lo.append(draw(st.integers(lo_min, max(lo_min, top))))
        pads_hi.append(draw(st.integers(lo_min, max(lo_min, top))))
    t = _T(draw, op)
    ops = [_input(draw, t, dims), const("i64", pads_lo + pads_hi)]
    if mode == "constant" and draw(st.booleans()):
        value = draw(st.integers(-8, 8)) / 4
        ops.append(scalar(t, value if t in ("f32", "f16") else int(value)))
    elif use_axes:
        ops.append(NONE)
    if use_axes:
        ops.append(const("i64", [a - rank if draw(st.booleans()) else a for a in axes]))
    return Params(op, tuple(ops), _attrs(mode=mode if mode != "constant" else _maybe(draw, mode)), big=large)


@rule("Resize")
def resize(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(3, 4)) if draw(st.integers(0, 3)) else 2
    dims = v.shape(draw, rank, large)
    mode = v.pick(draw, ("nearest", "linear", "cubic"))
    ctm = v.pick(draw, ("half_pixel", "half_pixel_symmetric", "pytorch_half_pixel", "align_corners", "asymmetric",
                        "tf_crop_and_resize"))
    spatial = list(range(rank - 2, rank)) if rank > 2 else list(range(rank))
    attrs: dict[str, Any] = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attrs["nearest_mode"] = v.pick(draw, ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil"))
    if mode == "cubic":
        attrs["cubic_coeff_a"] = _maybe(draw, v.pick(draw, (-0.5, -0.75)))
        attrs["exclude_outside"] = _maybe(draw, 1)
    if mode != "nearest" and draw(st.integers(0, 3)) == 0:
        attrs["antialias"] = 1
    t = v.float_type(draw, ("f32", "f16"))
    roi = NONE
    if ctm == "tf_crop_and_resize":
        box = [draw(st.integers(0, 2)) / 4 for _ in spatial] + [draw(st.integers(2, 5)) / 4 for _ in spatial]
        full_lo, full_hi = [0.0] * rank, [1.0] * rank
        for j, a in enumerate(spatial):
            full_lo[a], full_hi[a] = box[j], box[len(spatial) + j]
        roi = const("f32", full_lo + full_hi)
        attrs["extrapolation_value"] = _maybe(draw, draw(st.integers(-4, 4)) / 4)
    if draw(st.booleans()):
        scales = [1.0] * rank
        for a in spatial:
            scales[a] = v.pick(draw, (0.5, 2.0, 3.0, 1.5, 0.75, 1.0, 0.6, 2.5, 1.25))
        ops = [_input(draw, t, dims), roi, const("f32", scales)]
    else:
        sizes = list(dims)
        for a in spatial:
            sizes[a] = max(1, v.pick(draw, (1, 2, 3, 5, 7, 8, 9, 16, 17, 2 * dims[a], dims[a] + 1)))
        if draw(st.integers(0, 3)) == 0:
            attrs["keep_aspect_ratio_policy"] = v.pick(draw, ("not_larger", "not_smaller"))
            attrs["axes"] = spatial
            sizes = [sizes[a] for a in spatial]
        ops = [_input(draw, t, dims), roi, NONE, const("i64", sizes)]
    return Params(op, tuple(ops), _attrs(**attrs), big=large)


@rule("DepthToSpace", "SpaceToDepth")
def depth_space(draw: Any, op: str, large: bool) -> Params:
    b = v.pick(draw, (1, 2, 3))
    n, c, h, w = (v.size(draw) % 3 + 1, v.pick(draw, (1, 2, 3)), v.pick(draw, (1, 2, 3, 5)), v.pick(draw, (1, 2, 4)))
    if op == "DepthToSpace":
        dims = [n, c * b * b, h, w]
        attrs = _attrs(blocksize=b, mode=_maybe(draw, v.pick(draw, ("DCR", "CRD"))))
    else:
        dims = [n, c, h * b, w * b]
        attrs = _attrs(blocksize=b)
    return Params(op, (_input(draw, _T(draw, op), dims),), attrs, big=large)


@rule("Trilu")
def trilu(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(2, 4))
    dims = v.shape(draw, rank, large)
    ops = [_input(draw, _T(draw, op), dims)]
    if draw(st.integers(0, 3)):
        ops.append(scalar("i64", draw(st.integers(-max(dims[-2:]) - 1, max(dims[-2:]) + 1))))
    return Params(op, tuple(ops), _attrs(upper=_maybe(draw, draw(st.integers(0, 1)))), big=large)


@rule("Range")
def range_(draw: Any, op: str, large: bool) -> Params:
    t = v.pick(draw, ("f32", "i32", "i64", "i64"))
    start = draw(st.integers(-12, 12))
    delta = draw(st.integers(1, 5)) * (-1 if draw(st.booleans()) else 1)
    limit = start + delta * draw(st.integers(0, 9)) + (draw(st.integers(-abs(delta) + 1, abs(delta) - 1)) if abs(delta) > 1 else 0)
    if t == "f32":
        start, limit, delta = start / 4, limit / 4, delta / 4
    # (all three constants: a size ONNX infers; a runtime start leaves the result `?`)
    first = x(t, (), ()) if draw(st.integers(0, 4)) == 0 else scalar(t, start)
    return Params(op, (first, scalar(t, limit), scalar(t, delta)), big=large)


# ----------------------------------------------------------------------------- reductions and scans


@rule("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
      "ReduceLogSumExp", "ReduceSumSquare")
def reduce(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    t = _T(draw, op)
    data = (0.25, 4) if op == "ReduceLogSum" and t in ("f32", "f16") else (-2, 2) if op == "ReduceProd" else ()
    if t not in ("f32", "f16") and op in ("ReduceProd", "ReduceSumSquare"):
        data = (-2, 2)
    ops = [_input(draw, t, dims, data)]
    how = draw(st.integers(0, 3))
    if how == 0:
        pass  # no axes: every axis (or none, with noop_with_empty_axes)
    elif how == 1:
        ops.append(const("i64", []))  # an empty axes input
    else:
        chosen = sorted(draw(st.permutations(range(rank)))[:draw(st.integers(1, rank))])
        ops.append(const("i64", [a - rank if draw(st.booleans()) else a for a in chosen]))
    return Params(op, tuple(ops), _attrs(keepdims=_maybe(draw, draw(st.integers(0, 1))),
                                          noop_with_empty_axes=_maybe(draw, draw(st.integers(0, 1)))), big=large)


@rule("ArgMax", "ArgMin")
def arg(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    t = _T(draw, op)
    data = (-1, 1) if draw(st.booleans()) else ()  # few distinct values: ties, where select_last_index matters
    return Params(op, (_input(draw, t, dims, data),),
                  _attrs(axis=v.axis(draw, rank), keepdims=_maybe(draw, draw(st.integers(0, 1))),
                         select_last_index=_maybe(draw, draw(st.integers(0, 1)))), big=large)


@rule("CumSum")
def cumsum(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    return Params(op, (_input(draw, _T(draw, op), dims), scalar(v.pick(draw, ("i64", "i32")), v.axis(draw, rank))),
                  _attrs(exclusive=_maybe(draw, draw(st.integers(0, 1))), reverse=_maybe(draw, draw(st.integers(0, 1)))),
                  big=large)


@rule("Softmax", "LogSoftmax", "Hardmax")
def softmax(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    return Params(op, (_input(draw, _T(draw, op), dims),), _attrs(axis=_maybe(draw, v.axis(draw, rank))), big=large)


# ----------------------------------------------------------------------------- contractions


@rule("MatMul")
def matmul(draw: Any, op: str, large: bool) -> Params:
    m, k, n = v.size(draw, large), v.size(draw, large), v.size(draw, large)
    batch = v.shape(draw, draw(st.integers(0, 2)), False)
    ba, bb = v.broadcast(draw, batch, 2) if batch else ([], [])
    a = ba + [m, k] if draw(st.integers(0, 4)) else [k]
    b = bb + [k, n] if draw(st.integers(0, 4)) else [k]
    t = _T(draw, op)
    data = (-2, 2) if t not in ("f32", "f16") else ()
    return Params(op, (_input(draw, t, a, data), _input(draw, t, b, data)), big=large)


@rule("MatMulInteger")
def matmul_integer(draw: Any, op: str, large: bool) -> Params:
    m, k, n = v.size(draw, large), v.size(draw, large), v.size(draw, large)
    ta, tb = v.pick(draw, ("u8", "i8")), v.pick(draw, ("u8", "i8"))
    ops = [_input(draw, ta, [m, k]), _input(draw, tb, [k, n])]
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
    t = _T(draw, op, floats_only=True)
    ops = [_input(draw, t, [k, m] if ta else [m, k]), _input(draw, t, [n, k] if tb else [k, n])]
    if draw(st.booleans()):
        (c,) = v.broadcast(draw, [m, n], 2)[1:]
        ops.append(_input(draw, t, c))
    return Params(op, tuple(ops), _attrs(transA=_maybe(draw, ta) if not ta else ta, transB=tb or None,
                                          alpha=_maybe(draw, v.pick(draw, (0.5, 2.0, -1.0))),
                                          beta=_maybe(draw, v.pick(draw, (0.5, 0.0, 2.0)))), big=large)


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
    t = _T(draw, op, floats_only=True)
    return Params(op, tuple(_input(draw, t, s) for s in shapes), _attrs(equation=equation), big=large)


# ----------------------------------------------------------------------------- normalization and pooling


@rule("InstanceNormalization")
def instance_norm(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(3, 4))
    dims = v.shape(draw, rank, large)
    t = _T(draw, op)
    c = dims[1]
    return Params(op, (_input(draw, t, dims), x(t, [c], [False]), x(t, [c], [False])),
                  _attrs(epsilon=_maybe(draw, v.pick(draw, (1e-3, 1e-2)))), big=large)


@rule("LayerNormalization")
def layer_norm(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    t = _T(draw, op, "T")
    normalized = dims[ax:]
    ops = [_input(draw, t, dims), x(t, normalized, [False] * len(normalized))]
    if draw(st.booleans()):
        ops.append(x(t, normalized, [False] * len(normalized)))
    return Params(op, tuple(ops), _attrs(axis=ax if ax != -1 else _maybe(draw, ax),
                                          epsilon=_maybe(draw, v.pick(draw, (1e-3, 1e-2)))),
                  outputs=draw(st.integers(1, 3)) if t == "f32" else 1, big=large)


@rule("MaxPool", "AveragePool")
def pool(draw: Any, op: str, large: bool) -> Params:
    nsp = draw(st.integers(1, 3))
    dims = [v.pick(draw, (1, 2)), v.pick(draw, (1, 2, 3))] + [v.pick(draw, (3, 4, 5, 7, 8)) for _ in range(nsp)]
    kernel = [draw(st.integers(1, min(3, d))) for d in dims[2:]]
    strides = [v.pick(draw, (1, 2, 3)) for _ in kernel]
    pads = [draw(st.integers(0, k - 1)) for k in kernel] + [draw(st.integers(0, k - 1)) for k in kernel]
    attrs: dict[str, Any] = {"kernel_shape": kernel, "strides": _maybe(draw, strides), "pads": _maybe(draw, pads),
                             "ceil_mode": _maybe(draw, 1)}
    if op == "AveragePool":
        attrs["count_include_pad"] = _maybe(draw, 1)
    elif draw(st.booleans()):
        attrs["dilations"] = [v.pick(draw, (1, 2)) for _ in kernel]
    t = _T(draw, op, floats_only=True)
    return Params(op, (_input(draw, t, dims),), _attrs(**attrs), big=large)


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
        data = _input(draw, "f32", dims, (-40, 40))  # past the range: saturation; halves: ties to even
    else:
        data = _input(draw, q, dims)
    ops = [data, scale] + ([zp] if draw(st.integers(0, 3)) else [])
    return Params(op, tuple(ops), _attrs(axis=ax if per_axis else None), big=large)


@rule("Flatten")
def flatten(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(0, 4))
    dims = v.shape(draw, rank, large)
    ax = draw(st.integers(-rank, rank)) if rank else 0
    return Params(op, (_input(draw, _T(draw, op), dims),), _attrs(axis=_maybe(draw, ax)), big=large)


@rule("OneHot")
def one_hot(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 2))
    dims = v.shape(draw, rank, large)
    depth = v.pick(draw, (1, 2, 3, 5, 8))
    t = v.float_type(draw, ("f32", "i64", "i32"))
    values = const(t, [0, 1] if t != "f32" else [-0.5, 2.0])
    return Params(op, (_input(draw, "i64", dims, (-depth, depth - 1)), scalar("i64", depth), values),
                  _attrs(axis=_maybe(draw, draw(st.integers(-rank - 1, rank)))), big=large)


@rule("Constant")
def constant(draw: Any, op: str, large: bool) -> Params:
    return Params(op, (), _attrs(value_float=draw(st.integers(-8, 8)) / 4) if draw(st.booleans()) else
                  _attrs(value_ints=[draw(st.integers(-5, 5)) for _ in range(draw(st.integers(1, 4)))]), big=large)


def unary_domain(op: str) -> tuple:
    return DOMAIN.get(op, ())
