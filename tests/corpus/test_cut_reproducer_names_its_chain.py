"""An issue text for a reproducer the shrinker cut down as plain text (shrink.case_stage, issue #43)
still says the chain of ops the case was found in: the reproducer has no header of its own, the
case it was cut from (`case.mlir`) has, and an engineer reading "a bare conv fails" should know
it turned up behind a frontend's producers."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from shapefuzz.case import case_from_mlir
from shapefuzz.cli import cli
from shapefuzz.corpus import load_entry
from shapefuzz.corpus.entry import CASE_FORM, EntryView, make_finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.issue import chain_text, cut_chain

DATA = Path(__file__).resolve().parents[1] / "data"


def _chain_case(toolchain, tmp_path: Path) -> str:
    """A conv case the campaign draws inside a chain (the first seed that gives one)."""
    from shapefuzz.campaign.iree import IreeTarget

    target = IreeTarget(toolchain, tmp_path / "scratch")
    for seed in range(200):
        text = target.generate("conv", seed).text
        case = case_from_mlir(text)
        if case is not None and chain_text(case.family, case.params):
            return text
    raise AssertionError("no conv case in a chain in 200 draws")


def test_only_an_entry_cut_from_a_chain_case_names_one(tmp_path: Path):
    header = ('// shapefuzz-case: {"family":"conv","params":{"context":[{"op":"reverse","operand":0},'
              '{"op":"clamp","result":0}]},"version":1}\n')
    (tmp_path / CASE_FORM).write_text(header + "func.func @main() {\n  return\n}\n")
    entry = EntryView(tmp_path, {"id": "x", "family": None, "params": None, "case_form": CASE_FORM})
    assert cut_chain(entry) == "reverse(operand 0) → conv → clamp(result 0)"
    assert cut_chain(EntryView(tmp_path, {"id": "x", "family": "conv", "params": {}})) == ""  # no case form
    (tmp_path / CASE_FORM).write_text(header[:40] + "\n")  # tampered: nothing to name
    assert cut_chain(entry) == ""


@pytest.mark.iree
def test_the_issue_of_a_cut_reproducer_says_the_chain_it_was_found_in(toolchain, tmp_path: Path):
    case_form = _chain_case(toolchain, tmp_path)
    case = case_from_mlir(case_form)
    assert case is not None
    cut = (DATA / "conv1d_stride3.mlir").read_text()  # fails on llvm-cpu: a bare conv, as the text stage leaves one
    assert case_from_mlir(cut) is None
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR,
                    "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N")
    folder, _ = save_finding(tmp_path / "corpus", make_finding(sig, cut, toolchain, case_form=case_form))
    assert load_entry(folder).cut_from is not None
    out = tmp_path / "issue.md"
    run = CliRunner().invoke(cli, ["export", str(folder), "--format", "issue", "-o", str(out)])
    assert run.exit_code == 0, run.output
    text = out.read_text()
    chain = chain_text(case.family, case.params)
    assert f"It was found as a conv case inside a chain of ops, as frontends emit them: `{chain}`" in text
    assert "keeps only the ops the failure needs" in text
