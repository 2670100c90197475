"""The registry of op families: name -> Family."""

from __future__ import annotations

import importlib

from shapefuzz.case import Case
from shapefuzz.errors import UsageError
from shapefuzz.families.base import Family, Params
from shapefuzz.families.frontends import with_frontends

FAMILY_MODULES = ("conv", "conv_transpose", "scatter", "one_hot", "topk")


def all_families() -> dict[str, Family]:
    families = {}
    for module_name in FAMILY_MODULES:
        module = importlib.import_module(f"shapefuzz.families.{module_name}")
        family: Family = module.FAMILY
        families[family.name] = with_frontends(family)  # torch spellings as equivalent forms
    return families


def get_family(name: str) -> Family:
    families = all_families()
    if name not in families:
        raise UsageError(f"unknown op family {name!r}; choose from {', '.join(sorted(families))}")
    return families[name]


def render_case(case: Case) -> str:
    """The full MLIR file for a case: the header line carrying its parameters, then the module."""
    body = get_family(case.family).render(case.params)
    return case.header() + "\n" + body


__all__ = ["Family", "Params", "all_families", "get_family", "render_case", "FAMILY_MODULES"]
