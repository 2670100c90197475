"""The gather family: `iree_linalg_ext.gather` of a source's leading 1-2 dims at index vectors
(batch rank 0-2, permuted dimension_map, an implicit depth for 1-D indexing), with the indices
passed plain, transposed (moved into place by a linalg.transpose) or strided (every other row,
through a stride-2 extract_slice), any dim dynamic. The metamorphic oracle compares it with the
`linalg.generic` + `tensor.extract` form. Spellings: `torch.aten.index_select`,
`torch.aten.embedding` and `torch.aten.index.Tensor`; ONNX Gather and GatherND (spellings.py)."""

from __future__ import annotations

from shapefuzz.families.base import Family, EXACT
from shapefuzz.families.gather.params import Params
from shapefuzz.families.gather.reference import compare, make_inputs, reference
from shapefuzz.families.gather.render import render
from shapefuzz.families.gather.strategy import (
    FEATURES, SWARM, equivalent_forms, features, is_valid, shrink_candidates, strategy)

__all__ = ["FAMILY", "Params", "FEATURES", "SWARM", "compare", "equivalent_forms", "features", "is_valid",
           "make_inputs", "reference", "render", "shrink_candidates", "strategy", "export_rule"]

def export_rule(p: Params) -> dict:
    return dict(EXACT)  # a gather moves values

FAMILY = Family.define("gather", Params, globals())
