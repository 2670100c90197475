"""Each corpus entry's `bug` record in meta.json is a JSON object of JSON values (issue 31, item 8);
entries whose record older versions wrote as text (a Python dict's repr) still read."""

from __future__ import annotations

import json

import pytest

from shapefuzz.campaign.causes.cause_facts import annotate_corpus
from shapefuzz.campaign.causes.cause import Cause, Regression
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.corpus import Finding, load_entry, rebuild_index, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.severity import Severity

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
                  scope="default pipeline", lanes=("llvm-cpu",), severity=Severity.COMPILE_ERROR,
                  localized=None, reported="", known=False,
                  regression=Regression.of({"text": "fails in every release tried (3.12.0, 3.13.0)",
                                            "tried": ["3.12.0", "3.13.0"], "first_fixed": None}),
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
    cause) gets its pass, component and cause from a re-check (IREE 3.13), `corpus rederive` on
    its whole corpus (the listing's views are loaded whole to be re-checked)."""
    import shutil
    from pathlib import Path

    name = "llvm-cpu-compile-error-84f9c6e1e882"
    path = tmp_path / name
    shutil.copytree(Path(__file__).resolve().parents[2] / "corpus" / name, path)
    meta = json.loads((path / "meta.json").read_text())
    meta["detail"] = meta["detail"].split("// -----//")[0]
    meta.pop("bug", None), meta.pop("cause", None)
    (path / "meta.json").write_text(json.dumps(meta))
    from click.testing import CliRunner

    from shapefuzz.cli import cli

    run = CliRunner().invoke(cli, ["corpus", "rederive", "--corpus", str(tmp_path)])  # every entry of a corpus
    assert run.exit_code == 0, run.output
    line = run.output.splitlines()[0]
    meta = json.loads((path / "meta.json").read_text())
    assert "fails the same way" in line and "| iree-codegen-verify-workgroup-distribution |" in (tmp_path / "INDEX.md").read_text()
    assert meta["bug"]["failing_pass"] == "iree-codegen-verify-workgroup-distribution"
    assert meta["bug"]["component"].startswith("codegen for llvm-cpu") and meta["cause"].startswith("cause-")


@pytest.mark.iree
def test_rederive_localizes_a_wrong_value_and_the_index_says_where(toolchain, tmp_path, monkeypatch):
    """A wrong-value entry that still fails is localized by `corpus rederive` (the search itself is
    replaced by its answer here: test_localize runs it on this entry), and its record and INDEX.md
    carry the place, the component it gives and the identity; with no time to localize, the old
    localization is kept."""
    import shutil
    from pathlib import Path

    import shapefuzz.judge.localize_probe
    from shapefuzz.recheck.replay import rederive
    from shapefuzz.triage.component import DISPATCH_CREATION
    from shapefuzz.triage.localize import Localization

    fold = Localization("global-optimization", "iree-dispatch-creation-fold-unit-extent-dims", "FoldUnitExtentDimsPass",
                        "every lane tried computes it wrong; ...", 13.6, certain=True)
    asked = []
    monkeypatch.setattr(shapefuzz.judge.localize_probe, "localize_entry", lambda entry, tc, lane, passed, seconds:
                        asked.append((lane, seconds)) or fold)
    name = "llvm-cpu-compare-mismatch-8dbed37c070f"  # the ONNX max pool FoldUnitExtentDims miscompiles
    path = tmp_path / name
    shutil.copytree(Path(__file__).resolve().parents[2] / "corpus" / name, path)
    kept = (load_entry(path).meta["bug"].get("regression") or {}).get("text") or "-"  # a range is kept as it was
    line = rederive(load_entry(path), toolchain, localize_seconds=30)
    bug = load_entry(path).meta["bug"]
    assert "fails the same way" in line and "localized: FoldUnitExtentDimsPass (global-optimization)" in line, line
    assert asked == [("llvm-cpu", 30)] and bug["localized"]["pass"] == "iree-dispatch-creation-fold-unit-extent-dims"
    assert bug["component"] == DISPATCH_CREATION and bug["failing_pass"] == "iree-dispatch-creation-fold-unit-extent-dims"
    assert "[iree-dispatch-creation-fold-unit-extent-dims]" in bug["identity"] and bug["severity"] == "wrong values"
    row = next(r for r in rebuild_index(tmp_path).read_text().splitlines() if name in r)
    assert f"| {DISPATCH_CREATION} | FoldUnitExtentDimsPass (global-optimization) | {kept} |" in row, row
    rederive(load_entry(path), toolchain, localize_seconds=0)
    assert len(asked) == 1 and load_entry(path).meta["bug"]["localized"] == bug["localized"]


def test_rederive_bisect_writes_the_range_into_the_record_and_the_index(tmp_path, monkeypatch):
    """`corpus rederive --bisect`: each entry's range over the cached releases, judged by the pass
    its record names (the releases and their checks are fakes here), kept beside the other fields
    and shown in INDEX.md; with fewer than two releases cached it is one line and exit 2."""
    import subprocess
    import sys

    import shapefuzz.recheck.regression as regression
    from support.campaign_fakes import fake_env
    from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult

    path = _entry(tmp_path)
    update_meta(path, bug={**load_entry(path).meta["bug"], "failing_pass": "iree-foo"})
    judged_by = []

    def same_failure_check(want):
        judged_by.append(want.failing_pass)
        return lambda e, v: ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING, "failing", SIG)

    monkeypatch.setattr(regression, "same_failure_check", same_failure_check)
    monkeypatch.setattr(regression, "local_installer", lambda version: version)
    # the reproducer's own failure at the current release names no pass here: the record's is the fallback
    monkeypatch.setattr(regression, "own_failure", lambda e, tc, failing: (regression.recorded_failure(e, failing), None))
    text = regression.range_into_entry(path, ["3.6.0", "3.12.0", "3.13.0"])
    bug = load_entry(path).meta["bug"]
    assert text == "present in every release tried (3.6.0–3.13.0)" and judged_by == ["iree-foo"]
    assert bug["regression"]["text"] == text and bug["failing_pass"] == "iree-foo" and bug["severity"] == "compile error"
    assert f"| iree-foo | {text} |" in rebuild_index(tmp_path).read_text()
    run = subprocess.run([sys.executable, "-m", "shapefuzz", "corpus", "rederive", "--bisect", "--corpus", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, env=fake_env(tmp_path, "ok"))
    assert run.returncode == 2 and "toolchain cache" in run.stderr and len(run.stderr.strip().splitlines()) == 1


def _ladder_entry(tmp_path, case, trailer: str = ""):
    """A chain case's entry with a device ladder's verdict, as `bundle-judge --save` writes it."""
    from shapefuzz.families import render_case

    finding = Finding(SIG, render_case(case) + trailer, ("llvm-cpu",), case, 0, None, None, "3.13.0",
                      ["iree-compile", "reproducer.mlir", "-o", "module.vmfb"], "error: failed to legalize")
    path, _ = save_finding(tmp_path, finding)
    bug = load_entry(path).meta["bug"]
    update_meta(path, bug={**bug, "chain": "", "ladder": {"verdict": "root alone fails: a plain conv bug"},
                           "regression": {"text": "present in every release tried"}})
    return path, finding


def test_a_ladder_verdict_survives_a_re_save_of_the_same_program_and_goes_with_another(tmp_path, monkeypatch):
    """`bundle-judge --save` writes bug.ladder/bug.chain: a re-save whose reproducer is the same
    case (a smaller rendering) or `corpus rederive` (the same file) keeps them; a reproducer of
    another case (shrunk) drops them, since the verdict was about the old program; the regression
    range stays either way."""
    import dataclasses

    import shapefuzz.recheck.replay
    from shapefuzz.case import Case
    from shapefuzz.errors import ShapefuzzError
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import draw_params
    from shapefuzz.recheck.replay import rederive
    from shapefuzz.iree.toolchain import find_toolchain

    params = next(p for seed in range(100) if (p := draw_params("conv", seed, context_share=1.0)).context)
    case = Case.make("conv", params.to_json())
    path, finding = _ladder_entry(tmp_path / "same", case, trailer="// a longer rendering of the same case\n")
    save_finding(tmp_path / "same", dataclasses.replace(finding, mlir=render_case(case)))  # smaller: replaces it
    assert load_entry(path).mlir == render_case(case)
    bug = load_entry(path).meta["bug"]
    assert bug["chain"] == "" and bug["ladder"]["verdict"].startswith("root alone fails") and bug["regression"]
    # corpus rederive rewrites the record of the same reproducer (its re-check is not the point here)
    monkeypatch.setattr(shapefuzz.recheck.replay, "check_entry", lambda *a, **k: (_ for _ in ()).throw(ShapefuzzError("x")))
    rederive(load_entry(path), find_toolchain(None), localize_seconds=0)
    assert load_entry(path).meta["bug"]["ladder"] == bug["ladder"] and load_entry(path).meta["bug"]["chain"] == ""

    path, finding = _ladder_entry(tmp_path / "other", case)
    root = Case.make("conv", params.replace(context=()).to_json())  # the shrinker's root alone
    save_finding(tmp_path / "other", dataclasses.replace(finding, mlir=render_case(root), case=root))
    bug = load_entry(path).meta["bug"]
    assert "ladder" not in bug and "chain" not in bug and bug["regression"]["text"] == "present in every release tried"
