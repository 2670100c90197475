"""`shapefuzz replay [corpus/]`: re-check every corpus entry against the current toolchain."""

from __future__ import annotations

import json
import sys

import click

from shapefuzz.process import interrupts
from shapefuzz.cli.common import toolchain_options
from shapefuzz.cli.params import BackendList, Seconds, array_cap_option
from shapefuzz.corpus import DEFAULT_CORPUS


@click.command()
@click.argument("corpus_dir", default=DEFAULT_CORPUS, type=click.Path(file_okay=False))
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Replay only entries of these backends (others are listed as not runnable).")
@click.option("--jobs", "-j", default=1, show_default=True, type=click.IntRange(1, 64), help="Entries checked in parallel.")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds per compile.")
@click.option("--no-confirm", is_flag=True, help="Do not re-run failures to rule out flakiness.")
@click.option("--update", is_flag=True, help="Record what was seen in each entry's meta.json "
              "(last_seen, toolchain versions, expected state fixed/failing).")
@click.option("--strict", is_flag=True, help="Exit 1 when any entry differs from its recorded state "
              "(a failing entry fixed or changed), not only when a fixed one fails again.")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@toolchain_options
@array_cap_option
@click.pass_obj
def replay(session, corpus_dir, backend_names, jobs, compile_timeout, no_confirm, update, strict, as_json) -> None:
    """Re-check every corpus entry against the current toolchain.

    Prints, per entry: still failing (same signature), fixed (now passes), changed (fails
    differently), not runnable (backend missing here), unreadable (broken entry or a reproducer
    this toolchain no longer parses). Exit status: 0 when every entry is as recorded; 1 when an
    entry recorded as "fixed" fails again (with --strict: when any entry differs from its recorded
    state); 3 when nothing regressed but some entry is unreadable; 2 for a usage error."""
    from shapefuzz.recheck.replay import budget_with, replay_corpus, table_lines

    summary = replay_corpus(corpus_dir, session.toolchain, backend_names, jobs, budget_with(compile_timeout),
                            update=update, confirm=not no_confirm)
    if as_json:
        click.echo(json.dumps(summary.to_json(strict), indent=2))
    else:
        for line in table_lines(summary):
            click.echo(line)
        if update:
            click.echo("recorded in each entry's meta.json (--update)")
    if summary.stopped is not None:
        click.echo(f"shapefuzz: {interrupts.word(summary.stopped)}: only the {len(summary.results)} entries "
                   "above were replayed", err=True)
        sys.exit(interrupts.exit_code(summary.stopped))
    sys.exit(summary.exit_code(strict))
