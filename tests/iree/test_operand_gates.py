"""Each root-operand form (families/operands.py) is a release gate: a release whose iree-opt does
not parse a form's example has that gate closed, says so in one line, and draws the plain
operands instead (the same case otherwise), never the form. The older release here is a fake:
its iree-opt refuses 0-d tensors and torch tensors without static information, then runs the
real one; its iree-compile is a fake that says 3.1.0 and never runs."""

from __future__ import annotations

import json
import sys

from support.fakes import make_fake_toolchain
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.families import get_family
from shapefuzz.families.gates import release_gates
from shapefuzz.iree.toolchain import find_toolchain

FAMILIES = ("matmul", "conv", "reduce", "gather", "scatter")


def _older_release(tmp_path):
    folder = make_fake_toolchain(tmp_path / "old", "ok", version="3.1.0")
    real_opt = find_toolchain(None).opt_bin
    opt = folder / "iree-opt"
    opt.unlink()
    opt.write_text(f"""#!{sys.executable}
import os, re, sys
path = next(a for a in sys.argv[1:] if a.endswith('.mlir'))
unknown = re.compile(r"tensor<(?:f32|f16|i32|i64)>|to !torch\\.vtensor$")
bad = [(n, m.group(0)) for n, line in enumerate(open(path), 1) for m in [unknown.search(line.rstrip())] if m]
for n, what in bad:
    sys.stderr.write(f"{{path}}:{{n}}:5: error: unknown type '{{what}}'\\n")
if bad:
    sys.exit(1)
os.execv({str(real_opt)!r}, [{str(real_opt)!r}] + sys.argv[1:])
""")
    opt.chmod(0o755)
    return find_toolchain(folder)


def test_a_release_that_does_not_parse_a_form_draws_the_plain_operands_instead(tmp_path):
    old = _older_release(tmp_path)
    assert old.probe.release == (3, 1)
    gated = release_gates(old, FAMILIES)
    closed = {(c.family, c.what) for c in gated.closed if c.what.startswith("operand ")}
    assert closed == {(name, f"operand {form}") for name in FAMILIES for form in ("scalar", "unranked")}, closed
    line = next(line for line in gated.lines() if line.startswith("gather operand scalar"))
    assert line == ("gather operand scalar off for this release: 3.1.0 does not parse a 0-d tensor root operand "
                    "(unknown type 'tensor<i32>'); an equivalent form the release parses is drawn instead")
    for name in FAMILIES:
        family = get_family(name)
        p = family.load(family.operand_examples["scalar"])
        assert gated.params(name, p) == p.replace(operand="") and not gated.accepts(name, p)
        const = family.load(family.operand_examples["const"])
        assert gated.params(name, const) == const and gated.accepts(name, const)
    target = IreeTarget(old, tmp_path / "corpus", gated=gated)
    drawn = [json.loads(target.generate(name, seed).payload) for name in FAMILIES for seed in range(40)]
    forms = {p.get("operand", "") for p in drawn}
    assert not forms & {"scalar", "unranked"} and forms & {"const", "folded"}, forms
