"""The scatter family's StableHLO spelling: one `stablehlo.scatter` with the case's full dimension
numbers, as JAX exports `x.at[idx].set/add/...`: `scatter_dims_to_operand_dims` is the
dimension_map, the indexed dims are `inserted_window_dims`, the updates' window dims are
`update_window_dims` after their batch dims, `index_vector_dim` the last index dim (the rank for
an implicit depth). The update computation is the combiner (`add`, `subtract`, `maximum`,
`minimum`, `multiply` of the current value and the update; the update alone to overwrite).
`unique_indices` is the case's `unique` (never set where the inputs repeat a coordinate, and
those cases only take combiners whose result does not depend on the order: the family's rule);
`indices_are_sorted = false`: the indices are drawn in any order."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.scatter.params import Params, shape_table
from shapefuzz.families.stablehlo_ir import HloBuilder, boundary_values, int_list, region, scalar_type
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary

_COMBINE = {"add": "add", "sub": "subtract", "max": "maximum", "min": "minimum", "mul": "multiply"}


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="linalg_ext")



def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    table = shape_table(p)
    sizes = [[s for s, _ in table[k]] for k in ("original", "indices", "updates")]
    orig, idx, upd = boundary_values(bnd, sizes, ["%original", "%indices", "%updates"])
    nb, r, d = len(p.batch_shape), len(p.orig_shape), p.depth
    st = scalar_type(orig.elt)
    if p.combiner == "overwrite":
        body, result = [], "%update"
    else:
        body, result = [f"%combined = stablehlo.{_COMBINE[p.combiner]} %current, %update : {st}"], "%combined"
    computation = region([("%current", st), ("%update", st)], body, [(result, st)])
    out = b.value("scattered", orig.dims, orig.elt)
    numbers = (f"update_window_dims = {int_list(list(range(nb, nb + r - d)))}, inserted_window_dims = {int_list(list(range(d)))}, "
               f"scatter_dims_to_operand_dims = {int_list(list(p.dimension_map))}, index_vector_dim = {nb}")
    b.line(f'{out.name} = "stablehlo.scatter"({orig.name}, {idx.name}, {upd.name}) <{{indices_are_sorted = false, '
           f'scatter_dimension_numbers = #stablehlo.scatter<{numbers}>, unique_indices = {"true" if p.unique else "false"}}}> '
           f'{computation} : ({orig.type}, {idx.type}, {upd.type}) -> {out.type}')
    shape, _ = bnd.results[0]
    return b.render([orig, idx, upd], [b.bridge(out, shape)])


SPELLING = Spelling("scatter", "stablehlo", lambda p: True, _normalize, _build)
