"""The conv_transpose family's StableHLO spelling, as JAX exports `lax.conv_transpose` with
`transpose_kernel=True`: one `stablehlo.convolution` of the input dilated by the strides
(`lhs_dilate`), the filter's spatial dims reversed (`stablehlo.reverse`) and its input / output
feature dims swapped in the dimension numbers, `rhs_dilate` the dilations, padding
d * (k - 1) - pad_lo low and d * (k - 1) - pad_hi + output_padding high (negative where the
transposed conv crops more than the kernel overhangs). Groups: `feature_group_count`, the filter's
[G * Ci, Co] regrouped into [G * Co, Ci] (`reshape` + `transpose`). Either input layout (the
dimension numbers name it). Not written (3.13 lowers no convolution with a `?` spatial dim, nor a
grouped one with a `?` batch): a `?` spatial dim, a `?` dim of a grouped case."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import named_allowed, out_sizes, w_shape, x_shape
from shapefuzz.families.stablehlo_ir import HV, DimSource, HloBuilder, boundary_values
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary


def _expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    spatial = [i for i in range(p.rank + 2) if i != 0 and i != (1 if p.x_layout == "nc" else p.rank + 1)]
    return not any(p.input_dyn[i] for i in spatial) and not (p.groups > 1 and any(p.input_dyn))


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    n_fwd = (3 if p.groups > 1 else 2) + p.rank
    return p.replace(form="named" if named_allowed(p) else "generic", flip="extract", pad_mode="pad",
                     x_expand="late", w_order="fused", fwd_layout=list(range(n_fwd)), zero_dest="fill")


def _kernel(b: HloBuilder, p: Params, w: HV) -> tuple[HV, list[str]]:
    """The forward kernel, spatially reversed, and each of its dims' role (`i`, `o` or a spatial index)."""
    logical = ["i", "o", *map(str, range(p.rank))]  # the stored filter's [G*Ci, Co, K...]
    if p.groups > 1:  # [G*Ci, Co, K...] -> [G, Ci, Co, K...] -> [G, Co, Ci, K...] -> [G*Co, Ci, K...]
        w = b.transpose(w, [p.w_layout.index(i) for i in range(len(logical))], "w_logical")
        parts: list[DimSource] = [p.groups, p.ci, p.co, *p.kernel]
        w = b.reshape(w, parts, "w_groups")
        w = b.transpose(w, [0, 2, 1, *range(3, 3 + p.rank)], "w_swap")
        w = b.reshape(w, [p.groups * p.co, p.ci, *p.kernel], "w_fwd")
        roles = ["o", "i", *map(str, range(p.rank))]
    else:
        roles = [logical[i] for i in p.w_layout]
    spatial = [i for i, r in enumerate(roles) if r.isdigit()]
    out = b.value("w_rev", w.dims, w.elt)
    b.line(f"{out.name} = stablehlo.reverse {w.name}, dims = [{', '.join(map(str, spatial))}] : {w.type}")
    return out, roles


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    x, w = boundary_values(bnd, [x_shape(p), w_shape(p)], ["%x", "%w"])
    kernel, k_roles = _kernel(b, p, w)
    spatial = list(map(str, range(p.rank)))
    io = ["b", "f", *spatial] if p.x_layout == "nc" else ["b", *spatial, "f"]
    lo = [d * (k - 1) - a for d, k, a in zip(p.dilations, p.kernel, p.pad_lo)]
    hi = [d * (k - 1) - a + o for d, k, a, o in zip(p.dilations, p.kernel, p.pad_hi, p.out_pad)]
    sizes = out_sizes(p)
    channels = (p.groups * p.co, False)
    dims = [x.dims[0], channels, *[(s, False) for s in sizes]] if p.x_layout == "nc" else \
        [x.dims[0], *[(s, False) for s in sizes], channels]
    y = b.value("convt", dims, x.elt)
    window = (f"stride = [{', '.join(['1'] * p.rank)}], pad = [{', '.join(f'[{a}, {c}]' for a, c in zip(lo, hi))}], "
              f"lhs_dilate = [{', '.join(map(str, p.strides))}], rhs_dilate = [{', '.join(map(str, p.dilations))}]")
    b.line(f"{y.name} = stablehlo.convolution({x.name}, {kernel.name}) dim_numbers = [{', '.join(io)}]x"
           f"[{', '.join(k_roles)}]->[{', '.join(io)}], window = {{{window}}} "
           f"{{batch_group_count = 1 : i64, feature_group_count = {p.groups} : i64}} : ({x.type}, {kernel.type}) -> {y.type}")
    shape, _ = bnd.results[0]
    return b.render([x, w], [b.bridge(y, shape)])


SPELLING = Spelling("conv_transpose", "stablehlo", _expressible, _normalize, _build)
