"""The StableHLO spellings' release gate: a release whose `iree-opt` does not parse the StableHLO
dialect (here a fake one, the real iree-opt behind a wrapper that hides the dialect, as a build
without the StableHLO input plugin would) closes each family's "stablehlo spelling" gate with one
line saying why, and its cases are drawn in linalg instead; the pinned release parses them all."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.families import get_family
from shapefuzz.families.gates import Gated, release_gates
from shapefuzz.iree.toolchain import find_toolchain
from support.fakes import make_fake_toolchain

SPELLED = ("conv", "conv_transpose", "matmul", "reduce", "sort", "gather", "scatter", "intloop")


def _without_stablehlo(folder: Path) -> Path:
    """A toolchain folder whose iree-opt sees every `stablehlo.` op renamed into a dialect it does not know."""
    real = find_toolchain(None).opt_bin
    make_fake_toolchain(folder, "ok", version="3.1.0")
    opt = folder / "iree-opt"
    opt.unlink()
    opt.write_text(f"""#!{sys.executable}
import os, sys, tempfile
args = sys.argv[1:]
for i, arg in enumerate(args):
    if os.path.isfile(arg) and arg.endswith(".mlir"):
        text = open(arg).read().replace("stablehlo.", "stablehlo_absent.")
        fd, path = tempfile.mkstemp(suffix=".mlir")
        os.write(fd, text.encode()); os.close(fd)
        args[i] = path
os.execv({str(real)!r}, [{str(real)!r}] + args)
""")
    opt.chmod(0o755)
    return folder


@pytest.mark.iree
def test_a_release_without_stablehlo_closes_the_gate_and_draws_linalg(tmp_path, toolchain):
    old = find_toolchain(_without_stablehlo(tmp_path / "bin"))
    gated = release_gates(old, SPELLED)
    assert {(c.family, c.what) for c in gated.closed} == {(f, "stablehlo spelling") for f in SPELLED}
    for line in gated.lines():
        assert "stablehlo spelling off for this release: 3.1.0" in line and "does not parse the StableHLO dialect" in line
        assert line.endswith("an equivalent form the release parses is drawn instead")
        assert "\n" not in line and "Traceback" not in line
    fam = get_family("reduce")
    p = fam.load(fam.example).replace(frontend="stablehlo")
    assert not gated.accepts("reduce", p) and gated.params("reduce", p) == p.replace(frontend="linalg")
    assert gated.params("reduce", p.replace(frontend="torch")).frontend == "torch"  # other spellings untouched
    # a gated campaign never draws a StableHLO case; an ungated one does
    drawn = [json.loads(IreeTarget(toolchain, tmp_path / "corpus", gated=gated).generate("reduce", seed).payload)
             for seed in range(30)]
    plain = [json.loads(IreeTarget(toolchain, tmp_path / "corpus").generate("reduce", seed).payload) for seed in range(30)]
    assert not [d for d in drawn if d.get("frontend") == "stablehlo"]
    assert [d for d in plain if d.get("frontend") == "stablehlo"]


@pytest.mark.iree
def test_the_pinned_release_parses_every_stablehlo_spelling(toolchain):
    assert release_gates(toolchain, SPELLED) == Gated()
