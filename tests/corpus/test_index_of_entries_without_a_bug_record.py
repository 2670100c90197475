"""corpus/INDEX.md is rebuilt from the listing's meta-only views (`EntryView`, no reproducer): an
entry saved before the `bug` record existed gets its record computed from its reproducer, which
the view does not carry (found by mypy: `EntryView` has no attribute `mlir`)."""

from __future__ import annotations

import json

from shapefuzz.corpus import Finding, rebuild_index, save_finding
from shapefuzz.model import Signature, Stage, Status

SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'arith.constant'")


def test_an_entry_without_a_bug_record_gets_its_index_row(tmp_path):
    finding = Finding(SIG, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None, 0, None, None, "3.13.0",
                      ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"],
                      "m.mlir:1:1: error: failed to legalize operation 'arith.constant'")
    path, _ = save_finding(tmp_path, finding)
    meta = json.loads((path / "meta.json").read_text())
    del meta["bug"]  # as an entry saved before the record was written
    (path / "meta.json").write_text(json.dumps(meta))
    row = next(line for line in rebuild_index(tmp_path).read_text().splitlines() if path.name in line)
    assert "compile error" in row  # its severity, computed from the signature and the reproducer
