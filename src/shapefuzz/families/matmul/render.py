"""The matmul family's MLIR. Every operand dim is named by its loop ("b0", "b1", "m", "n", "k"):
types, sizes and affine maps all follow from those names."""

from __future__ import annotations

from typing import Any, Sequence

from shapefuzz.families.common import IndexValues, tensor_type
from shapefuzz.families.matmul.params import I8_MAX, I8_MIN, QDQ_SCALES, U8_MAX, Params, problem, zero_points
from shapefuzz.families.matmul.operands import b_values, init_values
from shapefuzz.families.matmul.reference import boundary_elt
from shapefuzz.families.operands import constant_lines, doubled_lines
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
    args = [f"%a: {a_type}"] + ([] if p.operand == "folded" else [f"%b: {b_type}"])
    # a folded B is computed first, from constants: every size read from it is then defined
    folded = doubled_lines("%b", b_values(p), b_in, b_type) if p.operand == "folded" else []
    bias_dims = {"none": [], "row": ["n"], "full": ["m", "n"]}[p.bias]
    if p.bias != "none":
        args.append(f"%bias: {sh.type(bias_dims, out_b)}")
    acc = "f32" if p.form == "qdq" else p.acc  # the qdq form contracts in f32
    if p.operand == "scalar":
        args.append(f"%scalar_init: tensor<{acc}>")
    constants = [f"%zero = arith.constant {'0' if acc == 'i32' else '0.0'} : {acc}"]
    # The operands as the contraction reads them: (value, dims, element type).
    ops: list[list[Any]] = [["%a", a_dims, a_in], ["%b", b_dims, b_in]]  # [value, dims, element type]
    preps: list[dict] = []
    dequantized: list[dict] = []
    zp_ins: list[tuple[str, str, list[str]]] = []  # per-row / per-column zero points the generic reads
    for i, name in enumerate(("a", "b")):
        zp = _ZeroPoint(p, name)
        value, dims, elt = ops[i]
        if p.form == "qdq":
            dequantized.append(_dequantize(p, sh, zp, value, dims, constants))
            ops[i] = [f"%{name}_real", dims, "f32"]
            continue
        constants += zp.constants()
        if p.dtype == "bf16":
            lines = ["%t = arith.truncf %x : f32 to bf16", "linalg.yield %t : bf16"]
            preps.append(_elementwise(sh, f"%{name}_bf16", [(value, dims, elt)], dims, "bf16", lines))
            ops[i] = [f"%{name}_bf16", dims, "bf16"]
        elif zp.shifts and p.form == "generic" and zp.vector:
            zp_ins.append((zp.value, zp.type, [zp.dim]))
        elif zp.widens and p.form not in ("generic", "quantized"):
            shifted_ins = [(value, dims, elt)] + ([(zp.value, [zp.dim], "i32")] if zp.vector else [])
            lines = [f"%w = {zp.widen} %x : i8 to i32"] + (
                [f"%s = arith.subi %w, {'%z' if zp.vector else zp.value} : i32", "linalg.yield %s : i32"]
                if zp.values != [0] else ["linalg.yield %w : i32"])
            prep = _elementwise(sh, f"%{name}_shifted", shifted_ins, dims, "i32", lines, names=("%x", "%z"))
            prep["in_types"][1:] = [zp.type] if zp.vector else []  # the vector is static (a constant)
            preps.append(prep)
            ops[i] = [f"%{name}_shifted", dims, "i32"]
    materialized = []
    if p.form in ("materialized", "quantized"):  # the quantized named ops take no maps either
        for i, (name, trans) in enumerate((("a", p.trans_a), ("b", p.trans_b))):
            value, dims, elt = ops[i]
            if trans:
                new = dims[:-2] + [dims[-1], dims[-2]]
                materialized.append({"kind": "transpose", "res": f"%{name}_t", "src": value, "src_type": sh.type(dims, elt),
                                     "out_type": sh.type(new, elt), "sizes": sh.sizes(new),
                                     "dims": list(range(len(dims) - 2)) + [len(dims) - 1, len(dims) - 2]})
                ops[i] = [f"%{name}_t", new, elt]
            if p.bcast == name:
                value, dims, elt = ops[i]
                new = _batch(p) + dims
                materialized.append({"kind": "broadcast", "res": f"%{name}_bc", "src": value, "src_type": sh.type(dims, elt),
                                     "out_type": sh.type(new, elt), "sizes": sh.sizes(new), "dims": list(range(len(p.batch)))})
                ops[i] = [f"%{name}_bc", new, elt]
    acc_type = sh.type(c_dims, acc)
    ins: list[str] = [v for v, _, _ in ops]
    in_types: list[str] = [sh.type(d, e) for _, d, e in ops]
    maps = [_map(loops, ops[0][1]), _map(loops, ops[1][1]), _map(loops, c_dims)]
    iterators = ", ".join(['"parallel"'] * (len(loops) - 1) + ['"reduction"'])
    body: list[str] = []
    block_args: list[str] = []
    if p.form in ("generic", "qdq"):
        op = "generic"
        ins += [value for value, _, _ in zp_ins]
        in_types += [ty for _, ty, _ in zp_ins]
        maps = maps[:2] + [_map(loops, dims) for _, _, dims in zp_ins] + maps[2:]
        block_args = [f"%x: {ops[0][2]}", f"%y: {ops[1][2]}"] + [
            f"{value}_in: i32" for value, _, _ in zp_ins] + [f"%acc_in: {acc}"]
        body = _product_body(p, ops[0][2], ops[1][2], acc)
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
    if p.form == "qdq":
        epilogue = _rescale(sh, c_dims)
    elif p.epilogue or p.out != acc:
        epilogue = _epilogue(p, sh, c_dims, bias_dims, acc_type, out_b)
    acc_sizes = sh.sizes(c_dims)  # before the index values are laid out
    return render_template(
        "matmul.mlir.j2", args=args, result_type=result_type, index=iv.ops(), constants=constants, preps=preps,
        folded=folded, init_lines=_init_lines(p, acc, acc_type, acc_sizes, c_dims),
        dequantized=dequantized, materialized=materialized, acc_sizes=acc_sizes, acc_type=acc_type, acc_elt=acc, op=op, maps=maps,
        iterators=iterators, ins=ins, in_types=in_types, block_args=block_args, body=body, epilogue=epilogue,
        result="%res" if epilogue else "%mm")


def _init_lines(p: Params, acc: str, acc_type: str, sizes: list[str], c_dims: list[str]) -> list[str]:
    """The accumulator `%acc` of a root-operand form: a non-splat constant, or the scalar argument
    broadcast; none (a zero fill, in the template) for the plain operands."""
    if p.operand == "const":
        return constant_lines("%acc", init_values(p), acc, acc_type)
    if p.operand != "scalar":
        return []
    ident, parallel = _map(c_dims, c_dims), ", ".join(['"parallel"'] * len(c_dims))
    return [f"%acc_e = tensor.empty({', '.join(sizes)}) : {acc_type}",
            f"%acc = linalg.generic {{indexing_maps = [{_map(c_dims, [])}, {ident}], iterator_types = [{parallel}]}} "
            f"ins(%scalar_init : tensor<{acc}>) outs(%acc_e : {acc_type}) {{",
            f"^bb0(%sv: {acc}, %o: {acc}):", f"  linalg.yield %sv : {acc}", f"}} -> {acc_type}"]


def _product_body(p: Params, ea: str, eb: str, acc: str) -> list[str]:
    """The generic's body: each operand widened (i8 to i32, zero point subtracted: a scalar, or the
    per-row / per-column block argument), multiplied and added; the qdq form's operands are
    already real (f32), its body exactly the multiply and the add."""
    lines, names = [], []
    for v, e, n in (("%x", ea, "a"), ("%y", eb, "b")):
        zp = _ZeroPoint(p, n)
        if p.quantized and p.form != "qdq":
            lines.append(f"{v}w = {zp.widen} {v} : i8 to i32")
            if zp.shifts:
                lines.append(f"{v}s = arith.subi {v}w, {zp.value + '_in' if zp.vector else zp.value} : i32")
            names.append(f"{v}s" if zp.shifts else f"{v}w")
        elif e != acc:
            lines.append(f"{v}w = arith.extf {v} : {e} to f32")
            names.append(f"{v}w")
        else:
            names.append(v)
    kind = "i" if acc == "i32" else "f"
    return lines + [f"%prod = arith.mul{kind} {names[0]}, {names[1]} : {acc}",
                    f"%sum = arith.add{kind} %acc_in, %prod : {acc}", f"linalg.yield %sum : {acc}"]


class _ZeroPoint:
    """One operand's zero points as the MLIR names them: a scalar i32 `%a_zp`, or per row of A /
    per column of B a `tensor<Mxi32>` constant `%a_zpv` indexed by that dim; how it widens."""

    def __init__(self, p: Params, name: str) -> None:
        self.name = name
        self.values = zero_points(p, name)
        self.vector = (p.a_zp_per if name == "a" else p.b_zp_per) != "tensor"
        self.unsigned = p.a_unsigned if name == "a" else p.b_unsigned
        self.dim = "m" if name == "a" else "n"
        self.value = f"%{name}_zpv" if self.vector else f"%{name}_zp"
        self.type = f"tensor<{len(self.values)}xi32>" if self.vector else "i32"
        self.widen = "arith.extui" if self.unsigned else "arith.extsi"
        # whether the operand needs a widening of its own before a named op (a zero point to
        # subtract, or a u8 operand that named ops would sign-extend)
        self.shifts = self.vector or self.values != [0]
        self.widens = self.shifts or self.unsigned

    def constants(self) -> list[str]:
        if self.vector:
            return [f"{self.value} = arith.constant dense<[{', '.join(map(str, self.values))}]> : {self.type}"]
        return [f"{self.value} = arith.constant {self.values[0]} : i32"] if self.shifts else []


def _dequantize(p: Params, sh: "_Shapes", zp: _ZeroPoint, value: str, dims: list[str], constants: list[str]) -> dict:
    """`iree_linalg_ext.dequantize_affine` of one stored operand: (q - zero point) * scale in f32,
    the zero point an i64 scalar (as ONNX's importer writes it) or a per-row / per-column i32
    vector, a u8 operand marked `input_unsigned`."""
    name, scale = zp.name, QDQ_SCALES[0 if zp.name == "a" else 1]
    constants.append(f"%{name}_scale = arith.constant {scale!r} : f32")
    if zp.vector:
        constants.append(f"%{name}_zpq = arith.constant dense<[{', '.join(map(str, zp.values))}]> : {zp.type}")
    else:
        constants.append(f"%{name}_zpq = arith.constant {zp.values[0]} : i64")
    whole = _map(dims, dims)
    lo, hi = (0, U8_MAX) if zp.unsigned else (I8_MIN, I8_MAX)
    return {"res": f"%{name}_real", "sizes": sh.sizes(dims), "out_type": sh.type(dims, "f32"),
            "ins": [value, f"%{name}_scale", f"%{name}_zpq"],
            "in_types": [sh.type(dims, "i8"), "f32", zp.type if zp.vector else "i64"],
            "maps": [whole, _map(dims, []), _map(dims, [zp.dim] if zp.vector else []), whole],
            "attrs": f"quant_min = {lo}, quant_max = {hi}" + (", input_unsigned" if zp.unsigned else "")}


def _rescale(sh: "_Shapes", c_dims: list[str]) -> dict:
    """The qdq form's f32 result (the scales' product times the integer one) back to i32: exact,
    the integer result being below 2^24 and the scales powers of two."""
    inverse = 1.0 / (QDQ_SCALES[0] * QDQ_SCALES[1])
    lines = [f"%inv = arith.constant {inverse!r} : f32", "%xi = arith.mulf %x, %inv : f32",
             "%r = arith.fptosi %xi : f32 to i32", "linalg.yield %r : i32"]
    return _elementwise(sh, "%res", [("%mm", c_dims, "f32")], c_dims, "i32", lines)


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
