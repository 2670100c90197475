"""The one registry of op families: their names, in the order campaigns and digests walk them.
Each name is a package `shapefuzz.families.<name>` holding everything about the family: its
`FAMILY` (params, render, reference, comparison and export rule, strategy, forms, features,
shrink candidates, and the example its tests run) and, where a frontend can write its cases, a
`spellings` module (`SPELLINGS`: torch and ONNX `Spelling`s; `ONNX_MODEL`: the ONNX graph builder)
and, where StableHLO can, a `stablehlo` module (`SPELLING`).
Adding a family is its package, its template in `templates/`, its tests, and its name here."""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shapefuzz.families.base import Family

FAMILY_MODULES = ("conv", "conv_transpose", "scatter", "one_hot", "topk", "pool", "sort", "gather", "reduce", "attention",
                  "matmul", "norm", "onnx_op", "intloop")
# What a campaign draws when `--ops` is not given: a family joins once a short campaign limited
# to it showed no false alarm (onnx_op, ONNX's own operators, is swept by `shapefuzz onnx-ops`
# and drawn by `fuzz --ops onnx_op`; intloop: 88 candidates in 90 s on llvm-cpu, 3 compiler-bug
# causes, nothing triaged ours).
# The families of the brief's five bug classes (conv layouts, mixed dims in scatter and one_hot,
# conv-transpose decompositions, equivalent formulations, multi-result topk and sort): what the tool
# was built to hunt. The allocation gives each CORE_WEIGHT times another family's base share of
# check time (campaign/allocation.py), so breadth does not thin them.
CORE_FAMILIES = ("conv", "conv_transpose", "scatter", "one_hot", "topk", "sort")
CORE_WEIGHT = 2.0
DEFAULT_FAMILIES = ("conv", "conv_transpose", "scatter", "one_hot", "topk", "pool", "sort", "gather", "reduce", "attention",
                    "matmul", "norm", "intloop")


def own_family(name: str) -> Family:
    """The family as its package defines it (without the frontend spellings `families.get_family`
    adds). `name` must be one of FAMILY_MODULES.

    Every family package and spellings module is imported first, whichever family is asked for,
    as the registry always has. (This once kept seeds stable, when Hypothesis drew some integers
    from the constants of the modules loaded; `generate.SeedProvider` now draws none of those.)"""
    for other in FAMILY_MODULES:
        importlib.import_module(f"shapefuzz.families.{other}")
        spellings_module(other)
        stablehlo_module(other)
    return importlib.import_module(f"shapefuzz.families.{name}").FAMILY


def stablehlo_module(name: str) -> ModuleType | None:
    """The family's `stablehlo` module (its StableHLO `SPELLING`), or None (an unknown family, or
    one not spelled in StableHLO)."""
    return _submodule(name, "stablehlo")


def spellings_module(name: str) -> ModuleType | None:
    """The family's `spellings` module, or None (an unknown family, or one no frontend writes)."""
    return _submodule(name, "spellings")


def _submodule(name: str, part: str) -> ModuleType | None:
    if name not in FAMILY_MODULES:
        return None
    module = f"shapefuzz.families.{name}.{part}"
    return importlib.import_module(module) if importlib.util.find_spec(module) is not None else None
