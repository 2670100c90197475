"""The forward-convolution family: 1-D, 2-D and 3-D convolutions in every layout linalg names.

A case is a convolution described once, abstractly (batch `n`, groups `g`, channels per group
`c`, filters per group `f`, depthwise multiplier `m`, spatial sizes, kernel, strides, dilations,
paddings), plus the choices that do not change what it computes:

- `layout`: the layout at the function boundary (e.g. "nchw_fchw"), from `LAYOUTS`;
- `compute_layout`: the layout the convolution itself runs in; when it differs from `layout`,
  `linalg.transpose` ops convert at the function boundary (same label sets, another order);
- `form`: "named" (the `linalg.conv_*` / `linalg.depthwise_conv_*` op) or "generic" (an equivalent
  `linalg.generic` whose loops are permuted by `loop_perm`);
- `pad_form`: "none" (no padding op; only when all pads are 0), "pad" (`tensor.pad`) or "insert"
  (`linalg.fill` of the padded shape and `tensor.insert_slice`);
- `bias`: "none", "epilogue" (added after the convolution) or "init" (broadcast into the
  accumulator before it);
- for a quantized i8 case, `input_zp` / `filter_zp` (the `_q` named ops, subtracted in the
  generic's body, or operands shifted before a named op without a `_q` twin) and `qdq` (both
  through `iree_linalg_ext.dequantize_affine` into an f32 conv, scaled back to i32).

The Python side computes types, maps and SSA names; `templates/conv.mlir.j2` lays out the IR.
The NumPy reference works on one canonical form: input [n, G, C, *spatial], filter
[G, F, C, *kernel], output [n, G, F, *out] (a plain convolution is G = 1; a depthwise one is
G = channels, C = 1, F = multiplier)."""

from __future__ import annotations

from shapefuzz.families.base import LINALG, Family
from shapefuzz.families.gates import ReleaseGate
from shapefuzz.families.conv.forms import (
    FEATURES, canonical_loop_perm, equivalent_forms, features, is_valid, with_changes)
from shapefuzz.families.conv.params import (
    DTYPES, KINDS, LAYOUTS, QUANTIZED_OPS, Layout, Params, boundary_labels, filter_labels, input_labels, layouts_for,
    output_labels, permuted)
from shapefuzz.families.conv.reference import compare, export_rule, make_inputs, reference
from shapefuzz.families.conv.operands import operand_forms
from shapefuzz.families.conv.render import render
from shapefuzz.families.conv.shapes import (
    bias_labels, bias_shape, compute_labels, declared_out_dyn, filter_shape, input_shape, label_size, loop_labels,
    out_dyn, out_size, out_spatial, output_shape, reduction_size)
from shapefuzz.families.conv.shrink import SWARM, shrink_candidates
from shapefuzz.families.conv.strategy import (
    BATCH, BIG_CHANNELS, BIG_SPATIAL, CHANNELS, DILATION, KERNEL, LARGE_CHANNELS, LARGE_MAX_INPUT_BYTES,
    LARGE_MIN_INPUT_BYTES, LARGE_SPATIAL, MAX_MACS, MAX_MACS_BIG, PAD, SPATIAL, STRIDE, macs, params_from_seed,
    pick, strategy)


def _quantized_example(**changes) -> Params:
    """A small quantized NCHW conv (the release gates' example)."""
    return Params.from_json({
        "rank": 2, "kind": "regular", "layout": "nchw_fchw", "compute_layout": "nchw_fchw", "form": "named",
        "loop_perm": [], "dtype": "i8", "acc": "i32", "n": 1, "g": 1, "c": 2, "f": 2, "m": 1, "spatial": [3, 3],
        "kernel": [2, 2], "strides": [1, 1], "dilations": [1, 1], "pad_lo": [0, 0], "pad_hi": [0, 0],
        "pad_form": "none", "pad_value": 0, "input_dyn": [False] * 4, "filter_dyn": [False] * 4, "bias": "none",
        "epilogue": "none", "big": False, "input_zp": -1, "filter_zp": 1, **changes})


# The quantized forms (issue 45): the `_q` named ops, IREE's affine dequantize (the qdq form) and
# PT2E's dequantize in torch; a release that does not parse one gets the same integers another way.
RELEASE_GATES = (
    ReleaseGate("form named _q", "the linalg.conv_*_q named ops",
                lambda p: (p.form == "named" and not p.qdq and bool(p.input_zp or p.filter_zp)
                           and p.compute_layout in QUANTIZED_OPS and p.frontend == LINALG),
                _quantized_example, instead=lambda p: p.replace(form="generic", loop_perm=canonical_loop_perm(p))),
    ReleaseGate("form qdq", "iree_linalg_ext.dequantize_affine", lambda p: p.qdq and p.frontend == LINALG,
                lambda: _quantized_example(qdq=True), instead=lambda p: p.replace(qdq=False)),
    ReleaseGate("torch qdq spelling", "torch.quantized_decomposed.dequantize_per_tensor",
                lambda p: p.qdq and p.frontend == "torch", lambda: _quantized_example(qdq=True, frontend="torch"),
                instead=lambda p: p.replace(frontend=LINALG)),
)
RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "pad:zero")


def largest_operand(p: Params) -> list[int]:
    return input_shape(p)


# One small case of each root-operand form (its release gate's example; tests compile each).
_SMALL = {"rank": 2, "kind": "regular", "layout": "nhwc_hwcf", "compute_layout": "nchw_fchw", "form": "named",
          "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 2, "f": 3, "m": 1, "spatial": [4, 3],
          "kernel": [2, 2], "strides": [1, 1], "dilations": [1, 1], "pad_lo": [0, 1], "pad_hi": [0, 0],
          "pad_form": "pad", "pad_value": 0, "input_dyn": [True, False, False, False],
          "filter_dyn": [False, False, False, False], "bias": "none", "epilogue": "none", "big": False}
OPERAND_EXAMPLES = {
    "const": {**_SMALL, "operand": "const"},
    "scalar": {**_SMALL, "dtype": "i32", "acc": "i32", "epilogue": "relu", "operand": "scalar"},
    "folded": {**_SMALL, "bias": "epilogue", "filter_dyn": [False, False, True, False], "operand": "folded"},
}
EXAMPLE = {"rank": 1, "kind": "depthwise", "layout": "nwc_wc", "compute_layout": "nwc_wc", "form": "named",
           "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 2, "g": 1, "c": 4, "f": 1, "m": 1, "spatial": [2],
           "kernel": [1], "strides": [1], "dilations": [1], "pad_lo": [3], "pad_hi": [1], "pad_form": "pad",
           "pad_value": 0, "in_dyn": {"n": True, "s0": False, "c": False}, "filt_dyn": {"k0": False, "c": False},
           "bias": "epilogue", "epilogue": "relu", "big": False}
FEATURE_DRAWS = 300
FAMILY = Family.define("conv", Params, globals())

__all__ = ['BATCH', 'BIG_CHANNELS', 'BIG_SPATIAL', 'CHANNELS', 'DILATION', 'DTYPES', 'FAMILY', 'FEATURES', 'KERNEL', 'KINDS', 'LARGE_CHANNELS', 'LARGE_MAX_INPUT_BYTES', 'LARGE_MIN_INPUT_BYTES', 'LARGE_SPATIAL', 'LAYOUTS', 'Layout', 'MAX_MACS', 'MAX_MACS_BIG', 'PAD', 'Params', 'SPATIAL', 'STRIDE', 'SWARM', 'bias_labels', 'bias_shape', 'boundary_labels', 'canonical_loop_perm', 'compare', 'compute_labels', 'declared_out_dyn', 'equivalent_forms', 'export_rule', 'features', 'filter_labels', 'filter_shape', 'input_labels', 'input_shape', 'is_valid', 'label_size', 'layouts_for', 'loop_labels', 'macs', 'make_inputs', 'out_dyn', 'out_size', 'out_spatial', 'output_labels', 'output_shape', 'params_from_seed', 'permuted', 'pick', 'reduction_size', 'reference', 'render', 'shrink_candidates', 'strategy', 'with_changes', 'RELEASE_GATES', 'QUANTIZED_OPS', 'operand_forms', 'OPERAND_EXAMPLES']
