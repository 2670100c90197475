"""`--format pytest`: one self-contained test file (MLIR and arrays inline) that compiles and runs
with the `iree-compile`/`iree-run-module` on PATH; strict xfail while the entry is expected to
fail, so a fix shows up as an unexpected pass."""

from __future__ import annotations

import math
import re

import numpy as np

from shapefuzz.corpus import comment_text
from shapefuzz.export.plan import Plan
from shapefuzz.export.run_module import checks_source


def _value(value: object) -> str:
    """One element as Python source: NaN and infinities as `float("nan")`/`float("inf")` (repr
    gives a bare `nan`, a NameError in the exported test)."""
    if isinstance(value, float) and not math.isfinite(value):
        return f'float("{value}")'
    return repr(value)


def _array_literal(array: np.ndarray) -> str:
    values = ", ".join(_value(v) for v in array.reshape(-1).tolist())
    return f"np.array([{values}], dtype=np.{array.dtype.name}).reshape({tuple(array.shape)!r})"


def to_pytest(p: Plan) -> str:
    name = re.sub(r"\W", "_", p.entry.id)
    inputs = "[" + ", ".join(_array_literal(a) for a in (p.inputs or [])) + "]" if p.runs else "None"
    expected = "[" + ", ".join(_array_literal(a) for a in p.expected) + "]" if p.runs and p.expected else "None"
    xfail = (f"@pytest.mark.xfail(strict=True, reason={str(p.entry.signature)[:200]!r})\n" if p.failing else "")
    checks = checks_source().replace("import numpy as np\n", "", 1).strip("\n")
    doc = "\n".join([
        f"Regression test exported by shapefuzz from corpus entry {p.entry.id}.",
        "",
        f"Signature: {comment_text(p.entry.signature)}",
        f"Seen with IREE {comment_text(', '.join(p.entry.toolchain_versions))}; "
        f"expected state: {p.entry.expected_state}.",
        "Strict xfail while the bug is there: a fix shows up as an unexpected pass." if p.failing else "",
        "Needs iree-compile and iree-run-module on PATH (pip install iree-base-compiler iree-base-runtime).",
    ])
    return f'''{doc!r}

import shutil
import subprocess

import numpy as np
import pytest

MLIR = {p.entry.mlir!r}
FLAGS = {list(p.flags)!r}
DEVICE = {p.backend.driver if p.runs else None!r}
FUNCTION = {p.function!r}
RULE = {p.rule!r}  # the oracle's comparison: top-k indices by what they select, ties allowed

# ---- shapefuzz export_checks.py, copied verbatim ----
{checks}
# ---- end of export_checks.py ----


def _inputs():
    return {inputs}


def _expected():
    return {expected}


@pytest.mark.skipif(shutil.which("iree-compile") is None, reason="iree-compile not on PATH")
{xfail}def test_{name}(tmp_path):
    source = tmp_path / "reproducer.mlir"
    source.write_text(MLIR)
    vmfb = tmp_path / "module.vmfb"
    compiled = subprocess.run(["iree-compile", str(source), *FLAGS, "-o", str(vmfb)],
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stderr[-2000:]
    inputs, expected = _inputs(), _expected()
    if DEVICE is None or inputs is None:
        return
    argv = ["iree-run-module", f"--module={{vmfb}}", f"--device={{DEVICE}}", f"--function={{FUNCTION}}"]
    for i, array in enumerate(inputs):
        np.save(tmp_path / f"arg{{i}}.npy", array)
        argv.append(f"--input=@{{tmp_path / f'arg{{i}}.npy'}}")
    outputs = [tmp_path / f"out{{i}}.npy" for i in range(len(expected or []))]
    argv += [f"--output=@{{path}}" for path in outputs]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    if expected is not None:
        problem = compare(RULE, inputs, expected, [np.load(path) for path in outputs])
        assert problem is None, problem
'''
