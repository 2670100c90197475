"""The gather family's StableHLO spelling: one `stablehlo.gather` with the case's full dimension
numbers, as JAX exports `x[idx]` / `lax.gather`: `start_index_map` is the dimension_map (index
column j addresses source dim dimension_map[j]), the indexed dims are `collapsed_slice_dims` with
slice size 1, the window dims are whole slices at the result's `offset_dims` after the batch dims.
The index layout is the gather's own: `index_vector_dim` is the last dim ([B..., depth]), the
rank (an implicit depth: [B...]) or 0 (the transposed layout [depth, B...], no transpose op); the
strided layout's rows are taken by a stride-2 `stablehlo.slice`. `indices_are_sorted = false`:
the indices are drawn in any order. Not written: a `?` window dim (slice sizes are static), a
strided layout with a `?` index dim (a static slice needs static limits)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.gather.params import Params, arg_index_dyn, arg_index_shape
from shapefuzz.families.stablehlo_ir import HV, HloBuilder, boundary_values, int_list
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary


def _expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return not any(p.src_dyn[p.depth:]) and not (p.index_layout == "strided" and any(arg_index_dyn(p)))


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="linalg_ext")



def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    src, idx = boundary_values(bnd, [list(p.src_shape), arg_index_shape(p)], ["%source", "%indices"])
    nb, r = len(p.batch_shape), len(p.src_shape)
    vector_dim = 0 if p.index_layout == "transposed" else nb
    used = idx
    if p.index_layout == "strided":  # every other row of the first index dim
        rows = HV(b.fresh("rows"), ((p.batch_shape[0], False),) + idx.dims[1:], idx.elt)
        limits = ", ".join(f"0:{s}" + (":2" if i == 0 else "") for i, (s, _) in enumerate(idx.dims))
        b.line(f"{rows.name} = stablehlo.slice {idx.name} [{limits}] : ({idx.type}) -> {rows.type}")
        used = rows
    batch_dims = [d for i, d in enumerate(used.dims) if i != vector_dim or p.implicit_depth][:nb]
    out = b.value("gathered", list(batch_dims) + list(src.dims[p.depth:]), src.elt)
    window = list(range(nb, nb + r - p.depth))
    numbers = (f"offset_dims = {int_list(window)}, collapsed_slice_dims = {int_list(list(range(p.depth)))}, "
               f"start_index_map = {int_list(list(p.dimension_map))}, index_vector_dim = {vector_dim}")
    sizes = ", ".join(map(str, [1] * p.depth + list(p.src_shape[p.depth:])))
    b.line(f'{out.name} = "stablehlo.gather"({src.name}, {used.name}) <{{dimension_numbers = #stablehlo.gather<{numbers}>, '
           f'indices_are_sorted = false, slice_sizes = array<i64: {sizes}>}}> : ({src.type}, {used.type}) -> {out.type}')
    shape, _ = bnd.results[0]
    return b.render([src, idx], [b.bridge(out, shape)])


SPELLING = Spelling("gather", "stablehlo", _expressible, _normalize, _build)
