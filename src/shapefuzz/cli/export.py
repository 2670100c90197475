"""`shapefuzz export ENTRY`: a corpus entry as a test IREE can run as written."""

from __future__ import annotations

import click

from shapefuzz.cli.common import toolchain_options
from shapefuzz.cli.params import OutputPath, array_cap_option
from shapefuzz.corpus import DEFAULT_CORPUS


@click.command("export")
@click.argument("entry")
@click.option("--format", "fmt", type=click.Choice(["lit", "run-module", "pytest", "issue", "iree-test-suites"]),
              default="lit", show_default=True,
              help="lit: MLIR with RUN lines; run-module: folder with .npy files and run.sh; pytest: one test file; "
                   "issue: Markdown for iree-org/iree's bug report form (+ a folder of files to attach); "
                   "iree-test-suites: a test folder in iree-org/iree-test-suites' layout, with a target config.")
@click.option("-o", "--output", "out", default=None, type=OutputPath(),
              help="File (lit, pytest, issue) or folder (run-module, iree-test-suites) to write; "
                   "default named after the entry.")
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False),
              help="Where to look ENTRY up when it is an id.")
@click.option("--expect", type=click.Choice(["auto", "failing", "fixed"]), default="auto", show_default=True,
              help="Write the test that passes while the bug is there (failing) or once it is fixed; "
                   "auto follows the entry's expected state.")
@toolchain_options
@array_cap_option
@click.pass_obj
def export(session, entry: str, fmt: str, out, corpus_dir: str, expect: str) -> None:
    """Export a corpus entry (folder or id) as a test IREE can run as written."""
    from shapefuzz.corpus import find_entry
    from shapefuzz.export import export_entry

    written = export_entry(find_entry(entry, corpus_dir), fmt, session.toolchain, out, expect)
    click.echo(f"wrote {written[0]}" + (f" (+{len(written) - 1} files)" if len(written) > 1 else ""))
    if fmt == "run-module":
        click.echo(f"run: sh {written[0]}")
    elif fmt == "pytest":
        click.echo(f"run: pytest {written[0]}")
    elif fmt == "issue":
        click.echo(f"file it at https://github.com/iree-org/iree/issues/new?template=bug_report.yml "
                   f"(attach {written[1].parent} as a .zip)")
    elif fmt == "iree-test-suites":
        click.echo(f"test folder: {written[0].parent}; target config (flags, expected failures): {written[-1]}")
    else:
        click.echo(f"run: lit {written[0]}  (needs iree-compile, iree-run-module, FileCheck and not on PATH)")
