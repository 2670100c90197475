"""`shapefuzz check FILE`: one module on every chosen backend, judged against its reference."""

from __future__ import annotations

import json
import sys

import click

from shapefuzz.iree.backends import resolve_backends
from shapefuzz.cli.common import EXIT_FOUND, EXIT_OK, Session, load_inputs, read_mlir, toolchain_options
from shapefuzz.cli.params import BackendList, POSITIVE, SEED, Seconds, array_cap_option
from shapefuzz.errors import InvalidInputError


@click.command()
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Comma-separated backends or aliases (cpu, vulkan, rocm, cuda, all).")
@click.option("--inputs", "inputs_path", type=click.Path(), default=None,
              help=".npz of the function's arguments in order (arr_0, arr_1, ...).")
@click.option("--dynamic-size", type=POSITIVE, default=4, show_default=True,
              help="Size given to each '?' dim when inputs are generated.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for generated inputs.")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds per compile.")
@click.option("--no-confirm", is_flag=True, help="Do not re-run failures to rule out flakiness.")
@click.option("--forms", is_flag=True,
              help="Generated files only: also check every equivalent formulation (metamorphic oracle).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@toolchain_options
@array_cap_option
@click.pass_obj
def check(session: Session, file: str, backend_names, inputs_path, dynamic_size, seed,
          compile_timeout, no_confirm, forms, as_json) -> None:
    """Verify FILE, compile it on each backend, run it where a device exists and compare."""
    from shapefuzz.judge.modulecheck import check_file, check_file_forms

    text = read_mlir(file)
    if forms:
        lines, payload, found = check_file_forms(
            text, backend_names or resolve_backends(None), session.toolchain, seed=seed,
            compile_timeout=compile_timeout, confirm=not no_confirm,
        )
        click.echo(json.dumps(payload, indent=2) if as_json else "\n".join(lines))
        sys.exit(EXIT_FOUND if found else EXIT_OK)
    inputs = load_inputs(inputs_path) if inputs_path else None
    report, notes = check_file(
        text, backend_names or resolve_backends(None), session.toolchain, inputs=inputs,
        dynamic_size=dynamic_size, seed=seed, compile_timeout=compile_timeout, confirm=not no_confirm,
    )
    if report.verify_error:
        first = report.verify_error.strip().splitlines()[0] if report.verify_error.strip() else "unknown error"
        raise InvalidInputError(f"{file} does not verify: {first}")
    from shapefuzz.display import report_lines
    from shapefuzz.model import Verdict

    if as_json:
        payload = report.to_json()
        payload["notes"] = list(notes) + payload["notes"]
        click.echo(json.dumps(payload, indent=2))
    else:
        for note in notes:
            click.echo(f"note: {note}")
        for line in report_lines(report):
            click.echo(line)
    sys.exit(EXIT_OK if report.verdict == Verdict.PASS else EXIT_FOUND)
