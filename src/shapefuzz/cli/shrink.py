"""`shapefuzz shrink FILE`: minimize a failing module under "same signature"."""

from __future__ import annotations

import sys

import click

from shapefuzz.process import interrupts
from shapefuzz.iree.backends import BACKENDS, resolve_backends
from shapefuzz.cli.common import EXIT_OK, Session, read_mlir, toolchain_options
from shapefuzz.cli.params import BackendList, Duration, OutputPath, Seconds, array_cap_option
from shapefuzz.corpus import DEFAULT_CORPUS


@click.command()
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("-o", "--output", "out", default=None, type=OutputPath(), help="Where to write the result (default FILE.min.mlir).")
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Backends to look for the failure on (default: the default set, marked * by `shapefuzz backends`).")
@click.option("--backend", "backend", default=None, help="Keep the failure on this backend (default: the first failing).")
@click.option("--signature", "signature_text", default=None, help="Keep the failure whose signature matches TEXT.")
@click.option("--time", "time_limit", type=Duration(), default="10m", show_default=True,
              help="Time limit: 90s, 5m, 1h30m, or none.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True, help="Parallel trials.")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds for the first compile.")
@click.option("--corpus", "corpus_dir", default=None,
              help=f"Also save the result and new failures to this corpus (usually ./{DEFAULT_CORPUS}).")
@click.option("--plain", is_flag=True, help="Plain progress lines, also on a terminal (default there: a live view).")
@toolchain_options
@array_cap_option
@click.pass_obj
def shrink(session: Session, file, out, backend_names, backend, signature_text, time_limit, jobs,
           compile_timeout, corpus_dir, plain) -> None:
    """Minimize FILE while it keeps failing with the same signature."""
    from shapefuzz.campaign.report import live
    from shapefuzz.shrink.run import result_lines, shrink_file

    text = read_mlir(file)
    if backend is not None and backend not in BACKENDS:
        resolve_backends(backend)  # raises with a suggestion
    view = live.ShrinkView(file, text, time_limit) if live.wanted(plain) else None
    try:
        result = shrink_file(
            file, text, session.toolchain, backend_names or resolve_backends(None), out=out,
            signature_text=signature_text, backend=backend, time_limit=time_limit, jobs=jobs,
            compile_timeout=compile_timeout, corpus=corpus_dir,
            progress=view.message if view else lambda line: click.echo(line, err=True),
            on_step=view.step if view else None,
        )
    finally:
        if view is not None:
            view.close()
    for line in result_lines(result):
        click.echo(line)
    sys.exit(interrupts.exit_code() if result.stopped_because == "interrupted" else EXIT_OK)
