"""Each cause's bug report (`export --format issue`'s Markdown and its folder of files to attach),
written into the campaign folder so the dashboard can link to it. Built from what the campaign
saw (each lane's bucket of the cause) instead of re-checking every backend, so refreshing the
dashboard compiles nothing; `shapefuzz export ENTRY --format issue` re-checks with the toolchain
at hand. A report is rewritten only when its entry or its cause's lanes changed."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from shapefuzz.errors import ShapefuzzError
from shapefuzz.toolchain import Toolchain

ISSUES_DIR = "issues"


class IssueTexts:
    def __init__(self, folder: Path, toolchain: Toolchain | None) -> None:
        self.folder = Path(folder) / ISSUES_DIR
        self.toolchain = toolchain
        self._version: str | None = None
        self._stamps: dict[str, tuple] = {}  # cause -> what its report was written from

    def version_text(self) -> str:
        if self._version is None:
            from shapefuzz.sandbox import Limits, run_sandboxed

            shown = run_sandboxed([str(self.toolchain.compile_bin), "--version"], Limits(timeout=60.0))
            self._version = (shown.stdout + shown.stderr).strip() or "(iree-compile --version printed nothing)"
        return self._version

    def write(self, cause: dict[str, Any], buckets: list[dict[str, Any]]) -> Path | None:
        """The report of one cause from its first corpus entry; None when it has none that loads
        (no entry yet, the corpus moved) or no toolchain was given."""
        entries = [Path(e) for e in cause.get("corpus_entries", []) if e]
        if not entries or self.toolchain is None:
            return None
        entry_dir = entries[0]
        out = self.folder / f"{cause['cause']}.md"
        try:
            stamp = (str(entry_dir), *(p.stat().st_mtime_ns for p in (entry_dir / "meta.json",
                                                                    entry_dir / "reproducer.mlir")),
                     tuple((b["backend"], b["signature"], b["count"]) for b in buckets))
        except OSError:
            return None
        if self._stamps.get(cause["cause"]) == stamp and out.is_file():
            return out
        try:
            self._write(entry_dir, buckets, out)
        except (ShapefuzzError, OSError, ValueError):  # an entry that does not load or export: no link
            return None
        self._stamps[cause["cause"]] = stamp
        return out

    def _write(self, entry_dir: Path, buckets: list[dict[str, Any]], out: Path) -> None:
        from shapefuzz.corpus import load_entry
        from shapefuzz.export.issue import IssueContext, write_issue
        from shapefuzz.export.plan import plan

        entry = load_entry(entry_dir)
        p = plan(entry, self.toolchain)
        lines = [f"{b['backend']}: fails the same way in this campaign ({b['count']} hit(s))"
                 if b["signature"] == str(entry.signature) else
                 f"{b['backend']}: `{b['signature']}` in this campaign (same cause, {b['count']} hit(s))"
                 for b in buckets if b["state"] != "flaky"]
        lines.append(f"(as the campaign saw it; `shapefuzz export {entry.id} --format issue` re-checks every "
                     "backend with the toolchain at hand)")
        self.folder.mkdir(parents=True, exist_ok=True)
        shutil.rmtree(out.with_name(out.stem + ".files"), ignore_errors=True)  # no file of an older reproducer
        write_issue(p, out, self.toolchain, IssueContext(self.version_text(), tuple(lines)))
