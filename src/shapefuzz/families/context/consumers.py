"""The consumers: ops that read a root result (float) on its way to the entry's return. Each
gives its `result` type (a ValueError when it does not fit), its `extras` (arguments the
entry takes for it: a bias), its MLIR (`emit`), its NumPy definition (`forward`, in float64
rounded to the result type at each rounding step IREE makes) and how it widens the result's
tolerance (`widen`: the family's (rtol, atol) on its input, and the input's reference)."""

from __future__ import annotations


import numpy as np

from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.producers import affine_maps, contiguous, NP, need, perm_ok
from shapefuzz.families.context.types import Emitter, Ty, is_float

EPS = {"f32": 2.0 ** -23, "f16": 2.0 ** -10}
TINY = {"f32": 1e-30, "f16": 6e-8}


def _ident(rank: int) -> str:
    return ", ".join(f"d{i}" for i in range(rank))


class Consumer:
    name = ""
    attrs: dict[str, str] = {}
    producer = False

    def result(self, op: ContextOp, x: Ty) -> Ty:
        need(is_float(x.elt) and x.elt in EPS, f"{self.name}: an f16 or f32 result")
        return x

    def extras(self, op: ContextOp, x: Ty) -> list[Ty]:
        return []

    def make_extras(self, op: ContextOp, x: Ty, rng: np.random.Generator) -> list[np.ndarray]:
        return []

    def emit(self, op: ContextOp, e: Emitter, x: str, xt: Ty, extras: list[str], out: Ty) -> str:
        raise NotImplementedError

    def forward(self, op: ContextOp, x: np.ndarray, extras: list[np.ndarray], out: Ty) -> np.ndarray:
        raise NotImplementedError

    def widen(self, op: ContextOp, x: Ty, tol: tuple[float, float], ref: np.ndarray) -> tuple[float, float]:
        """Element-wise ops that round once: the input's error, plus an ulp."""
        rtol, atol = tol
        return rtol + EPS[x.elt], atol


def _sizes(e: Emitter, x: str, xt: Ty) -> list[str]:
    return [e.dim(x, xt, i) for i in range(xt.rank)]


class Bias(Consumer):
    """Adds a bias along static dim `dim` (broadcast over the others), an extra argument."""
    name, attrs = "bias", {"dim": "int"}

    def result(self, op, x):
        super().result(op, x)
        need(0 <= op.get("dim") < x.rank and x.dims[op.get("dim")] is not None, "bias: along a static dim of the result")
        return x

    def extras(self, op, x):
        return [Ty((x.dims[op.get("dim")],), x.elt)]

    def make_extras(self, op, x, rng):
        return [(rng.integers(-8, 9, size=(x.dims[op.get("dim")],)) / 4).astype(NP[x.elt])]

    def emit(self, op, e, x, xt, extras, out):
        return e.generic([(x, xt, _ident(xt.rank)), (extras[0], self.extras(op, xt)[0], f"d{op.get('dim')}")], out,
                         _sizes(e, x, xt), [f"%s = arith.addf %a, %b : {xt.elt}", "%s"], ["%a", "%b", "%o"])

    def forward(self, op, x, extras, out):
        shape = [1] * x.ndim
        shape[op.get("dim")] = -1
        return (x.astype(np.float64) + extras[0].astype(np.float64).reshape(shape)).astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        rtol, atol = tol  # a sum can cancel: the input's error stays absolute
        return rtol + EPS[x.elt], atol + rtol * float(np.max(np.abs(ref), initial=0.0))


class Clamp(Consumer):
    """`max(x, lo)` then `min(., hi)`: relu is lo 0 with hi 1e30."""
    name, attrs = "clamp", {"lo": "float", "hi": "float"}

    def result(self, op, x):
        super().result(op, x)
        need(op.get("lo") <= op.get("hi"), "clamp: lo above hi")
        return x

    def emit(self, op, e, x, xt, extras, out):
        lo, hi = e.const(op.get("lo"), xt.elt), e.const(min(op.get("hi"), 60000.0), xt.elt)
        body = [f"%m = arith.maximumf %a, {lo} : {xt.elt}", f"%n = arith.minimumf %m, {hi} : {xt.elt}", "%n"]
        return e.generic([(x, xt, _ident(xt.rank))], out, _sizes(e, x, xt), body, ["%a", "%o"])

    def forward(self, op, x, extras, out):
        return np.minimum(np.maximum(x.astype(np.float64), op.get("lo")), min(op.get("hi"), 60000.0)).astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        return tol


class Relu(Clamp):
    name, attrs = "relu", {}

    def result(self, op, x):
        return Consumer.result(self, op, x)

    def emit(self, op, e, x, xt, extras, out):
        zero = e.const(0.0, xt.elt)
        return e.generic([(x, xt, _ident(xt.rank))], out, _sizes(e, x, xt),
                         [f"%m = arith.maximumf %a, {zero} : {xt.elt}", "%m"], ["%a", "%o"])

    def forward(self, op, x, extras, out):
        return np.maximum(x, 0).astype(NP[out.elt])


class MultiUse(Consumer):
    """`t = x * factor`, then `t + x`: the root's result read by two ops (a multi-use producer)."""
    name, attrs = "multi_use", {"factor": "float"}

    def emit(self, op, e, x, xt, extras, out):
        f = e.const(op.get("factor"), xt.elt)
        sizes = _sizes(e, x, xt)
        t = e.generic([(x, xt, _ident(xt.rank))], out, sizes, [f"%m = arith.mulf %a, {f} : {xt.elt}", "%m"], ["%a", "%o"])
        return e.generic([(t, xt, _ident(xt.rank)), (x, xt, _ident(xt.rank))], out, sizes,
                         [f"%s = arith.addf %a, %b : {xt.elt}", "%s"], ["%a", "%b", "%o"])

    def forward(self, op, x, extras, out):
        dt = NP[out.elt]
        t = (x.astype(np.float64) * op.get("factor")).astype(dt)
        return (t.astype(np.float64) + x.astype(np.float64)).astype(dt)

    def widen(self, op, x, tol, ref):
        rtol, atol = tol
        scale = (1 + abs(op.get("factor"))) * float(np.max(np.abs(ref), initial=0.0))
        return rtol + 2 * EPS[x.elt], (atol + rtol * scale + 2 * EPS[x.elt] * scale) * (1 + abs(op.get("factor")))


class AlongDim(Consumer):
    """A consumer along one dim of its operand, whose result has the operand's type."""

    def result(self, op, x):
        super().result(op, x)
        need(0 <= op.get("dim") < x.rank, f"{self.name}: dim outside the result")
        return x


class Extract(AlongDim):
    """`x[i] + x[flip of i along dim]`, the second read through `tensor.extract` in the body
    (gather-like): the result read both directly and indirectly."""
    name, attrs = "extract", {"dim": "int"}

    def emit(self, op, e, x, xt, extras, out):
        d = op.get("dim")
        sizes = _sizes(e, x, xt)
        last = e.fresh("last")
        e.line(f"{last} = arith.subi {sizes[d]}, {e.index(1)} : index")
        body = [f"%i{i} = linalg.index {i} : index" for i in range(xt.rank)]
        body.append(f"%r = arith.subi {last}, %i{d} : index")
        at = ", ".join("%r" if i == d else f"%i{i}" for i in range(xt.rank))
        body += [f"%v = tensor.extract {x}[{at}] : {xt.text()}", f"%s = arith.addf %a, %v : {xt.elt}", "%s"]
        return e.generic([(x, xt, _ident(xt.rank))], out, sizes, body, ["%a", "%o"])

    def forward(self, op, x, extras, out):
        return (x.astype(np.float64) + np.flip(x, op.get("dim")).astype(np.float64)).astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        rtol, atol = tol
        scale = 2 * float(np.max(np.abs(ref), initial=0.0))
        return rtol + EPS[x.elt], atol * 2 + rtol * scale + EPS[x.elt] * scale


class CastOut(Consumer):
    """The result converted to `to` (f16 <-> f32)."""
    name, attrs = "cast_out", {"to": "str"}

    def result(self, op, x):
        super().result(op, x)
        need(op.get("to") in EPS and op.get("to") != x.elt, "cast_out: to the other of f16 and f32")
        return x.with_elt(op.get("to"))

    def emit(self, op, e, x, xt, extras, out):
        fn = "arith.extf" if out.elt == "f32" else "arith.truncf"
        return e.generic([(x, xt, _ident(xt.rank))], out, _sizes(e, x, xt),
                         [f"%c = {fn} %a : {xt.elt} to {out.elt}", "%c"], ["%a", "%o"])

    def forward(self, op, x, extras, out):
        return x.astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        rtol, atol = tol
        return (rtol + EPS["f16"], atol + TINY["f16"]) if op.get("to") == "f16" else tol


class Quantize(Consumer):
    """To i8: `clamp(roundeven(x / scale) + zero_point)` (an int result: off by one allowed
    when the root's own result is not exact, the rounding may go either way)."""
    name, attrs = "quantize", {"scale": "float", "zero_point": "int"}

    def result(self, op, x):
        super().result(op, x)
        need(op.get("scale") > 0 and -128 <= op.get("zero_point") <= 127, "quantize: a positive scale, an i8 zero point")
        return x.with_elt("i8")

    def emit(self, op, e, x, xt, extras, out):
        inv = e.const(1.0 / op.get("scale"), xt.elt)
        lo, hi = e.const(-256.0, xt.elt), e.const(256.0, xt.elt)
        zp, qlo, qhi = e.const(op.get("zero_point"), "i32"), e.const(-128, "i32"), e.const(127, "i32")
        body = [f"%m = arith.mulf %a, {inv} : {xt.elt}", f"%r = math.roundeven %m : {xt.elt}",
                f"%c0 = arith.maximumf %r, {lo} : {xt.elt}", f"%c1 = arith.minimumf %c0, {hi} : {xt.elt}",
                f"%i = arith.fptosi %c1 : {xt.elt} to i32", f"%z = arith.addi %i, {zp} : i32",
                f"%k0 = arith.maxsi %z, {qlo} : i32", f"%k1 = arith.minsi %k0, {qhi} : i32",
                "%q = arith.trunci %k1 : i32 to i8", "%q"]
        return e.generic([(x, xt, _ident(xt.rank))], out, _sizes(e, x, xt), body, ["%a", "%o"])

    def forward(self, op, x, extras, out):
        m = (x.astype(np.float64) * (1.0 / op.get("scale"))).astype(x.dtype).astype(np.float64)
        r = np.clip(np.rint(m), -256, 256) + op.get("zero_point")
        return np.clip(r, -128, 127).astype(np.int8)

    def widen(self, op, x, tol, ref):
        return (0.0, 0.0) if tol == (0.0, 0.0) else (0.0, 1.0)


class QuantizeAffine(Quantize):
    """To i8 through IREE's `iree_linalg_ext.quantize_affine` (PT2E's quantize and ONNX's
    QuantizeLinear in 3.13): `clamp(roundeven(x / scale) + zero_point)`, an f32 result, the
    scale a power of two (so x / scale is the x * (1 / scale) `Quantize.forward` computes)."""
    name = "quantize_affine"

    def result(self, op, x):
        need(x.elt == "f32", "quantize_affine: an f32 result")
        return super().result(op, x)

    def emit(self, op, e, x, xt, extras, out):
        scale, zp = e.const(op.get("scale"), "f32"), e.const(op.get("zero_point"), "i64")
        init = e.empty(out, _sizes(e, x, xt))
        name = e.fresh("q")
        e.line(f"{name} = iree_linalg_ext.quantize_affine <indexing_maps = [{affine_maps(xt.rank)}], "
               f"quant_min = -128, quant_max = 127> ins({x}, {scale}, {zp} : {xt.text()}, f32, i64) "
               f"outs({init} : {out.text()}) -> {out.text()}")
        return name


class TransposeOut(Consumer):
    """`linalg.transpose` of the result."""
    name, attrs = "transpose_out", {"perm": "ints"}

    def result(self, op, x):
        need(perm_ok(list(op.get("perm")), x.rank), "transpose_out: not a permutation of the result's dims")
        return x.with_dims([x.dims[p] for p in op.get("perm")])

    def emit(self, op, e, x, xt, extras, out):
        perm = list(op.get("perm"))
        init = e.empty(out, [e.dim(x, xt, p) for p in perm])
        name = e.fresh("tr")
        e.line(f"{name} = linalg.transpose ins({x} : {xt.text()}) outs({init} : {out.text()}) permutation = [{', '.join(map(str, perm))}]")
        return name

    def forward(self, op, x, extras, out):
        return contiguous(np.transpose(x, op.get("perm")))

    def widen(self, op, x, tol, ref):
        return tol


class Reshape(Consumer):
    """`tensor.collapse_shape` of the result by `groups` (contiguous, covering every dim)."""
    name, attrs = "reshape", {"groups": "intss"}

    def result(self, op, x):
        groups = [list(g) for g in op.get("groups")]
        flat = [i for g in groups for i in g]
        need(x.rank > 0 and flat == list(range(x.rank)) and all(groups) and len(groups) < x.rank,
              "reshape: groups do not collapse the result's dims")
        dims = [None if any(x.dims[i] is None for i in g) else int(np.prod([x.dims[i] for i in g])) for g in groups]
        return x.with_dims(dims)

    def emit(self, op, e, x, xt, extras, out):
        from shapefuzz.families.context.producers import reassoc

        name = e.fresh("rs")
        e.line(f"{name} = tensor.collapse_shape {x} {reassoc([list(g) for g in op.get('groups')])} : {xt.text()} into {out.text()}")
        return name

    def forward(self, op, x, extras, out):
        return x.reshape([int(np.prod([x.shape[i] for i in g])) for g in op.get("groups")])

    def widen(self, op, x, tol, ref):
        return tol


class Reduce(Consumer):
    """`linalg.reduce` of dim `dim` by `kind` "sum" or "max"."""
    name, attrs = "reduce", {"dim": "int", "kind": "str"}

    def result(self, op, x):
        super().result(op, x)
        need(0 <= op.get("dim") < x.rank and op.get("kind") in ("sum", "max"), "reduce: dim outside the result")
        return x.with_dims([n for i, n in enumerate(x.dims) if i != op.get("dim")])

    def emit(self, op, e, x, xt, extras, out):
        d = op.get("dim")
        sizes = [e.dim(x, xt, i) for i in range(xt.rank) if i != d]
        init = e.empty(out, sizes)
        start = e.const(0.0, xt.elt) if op.get("kind") == "sum" else e.const(-60000.0 if xt.elt == "f16" else -3.0e38, xt.elt)
        filled, red = e.fresh("fill"), e.fresh("red")
        e.line(f"{filled} = linalg.fill ins({start} : {xt.elt}) outs({init} : {out.text()}) -> {out.text()}")
        fn = "arith.addf" if op.get("kind") == "sum" else "arith.maximumf"
        e.line(f"{red} = linalg.reduce ins({x} : {xt.text()}) outs({filled} : {out.text()}) dimensions = [{d}]")
        e.line(f"  (%in: {xt.elt}, %acc: {xt.elt}) {{")
        e.line(f"    %s = {fn} %in, %acc : {xt.elt}")
        e.line(f"    linalg.yield %s : {xt.elt}")
        e.line("  }")
        return red

    def forward(self, op, x, extras, out):
        f = np.sum if op.get("kind") == "sum" else np.max
        if op.get("kind") == "max" and x.shape[op.get("dim")] == 0:
            return np.full([n for i, n in enumerate(x.shape) if i != op.get("dim")], -3.0e38).astype(NP[out.elt])
        return np.asarray(f(x.astype(np.float64), axis=op.get("dim"))).astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        rtol, atol = tol
        if op.get("kind") == "max":
            return tol
        n = max(1, ref.shape[op.get("dim")] if ref.ndim else 1)
        total = float(np.max(np.sum(np.abs(ref.astype(np.float64)), axis=op.get("dim")), initial=0.0))
        return rtol + EPS[x.elt], n * atol + rtol * total + n * EPS[x.elt] * total


class Softmax(AlongDim):
    """`linalg.softmax` along `dim`."""
    name, attrs = "softmax", {"dim": "int"}

    def emit(self, op, e, x, xt, extras, out):
        init = e.empty(out, _sizes(e, x, xt))
        name = e.fresh("sm")
        e.line(f"{name} = linalg.softmax dimension({op.get('dim')}) ins({x} : {xt.text()}) outs({init} : {out.text()}) -> {out.text()}")
        return name

    def forward(self, op, x, extras, out):
        v = x.astype(np.float64)
        if v.size == 0:
            return v.astype(NP[out.elt])
        z = np.exp(v - np.max(v, axis=op.get("dim"), keepdims=True))
        return (z / np.sum(z, axis=op.get("dim"), keepdims=True)).astype(NP[out.elt])

    def widen(self, op, x, tol, ref):
        rtol, atol = tol
        delta = atol + rtol * float(np.max(np.abs(ref), initial=0.0))  # the input's error, absolute
        eps = {"f32": 1e-5, "f16": 2e-3}[x.elt]
        return 2 * delta + eps, eps * 0.1


CONSUMERS: dict[str, Consumer] = {c.name: c for c in (Bias(), Relu(), Clamp(), MultiUse(), Extract(), CastOut(), Quantize(), QuantizeAffine(),
                                                      TransposeOut(), Reshape(), Reduce(), Softmax())}
