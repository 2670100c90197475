"""The intloop family's StableHLO spelling: a `stablehlo.while` carrying the i32 trip counter and
the state, as JAX exports `lax.fori_loop`: the condition compares the counter with the trip count
(`compare LT ... SIGNED`, the count a constant or the argument), the body applies the steps with
`shift_left` / `shift_right_logical` / `shift_right_arithmetic` (saturating from the bit width on,
as StableHLO's lowering and XLA define them: no select written), `and` / `or` / `xor` / `add` and
`popcnt`, a constant or the counter (`convert` to the element type) broadcast to the state's shape
(`dynamic_broadcast_in_dim` when a dim is `?`), and adds one to the counter."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.intloop.params import Params, arguments, steps_of
from shapefuzz.families.stablehlo_ir import HV, HloBuilder, boundary_values
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary

_OPS = {"shl": "shift_left", "shr_u": "shift_right_logical", "shr_s": "shift_right_arithmetic", "and": "and",
        "or": "or", "xor": "xor", "add": "add"}


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    args = boundary_values(bnd, [shape for shape, _ in arguments(p)], ["%x", "%y", "%trips"])
    x, y = args[0], args[1]
    trips = args[2] if p.trips_input else b.const(p.trips, "i32")
    zero = b.const(0, "i32")
    # the loop's body: its own builder, over the block's arguments (values of the outer scope are visible)
    body = HloBuilder(first_name=1000)
    i, s = HV("%i", (), "i32"), HV("%s", x.dims, x.elt)
    state = s
    for step in steps_of(p):
        if step.op == "popcnt":
            state = body.unary("popcnt", state, "pop")
            continue
        if step.operand == "y":
            operand = y
        elif step.operand == "i":
            operand = body.spread(body.convert(i, x.elt, "ctr"), state)
        else:
            operand = body.splat(step.constant, state)
        state = body.binary(_OPS[step.op], state, operand, step.op)
    one = body.const(1, "i32")
    nxt = body.binary("add", i, one, "next")
    loop = b.fresh("loop")
    inner = "\n".join("    " + line for text in body.body for line in text.splitlines())
    b.line(f"{loop}:2 = stablehlo.while(%i = {zero.name}, %s = {x.name}) : tensor<i32>, {x.type}\n"
           f"  cond {{\n"
           f"    %go = stablehlo.compare LT, %i, {trips.name}, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
           f"    stablehlo.return %go : tensor<i1>\n"
           f"  }} do {{\n{inner}\n"
           f"    stablehlo.return {nxt.name}, {state.name} : tensor<i32>, {x.type}\n"
           f"  }}")
    shape, _ = bnd.results[0]
    return b.render(args, [b.bridge(HV(f"{loop}#1", x.dims, x.elt), shape)])


SPELLING = Spelling("intloop", "stablehlo", lambda p: True, lambda p: p.replace(form="for"), _build)
