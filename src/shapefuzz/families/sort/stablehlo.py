"""The sort family's StableHLO spelling, as JAX exports `lax.sort` / `jnp.argsort`: one
`stablehlo.sort` along the dim of the values and the payload (an iota of the index type,
`dynamic_iota` when a dim is `?`, or the labels passed in), whose comparator looks at the values
only (`compare GT|LT ... TOTALORDER` for floats, `SIGNED` for integers); a stable case sets
`is_stable = true`, which keeps equal values in input order, the order its iota payload gives."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.sort.params import Params
from shapefuzz.families.stablehlo_ir import HV, DimSource, HloBuilder, boundary_values, region, scalar_type
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="sort", transpose=False)


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    names = ["%input"] + (["%labels"] if p.payload == "arg" else [])
    args = boundary_values(bnd, [list(p.shape)] * len(names), names)
    x = args[0]
    operands = [x]
    if p.payload == "iota":
        parts: list[DimSource] = [(x, i) for i in range(x.rank)]
        operands.append(b.iota(parts, p.dim, p.index_dtype))
    elif p.payload == "arg":
        operands.append(args[1])
    block = [pair for i, v in enumerate(operands) for pair in ((f"%lhs{i}", scalar_type(v.elt)), (f"%rhs{i}", scalar_type(v.elt)))]
    kind = "TOTALORDER" if x.elt.startswith("f") else "SIGNED"
    st = scalar_type(x.elt)
    body = [f"%before = stablehlo.compare {'GT' if p.descending else 'LT'}, %lhs0, %rhs0, {kind} : ({st}, {st}) -> tensor<i1>"]
    comparator = region(block, body, [("%before", "tensor<i1>")])
    name = b.fresh("sort")
    types = ", ".join(v.type for v in operands)
    b.line(f'{name}:{len(operands)} = "stablehlo.sort"({", ".join(v.name for v in operands)}) <{{dimension = {p.dim} : i64, '
           f'is_stable = {"true" if p.stable else "false"}}}> {comparator} : ({types}) -> ({types})')
    results = []
    if p.use in ("values", "both"):
        results.append(HV(f"{name}#0", x.dims, x.elt))
    if p.use in ("indices", "both"):
        results.append(HV(f"{name}#1", x.dims, operands[1].elt))
    return b.render(args, [b.bridge(b.convert(r, elt, "res"), shape) for r, (shape, elt) in zip(results, bnd.results)])


SPELLING = Spelling("sort", "stablehlo", lambda p: True, _normalize, _build)
