"""The gather family: `iree_linalg_ext.gather` of a source's leading 1-2 dims at index vectors
(batch rank 0-2, permuted dimension_map, an implicit depth for 1-D indexing), with the indices
passed plain, transposed (moved into place by a linalg.transpose) or strided (every other row,
through a stride-2 extract_slice), any dim dynamic. The metamorphic oracle compares it with the
`linalg.generic` + `tensor.extract` form. Spellings: `torch.aten.index_select`,
`torch.aten.embedding` and `torch.aten.index.Tensor`; ONNX Gather and GatherND (spellings.py)."""

from __future__ import annotations

from shapefuzz.families.base import LINALG, Family, EXACT
from shapefuzz.families.gates import ReleaseGate
from shapefuzz.families.gather.operands import operand_forms
from shapefuzz.families.gather.params import Params
from shapefuzz.families.gather.reference import compare, make_inputs, reference
from shapefuzz.families.gather.render import render
from shapefuzz.families.gather.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, largest_shape, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule", "RELEASE_GATES",
           "operand_forms", "OPERAND_EXAMPLES"]

def export_rule(p: Params) -> dict:
    return dict(EXACT)  # a gather moves values

# Measured: 3.2.0 and 3.3.0 do not know iree_linalg_ext.gather, 3.4.0 wants another syntax (a region).
RELEASE_GATES = (
    ReleaseGate("form linalg_ext", "iree_linalg_ext.gather as rendered",
                lambda p: p.form == "linalg_ext" and p.frontend == LINALG,
                lambda: Params("f32", (4, 3), (False, False), 1, (0,), (2,), (False,), False, "i32"),
                instead=lambda p: p.replace(form="extract")),
)


RARE_CONJUNCTION = ("dyn:none", "dtype:f32", "indices:plain")


def largest_operand(p: Params) -> list[int]:
    return largest_shape(p)


# One small case of each root-operand form (its release gate's example; tests compile each): in the
# extract form, which every release parses (a gate's example needs nothing but its form).
OPERAND_EXAMPLES = {
    "const": {"dtype": "f32", "src_shape": [9, 3], "src_dyn": [True, False], "depth": 1, "dimension_map": [0],
              "batch_shape": [4], "batch_dyn": [True], "implicit_depth": False, "index_dtype": "i64",
              "index_layout": "plain", "form": "extract", "operand": "const"},
    "folded": {"dtype": "i32", "src_shape": [5, 4, 2], "src_dyn": [False, True, False], "depth": 2,
               "dimension_map": [1, 0], "batch_shape": [3, 2], "batch_dyn": [False, True], "implicit_depth": False,
               "index_dtype": "i32", "index_layout": "plain", "form": "extract", "operand": "folded"},
    "scalar": {"dtype": "f16", "src_shape": [7, 3], "src_dyn": [True, True], "depth": 1, "dimension_map": [0],
               "batch_shape": [], "batch_dyn": [], "implicit_depth": False, "index_dtype": "i32",
               "index_layout": "plain", "form": "extract", "operand": "scalar"},
}
EXAMPLE = {"dtype": "f32", "src_shape": [9, 3], "src_dyn": [True, False], "depth": 1, "dimension_map": [0],
           "batch_shape": [4], "batch_dyn": [True], "implicit_depth": True, "index_dtype": "i64",
           "index_layout": "plain"}
FAMILY = Family.define("gather", Params, globals())
