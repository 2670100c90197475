"""Rules of the elementwise and data-movement ops (see `rules.py`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.onnx_op import vocabulary as v
from shapefuzz.families.onnx_op.params import NONE, Params, const, scalar, x
from shapefuzz.families.onnx_op.rule_kit import INT64_MAX, INT64_MIN, attrs_of, graph_input, maybe, elem_type, rule

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
    t = elem_type(draw, op, "T")
    t2 = elem_type(draw, op, "T1") if op == "Pow" else t
    data: list[tuple] = [()] * n
    attrs: dict[str, Any] = {}
    if op in ("Div", "Mod"):
        data[1] = (-4, 4, "nonzero") if t in ("f32", "f16") else (-9, 9, "nonzero")
    if op == "Mod":
        attrs["fmod"] = 1 if t in ("f32", "f16") else draw(st.integers(0, 1))
    if op == "Pow":
        data = [(0.25, 4), (-2, 2)] if t2 in ("f32", "f16") else [(0.25, 4), (0, 3)]
        if t not in ("f32", "f16"):
            data[0] = (-4, 4)
    ops = [graph_input(draw, tt, s, d) for tt, s, d in zip([t, t2] + [t] * (n - 2), shapes, data)]
    return Params(op, tuple(ops), attrs_of(**attrs), big=large)


@rule("BitShift")
def bitshift(draw: Any, op: str, large: bool) -> Params:
    full = v.shape(draw, draw(st.integers(0, 3)), large)
    a, b = v.broadcast(draw, full, 2)
    return Params(op, (graph_input(draw, "u8", a), graph_input(draw, "u8", b, (0, 7))),
                  attrs_of(direction=v.pick(draw, ("LEFT", "RIGHT"))), big=large)


@rule("Where")
def where(draw: Any, op: str, large: bool) -> Params:
    full = v.shape(draw, draw(st.integers(0, 4)), large)
    c, a, b = v.broadcast(draw, full, 3)
    t = elem_type(draw, op)
    return Params(op, (graph_input(draw, "i1", c), graph_input(draw, t, a), graph_input(draw, t, b)), big=large)


@rule("Clip")
def clip(draw: Any, op: str, large: bool) -> Params:
    t = elem_type(draw, op)
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
    return Params(op, (graph_input(draw, t, dims), *bounds), big=large)


@rule("Cast")
def cast(draw: Any, op: str, large: bool) -> Params:
    ours = ("f32", "f16", "i32", "i64", "i8", "u8", "i1")
    t, to = v.pick(draw, ours), v.pick(draw, ours)
    from shapefuzz.families.onnx_op.params import ONNX_TYPE

    dims = v.shape(draw, draw(st.integers(0, 3)), large)
    data = (-8, 8) if t in ("f32", "f16") and to in ("u8",) else ()  # out-of-range casts are undefined
    if to == "u8" and t not in ("f32", "f16", "u8", "i1"):
        data = (0, 8)
    return Params(op, (graph_input(draw, t, dims, data),), attrs_of(to=ONNX_TYPE[to]), big=large)


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
    ops = [graph_input(draw, elem_type(draw, op), dims), const("i64", starts), const("i64", ends)]
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
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), graph_input(draw, v.pick(draw, ("i64", "i32")), idx, (-n, n - 1))),
                  attrs_of(axis=maybe(draw, ax)) if ax == 0 else attrs_of(axis=ax), big=large)


@rule("GatherElements")
def gather_elements(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    idx = [draw(st.integers(1, d)) if i != (ax % rank) else size for i, (d, size) in
           enumerate(zip(dims, [v.size(draw, large) for _ in dims]))]
    n = dims[ax]
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), graph_input(draw, v.pick(draw, ("i64", "i32")), idx, (-n, n - 1))),
                  attrs_of(axis=ax), big=large)


@rule("GatherND")
def gather_nd(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    b = draw(st.integers(0, rank - 1))
    depth = draw(st.integers(1, rank - b))
    lead = v.shape(draw, draw(st.integers(0, 2)), large)
    idx = dims[:b] + lead + [depth]
    lo, hi = -min(dims[b:b + depth]), min(dims[b:b + depth]) - 1  # in range for every addressed dim
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), graph_input(draw, "i64", idx, (lo, hi))),
                  attrs_of(batch_dims=b if b else maybe(draw, 0)), big=large)


@rule("Transpose")
def transpose(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 5))
    dims = v.shape(draw, rank, large)
    perm = list(draw(st.permutations(range(rank)))) if draw(st.integers(0, 3)) else None
    return Params(op, (graph_input(draw, elem_type(draw, op), dims),), attrs_of(perm=perm), big=large)


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
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), const("i64", spec)), big=large)


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
    return Params(op, (graph_input(draw, elem_type(draw, op), small), const("i64", target)), big=large)


@rule("Concat")
def concat(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    t = elem_type(draw, op)
    parts = []
    for _ in range(draw(st.integers(1, 4))):
        d = list(dims)
        d[ax] = v.pick(draw, (0, 1, 2, 3, 5, 8)) if draw(st.integers(0, 5)) else 0
        parts.append(graph_input(draw, t, d))
    return Params(op, tuple(parts), attrs_of(axis=ax), big=large)


@rule("Split")
def split(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 4))
    dims = v.shape(draw, rank, large)
    ax = v.axis(draw, rank)
    n = dims[ax]
    x0 = graph_input(draw, elem_type(draw, op), dims)
    if draw(st.booleans()):  # sizes given
        k = draw(st.integers(1, min(4, n + 1)))
        cuts = sorted(draw(st.integers(0, n)) for _ in range(k - 1))
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [n])]
        return Params(op, (x0, const("i64", sizes)), attrs_of(axis=ax), outputs=k, big=large)
    k = draw(st.integers(1, min(4, n)))  # num_outputs: the last part is smaller when n % k != 0
    return Params(op, (x0,), attrs_of(axis=ax, num_outputs=k), outputs=k, big=large)


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
            return Params(op, (x(elem_type(draw, op), dims, [False] * rank),), big=large)  # every unit dim, statically known
    else:
        out_rank = rank + draw(st.integers(1, 2))
        chosen = sorted(draw(st.permutations(range(out_rank)))[:out_rank - rank])
        axes = [i - out_rank if draw(st.booleans()) else i for i in chosen]
    axes = list(draw(st.permutations(axes)))
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), const("i64", axes)), big=large)


@rule("Tile")
def tile(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(1, 3))
    dims = v.shape(draw, rank, large)
    reps = [v.pick(draw, (1, 1, 2, 3, 0)) for _ in range(rank)]
    return Params(op, (graph_input(draw, elem_type(draw, op), dims), const("i64", reps)), big=large)


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
    t = elem_type(draw, op)
    ops = [graph_input(draw, t, dims), const("i64", pads_lo + pads_hi)]
    if mode == "constant" and draw(st.booleans()):
        value = draw(st.integers(-8, 8)) / 4
        ops.append(scalar(t, value if t in ("f32", "f16") else int(value)))
    elif use_axes:
        ops.append(NONE)
    if use_axes:
        ops.append(const("i64", [a - rank if draw(st.booleans()) else a for a in axes]))
    return Params(op, tuple(ops), attrs_of(mode=mode if mode != "constant" else maybe(draw, mode)), big=large)


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
        attrs["cubic_coeff_a"] = maybe(draw, v.pick(draw, (-0.5, -0.75)))
        attrs["exclude_outside"] = maybe(draw, 1)
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
        attrs["extrapolation_value"] = maybe(draw, draw(st.integers(-4, 4)) / 4)
    if draw(st.booleans()):
        scales = [1.0] * rank
        for a in spatial:
            scales[a] = v.pick(draw, (0.5, 2.0, 3.0, 1.5, 0.75, 1.0, 0.6, 2.5, 1.25))
        ops = [graph_input(draw, t, dims), roi, const("f32", scales)]
    else:
        sizes = list(dims)
        for a in spatial:
            sizes[a] = max(1, v.pick(draw, (1, 2, 3, 5, 7, 8, 9, 16, 17, 2 * dims[a], dims[a] + 1)))
        if draw(st.integers(0, 3)) == 0:
            attrs["keep_aspect_ratio_policy"] = v.pick(draw, ("not_larger", "not_smaller"))
            attrs["axes"] = spatial
            sizes = [sizes[a] for a in spatial]
        ops = [graph_input(draw, t, dims), roi, NONE, const("i64", sizes)]
    return Params(op, tuple(ops), attrs_of(**attrs), big=large)


@rule("DepthToSpace", "SpaceToDepth")
def depth_space(draw: Any, op: str, large: bool) -> Params:
    b = v.pick(draw, (1, 2, 3))
    n, c, h, w = (v.size(draw) % 3 + 1, v.pick(draw, (1, 2, 3)), v.pick(draw, (1, 2, 3, 5)), v.pick(draw, (1, 2, 4)))
    if op == "DepthToSpace":
        dims = [n, c * b * b, h, w]
        attrs = attrs_of(blocksize=b, mode=maybe(draw, v.pick(draw, ("DCR", "CRD"))))
    else:
        dims = [n, c, h * b, w * b]
        attrs = attrs_of(blocksize=b)
    return Params(op, (graph_input(draw, elem_type(draw, op), dims),), attrs, big=large)


@rule("Trilu")
def trilu(draw: Any, op: str, large: bool) -> Params:
    rank = draw(st.integers(2, 4))
    dims = v.shape(draw, rank, large)
    ops = [graph_input(draw, elem_type(draw, op), dims)]
    if draw(st.integers(0, 3)):
        ops.append(scalar("i64", draw(st.integers(-max(dims[-2:]) - 1, max(dims[-2:]) + 1))))
    return Params(op, tuple(ops), attrs_of(upper=maybe(draw, draw(st.integers(0, 1)))), big=large)


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


