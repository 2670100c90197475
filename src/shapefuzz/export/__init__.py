"""Exporting a corpus entry as a test IREE (or anyone) can run as written.

- `lit`: one MLIR file with RUN lines for IREE's lit suite. While the entry is expected to fail,
  the RUN lines assert today's failure (`not iree-compile ... | FileCheck` with the error as a
  CHECK line, `not --crash` for crashes, `not iree-run-module --expected_output=...` for wrong
  numbers) and the comment below them gives the lines that should pass once it is fixed; an entry
  marked fixed gets the passing lines as RUN lines.
- `run-module`: a folder with the reproducer, `inputs/*.npy`, `expected/*.npy` and `run.sh`:
  `iree-compile` then `iree-run-module --input=@... --expected_output=@...` (exits non-zero while
  the bug is there).
- `pytest`: one self-contained test file (MLIR and arrays inline) that compiles and runs with the
  `iree-compile`/`iree-run-module` on PATH; strict xfail while the entry is expected to fail, so a
  fix shows up as an unexpected pass.
- `issue`: Markdown for iree-org/iree's bug report form, with the files to attach.
- `iree-test-suites`: the layout of iree-org/iree-test-suites' op tests.

One module per format; `plan.py` resolves what they share (the `Plan`, with the comparison rule
the entry's family supplies). Every name other modules use is re-exported here.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from shapefuzz.corpus import CorpusEntry
from shapefuzz.errors import UsageError
from shapefuzz.export.iree_test_suites import write_test_suite
from shapefuzz.export.issue import (
    IssueContext, bisect_line, import_steps, issue_context, issue_plan, to_issue, write_issue,
)
from shapefuzz.export.lit import to_lit
from shapefuzz.export.plan import FORMATS, Plan, cannot_represent, comparison_rule, inline_value, plan, real_folder
from shapefuzz.export.pytest_file import to_pytest
from shapefuzz.export.run_module import (
    check_script, checks_source, run_module_argv, run_module_script, write_run_module,
)
from shapefuzz.files import atomic_write
from shapefuzz.iree.toolchain import Toolchain

__all__ = [
    "FORMATS", "Plan", "plan", "comparison_rule", "cannot_represent", "inline_value", "export_entry", "to_lit",
    "to_pytest", "run_module_script", "run_module_argv", "check_script", "checks_source", "write_run_module",
    "IssueContext", "import_steps", "issue_context", "issue_plan", "to_issue", "write_issue", "bisect_line", "write_test_suite",
]


def export_entry(entry: CorpusEntry, fmt: str, toolchain: Toolchain, out: str | os.PathLike | None = None,
                 expect: str = "auto") -> list[Path]:
    """Writes the export and returns the files written (the first is the one to run)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
    p = issue_plan(entry, toolchain, expect) if fmt == "issue" else plan(entry, toolchain, expect)
    # Default names come from the id, which load_entry validated ([a-z0-9-]): never a path.
    if fmt in ("lit", "pytest") and out:
        real_folder(Path(out).parent)
    if fmt == "lit":
        path = Path(out) if out else Path(f"{entry.id}.mlir")
        atomic_write(path, to_lit(p).encode())
        return [path]
    if fmt == "pytest":
        path = Path(out) if out else Path(f"test_{re.sub(r'[^a-z0-9]', '_', entry.id)}.py")
        atomic_write(path, to_pytest(p).encode())
        return [path]
    if fmt == "issue":
        return write_issue(p, Path(out) if out else Path(f"{entry.id}.issue.md"), toolchain)
    if fmt == "iree-test-suites":
        return write_test_suite(p, Path(out) if out else Path(f"{entry.id}.iree-test-suites"))
    folder = Path(out) if out else Path(f"{entry.id}.run-module")
    written = write_run_module(p, folder)
    return [written[-1], *written[:-1]]
