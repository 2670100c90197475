"""conv-transpose (backward-data convolution), in the decompositions frontends emit.

The computation (PyTorch's ConvTranspose, NC<spatial> layout, `r` spatial dims, `G` groups):

    x: [N, G*Ci, H_1..H_r]            the input gradient's source (forward output gradient)
    w: logical [G*Ci, Co, K_1..K_r]   stored in any permutation of those dims (`w_layout`)
    out[n, g*Co+co, s*i + d*k - pad_lo] += x[n, g*Ci+ci, i] * w[g*Ci+ci, co, k]
    O_t = (H_t-1)*s_t + 1 + d_t*(K_t-1) - pad_lo_t - pad_hi_t + out_pad_t

The IR lowers it the way frontends do: zero insertion (a strided `tensor.insert_slice` into a
zero tensor), padding by d*(K-1)-pad on each side (+ output padding on the high side), a filter
flip (by `linalg.index`/`tensor.extract`, or by an indexing map with `K-1-d`) and transpose to a forward layout, group expand/collapse, and a
stride-1 forward convolution (a named linalg op or the equivalent `linalg.generic`).

Formulation keys (all give the same numbers; `equivalent_forms` swaps them):
  form      "named" | "generic"        the forward conv
  flip      "extract" | "map"
  pad_mode  "pad" (insert, then tensor.pad) | "insert" (one strided insert at offset lo)
  zero_dest "fill" | "constant"        the zero tensor x is inserted into (a constant where static)
  x_expand  "early" (group dim split at the function entry) | "late" (right before the conv)
  w_order   "fused" (one generic flips and transposes) | "split" (flip, expand, linalg.transpose)
  fwd_layout  permutation of the forward filter's logical dims [G?, F, C, K_1..K_r]

The NumPy reference is a scatter-add from the definition above, not the decomposition."""

from __future__ import annotations

from shapefuzz.families.base import Family
from shapefuzz.families.conv_transpose.forms import FEATURES, dyn_nc, equivalent_forms, features, simplest_form
from shapefuzz.families.conv_transpose.params import (
    DTYPES, EXPANDS, FAMILY_NAME, FLIPS, FORMS, PAD_MODES, Params, W_ORDERS, ZERO_DESTS)
from shapefuzz.families.conv_transpose.reference import (
    TOLERANCE, compare, export_rule, make_inputs, reference, reference_naive)
from shapefuzz.families.conv_transpose.render import render
from shapefuzz.families.conv_transpose.shapes import (
    X_LAYOUTS, canonical, channel_pos, fwd_labels, is_valid, named_allowed, named_fwd_layouts, out_shape,
    out_sizes, reduction_transposed, w_logical_shape, w_shape, x_shape)
from shapefuzz.families.conv_transpose.shrink import SWARM, shrink_candidates
from shapefuzz.families.conv_transpose.strategy import strategy


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "pad:zero")


def largest_operand(p: Params) -> list[int]:
    return out_shape(p)


EXAMPLE = {"rank": 1, "dtype": "f16", "n": 5, "groups": 1, "ci": 2, "co": 2, "in_size": [1], "kernel": [3],
           "stride": [2], "dilation": [2], "pad_lo": [2], "pad_hi": [0], "out_pad": [0],
           "dyn_x": [True, True, True], "w_layout": [2, 0, 1], "form": "named", "flip": "extract",
           "pad_mode": "pad", "x_expand": "late", "w_order": "fused", "fwd_layout": [0, 1, 2]}
FEATURE_DRAWS = 300
FAMILY = Family.define("conv_transpose", Params, globals())

__all__ = ['DTYPES', 'EXPANDS', 'FAMILY', 'FAMILY_NAME', 'FEATURES', 'FLIPS', 'FORMS', 'PAD_MODES', 'Params', 'SWARM', 'TOLERANCE', 'W_ORDERS', 'X_LAYOUTS', 'ZERO_DESTS', 'canonical', 'channel_pos', 'compare', 'dyn_nc', 'equivalent_forms', 'export_rule', 'features', 'fwd_labels', 'is_valid', 'make_inputs', 'named_allowed', 'named_fwd_layouts', 'out_shape', 'out_sizes', 'reduction_transposed', 'reference', 'reference_naive', 'render', 'shrink_candidates', 'simplest_form', 'strategy', 'w_logical_shape', 'w_shape', 'x_shape']
