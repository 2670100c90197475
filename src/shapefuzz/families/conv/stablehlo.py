"""The conv family's StableHLO spelling: one `stablehlo.convolution`, as JAX exports
`lax.conv_general_dilated`, with dimension numbers naming the boundary layout's own dims (any
permutation of input, filter and output dims: no transposes for regular and depthwise cases),
window strides, `rhs_dilate` for the dilations, zero padding as the window's `pad` (any other
padding value, or the input's zero point, as a `stablehlo.pad` first), and `feature_group_count`:

- regular: input feature `c`, kernel `[.., c, f]` as `i` / `o`;
- depthwise: `feature_group_count = C`, the filter given a unit `i` dim by `broadcast_in_dim`;
- grouped / depthwise with a multiplier: the group dim merged into the feature dim
  (`transpose` + `reshape`, group-major as StableHLO splits features) and split back after;
- f16 (i8) operands with an f32 (i32) accumulator: a mixed-precision convolution (JAX's
  `preferred_element_type`); zero points: widened to i32 and shifted by a splat first;
- bias: broadcast to the output along its dims and added; relu: `maximum` with zero.

Not written (3.13 does not lower them: "failed to legalize operation 'stablehlo.convolution'"
with a `?` spatial dim, or with `feature_group_count` > 1 and a `?` batch; and no
`stablehlo.dynamic_reshape`, which a grouped case's merge needs): a `?` spatial or kernel dim, and
any `?` dim in a grouped or depthwise case. (A depthwise one with a `?` input feature dim makes
3.13 build an invalid `linalg.generic`: tests/families/test_stablehlo_spellings.py.)"""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.common import np_dtype
from shapefuzz.families.conv.params import LAYOUTS, Params, boundary_labels, filter_labels, output_labels
from shapefuzz.families.conv.shapes import bias_labels, bias_shape, filter_shape, input_shape, out_spatial
from shapefuzz.families.stablehlo_ir import HV, DimSource, HloBuilder, boundary_values
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary


def _expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    b_in, b_f, _ = boundary_labels(p)
    spatial = any(d for lab, d in zip(b_in, p.input_dyn) if lab[0] == "s") or \
        any(d for lab, d in zip(b_f, p.filter_dyn) if lab[0] == "k")
    grouped = p.kind != "regular" and (any(p.input_dyn) or any(p.filter_dyn))
    return not spatial and not grouped and not p.result_dyn


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    lay = LAYOUTS[p.layout]
    out, filt = output_labels(lay), filter_labels(lay)
    loops = len(out) + len([lab for lab in filt if lab not in out])  # parallel + reduction
    any_pad = any(p.pad_lo) or any(p.pad_hi)
    return p.replace(compute_layout=p.layout, form="named" if lay.named_op else "generic",
                     loop_perm=[] if lay.named_op else list(range(loops)), perm_compute=False,
                     pad_form="pad" if any_pad else "none", pad_value=p.pad_value if any_pad else 0,
                     bias="epilogue" if p.bias != "none" else "none")


def _numbers(labels: list[str], roles: dict[str, str]) -> str:
    """One operand's dimension numbers: each dim's role (`b`, `f`, `i`, `o`) or spatial index."""
    return "[" + ", ".join(roles.get(lab, lab[1:]) for lab in labels) + "]"


def _grouped_operand(b: HloBuilder, x: HV, labels: list[str], order: list[str], at: int,
                     stem: str) -> tuple[HV, list[str]]:
    """x transposed to `order` and its dims `at`, `at + 1` merged (static: a plain reshape)."""
    x = b.transpose(x, [labels.index(lab) for lab in order], stem + "_t")
    sizes = x.sizes
    merged: list[DimSource] = [*sizes[:at], sizes[at] * sizes[at + 1], *sizes[at + 2:]]
    return b.reshape(x, merged, stem + "_m"), order[:at] + ["merged"] + order[at + 2:]


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    sizes = [input_shape(p), filter_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    args = boundary_values(bnd, sizes, ["%input", "%filter", "%bias"])
    x, w = args[0], args[1]
    b_in, b_f, b_out = boundary_labels(p)
    rank, kind = p.rank, p.kind
    spatial_in, spatial_k, spatial_o = ([f"{c}{i}" for i in range(rank)] for c in "sko")
    # zero points: widen and shift (the padding is then the shifted pad value)
    pad_value: float | int = np_dtype(p.dtype).type(p.pad_value).item()
    if p.input_zp or p.filter_zp:
        x = b.convert(x, "i32", "x_wide")
        w = b.convert(w, "i32", "w_wide")
        x = b.binary("subtract", x, b.splat(p.input_zp, x), "x_shift") if p.input_zp else x
        w = b.binary("subtract", w, b.splat(p.filter_zp, w), "w_shift") if p.filter_zp else w
        pad_value -= p.input_zp
    in_labels, f_labels = list(b_in), list(b_f)
    groups = 1
    if kind == "grouped":
        x, in_labels = _grouped_operand(b, x, in_labels, ["n", "g", "c", *spatial_in], 1, "x")
        w, f_labels = _grouped_operand(b, w, f_labels, ["g", "f", "c", *spatial_k], 0, "w")
        in_roles, f_roles = {"n": "b", "merged": "f"}, {"merged": "o", "c": "i"}
        groups = p.g
    elif kind == "depthwise_m":
        w, f_labels = _grouped_operand(b, w, f_labels, ["c", "m", *spatial_k], 0, "w")
        w = b.broadcast(w, [*[(w, i) for i in range(w.rank)], 1], list(range(w.rank)), "w_unit")
        f_labels = f_labels + ["unit"]
        in_roles, f_roles = {"n": "b", "c": "f"}, {"merged": "o", "unit": "i"}
        groups = p.c
    elif kind == "depthwise":
        w = b.broadcast(w, [*[(w, i) for i in range(w.rank)], 1], list(range(w.rank)), "w_unit")
        f_labels = f_labels + ["unit"]
        in_roles, f_roles = {"n": "b", "c": "f"}, {"c": "o", "unit": "i"}
        groups = p.c
    else:
        in_roles, f_roles = {"n": "b", "c": "f"}, {"c": "i", "f": "o"}
    lo, hi = list(p.pad_lo), list(p.pad_hi)
    if (any(lo) or any(hi)) and pad_value != 0:  # a padding value the window's zeros cannot give
        low = [lo[int(lab[1:])] if lab[0] == "s" else 0 for lab in in_labels]
        high = [hi[int(lab[1:])] if lab[0] == "s" else 0 for lab in in_labels]
        x = b.pad(x, b.const(pad_value, x.elt), low, high, "padded")
        lo, hi = [0] * rank, [0] * rank
    acc = "i32" if p.input_zp or p.filter_zp else p.acc
    # the convolution's own output: the boundary's order for regular / depthwise cases
    if kind in ("regular", "depthwise"):
        out_labels = list(b_out)
        out_roles = {"n": "b", "f": "f", "c": "f"}
    else:
        out_labels = ["n", "merged", *spatial_o]
        out_roles = {"n": "b", "merged": "f"}
    outs = out_spatial(p)
    n_dim = x.dims[in_labels.index("n")]
    feat = w.dims[next(i for i, lab in enumerate(f_labels) if f_roles.get(lab) == "o")]
    dims = [n_dim if lab == "n" else (outs[int(lab[1:])], False) if lab[0] == "o" else feat for lab in out_labels]
    y = b.value("conv", dims, acc)
    window = (f"stride = [{', '.join(map(str, p.strides))}], "
              f"pad = [{', '.join(f'[{a}, {c}]' for a, c in zip(lo, hi))}], rhs_dilate = [{', '.join(map(str, p.dilations))}]")
    b.line(f"{y.name} = stablehlo.convolution({x.name}, {w.name}) dim_numbers = {_numbers(in_labels, in_roles)}x"
           f"{_numbers(f_labels, f_roles)}->{_numbers(out_labels, out_roles)}, window = {{{window}}} "
           f"{{batch_group_count = 1 : i64, feature_group_count = {groups} : i64}} : ({x.type}, {w.type}) -> {y.type}")
    if kind in ("grouped", "depthwise_m"):  # split the merged features back, then to the boundary order
        a, c = ("g", "f") if kind == "grouped" else ("c", "m")
        split: list[DimSource] = [y.sizes[0], p[a], p[c], *outs]
        y = b.reshape(y, split, "split")
        y = b.transpose(y, [["n", a, c, *spatial_o].index(lab) for lab in b_out], "y_t")
    if p.bias != "none":
        bias = args[2]
        labs = sorted(bias_labels(kind), key=b_out.index)  # broadcast_in_dim's dims in increasing order
        bias = b.transpose(bias, [bias_labels(kind).index(lab) for lab in labs], "bias_t")
        parts: list[DimSource] = [(y, i) for i in range(y.rank)]
        y = b.binary("add", y, b.broadcast(bias, parts, [b_out.index(lab) for lab in labs], "bias"), "biased")
    if p.epilogue == "relu":
        y = b.binary("maximum", y, b.splat(0, y), "relu")
    shape, _ = bnd.results[0]
    return b.render(args, [b.bridge(y, shape)])


SPELLING = Spelling("conv", "stablehlo", _expressible, _normalize, _build)
