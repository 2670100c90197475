"""Each corpus entry's `bug` record in meta.json is a JSON object of JSON values (issue 31, item 8);
entries whose record older versions wrote as text (a Python dict's repr) still read."""

from __future__ import annotations

import json

import pytest

from shapefuzz.campaign.bugs import annotate_corpus
from shapefuzz.campaign.cause import Cause
from shapefuzz.campaign.values import Triage
from shapefuzz.corpus import Finding, load_entry, rebuild_index, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status

SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "failed to legalize operation 'arith.constant'")


def _entry(tmp_path):
    finding = Finding(SIG, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None, 0, None, None, "3.13.0",
                      ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"],
                      "m.mlir:1:1: error: failed to legalize operation 'arith.constant'")
    path, _ = save_finding(tmp_path, finding)
    return path


def test_an_old_record_written_as_a_repr_still_reads(tmp_path):
    path = _entry(tmp_path)
    meta = json.loads((path / "meta.json").read_text())
    assert isinstance(meta["bug"], dict)
    old = dict(meta["bug"], strong=False, lanes=("llvm-cpu",))
    meta["bug"] = repr(old)  # what an older version wrote: the record's Python repr as a string
    (path / "meta.json").write_text(json.dumps(meta))
    entry = load_entry(path)
    assert entry.meta["bug"]["severity"] == old["severity"] and entry.meta["bug"]["lanes"] == ["llvm-cpu"]
    assert "compile error" in rebuild_index(tmp_path).read_text()
    update_meta(path, notes="read")  # a rewrite turns it into the object
    assert isinstance(json.loads((path / "meta.json").read_text())["bug"], dict)


def test_a_cause_s_record_is_written_as_json_values(tmp_path):
    path = _entry(tmp_path)
    cause = Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="",
                  failing_pass="iree-llvmcpu-lower-executable-target", component="codegen for llvm-cpu",
                  scope="default pipeline", lanes=("llvm-cpu",), severity="compile error", severity_rank=5,
                  localized=None, reported="", known=False,
                  regression={"text": "fails in every release tried (3.12.0, 3.13.0)", "tried": ["3.12.0", "3.13.0"],
                              "first_fixed": None},
                  backends=("llvm-cpu",), stage="compile", status="error", message="m", buckets=(), count=1,
                  first_seen=0.0, new=True, rehits=0, rehit_seconds=0.0, corpus_entries=(str(path),), symptoms=(),
                  merged=(), shrunk=False)
    assert annotate_corpus(None, [cause]) == 1
    meta = json.loads((path / "meta.json").read_text())
    assert meta["cause"] == "cause-0123456789" and meta["triage"] == "compiler bug"  # the text, not the enum's repr
    bug = json.loads((path / "meta.json").read_text())["bug"]
    assert bug["regression"]["tried"] == ["3.12.0", "3.13.0"] and bug["regression"]["first_fixed"] is None
    assert load_entry(path).meta["bug"]["failing_pass"] == "iree-llvmcpu-lower-executable-target"


@pytest.mark.iree
def test_rederive_reads_the_failing_pass_an_old_entry_lacks(toolchain, tmp_path):
    """An entry saved before the compiler's dump header was kept ("compiler (pass unknown)", no
    cause) gets its pass, component and cause from a re-check (IREE 3.13)."""
    import shutil
    from pathlib import Path

    from shapefuzz.replay import rederive

    name = "llvm-cpu-compile-error-84f9c6e1e882"
    path = tmp_path / name
    shutil.copytree(Path(__file__).resolve().parents[1] / "corpus" / name, path)
    meta = json.loads((path / "meta.json").read_text())
    meta["detail"] = meta["detail"].split("// -----//")[0]
    meta.pop("bug", None), meta.pop("cause", None)
    (path / "meta.json").write_text(json.dumps(meta))
    line = rederive(load_entry(path), toolchain)
    meta = json.loads((path / "meta.json").read_text())
    assert "fails the same way" in line
    assert meta["bug"]["failing_pass"] == "iree-codegen-verify-workgroup-distribution"
    assert meta["bug"]["component"].startswith("codegen for llvm-cpu") and meta["cause"].startswith("cause-")
