"""A reproducer the shrinker cut down as plain text (shrink.case_stage) has no family or params of
its own; its entry still names the op family it was generated from, read from the case it was
cut from (`case.mlir`), so an issue text never says "not generated" of a generated bug."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.case import Case
from shapefuzz.corpus.entry import CASE_FORM, EntryView


def _entry(tmp_path: Path, case_text: str | None) -> EntryView:
    meta: dict = {"id": "llvm-cpu-compile-error-0123456789ab", "family": None, "params": None}
    if case_text is not None:
        (tmp_path / CASE_FORM).write_text(case_text)
        meta["case_form"] = CASE_FORM
    return EntryView(tmp_path, meta)


def test_the_family_comes_from_the_case_form(tmp_path):
    header = Case.make("scatter", {"rank": 1}).header()
    entry = _entry(tmp_path, header + "\nfunc.func @main() {\n  return\n}\n")
    assert entry.family == "scatter" and entry.case is None


def test_meta_family_first_and_none_without_a_case(tmp_path):
    assert EntryView(tmp_path, {"id": "x", "family": "conv", "params": {}}).family == "conv"
    assert _entry(tmp_path, None).family is None


def test_a_tampered_case_form_names_no_family(tmp_path):
    header = Case.make("scatter", {"rank": 1}).header()
    assert _entry(tmp_path, header[:-3] + "\n").family is None
    assert _entry(tmp_path, "func.func @main() {\n  return\n}\n").family is None
