"""The one family registry: each family is a package holding its own spellings, and asking for one
family loads them all (Hypothesis draws some integers from the loaded modules' constants, so the
set of loaded modules is part of what a seed draws)."""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.families import FAMILY_MODULES, get_family
from shapefuzz.families.onnx_models import model_spelling
from shapefuzz.families.registry import spellings_module, stablehlo_module

SRC = Path(__file__).resolve().parents[2] / "src" / "shapefuzz"


@pytest.mark.parametrize("name", FAMILY_MODULES)
def test_a_family_is_a_package_that_holds_its_spellings(name):
    package = importlib.import_module(f"shapefuzz.families.{name}")
    assert hasattr(package, "__path__") and package.FAMILY.name == name
    module = spellings_module(name)
    assert module is not None and module.__name__ == f"shapefuzz.families.{name}.spellings"
    frontends = [s.frontend for s in module.SPELLINGS]
    model = model_spelling(name)
    if package.FAMILY.params_type.__dataclass_fields__["frontend"].default == "onnx":  # onnx_op: its own form is ONNX
        assert frontends == [] and model is not None and model.family == name
        return
    if set(package.FAMILY.no_spelling) == {"torch", "onnx"}:  # intloop: StableHLO's spelling alone
        assert frontends == [] and model is None and stablehlo_module(name) is not None
        return
    assert {s.family for s in module.SPELLINGS} == {name}
    assert frontends in (["torch"], ["torch", "onnx"]), frontends  # the order draws depend on
    assert (model is not None) == ("onnx" in frontends) and (model is None or model.family == name)


def test_unknown_names_have_no_spellings():
    assert spellings_module("nope") is None and model_spelling("nope") is None and stablehlo_module("nope") is None
    assert spellings_module("registry") is None  # a module of families/, not a family


def test_the_shared_toolkit_holds_no_family_spelling():
    for name in ("torch_forms.py", "onnx_forms.py", "onnx_models.py", "frontends.py", "stablehlo_ir.py"):
        text = (SRC / "families" / name).read_text()
        assert "Spelling(\"" not in text, name
        assert not any(f"families.{f} import" in text or f"families import {f}" in text for f in FAMILY_MODULES), name


def test_asking_for_one_family_loads_every_family_and_its_spellings():
    code = ("import sys; from shapefuzz.families import get_family; get_family('attention'); "
            "from shapefuzz.families.registry import FAMILY_MODULES as F; "
            "print(sorted(n for f in F for n in (f'shapefuzz.families.{f}', f'shapefuzz.families.{f}.spellings') "
            "if n not in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr
    assert get_family("conv") is not get_family("conv")  # built afresh, as the recorded draws were made


def test_no_module_in_src_is_over_600_lines():
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, long
