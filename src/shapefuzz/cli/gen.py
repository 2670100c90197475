"""`shapefuzz gen`: print one generated case."""

from __future__ import annotations

import click

from shapefuzz.cli.params import SEED
from shapefuzz.cli.common import toolchain_options


@click.command()
@click.option("--op", "family", required=True, help="Op family: conv, conv_transpose, scatter, one_hot, topk.")
@click.option("--seed", type=SEED, default=0, show_default=True)
@toolchain_options
def gen(family: str, seed: int) -> None:
    """Print one generated case's MLIR (with its parameters in the first line)."""
    from shapefuzz.families import render_case
    from shapefuzz.generate import draw_case

    click.echo(render_case(draw_case(family, seed)), nl=False)
