"""`shapefuzz onnx-ops`: ONNX's own operators, drawn from their schemas (the onnx_op family),
judged by ONNX Runtime and onnx.reference agreeing, compiled and run on the lanes; a table per op."""

from __future__ import annotations

import json
import sys

import click

from shapefuzz.cli.common import EXIT_FOUND, EXIT_OK, Session, toolchain_options
from shapefuzz.cli.params import BackendList, Seconds, array_cap_option


@click.command("onnx-ops")
@click.option("--ops", default=None, metavar="OP,...",
              help="ONNX operators (e.g. Resize,Slice,Pad; `all`: every op of the default domain; default: the "
                   "onnx_op family's drawn ops).")
@click.option("--n", "count", default=5, show_default=True, type=click.IntRange(1, 100000), help="Cases per op.")
@click.option("--seed", default=0, show_default=True, type=int)
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Comma-separated backends or aliases (default: llvm-cpu).")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds per compile.")
@click.option("--no-confirm", is_flag=True, help="Do not re-run failures to rule out flakiness.")
@click.option("--save/--no-save", default=True, show_default=True, help="Save each failure into the corpus.")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False), default="corpus", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@toolchain_options
@array_cap_option
@click.pass_obj
def onnx_ops(session: Session, ops, count, seed, backend_names, compile_timeout, no_confirm, save, corpus_dir,
             as_json) -> None:
    """Sweep ONNX operators: drawn, not drawable, not supported, reference disagreement, passed, failed per op.
    Exit 1 when a case fails on some lane."""
    from shapefuzz.errors import UsageError
    from shapefuzz.iree.backends import REFERENCE_BACKEND
    from shapefuzz.recheck.onnx_ops import DISAGREE, FAILED, NOT_SUPPORTED, resolve_ops, save_findings, sweep_op, \
        table, to_json
    from shapefuzz.recheck.replay import budget_with

    names = None
    if ops is not None:
        names = [n.strip() for n in ops.split(",") if n.strip()]
        if not names:
            raise UsageError("--ops: empty list")
    op_list = resolve_ops(names)
    lanes = backend_names or (REFERENCE_BACKEND,)
    budget = budget_with(compile_timeout)

    def progress(result) -> None:
        if not as_json and result.verdict in (FAILED, DISAGREE, NOT_SUPPORTED):
            click.echo(f"{result.op}: {result.verdict}: {result.why[:300]}", err=True)

    rows = [sweep_op(op, count, seed, lanes, session.toolchain, budget, not no_confirm, progress) for op in op_list]
    saved = save_findings(rows, corpus_dir, session.toolchain) if save else []
    if as_json:
        click.echo(json.dumps({**to_json(rows), "saved": saved}, indent=2))
    else:
        lines = table(rows)
        widths = [max(len(r[i]) for r in lines) for i in range(len(lines[0]) - 1)]
        for line in lines:
            cells = [c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(line[:-1])]
            click.echo("  ".join(cells + ([line[-1]] if line[-1] else [])).rstrip())
        for said in saved:
            click.echo(said)
    sys.exit(EXIT_FOUND if any(row.count(FAILED) for row in rows) else EXIT_OK)
