"""The norm family's MLIR. Everything runs over the working tensor W: the input, or for a group
norm the input with its channel dim split into [groups, channels per group]. Statistics are f32
tensors over W's kept dims; scale / bias / mean / var index W by the dims they span."""

from __future__ import annotations

from typing import Any, Sequence

from shapefuzz.families.common import Dim, IndexValues, collapse_step, size_text, split_step, tensor_type
from shapefuzz.families.norm.params import Params, operands, param_dims, problem, reduced
from shapefuzz.templates import render_template

_NEG_INF = "0xFF800000"


def float_literal(v: float) -> str:
    """An f32 constant as MLIR parses it (a decimal point before any exponent)."""
    s = repr(float(v))
    return s.replace("e", ".0e") if "e" in s and "." not in s else s


def _map(rank: int, dims: Sequence[int]) -> str:
    loops = ", ".join(f"d{i}" for i in range(rank))
    return f"affine_map<({loops}) -> ({', '.join(f'd{i}' for i in dims)})>"


def _sizes(dims: Sequence[Dim]) -> list[str]:
    return [size_text(d) for d in dims if d.dyn]


class _Builder:
    def __init__(self, p: Params) -> None:
        self.p = p
        self.iv = IndexValues()
        self.elt = p.dtype
        self.x_type = tensor_type(p.shape, p.dtype, p.dyn)
        self.xdims = [Dim(s, d, self.iv.dim("%x", self.x_type, i) if d else None)
                      for i, (s, d) in enumerate(zip(p.shape, p.dyn))]
        self.steps: list[dict[str, Any]] = []
        self.constants: list[str] = []
        self.count_lines: list[str] = []
        grouped = p.kind == "group"
        c = p.channel if grouped else -1
        # x dim i -> its W dims
        self.wpos = [[i + (grouped and i > c)] if i != c else [c, c + 1] for i in range(p.rank)]
        if grouped:
            self.wdims = (self.xdims[:c] + [Dim(p.groups, False), Dim(p.shape[c] // p.groups, False)]
                          + self.xdims[c + 1:])
        else:
            self.wdims = list(self.xdims)
        self.rw = len(self.wdims)
        red = [w for i in reduced(p) for w in self.wpos[i]]
        if grouped:
            red = [w for w in red if w != c]  # the group index is kept
        self.red = sorted(red)
        self.kept = [i for i in range(self.rw) if i not in self.red]

    def type(self, dims: Sequence[Dim], elt: str) -> str:
        return tensor_type(dims, elt)

    @property
    def w_in(self) -> tuple[str, str]:
        return ("%xg", self.type(self.wdims, self.elt)) if self.p.kind == "group" else ("%x", self.x_type)

    @property
    def stats_dims(self) -> list[Dim]:
        return [self.wdims[i] for i in self.kept]

    def fill(self, res: str, value: str) -> str:
        self.steps.append({"kind": "fill", "res": res, "value": value, "type": self.type(self.stats_dims, "f32"),
                           "sizes": _sizes(self.stats_dims)})
        return res

    def empty(self, res: str, dims: Sequence[Dim], elt: str) -> str:
        self.steps.append({"kind": "empty", "res": res, "type": self.type(dims, elt), "sizes": _sizes(dims)})
        return res

    def generic(self, res: str, ins: list[tuple[str, str, str, str]], outs: list[tuple[str, str, str, str]],
                iterators: list[str], lines: list[str]) -> None:
        """ins / outs: (value, type, map, block argument with its element type)."""
        types = [t for _, t, _, _ in outs]
        self.steps.append({
            "kind": "generic", "res": res if len(outs) == 1 else f"{res}:{len(outs)}",
            "maps": [m for _, _, m, _ in ins + outs], "iterators": ", ".join(f'"{k}"' for k in iterators),
            "ins": [v for v, _, _, _ in ins], "in_types": [t for _, t, _, _ in ins],
            "outs": [v for v, _, _, _ in outs], "out_types": types, "block_args": [a for _, _, _, a in ins + outs],
            "lines": lines, "results": types[0] if len(types) == 1 else f"({', '.join(types)})"})

    # --- pieces -----------------------------------------------------------------

    def x_arg(self) -> tuple[str, str, str, str]:
        v, t = self.w_in
        return (v, t, _map(self.rw, range(self.rw)), f"%xv: {self.elt}")

    def widen(self, v: str = "%xv") -> list[str]:
        return [] if self.elt == "f32" else [f"{v}f = arith.extf {v} : {self.elt} to f32"]

    def xf(self) -> str:
        return "%xv" if self.elt == "f32" else "%xvf"

    def stat_arg(self, v: str, block: str, over_w: bool = True) -> tuple[str, str, str, str]:
        dims = self.kept if over_w else range(len(self.kept))
        rank = self.rw if over_w else len(self.kept)
        return (v, self.type(self.stats_dims, "f32"), _map(rank, dims), f"{block}: f32")

    def reduce(self, res: str, inits: list[str], extra: list[tuple[str, str, str, str]], lines: list[str]) -> None:
        outs = [self.stat_arg(i, f"%acc{k}") for k, i in enumerate(inits)]
        its = ["reduction" if i in self.red else "parallel" for i in range(self.rw)]
        self.generic(res, [self.x_arg()] + extra, outs, its, self.widen() + lines)

    def on_stats(self, res: str, ins: list[tuple[str, str]], outs: list[str], lines: list[str]) -> list[str]:
        """An elementwise generic over the statistics: ins (value, block name) -> one f32 per out."""
        k = len(self.kept)
        inits = [self.empty(f"{o}_e", self.stats_dims, "f32") for o in outs]
        self.generic(res, [self.stat_arg(v, b, False) for v, b in ins],
                     [self.stat_arg(i, f"%o{j}", False) for j, i in enumerate(inits)], ["parallel"] * k, lines)
        return [res] if len(outs) == 1 else [f"{res}#{j}" for j in range(len(outs))]

    def count(self) -> str:
        """The reduction length as an f32 value: a constant, or the product of the dynamic sizes."""
        static, dyn = 1, []
        for i in self.red:
            d = self.wdims[i]
            if d.dyn:
                dyn.append(d.ssa)
            else:
                static *= d.size
        if not dyn:
            self.constants.append(f"%count = arith.constant {float(static)!r} : f32")
            return "%count"
        v = dyn[0]
        rest = dyn[1:] + ([self.iv.const(static)] if static != 1 else [])
        for j, other in enumerate(rest):
            self.count_lines.append(f"%count_i{j} = arith.muli {v}, {other} : index")
            v = f"%count_i{j}"
        self.count_lines += [f"%count_64 = arith.index_cast {v} : index to i64",
                             "%count = arith.sitofp %count_64 : i64 to f32"]
        return "%count"

    def operand_args(self) -> list[tuple[str, str, str, str]]:
        """scale / bias / mean / var as the final generic reads them (a group norm's split first)."""
        p, out = self.p, []
        dims = param_dims(p)
        wdims = [w for i in dims for w in self.wpos[i]]
        for name in operands(p):
            src_dims = [self.xdims[i] for i in dims]
            v, t = f"%{name}", self.type(src_dims, self.elt)
            if p.kind == "group":
                step = split_step(f"%{name}_g", v, src_dims, [[self.wdims[w] for w in wdims]], self.elt)
                self.steps.append({"kind": "reshape", "step": step})
                v, t = step.res, step.dst_ty
            out.append((v, t, _map(self.rw, wdims), f"%{name[0]}: {self.elt}"))
        return out

    def finish(self, ins: list[tuple[str, str, str, str]], lines: list[str], value: str) -> str:
        """The elementwise generic over W giving the result (rounded to the input type)."""
        init = self.empty("%y_e", self.wdims, self.elt)
        if self.elt != "f32":
            lines = lines + [f"%yt = arith.truncf {value} : f32 to {self.elt}"]
            value = "%yt"
        out = (init, self.type(self.wdims, self.elt), _map(self.rw, range(self.rw)), f"%o: {self.elt}")
        self.generic("%y", [self.x_arg()] + ins, [out], ["parallel"] * self.rw,
                     self.widen() + lines + [f"linalg.yield {value} : {self.elt}"])
        if self.p.kind != "group":
            return "%y"
        c = self.p.channel
        groups = [[w] for w in range(c)] + [[c, c + 1]] + [[w] for w in range(c + 2, self.rw)]
        step, _ = collapse_step("%yc", "%y", self.wdims, groups, self.elt)
        self.steps.append({"kind": "reshape", "step": step})
        return "%yc"


def _affine_lines(b: _Builder, z: str) -> tuple[list[str], str]:
    """z * scale + bias (those present), widened first for f16."""
    lines, v = [], z
    for name, op in (("s", "mulf"), ("b", "addf")):
        if not any(o[0] == name for o in operands(b.p)):
            continue
        w = f"%{name}" if b.elt == "f32" else f"%{name}f"
        if b.elt != "f32":
            lines.append(f"{w} = arith.extf %{name} : {b.elt} to f32")
        lines.append(f"%{name}_{op} = arith.{op} {v}, {w} : f32")
        v = f"%{name}_{op}"
    return lines, v


def _norm(b: _Builder) -> str:
    p, xf, eps = b.p, b.xf(), "%eps"
    b.constants += [f"%eps = arith.constant {float_literal(p.eps)} : f32", "%zero = arith.constant 0.0 : f32"]
    n = b.count()
    if p.kind == "rms":
        b.reduce("%sq", [b.fill("%sq_init", "%zero")], [],
                 [f"%q = arith.mulf {xf}, {xf} : f32", "%s = arith.addf %acc0, %q : f32", "linalg.yield %s : f32"])
        root = "math.sqrt" if p.form == "fused" else "math.rsqrt"
        (r,) = b.on_stats("%rstd", [("%sq", "%a")], ["%rstd"], [
            f"%v = arith.divf %a, {n} : f32", f"%w = arith.addf %v, {eps} : f32", f"%r = {root} %w : f32",
            "linalg.yield %r : f32"])
        ops = b.operand_args()
        lines = [f"%z = arith.{'divf' if p.form == 'fused' else 'mulf'} {xf}, %r : f32"]
        aff, v = _affine_lines(b, "%z")
        return b.finish([b.stat_arg(r, "%r")] + ops, lines + aff, v)
    if p.form == "fused":
        b.reduce("%st", [b.fill("%sum_init", "%zero"), b.fill("%sumsq_init", "%zero")], [],
                 [f"%s = arith.addf %acc0, {xf} : f32", f"%q = arith.mulf {xf}, {xf} : f32",
                  "%s2 = arith.addf %acc1, %q : f32", "linalg.yield %s, %s2 : f32, f32"])
        mean, rstd = b.on_stats("%ms", [("%st#0", "%a"), ("%st#1", "%q")], ["%mean", "%rstd"], [
            f"%m = arith.divf %a, {n} : f32", f"%e2 = arith.divf %q, {n} : f32", "%m2 = arith.mulf %m, %m : f32",
            "%v = arith.subf %e2, %m2 : f32", f"%w = arith.addf %v, {eps} : f32", "%r = math.rsqrt %w : f32",
            "linalg.yield %m, %r : f32, f32"])
    else:
        b.reduce("%sum", [b.fill("%sum_init", "%zero")], [],
                 [f"%s = arith.addf %acc0, {xf} : f32", "linalg.yield %s : f32"])
        (mean,) = b.on_stats("%mean", [("%sum", "%a")], ["%mean"], [f"%m = arith.divf %a, {n} : f32", "linalg.yield %m : f32"])
        b.reduce("%sq", [b.fill("%sq_init", "%zero")], [b.stat_arg(mean, "%m")],
                 [f"%d = arith.subf {xf}, %m : f32", "%q = arith.mulf %d, %d : f32", "%s = arith.addf %acc0, %q : f32",
                  "linalg.yield %s : f32"])
        (rstd,) = b.on_stats("%rstd", [("%sq", "%a")], ["%rstd"], [
            f"%v = arith.divf %a, {n} : f32", f"%w = arith.addf %v, {eps} : f32", "%r = math.rsqrt %w : f32",
            "linalg.yield %r : f32"])
    ops = b.operand_args()
    aff, v = _affine_lines(b, "%z")
    lines = [f"%c = arith.subf {xf}, %m : f32", "%z = arith.mulf %c, %r : f32"]
    return b.finish([b.stat_arg(mean, "%m"), b.stat_arg(rstd, "%r")] + ops, lines + aff, v)


def _batch(b: _Builder) -> str:
    p, xf = b.p, b.xf()
    b.constants.append(f"%eps = arith.constant {float_literal(p.eps)} : f32")
    ops = b.operand_args()
    wide = [] if b.elt == "f32" else [f"%{n}f = arith.extf %{n} : {b.elt} to f32" for n in "sbmv"]
    s, bb, m, v = (f"%{n}" if b.elt == "f32" else f"%{n}f" for n in "sbmv")
    if p.form == "twopass":
        lines = wide + [f"%w = arith.addf {v}, %eps : f32", "%r = math.rsqrt %w : f32", f"%c = arith.subf {xf}, {m} : f32",
                        "%z = arith.mulf %c, %r : f32", f"%zs = arith.mulf %z, {s} : f32", f"%y = arith.addf %zs, {bb} : f32"]
        return b.finish(ops, lines, "%y")
    # a per-channel scale a = s / sqrt(v + eps) and shift s2 = b - m * a, then y = x * a + s2
    cdims = [b.wdims[w] for w in b.wpos[p.channel]]
    inits = [b.empty(f"%{n}_e", cdims, "f32") for n in ("a", "shift")]
    ctype = b.type(cdims, "f32")
    ident = _map(1, [0])
    b.generic("%ab", [(o[0], o[1], ident, o[3]) for o in ops],
              [(i, ctype, ident, f"%o{j}: f32") for j, i in enumerate(inits)], ["parallel"], wide + [
        f"%w = arith.addf {v}, %eps : f32", "%r = math.rsqrt %w : f32", f"%a = arith.mulf {s}, %r : f32",
        f"%ma = arith.mulf {m}, %a : f32", f"%sh = arith.subf {bb}, %ma : f32", "linalg.yield %a, %sh : f32, f32"])
    cmap = ops[0][2]
    return b.finish([("%ab#0", ctype, cmap, "%a: f32"), ("%ab#1", ctype, cmap, "%sh: f32")],
                    [f"%xa = arith.mulf {xf}, %a : f32", "%y = arith.addf %xa, %sh : f32"], "%y")


def _softmax(b: _Builder) -> str:
    p, xf = b.p, b.xf()
    if p.form == "named":
        src = "%x"
        wtype = b.type(b.wdims, "f32")
        if b.elt != "f32":
            init = b.empty("%xw_e", b.wdims, "f32")
            b.generic("%xw", [b.x_arg()], [(init, wtype, _map(b.rw, range(b.rw)), "%o: f32")], ["parallel"] * b.rw,
                      b.widen() + [f"linalg.yield {xf} : f32"])
            src = "%xw"
        init = b.empty("%sm_e", b.wdims, "f32")
        b.steps.append({"kind": "softmax", "res": "%sm", "dim": p.axis, "src": src, "type": wtype, "init": init})
        if b.elt == "f32":
            return "%sm"
        out = b.empty("%y_e", b.wdims, b.elt)
        b.generic("%y", [("%sm", wtype, _map(b.rw, range(b.rw)), "%v: f32")],
                  [(out, b.type(b.wdims, b.elt), _map(b.rw, range(b.rw)), f"%o: {b.elt}")], ["parallel"] * b.rw,
                  [f"%t = arith.truncf %v : f32 to {b.elt}", f"linalg.yield %t : {b.elt}"])
        return "%y"
    b.constants += [f"%neg_inf = arith.constant {_NEG_INF} : f32", "%zero = arith.constant 0.0 : f32"]
    b.reduce("%max", [b.fill("%max_init", "%neg_inf")], [],
             [f"%v = arith.maximumf %acc0, {xf} : f32", "linalg.yield %v : f32"])
    b.reduce("%sum", [b.fill("%sum_init", "%zero")], [b.stat_arg("%max", "%m")],
             [f"%c = arith.subf {xf}, %m : f32", "%e = math.exp %c : f32", "%s = arith.addf %acc0, %e : f32",
              "linalg.yield %s : f32"])
    stats = [b.stat_arg("%max", "%m")]
    if p.kind == "softmax" and p.form == "twopass":
        lines = [f"%c = arith.subf {xf}, %m : f32", "%e = math.exp %c : f32", "%y = arith.divf %e, %s : f32"]
        stats.append(b.stat_arg("%sum", "%s"))
    elif p.kind == "softmax":
        b.constants.append("%one = arith.constant 1.0 : f32")
        (rcp,) = b.on_stats("%rcp", [("%sum", "%a")], ["%rcp"], ["%r = arith.divf %one, %a : f32", "linalg.yield %r : f32"])
        lines = [f"%c = arith.subf {xf}, %m : f32", "%e = math.exp %c : f32", "%y = arith.mulf %e, %r : f32"]
        stats.append(b.stat_arg(rcp, "%r"))
    elif p.form == "twopass":
        lines = [f"%c = arith.subf {xf}, %m : f32", "%l = math.log %s : f32", "%y = arith.subf %c, %l : f32"]
        stats.append(b.stat_arg("%sum", "%s"))
    else:
        (lse,) = b.on_stats("%lse", [("%max", "%a"), ("%sum", "%s")], ["%lse"], [
            "%l = math.log %s : f32", "%v = arith.addf %a, %l : f32", "linalg.yield %v : f32"])
        stats = [b.stat_arg(lse, "%m")]
        lines = [f"%y = arith.subf {xf}, %m : f32"]
    return b.finish(stats, lines, "%y")


def render(p: Params) -> str:
    why = problem(p)
    if why:
        raise ValueError(f"not a norm case: {why}")
    b = _Builder(p)
    if p.kind == "group":
        c = p.channel
        groups = [[w] for w in range(c)] + [[c, c + 1]] + [[w] for w in range(c + 2, b.rw)]
        step = split_step("%xg", "%x", b.xdims, [[b.wdims[w] for w in g] for g in groups], p.dtype)
        b.steps.append({"kind": "reshape", "step": step})
    if p.kind in ("softmax", "logsoftmax"):
        result = _softmax(b)
    elif p.kind == "batch":
        result = _batch(b)
    else:
        result = _norm(b)
    args = [f"%x: {b.x_type}"] + [
        f"%{name}: {tensor_type([p.shape[i] for i in param_dims(p)], p.dtype, [p.dyn[i] for i in param_dims(p)])}"
        for name in operands(p)]
    return render_template("norm.mlir.j2", args=args, result_type=b.x_type, index=b.iv.ops(), count_lines=b.count_lines,
                           constants=b.constants, steps=b.steps, result=result)
