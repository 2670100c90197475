"""The intloop family's MLIR: an `scf.for` (or `scf.while` on an i32 counter) whose body is one
`linalg.generic` applying the steps element-wise. A shift writes its saturation explicitly
(`arith.shli` and friends are poison from the bit width on): compare the amount unsigned with the
width and select 0, or the sign (`shrsi` by width - 1)."""

from __future__ import annotations

from shapefuzz.families.common import identity_map, tensor_type
from shapefuzz.families.intloop.params import BITS, Params, arguments, steps_of
from shapefuzz.templates import render_template

_ARITH = {"and": "arith.andi", "or": "arith.ori", "xor": "arith.xori", "add": "arith.addi"}
_SHIFT = {"shl": "arith.shli", "shr_u": "arith.shrui", "shr_s": "arith.shrsi"}


def body(p: Params) -> tuple[list[str], str]:
    """The generic's lines, and the value it yields; the state enters as %s0, y as %yv, the trip
    counter (i32) as %i."""
    elt, bits = p.dtype, BITS[p.dtype]
    lines: list[str] = []
    counter = "%i"
    if any(s.operand == "i" for s in steps_of(p)) and elt != "i32":
        counter = "%ctr"
        lines.append(f"%ctr = arith.{'trunci' if bits < 32 else 'extsi'} %i : i32 to {elt}")
    if any(s.op in _SHIFT for s in steps_of(p)):
        lines += [f"%zero_e = arith.constant 0 : {elt}", f"%width = arith.constant {bits} : {elt}",
                  f"%sign_at = arith.constant {bits - 1} : {elt}"]
    state = "%s0"
    for n, step in enumerate(steps_of(p)):
        out = f"%v{n}"
        if step.op == "popcnt":
            lines.append(f"{out} = math.ctpop {state} : {elt}")
            state = out
            continue
        if step.operand == "c":
            operand = f"%k{n}"
            lines.append(f"{operand} = arith.constant {step.constant} : {elt}")
        else:
            operand = "%yv" if step.operand == "y" else counter
        if step.op in _ARITH:
            lines.append(f"{out} = {_ARITH[step.op]} {state}, {operand} : {elt}")
        else:
            lines.append(f"%sh{n} = {_SHIFT[step.op]} {state}, {operand} : {elt}")
            lines.append(f"%in{n} = arith.cmpi ult, {operand}, %width : {elt}")
            if step.op == "shr_s":
                lines.append(f"%sat{n} = arith.shrsi {state}, %sign_at : {elt}")
                lines.append(f"{out} = arith.select %in{n}, %sh{n}, %sat{n} : {elt}")
            else:
                lines.append(f"{out} = arith.select %in{n}, %sh{n}, %zero_e : {elt}")
        state = out
    return lines, state


def render(p: Params) -> str:
    ty = tensor_type(p.shape, p.dtype, p.in_dyn)
    names = ["%x", "%y", "%trips"]
    args = [(names[i], tensor_type(shape, elt, p.in_dyn if shape else [])) for i, (shape, elt) in enumerate(arguments(p))]
    lines, last = body(p)
    dims = [(f"%d{i}", i) for i, d in enumerate(p.in_dyn) if d]
    return render_template(
        "intloop.mlir.j2", args=args, ty=ty, elt=p.dtype, dims=dims, dyn_sizes=[name for name, _ in dims],
        trips=p.trips, trips_input=p.trips_input, form=p.form, body=lines, last=last,
        id_map=identity_map(p.rank), iters=['"parallel"'] * p.rank)
