"""The producers: ops that make a root operand from the entry's arguments. Each is written
backwards from the operand it must make: `sources` (the argument types, a ValueError when the
op does not fit that operand), `check` (the concrete sizes), `emit` (its MLIR), `forward` (its
NumPy definition) and `invert` (arguments whose `forward` is the given operand where the op
moves values, so the root sees the values its family drew: distinct stay distinct)."""

from __future__ import annotations

from typing import Any

import numpy as np

from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.types import Emitter, Ty, is_float

NP = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i8": np.int8, "i32": np.int32, "i64": np.int64}
QRANGE = {"i8": (-128, 127), "i4": (-8, 7)}


def contiguous(x: np.ndarray) -> np.ndarray:
    """A C-contiguous copy that keeps a 0-d array 0-d (`np.ascontiguousarray` makes it 1-d)."""
    return np.array(x, order="C", copy=True)


def need(cond: object, why: str) -> None:  # any truthy value passes
    if not cond:
        raise ValueError(why)


def _fill(shape: tuple[int, ...], like: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """An array of `shape` whose values are drawn from `like`'s (the family's own kind of values)."""
    pool = like.reshape(-1) if like.size else np.zeros(1, like.dtype)
    # what `rng.choice(pool, size=shape)` draws (the same int64 indices, the same values), at half its time
    return pool[rng.integers(0, pool.size, size=shape, dtype=np.int64)].astype(like.dtype)


def perm_ok(perm: Any, rank: int) -> bool:
    return sorted(perm) == list(range(rank)) and rank > 0


class Producer:
    name = ""
    attrs: dict[str, str] = {}
    producer = True
    elementwise = False  # keeps the shape; works on rank 0 too

    def sources(self, op: ContextOp, out: Ty) -> list[Ty]:
        raise NotImplementedError

    def check(self, op: ContextOp, out_shape: tuple[int, ...]) -> None:
        """Whether the op can make an operand of these concrete sizes (ValueError if not)."""

    def emit(self, op: ContextOp, e: Emitter, ins: list[str], in_tys: list[Ty], out: Ty) -> str:
        raise NotImplementedError

    def forward(self, op: ContextOp, xs: list[np.ndarray], out: Ty) -> np.ndarray:
        raise NotImplementedError

    def invert(self, op: ContextOp, y: np.ndarray, in_tys: list[Ty], rng: np.random.Generator) -> list[np.ndarray]:
        raise NotImplementedError

    def negative_from(self, op: ContextOp) -> str:
        """Why the op may put a negative value into an operand whose inverted arguments hold none
        ("" when it cannot: every other producer moves, repeats or re-encodes the values it is given,
        and a dequantize of non-negative values stays non-negative)."""
        return ""


class Pad(Producer):
    """`tensor.pad` with static low/high sizes and a constant; `?` dims stay `?`."""
    name, attrs = "pad", {"lo": "ints", "hi": "ints", "value": "float"}

    def sources(self, op, out):
        lo, hi = op.get("lo"), op.get("hi")
        need(out.rank > 0 and len(lo) == len(hi) == out.rank and min(lo + hi) >= 0, "pad: lo/hi do not fit the operand's rank")
        need(is_float(out.elt), "pad: a float operand")
        dims = [None if d is None else d - a - b for d, a, b in zip(out.dims, lo, hi)]
        need(all(d is None or d >= 1 for d in dims), "pad: pads wider than the operand")
        return [out.with_dims(dims)]

    def check(self, op, out_shape):
        need(all(n - a - b >= 1 for n, a, b in zip(out_shape, op.get("lo"), op.get("hi"))), "pad: pads wider than the operand")

    def emit(self, op, e, ins, in_tys, out):
        cst = e.const(op.get("value"), out.elt)
        name = e.fresh("pad")
        idx = ", ".join(f"%{name[1:]}_i{i}: index" for i in range(out.rank))
        e.line(f"{name} = tensor.pad {ins[0]} low[{', '.join(map(str, op.get('lo')))}] high[{', '.join(map(str, op.get('hi')))}] {{")
        e.line(f"^bb0({idx}):")
        e.line(f"  tensor.yield {cst} : {out.elt}")
        e.line(f"}} : {in_tys[0].text()} to {out.text()}")
        return name

    def forward(self, op, xs, out):
        return np.pad(xs[0], list(zip(op.get("lo"), op.get("hi"))), constant_values=op.get("value")).astype(xs[0].dtype)

    def invert(self, op, y, in_tys, rng):
        inner = tuple(slice(a, n - b) for a, b, n in zip(op.get("lo"), op.get("hi"), y.shape))
        return [contiguous(y[inner])]

    def negative_from(self, op):
        return f"pad value {op.get('value')}" if op.get("value") < 0 else ""


class Transpose(Producer):
    """`linalg.transpose` (form "named") or the same permutation as a `linalg.generic` (form "generic")."""
    name, attrs = "transpose", {"perm": "ints", "form": "str"}

    def sources(self, op, out):
        perm = list(op.get("perm"))
        need(perm_ok(perm, out.rank) and op.get("form") in ("named", "generic"), "transpose: not a permutation of the operand's dims")
        dims: list[int | None] = [0] * out.rank
        for i, p in enumerate(perm):  # out dim i is source dim perm[i]
            dims[p] = out.dims[i]
        return [out.with_dims(dims)]

    def emit(self, op, e, ins, in_tys, out):
        perm = list(op.get("perm"))
        sizes = [e.dim(ins[0], in_tys[0], perm[i]) for i in range(out.rank)]
        if op.get("form") == "named":
            init = e.empty(out, sizes)
            name = e.fresh("tr")
            e.line(f"{name} = linalg.transpose ins({ins[0]} : {in_tys[0].text()}) outs({init} : {out.text()}) permutation = [{', '.join(map(str, perm))}]")
            return name
        inv = [perm.index(k) for k in range(out.rank)]
        return e.generic([(ins[0], in_tys[0], ", ".join(f"d{inv[k]}" for k in range(out.rank)))], out, sizes,
                         ["%a"], ["%a", "%o"])

    def forward(self, op, xs, out):
        return contiguous(np.transpose(xs[0], op.get("perm")))

    def invert(self, op, y, in_tys, rng):
        return [contiguous(np.transpose(y, np.argsort(op.get("perm"))))]


def _groups_ok(groups: Any, rank: int) -> bool:
    flat = [i for g in groups for i in g]
    return flat == list(range(rank)) and all(len(g) >= 1 for g in groups)


class Expand(Producer):
    """`tensor.expand_shape` from a collapsed argument: `groups` partitions the operand's dims
    (at most one `?` per group, whose size the argument's size divided by the group's static ones)."""
    name, attrs = "expand", {"groups": "intss"}

    def sources(self, op, out):
        groups = [list(g) for g in op.get("groups")]
        need(out.rank > 0 and _groups_ok(groups, out.rank), "expand: groups do not partition the operand's dims")
        dims: list[int | None] = []
        for g in groups:
            sizes = [out.dims[i] for i in g]
            need(sum(d is None for d in sizes) <= 1, "expand: two `?` dims in one group")
            dims.append(None if None in sizes else int(np.prod(sizes)))
        return [out.with_dims(dims)]

    def emit(self, op, e, ins, in_tys, out):
        groups = [list(g) for g in op.get("groups")]
        shape: list[str] = []
        for k, g in enumerate(groups):
            static = int(np.prod([out.dims[i] for i in g if out.dims[i] is not None]))
            for i in g:
                if out.dims[i] is not None:
                    shape.append(str(out.dims[i]))
                else:
                    d = e.dim(ins[0], in_tys[0], k)
                    q = e.fresh("q")
                    e.line(f"{q} = arith.divui {d}, {e.index(static)} : index")
                    shape.append(q)
        name = e.fresh("ex")
        e.line(f"{name} = tensor.expand_shape {ins[0]} {reassoc(groups)} output_shape [{', '.join(shape)}] : {in_tys[0].text()} into {out.text()}")
        return name

    def forward(self, op, xs, out):
        shape: list[int] = []
        for k, g in enumerate(op.get("groups")):
            static = int(np.prod([out.dims[i] for i in g if out.dims[i] is not None]))
            shape += [xs[0].shape[k] // static if out.dims[i] is None else out.dims[i] for i in g]
        return xs[0].reshape(shape)

    def invert(self, op, y, in_tys, rng):
        return [y.reshape([int(np.prod([y.shape[i] for i in g])) for g in op.get("groups")])]


class Collapse(Producer):
    """`tensor.collapse_shape` from an argument with more dims: operand dim i comes from
    `split[i]` (static sizes whose product it is; a `?` dim splits into unit dims and one -1)."""
    name, attrs = "collapse", {"split": "intss"}

    def sources(self, op, out):
        split = [list(s) for s in op.get("split")]
        need(out.rank > 0 and len(split) == out.rank and all(len(s) >= 1 for s in split), "collapse: split does not fit the operand's rank")
        dims: list[int | None] = []
        for d, s in zip(out.dims, split):
            if d is None:
                need(s.count(-1) == 1 and all(v == 1 for v in s if v != -1), "collapse: a `?` dim splits into unit dims and one -1")
            else:
                need(all(v >= 1 for v in s) and int(np.prod(s)) == d, "collapse: split sizes do not multiply to the dim")
            dims += [None if v == -1 else v for v in s]
        return [out.with_dims(dims)]

    def emit(self, op, e, ins, in_tys, out):
        groups, k = [], 0
        for s in op.get("split"):
            groups.append(list(range(k, k + len(s))))
            k += len(s)
        name = e.fresh("co")
        e.line(f"{name} = tensor.collapse_shape {ins[0]} {reassoc(groups)} : {in_tys[0].text()} into {out.text()}")
        return name

    def forward(self, op, xs, out):
        shape, k = [], 0
        for s in op.get("split"):
            shape.append(int(np.prod(xs[0].shape[k:k + len(s)])))
            k += len(s)
        return xs[0].reshape(shape)

    def invert(self, op, y, in_tys, rng):
        shape = []
        for n, s in zip(y.shape, op.get("split")):
            shape += [n if v == -1 else v for v in s]
        return [y.reshape(shape)]


def reassoc(groups: list[list[int]]) -> str:
    return "[" + ", ".join("[" + ", ".join(map(str, g)) + "]" for g in groups) + "]"


class Slice(Producer):
    """`tensor.extract_slice` with static offsets and strides out of a larger argument (`extra`
    elements past the slice); `drop` >= 0 inserts a dim of size 2 at that place in the argument,
    sliced at 1 and dropped (rank-reducing). A `?` dim's size is computed from the argument's."""
    name, attrs = "slice", {"offsets": "ints", "strides": "ints", "extra": "ints", "drop": "int"}

    def sources(self, op, out):
        off, st, ex, drop = op.get("offsets"), op.get("strides"), op.get("extra"), op.get("drop")
        need(len(off) == len(st) == len(ex) == out.rank and min(off + ex, default=0) >= 0 and min(st, default=1) >= 1
              and -1 <= drop <= out.rank, "slice: offsets/strides/extra do not fit the operand")
        need(out.rank > 0 or drop >= 0, "slice: nothing to slice")
        dims = [None if d is None else o + (d - 1) * s + 1 + x for d, o, s, x in zip(out.dims, off, st, ex)]
        if drop >= 0:
            dims.insert(drop, 2)
        return [out.with_dims(dims)]

    def _index(self, op, shape: tuple[int, ...]) -> tuple[Any, ...]:
        idx: list[Any] = [slice(o, o + (n - 1) * s + 1, s) for n, o, s in zip(shape, op.get("offsets"), op.get("strides"))]
        if op.get("drop") >= 0:
            idx.insert(op.get("drop"), 1)
        return tuple(idx)

    def emit(self, op, e, ins, in_tys, out):
        drop = op.get("drop")
        offs, sizes, strides = [], [], []
        k = 0
        for j in range(in_tys[0].rank):
            if j == drop:
                offs.append("1")
                sizes.append("1")
                strides.append("1")
                continue
            o, s, x, d = op.get("offsets")[k], op.get("strides")[k], op.get("extra")[k], out.dims[k]
            offs.append(str(o))
            strides.append(str(s))
            if d is not None:
                sizes.append(str(d))
            else:
                src = e.dim(ins[0], in_tys[0], j)
                t, q, n = e.fresh("t"), e.fresh("q"), e.fresh("n")
                e.line(f"{t} = arith.subi {src}, {e.index(o + x + 1)} : index")
                e.line(f"{q} = arith.divui {t}, {e.index(s)} : index")
                e.line(f"{n} = arith.addi {q}, {e.index(1)} : index")
                sizes.append(n)
            k += 1
        name = e.fresh("sl")
        e.line(f"{name} = tensor.extract_slice {ins[0]}[{', '.join(offs)}] [{', '.join(sizes)}] [{', '.join(strides)}] : {in_tys[0].text()} to {out.text()}")
        return name

    def forward(self, op, xs, out):
        dims = [n for j, n in enumerate(xs[0].shape) if j != op.get("drop")]
        shape = tuple((n - o - x - 1) // s + 1 for n, o, s, x in zip(dims, op.get("offsets"), op.get("strides"), op.get("extra")))
        return contiguous(xs[0][self._index(op, shape)])

    def invert(self, op, y, in_tys, rng):
        shape = [o + (n - 1) * s + 1 + x for n, o, s, x in zip(y.shape, op.get("offsets"), op.get("strides"), op.get("extra"))]
        if op.get("drop") >= 0:
            shape.insert(op.get("drop"), 2)
        x = _fill(tuple(shape), y, rng)
        x[self._index(op, y.shape)] = y
        return [x]


class Concat(Producer):
    """`tensor.concat` of two arguments along `dim`: the first `split` wide (static), the second the rest."""
    name, attrs = "concat", {"dim": "int", "split": "int"}

    def sources(self, op, out):
        d, k = op.get("dim"), op.get("split")
        need(0 <= d < out.rank and k >= 1, "concat: dim outside the operand")
        n = out.dims[d]
        need(n is None or n > k, "concat: split wider than the dim")
        first = list(out.dims)
        first[d] = k
        second = list(out.dims)
        second[d] = None if n is None else n - k
        return [out.with_dims(first), out.with_dims(second)]

    def check(self, op, out_shape):
        need(out_shape[op.get("dim")] > op.get("split"), "concat: split wider than the dim")

    def emit(self, op, e, ins, in_tys, out):
        name = e.fresh("cat")
        e.line(f"{name} = tensor.concat dim({op.get('dim')}) {ins[0]}, {ins[1]} : ({in_tys[0].text()}, {in_tys[1].text()}) -> {out.text()}")
        return name

    def forward(self, op, xs, out):
        return np.concatenate(xs, axis=op.get("dim"))

    def invert(self, op, y, in_tys, rng):
        a, b = np.split(y, [op.get("split")], axis=op.get("dim"))
        return [contiguous(a), contiguous(b)]


class Broadcast(Producer):
    """`linalg.broadcast` adding static operand dims `dims` (values repeat along them)."""
    name, attrs = "broadcast", {"dims": "ints"}

    def sources(self, op, out):
        dims = list(op.get("dims"))
        need(dims == sorted(set(dims)) and dims and all(0 <= d < out.rank and out.dims[d] is not None for d in dims)
              and len(dims) < out.rank, "broadcast: added dims must be static dims of the operand")
        return [out.with_dims([n for i, n in enumerate(out.dims) if i not in dims])]

    def emit(self, op, e, ins, in_tys, out):
        dims = list(op.get("dims"))
        kept = [i for i in range(out.rank) if i not in dims]
        sizes = [e.dim(ins[0], in_tys[0], kept.index(i)) if i in kept else e.index(out.dims[i]) for i in range(out.rank)]
        init = e.empty(out, sizes)
        name = e.fresh("bc")
        e.line(f"{name} = linalg.broadcast ins({ins[0]} : {in_tys[0].text()}) outs({init} : {out.text()}) dimensions = [{', '.join(map(str, dims))}]")
        return name

    def forward(self, op, xs, out):
        x = np.expand_dims(xs[0], tuple(op.get("dims")))
        shape = tuple(out.dims[i] if i in op.get("dims") else n for i, n in enumerate(x.shape))
        return contiguous(np.broadcast_to(x, shape))

    def invert(self, op, y, in_tys, rng):
        return [contiguous(_take0(y, op.get("dims")))]


def _take0(y: np.ndarray, dims: Any) -> np.ndarray:
    for d in sorted(dims, reverse=True):
        y = np.take(y, 0, axis=d)
    return y


class Reverse(Producer):
    """A flip along `dim`: an affine map `n-1-d` (form "map", static dims) or `tensor.extract`
    at `dim - 1 - index` in the body of a generic (form "extract", any dim)."""
    name, attrs = "reverse", {"dim": "int", "form": "str"}

    def sources(self, op, out):
        d, form = op.get("dim"), op.get("form")
        need(0 <= d < out.rank and form in ("map", "extract"), "reverse: dim outside the operand")
        need(form == "extract" or out.dims[d] is not None, "reverse: the map form needs a static dim")
        return [out]

    def emit(self, op, e, ins, in_tys, out):
        d = op.get("dim")
        sizes = [e.dim(ins[0], in_tys[0], i) for i in range(out.rank)]
        if op.get("form") == "map":
            m = ", ".join(f"{out.dims[d] - 1} - d{i}" if i == d else f"d{i}" for i in range(out.rank))
            return e.generic([(ins[0], in_tys[0], m)], out, sizes, ["%a"], ["%a", "%o"])
        last = e.fresh("last")
        e.line(f"{last} = arith.subi {sizes[d]}, {e.index(1)} : index")
        body = [f"%i{i} = linalg.index {i} : index" for i in range(out.rank)]
        body.append(f"%r = arith.subi {last}, %i{d} : index")
        at = ", ".join("%r" if i == d else f"%i{i}" for i in range(out.rank))
        body += [f"%v = tensor.extract {ins[0]}[{at}] : {in_tys[0].text()}", "%v"]
        return e.generic([], out, sizes, body, ["%o"])

    def forward(self, op, xs, out):
        return contiguous(np.flip(xs[0], op.get("dim")))

    def invert(self, op, y, in_tys, rng):
        return [contiguous(np.flip(y, op.get("dim")))]


class Dequantize(Producer):
    """i8 (or i8 values truncated to i4 in the body) to the operand's float type:
    `(q - zero_point) * scale`, the scale a power of two, the zero point possibly negative."""
    name, attrs = "dequantize", {"from": "str", "scale": "float", "zero_point": "int"}
    elementwise = True

    def sources(self, op, out):
        need(op.get("from") in QRANGE and is_float(out.elt), "dequantize: from i8 or i4 to a float operand")
        lo, hi = QRANGE[op.get("from")]
        need(lo <= op.get("zero_point") <= hi and op.get("scale") > 0, "dequantize: zero point outside the integer range")
        return [out.with_elt("i8")]

    def emit(self, op, e, ins, in_tys, out):
        zp = e.const(op.get("zero_point"), "i32")
        scale = e.const(op.get("scale"), out.elt)
        sizes = [e.dim(ins[0], in_tys[0], i) for i in range(out.rank)]
        body = (["%q4 = arith.trunci %q : i8 to i4", "%w = arith.extsi %q4 : i4 to i32"] if op.get("from") == "i4"
                else ["%w = arith.extsi %q : i8 to i32"])
        body += [f"%s = arith.subi %w, {zp} : i32", f"%f = arith.sitofp %s : i32 to {out.elt}",
                 f"%r = arith.mulf %f, {scale} : {out.elt}", "%r"]
        return e.generic([(ins[0], in_tys[0], ", ".join(f"d{i}" for i in range(out.rank)))], out, sizes, body, ["%q", "%o"])

    def forward(self, op, xs, out):
        return ((xs[0].astype(np.int64) - op.get("zero_point")) * op.get("scale")).astype(NP[out.elt])

    def invert(self, op, y, in_tys, rng):
        lo, hi = QRANGE[op.get("from")]
        q = np.clip(np.rint(y.astype(np.float64) / op.get("scale")) + op.get("zero_point"), lo, hi)
        return [q.astype(np.int8)]


def affine_maps(rank: int) -> str:
    """The four indexing maps of a per-tensor affine (de)quantize: value, scale, zero point, result."""
    dims = ", ".join(f"d{i}" for i in range(rank))
    whole, scalar = f"affine_map<({dims}) -> ({dims})>", f"affine_map<({dims}) -> ()>"
    return ", ".join((whole, scalar, scalar, whole))


class DequantizeAffine(Dequantize):
    """i8 to the operand's float type through IREE's `iree_linalg_ext.dequantize_affine` (what ONNX's
    DequantizeLinear and PT2E's dequantize lower to in 3.13, and what its QDQ-to-integer-math
    rewrite reads): `(q - zero_point) * scale`, a per-tensor f32 scale and i64 zero point."""
    name, attrs = "dequantize_affine", {"scale": "float", "zero_point": "int"}

    def sources(self, op, out):
        need(is_float(out.elt), "dequantize_affine: from i8 to a float operand")
        need(-128 <= op.get("zero_point") <= 127 and op.get("scale") > 0, "dequantize_affine: an i8 zero point")
        return [out.with_elt("i8")]

    def emit(self, op, e, ins, in_tys, out):
        scale, zp = e.const(op.get("scale"), "f32"), e.const(op.get("zero_point"), "i64")
        init = e.empty(out, [e.dim(ins[0], in_tys[0], i) for i in range(out.rank)])
        name = e.fresh("dq")
        e.line(f"{name} = iree_linalg_ext.dequantize_affine <indexing_maps = [{affine_maps(out.rank)}], "
               f"quant_min = -128, quant_max = 127> ins({ins[0]}, {scale}, {zp} : {in_tys[0].text()}, f32, i64) "
               f"outs({init} : {out.text()}) -> {out.text()}")
        return name

    def invert(self, op, y, in_tys, rng):
        q = np.clip(np.rint(y.astype(np.float64) / op.get("scale")) + op.get("zero_point"), -128, 127)
        return [q.astype(np.int8)]


class Cast(Producer):
    """`arith.extf` from f16 (to an f32 operand) or `arith.truncf` from f32 values exact in f16."""
    name, attrs = "cast", {"from": "str"}
    elementwise = True

    def sources(self, op, out):
        need((op.get("from"), out.elt) in (("f16", "f32"), ("f32", "f16")), "cast: from f16 to f32 or f32 to f16")
        return [out.with_elt(op.get("from"))]

    def emit(self, op, e, ins, in_tys, out):
        sizes = [e.dim(ins[0], in_tys[0], i) for i in range(out.rank)]
        fn = "arith.extf" if op.get("from") == "f16" else "arith.truncf"
        body = [f"%c = {fn} %a : {op.get('from')} to {out.elt}", "%c"]
        return e.generic([(ins[0], in_tys[0], ", ".join(f"d{i}" for i in range(out.rank)))], out, sizes, body, ["%a", "%o"])

    def forward(self, op, xs, out):
        return xs[0].astype(NP[out.elt])

    def invert(self, op, y, in_tys, rng):
        return [y.astype(NP[op.get("from")])]


class ToStatic(Producer):
    """`tensor.cast` from an argument whose `dims` are `?` to the operand's static sizes (the
    static result over `?` operands frontends emit)."""
    name, attrs = "to_static", {"dims": "ints"}
    elementwise = True

    def sources(self, op, out):
        dims = list(op.get("dims"))
        need(dims and dims == sorted(set(dims)) and all(0 <= d < out.rank and out.dims[d] is not None for d in dims),
              "to_static: dims must be static dims of the operand")
        return [out.with_dims([None if i in dims else n for i, n in enumerate(out.dims)])]

    def emit(self, op, e, ins, in_tys, out):
        name = e.fresh("cast")
        e.line(f"{name} = tensor.cast {ins[0]} : {in_tys[0].text()} to {out.text()}")
        return name

    def forward(self, op, xs, out):
        return xs[0]

    def invert(self, op, y, in_tys, rng):
        return [y]


PRODUCERS: dict[str, Producer] = {p.name: p for p in (ToStatic(), Pad(), Transpose(), Expand(), Collapse(), Slice(), Concat(),
                                                       Broadcast(), Reverse(), Dequantize(), Cast(), DequantizeAffine())}


def apply(op: ContextOp, xs: list[np.ndarray], out: Ty) -> np.ndarray:
    """The producer's NumPy definition on its arguments."""
    return PRODUCERS[op.op].forward(op, xs, out)
