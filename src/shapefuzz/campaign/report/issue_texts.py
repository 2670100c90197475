"""Each cause's bug report (`export --format issue`'s Markdown and its folder of files to attach),
written into the campaign folder so the dashboard can link to it. Built from what the campaign
saw (each lane's bucket of the cause) instead of re-checking every backend, so refreshing the
dashboard compiles nothing; `shapefuzz export ENTRY --format issue` re-checks with the toolchain
at hand. A report is rewritten only when its entry or its cause's lanes changed.

A campaign folder is shared and copied, so nothing read from its store names a path unchecked:
the cause becomes `issues/{cause}.md` only through `files.child` (a bad one is skipped with one
line), and `issues/` and each `{cause}.files/` are replaced, never followed, when a link.

`issues/` holds exactly the current causes' reports: after each refresh `keep_only` removes the
report (and its `.files/`) of a cause that no longer exists (merged into another, or split), so
filing from the folder never files a duplicate. Files of other names are left alone."""

from __future__ import annotations

import os
import shutil
import stat
from pathlib import Path
from typing import Any, Callable

from shapefuzz.campaign.causes.cause import Cause

from shapefuzz.errors import ShapefuzzError
from shapefuzz.files import UnsafeName, child, fresh_dir, real_dir, safe_name
from shapefuzz.markup import code, text
from shapefuzz.iree.toolchain import Toolchain

ISSUES_DIR = "issues"
CAMPAIGN_SAW = "In this campaign, on each backend (the cause's candidates, not only this reproducer):"


def one_bug_lines(cause: Cause) -> list[str]:
    """For a cause that is one bug seen several ways (campaign.causes.merging): each symptom with its lanes,
    and the causes merged into it."""
    seen = cause.symptoms
    lines = []
    if len(seen) > 1:
        lines.append("one bug, " + str(len(seen)) + " symptoms: " + "; ".join(
            f"{text(s.severity)} on {text(', '.join(s.lanes))} ({code(s.stage + '/' + s.status + ': ' + s.message)})"
            + (f" — {text(s.note)}" if s.note else "") for s in seen))
    if cause.merged:
        lines.append("merged causes: " + ", ".join(code(name) for name in cause.merged))
    return lines


class IssueTexts:
    def __init__(self, folder: Path, toolchain: Toolchain | None,
                 say: Callable[[str], None] = lambda line: None) -> None:
        self.folder = Path(folder) / ISSUES_DIR
        self.toolchain = toolchain
        self.say = say
        self._version: str | None = None
        self._stamps: dict[str, tuple] = {}  # cause -> what its report was written from
        self._refused: set[str] = set()  # causes already told to be bad names (said once)

    def version_text(self, toolchain: Toolchain) -> str:
        if self._version is None:
            from shapefuzz.process.sandbox import Limits, run_sandboxed

            shown = run_sandboxed([str(toolchain.compile_bin), "--version"], Limits(timeout=60.0))
            self._version = (shown.stdout + shown.stderr).strip() or "(iree-compile --version printed nothing)"
        return self._version

    def write(self, cause: Cause, buckets: list[dict[str, Any]]) -> Path | None:
        """The report of one cause from its first corpus entry; None when it has none that loads
        (no entry yet, the corpus moved) or no toolchain was given."""
        entries = [Path(e) for e in cause.corpus_entries if e]
        toolchain = self.toolchain
        if not entries or toolchain is None:
            return None
        entry_dir = entries[0]
        try:
            out = child(self.folder, safe_name(cause.name, "cause") + ".md", "bug report")
        except UnsafeName as error:
            if cause.name not in self._refused:
                self._refused.add(cause.name)
                self.say(f"issues: {error}; its bug report is not written")
            return None
        try:
            stamp = (str(entry_dir), *(p.stat().st_mtime_ns for p in (entry_dir / "meta.json",
                                                                    entry_dir / "reproducer.mlir")),
                     tuple((b["backend"], b["signature"], b["count"]) for b in buckets))
        except OSError:
            return None
        if self._stamps.get(cause.name) == stamp and out.is_file():
            return out
        try:
            self._write(entry_dir, buckets, out, toolchain, cause)
        except (ShapefuzzError, OSError, ValueError):  # an entry that does not load or export: no link
            return None
        self._stamps[cause.name] = stamp
        return out

    def keep_only(self, causes: list[Cause]) -> list[str]:
        """Removes the reports of causes not in `causes` (a link is removed, never followed); the
        names removed, each said once."""
        keep = set()
        for cause in causes:
            try:
                keep.add(safe_name(cause.name, "cause"))
            except UnsafeName:
                continue
        try:
            names = os.listdir(self.folder) if not self.folder.is_symlink() else []
        except OSError:  # no issues/ yet
            return []
        removed = []
        for name in sorted(names):
            stem, dot, suffix = name.rpartition(".")
            if not dot or suffix not in ("md", "files") or stem in keep:
                continue
            path = self.folder / name
            try:
                st = os.lstat(path)
                if suffix == "files" and stat.S_ISDIR(st.st_mode):
                    shutil.rmtree(path)
                else:
                    path.unlink()
            except OSError as error:
                self.say(f"issues: could not remove the stale report {name}: {error.strerror or error}")
                continue
            self._stamps.pop(stem, None)
            if suffix == "md":
                removed.append(stem)
                self.say(f"issues: removed {name}: its cause is no longer one of this campaign's (merged or split)")
        return removed

    def _write(self, entry_dir: Path, buckets: list[dict[str, Any]], out: Path, toolchain: Toolchain,
               cause: Cause | None = None) -> None:
        from shapefuzz.corpus import load_entry
        from shapefuzz.export.issue import IssueContext, host_cpu_of, host_features_of, issue_plan, write_issue
        from shapefuzz.triage.shown import shown_runs_of

        entry = load_entry(entry_dir)
        p = issue_plan(entry, toolchain)  # a compile failure's: no NumPy reference built in the campaign's process
        # the cause's buckets are its candidates' failures, not this reproducer's: said so (triage.shown)
        lines = [f"{text(b['backend'])}: fails the same way in this campaign ({b['count']} hit(s))"
                 if b["signature"] == str(entry.signature) else
                 f"{text(b['backend'])}: {code(b['signature'])} in this campaign (same cause, {b['count']} hit(s))"
                 for b in buckets if b["state"] != "flaky"]
        lines += one_bug_lines(cause) if cause is not None else []
        lines.append(f"(as the campaign saw it; {code(f'shapefuzz export {entry.id} --format issue')} re-checks every "
                     "backend with the toolchain at hand)")
        real_dir(self.folder)  # a link in its place is replaced, never written through
        fresh_dir(out.with_name(out.stem + ".files"))  # no file of an older reproducer; a link removed, not followed
        host = host_cpu_of(p, toolchain)
        write_issue(p, out, toolchain, IssueContext(
            self.version_text(toolchain), tuple(lines), host_cpu=host, host_features=host_features_of(host, toolchain),
            shown=shown_runs_of(entry.meta, entry.mlir), verdicts_header=CAMPAIGN_SAW,
            reported=(cause.reported if cause is not None else "") or str(entry.meta.get("reported") or "")))
