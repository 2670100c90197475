"""A campaign's `issues/` holds exactly its current causes' reports: a cause merged away (or split)
leaves no report behind, so filing from the folder never files a duplicate."""

from __future__ import annotations

import dataclasses
import os

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.report.issue_texts import IssueTexts
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.triage.severity import Severity


def _cause(name: str) -> Cause:
    return Cause(name=name, triage=Triage.COMPILER_BUG, evidence="", identity="i", failing_pass="P",
                 component="c", scope="s", lanes=("llvm-cpu",), severity=Severity.COMPILE_ERROR,
                 localized=None, reported="", known=False, regression=None, backends=("llvm-cpu",),
                 stage="compile", status="error", message="m", buckets=(), count=1, first_seen=0.0, new=True,
                 rehits=0, rehit_seconds=0.0, corpus_entries=(), symptoms=(), merged=(), shrunk=True)


def _report(folder, name: str) -> None:
    (folder / f"{name}.md").write_text(f"# {name}\n")
    (folder / f"{name}.files").mkdir()
    (folder / f"{name}.files" / "reproducer.mlir").write_text("x")


def test_reports_of_causes_merged_away_are_removed_and_the_rest_kept(tmp_path):
    issues = tmp_path / "issues"
    issues.mkdir()
    for name in ("cause-aaaaaaaaaa", "cause-bbbbbbbbbb", "cause-cccccccccc"):
        _report(issues, name)
    (issues / "NOTES.txt").write_text("the user's own file")
    said: list[str] = []
    texts = IssueTexts(tmp_path, None, say=said.append)
    removed = texts.keep_only([_cause("cause-aaaaaaaaaa"), _cause("cause-cccccccccc")])
    assert removed == ["cause-bbbbbbbbbb"]
    assert sorted(os.listdir(issues)) == ["NOTES.txt", "cause-aaaaaaaaaa.files", "cause-aaaaaaaaaa.md",
                                          "cause-cccccccccc.files", "cause-cccccccccc.md"]
    assert len(said) == 1 and "cause-bbbbbbbbbb.md" in said[0] and "merged" in said[0]
    assert texts.keep_only([_cause("cause-aaaaaaaaaa"), _cause("cause-cccccccccc")]) == []  # idempotent


def test_a_link_in_issues_is_removed_not_followed(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    issues = tmp_path / "camp" / "issues"
    issues.mkdir(parents=True)
    os.symlink(outside, issues / "cause-dddddddddd.files")
    os.symlink(outside / "keep.txt", issues / "cause-dddddddddd.md")
    IssueTexts(tmp_path / "camp", None).keep_only([_cause("cause-aaaaaaaaaa")])
    assert (outside / "keep.txt").read_text() == "keep" and not os.listdir(issues)


def test_no_issues_folder_is_nothing_to_do(tmp_path):
    assert IssueTexts(tmp_path, None).keep_only([]) == []
    linked = tmp_path / "camp"
    linked.mkdir()
    os.symlink(tmp_path, linked / "issues")  # a link in place of issues/ is never listed through
    assert IssueTexts(linked, None).keep_only([dataclasses.replace(_cause("cause-aaaaaaaaaa"))]) == []
