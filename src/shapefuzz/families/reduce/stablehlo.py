"""The reduce family's StableHLO spelling, as JAX exports `jnp.sum` / `max` / `min` / `argmax`:

- sum / max / min: one `stablehlo.reduce ... applies stablehlo.add|maximum|minimum` over the dims,
  from 0 / -inf / +inf (the integer extremes for i32); an f16 sum accumulated in f32 converts its
  input first;
- argmax / argmin: a variadic `stablehlo.reduce` of the values and an iota along the dim
  (`dynamic_iota` when a dim is `?`), whose reducer keeps the larger (smaller) value and, on a
  tie, the lower index; the index is converted to the case's index type;
- keepdims: the reduced value broadcast back with unit dims (`broadcast_in_dim`, or
  `dynamic_broadcast_in_dim` when a kept dim is `?`: 3.13 lowers no `dynamic_reshape`)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.reduce.params import ARG_KINDS, Params, kept
from shapefuzz.families.stablehlo_ir import HV, DimSource, HloBuilder, boundary_values, scalar_type
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary

_LOWEST = {"f32": float("-inf"), "f16": float("-inf"), "i32": -(1 << 31)}
_HIGHEST = {"f32": float("inf"), "f16": float("inf"), "i32": (1 << 31) - 1}
_COMBINE = {"sum": "add", "max": "maximum", "min": "minimum"}


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic")


def _reduced(b: HloBuilder, p: Params, x: HV) -> list[HV]:
    keep = kept(p)
    dims = ", ".join(map(str, p.dims))
    out_dims = [x.dims[i] for i in keep]
    if p.kind not in ARG_KINDS:
        init = b.const(0 if p.kind == "sum" else (_LOWEST if p.kind == "max" else _HIGHEST)[p.dtype], x.elt)
        y = b.value(p.kind, out_dims, x.elt)
        b.line(f"{y.name} = stablehlo.reduce({x.name} init: {init.name}) applies stablehlo.{_COMBINE[p.kind]} "
               f"across dimensions = [{dims}] : ({x.type}, {init.type}) -> {y.type}")
        return [y]
    idx_elt = p.index_dtype
    parts: list[DimSource] = [(x, i) for i in range(x.rank)]
    iota = b.iota(parts, p.dims[0], idx_elt)
    init = b.const((_LOWEST if p.kind == "argmax" else _HIGHEST)[p.dtype], x.elt)
    zero = b.const(0, idx_elt)
    v, i = b.value("val", out_dims, x.elt), b.value("idx", out_dims, idx_elt)
    pair = b.fresh("arg")
    st, it = scalar_type(x.elt), scalar_type(idx_elt)
    kind = "FLOAT" if x.elt.startswith("f") else "SIGNED"
    better = "GT" if p.kind == "argmax" else "LT"
    b.line(f"{pair}:2 = stablehlo.reduce({x.name} init: {init.name}), ({iota.name} init: {zero.name}) across "
           f"dimensions = [{dims}] : ({x.type}, {iota.type}, {st}, {it}) -> ({v.type}, {i.type})\n"
           f" reducer(%a: {st}, %c: {st}) (%ai: {it}, %ci: {it}) {{\n"
           f"  %better = stablehlo.compare {better}, %a, %c, {kind} : ({st}, {st}) -> tensor<i1>\n"
           f"  %tie = stablehlo.compare EQ, %a, %c, {kind} : ({st}, {st}) -> tensor<i1>\n"
           f"  %lower = stablehlo.compare LT, %ai, %ci, SIGNED : ({it}, {it}) -> tensor<i1>\n"
           f"  %tie_lower = stablehlo.and %tie, %lower : tensor<i1>\n"
           f"  %pick = stablehlo.or %better, %tie_lower : tensor<i1>\n"
           f"  %v = stablehlo.select %pick, %a, %c : tensor<i1>, {st}\n"
           f"  %j = stablehlo.select %pick, %ai, %ci : tensor<i1>, {it}\n"
           f"  stablehlo.return %v, %j : {st}, {it}\n"
           f"}}")
    v, i = HV(f"{pair}#0", v.dims, v.elt), HV(f"{pair}#1", i.dims, i.elt)
    return [v, i] if p.use == "both" else [i]


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    (arg,) = boundary_values(bnd, [list(p.shape)], ["%input"])
    x = b.convert(arg, p.acc, "wide") if p.acc else arg
    outs = []
    for y, (shape, elt) in zip(_reduced(b, p, x), bnd.results):
        if p.keepdims:  # unit dims back in the reduced dims' places
            keep = kept(p)
            parts: list[DimSource] = [1 if d in p.dims else (y, keep.index(d)) for d in range(p.rank)]
            y = b.broadcast(y, parts, keep, "kept")
        outs.append(b.bridge(b.convert(y, elt, "res"), shape))
    return b.render([arg], outs)


SPELLING = Spelling("reduce", "stablehlo", lambda p: True, _normalize, _build)
