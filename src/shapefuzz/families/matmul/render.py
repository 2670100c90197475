"""The matmul family's MLIR. Every operand dim is named by its loop ("b0", "b1", "m", "n", "k"):
types, sizes and affine maps all follow from those names."""

from __future__ import annotations

from typing import Sequence

from shapefuzz.families.common import IndexValues, tensor_type
from shapefuzz.families.matmul.params import Params, problem
from shapefuzz.families.matmul.reference import boundary_elt
from shapefuzz.templates import render_template


def _a_dims(p: Params) -> list[str]:
    batch = [] if p.bcast == "a" else _batch(p)
    return batch + (["k"] if p.vec == "vecmat" else ["k", "m"] if p.trans_a else ["m", "k"])


def _b_dims(p: Params) -> list[str]:
    batch = [] if p.bcast == "b" else _batch(p)
    return batch + (["k"] if p.vec == "matvec" else ["n", "k"] if p.trans_b else ["k", "n"])


def _c_dims(p: Params) -> list[str]:
    return _batch(p) + ([] if p.vec == "vecmat" else ["m"]) + ([] if p.vec == "matvec" else ["n"])


def _batch(p: Params) -> list[str]:
    return [f"b{i}" for i in range(len(p.batch))]


def _loops(p: Params) -> list[str]:
    return _c_dims(p) + ["k"]


def _map(loops: Sequence[str], dims: Sequence[str]) -> str:
    d = {name: f"d{i}" for i, name in enumerate(loops)}
    return f"affine_map<({', '.join(d[n] for n in loops)}) -> ({', '.join(d[n] for n in dims)})>"


class _Shapes:
    """Sizes, `?` flags and the SSA size of each dynamic dim (read from the first argument holding it)."""

    def __init__(self, p: Params, iv: IndexValues) -> None:
        self.size = {f"b{i}": s for i, s in enumerate(p.batch)} | {"m": p.m, "n": p.n, "k": p.k}
        self.dyn = {f"b{i}": d for i, d in enumerate(p.batch_dyn)} | {"m": p.m_dyn, "n": p.n_dyn, "k": p.k_dyn}
        self.iv = iv
        self.sources: list[tuple[str, str, list[str]]] = []  # (argument, its type, its dims' names)

    def type(self, dims: Sequence[str], elt: str) -> str:
        return tensor_type([self.size[d] for d in dims], elt, [self.dyn[d] for d in dims])

    def sizes(self, dims: Sequence[str]) -> list[str]:
        out = []
        for d in dims:
            if self.dyn[d]:
                src, src_type, names = next(s for s in self.sources if d in s[2])
                out.append(self.iv.dim(src, src_type, names.index(d), f"%{d}_size"))
        return out


def _named_op(p: Params) -> tuple[str, bool]:
    """The named op and whether its operands are swapped (a transposed matrix with a vector)."""
    batch = "batch_" if p.batch else ""
    if p.vec == "matvec":
        return (f"linalg.{batch}vecmat", True) if p.trans_a else (f"linalg.{batch}matvec", False)
    if p.vec == "vecmat":
        return (f"linalg.{batch}matvec", True) if p.trans_b else (f"linalg.{batch}vecmat", False)
    return f"linalg.{batch}matmul", False


def render(p: Params) -> str:
    why = problem(p)
    if why:
        raise ValueError(f"not a matmul case: {why}")
    iv = IndexValues()
    a_in, b_in = boundary_elt(p.dtype), boundary_elt(p.dtype)
    a_dims, b_dims, c_dims, loops = _a_dims(p), _b_dims(p), _c_dims(p), _loops(p)
    sh = _Shapes(p, iv)
    a_type, b_type = sh.type(a_dims, a_in), sh.type(b_dims, b_in)
    sh.sources = [("%a", a_type, a_dims), ("%b", b_type, b_dims)]
    out_b = boundary_elt(p.out)
    result_type = sh.type(c_dims, out_b)
    args = [f"%a: {a_type}", f"%b: {b_type}"]
    bias_dims = {"none": [], "row": ["n"], "full": ["m", "n"]}[p.bias]
    if p.bias != "none":
        args.append(f"%bias: {sh.type(bias_dims, out_b)}")
    acc = p.acc
    constants = [f"%zero = arith.constant {'0' if p.quantized else '0.0'} : {acc}"]
    # The operands as the contraction reads them: (value, dims, element type).
    ops: list[tuple[str, list[str], str]] = [("%a", a_dims, a_in), ("%b", b_dims, b_in)]
    preps = []
    zps = [p.a_zp, p.b_zp]
    for i, name in enumerate(("a", "b")):
        if zps[i]:
            constants.append(f"%{name}_zp = arith.constant {zps[i]} : i32")
        value, dims, elt = ops[i]
        if p.dtype == "bf16":
            lines = ["%t = arith.truncf %x : f32 to bf16", "linalg.yield %t : bf16"]
            preps.append(_elementwise(sh, f"%{name}_bf16", [(value, dims, elt)], dims, "bf16", lines))
            ops[i] = (f"%{name}_bf16", dims, "bf16")
        elif zps[i] and p.form not in ("generic", "quantized"):
            lines = ["%w = arith.extsi %x : i8 to i32", f"%s = arith.subi %w, %{name}_zp : i32", "linalg.yield %s : i32"]
            preps.append(_elementwise(sh, f"%{name}_shifted", [(value, dims, elt)], dims, "i32", lines))
            ops[i] = (f"%{name}_shifted", dims, "i32")
    materialized = []
    if p.form == "materialized":
        for i, (name, trans) in enumerate((("a", p.trans_a), ("b", p.trans_b))):
            value, dims, elt = ops[i]
            if trans:
                new = dims[:-2] + [dims[-1], dims[-2]]
                materialized.append({"kind": "transpose", "res": f"%{name}_t", "src": value, "src_type": sh.type(dims, elt),
                                     "out_type": sh.type(new, elt), "sizes": sh.sizes(new),
                                     "dims": list(range(len(dims) - 2)) + [len(dims) - 1, len(dims) - 2]})
                ops[i] = (f"%{name}_t", new, elt)
            if p.bcast == name:
                value, dims, elt = ops[i]
                new = _batch(p) + dims
                materialized.append({"kind": "broadcast", "res": f"%{name}_bc", "src": value, "src_type": sh.type(dims, elt),
                                     "out_type": sh.type(new, elt), "sizes": sh.sizes(new), "dims": list(range(len(p.batch)))})
                ops[i] = (f"%{name}_bc", new, elt)
    acc_type = sh.type(c_dims, acc)
    ins = [v for v, _, _ in ops]
    in_types = [sh.type(d, e) for _, d, e in ops]
    maps = [_map(loops, ops[0][1]), _map(loops, ops[1][1]), _map(loops, c_dims)]
    iterators = ", ".join(['"parallel"'] * (len(loops) - 1) + ['"reduction"'])
    body: list[str] = []
    block_args: list[str] = []
    if p.form == "generic":
        op = "generic"
        block_args = [f"%x: {ops[0][2]}", f"%y: {ops[1][2]}", f"%acc_in: {acc}"]
        body = _product_body(p, ops[0][2], ops[1][2])
    elif p.form == "contract":
        op = "linalg.contract"
    elif p.form == "quantized":
        op = f"linalg.quantized_{'batch_' if p.batch else ''}matmul"
        constants += [f"%{n}_zp = arith.constant {zp} : i32" for n, zp in (("a", p.a_zp), ("b", p.b_zp)) if not zp]
        ins, in_types, maps = ins + ["%a_zp", "%b_zp"], in_types + ["i32", "i32"], []
    elif p.form == "materialized":
        op, maps = f"linalg.{'batch_' if p.batch else ''}matmul", []
    else:
        op, swapped = _named_op(p)
        if swapped:
            ins, in_types = ins[::-1], in_types[::-1]
        if p.vec or (not p.trans_a and not p.trans_b and p.bcast == "none"):
            maps = []
    epilogue = None
    if p.epilogue or p.out != acc:
        epilogue = _epilogue(p, sh, c_dims, bias_dims, acc_type, out_b)
    acc_sizes = sh.sizes(c_dims)  # before the index values are laid out
    return render_template(
        "matmul.mlir.j2", args=args, result_type=result_type, index=iv.ops(), constants=constants, preps=preps,
        materialized=materialized, acc_sizes=acc_sizes, acc_type=acc_type, acc_elt=acc, op=op, maps=maps,
        iterators=iterators, ins=ins, in_types=in_types, block_args=block_args, body=body, epilogue=epilogue,
        result="%res" if epilogue else "%mm")


def _product_body(p: Params, ea: str, eb: str) -> list[str]:
    lines, names = [], []
    for v, e, zp, n in (("%x", ea, p.a_zp, "a"), ("%y", eb, p.b_zp, "b")):
        if p.quantized:
            lines.append(f"{v}w = arith.extsi {v} : i8 to i32")
            if zp:
                lines.append(f"{v}s = arith.subi {v}w, %{n}_zp : i32")
            names.append(f"{v}s" if zp else f"{v}w")
        elif e != "f32":
            lines.append(f"{v}w = arith.extf {v} : {e} to f32")
            names.append(f"{v}w")
        else:
            names.append(v)
    kind = "i" if p.quantized else "f"
    return lines + [f"%prod = arith.mul{kind} {names[0]}, {names[1]} : {p.acc}",
                    f"%sum = arith.add{kind} %acc_in, %prod : {p.acc}", f"linalg.yield %sum : {p.acc}"]


def _elementwise(sh: _Shapes, res: str, ins: list[tuple[str, list[str], str]], dims: list[str], out_elt: str,
                 lines: list[str], names: Sequence[str] = ("%x",)) -> dict:
    out_type = sh.type(dims, out_elt)
    return {"res": res, "sizes": sh.sizes(dims), "out_type": out_type, "ins": [v for v, _, _ in ins],
            "in_types": [sh.type(d, e) for _, d, e in ins], "maps": [_map(dims, d) for _, d, _ in ins] + [_map(dims, dims)],
            "iterators": ", ".join(['"parallel"'] * len(dims)),
            "block_args": [f"{n}: {e}" for n, (_, _, e) in zip(names, ins)] + [f"%o: {out_elt}"], "lines": lines}


def _epilogue(p: Params, sh: _Shapes, c_dims: list[str], bias_dims: list[str], acc_type: str, out_b: str) -> dict:
    """alpha * acc + beta * bias, rounded to the result type (bf16 returned widened to f32)."""
    lines, v = [], "%x"
    ins = [("%mm", c_dims, p.acc)]
    if p.alpha != 1.0:
        lines += [f"%alpha = arith.constant {p.alpha!r} : f32", "%xa = arith.mulf %x, %alpha : f32"]
        v = "%xa"
    if p.bias != "none":
        ins.append(("%bias", bias_dims, out_b))
        c = "%c"
        if out_b != "f32":
            lines.append(f"%cw = arith.extf %c : {out_b} to f32")
            c = "%cw"
        if p.beta != 1.0:
            lines += [f"%beta = arith.constant {p.beta!r} : f32", f"%cb = arith.mulf {c}, %beta : f32"]
            c = "%cb"
        lines.append(f"%xs = arith.addf {v}, {c} : f32")
        v = "%xs"
    if p.out != p.acc:
        lines.append(f"%r = arith.truncf {v} : f32 to {p.out}")
        v = "%r"
        if p.out != out_b:  # bf16 leaves as f32
            lines.append(f"%rw = arith.extf %r : {p.out} to {out_b}")
            v = "%rw"
    lines.append(f"linalg.yield {v} : {out_b}")
    return _elementwise(sh, "%res", ins, c_dims, out_b, lines, names=("%x", "%c"))
