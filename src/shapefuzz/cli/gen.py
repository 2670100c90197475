"""`shapefuzz gen`: print one generated case, or the coverage of many (`--stats N`)."""

from __future__ import annotations

import click

from shapefuzz.cli.params import SEED
from shapefuzz.cli.common import toolchain_options
from shapefuzz.families import FAMILY_MODULES
from shapefuzz.families.base import REGIMES


@click.command()
@click.option("--op", "family", type=click.Choice(FAMILY_MODULES), default=None,
              help="Op family (with --stats: default every family).")
@click.option("--seed", type=SEED, default=0, show_default=True)
@click.option("--regime", type=click.Choice(REGIMES), default="small", show_default=True,
              help="Sizes: small (lanes that execute) or large (compile-only GPU lanes).")
@click.option("--swarm/--no-swarm", default=False, show_default=True,
              help="Swarm testing: each case first draws which features it may use.")
@click.option("--context/--no-context", "context", default=None,
              help="Draw the op inside a chain of producers and consumers (where one fits), or never "
                   "(default: never; campaigns draw one in 2).")
@click.option("--stats", type=click.IntRange(1, 100_000), default=None, metavar="N",
              help="Print per-feature and per-pair coverage over N draws instead of a case.")
@click.option("--pairs", type=click.IntRange(0, 10_000), default=15, show_default=True,
              help="With --stats: how many of the rarest feature pairs to list.")
@click.option("--heatmap", type=click.Path(dir_okay=False), default=None, metavar="FILE.png",
              help="With --stats: also write the per-feature and per-pair coverage as a heatmap image.")
@toolchain_options
def gen(family: str | None, seed: int, regime: str, swarm: bool, context: bool | None, stats: int | None, pairs: int,
        heatmap: str | None) -> None:
    """Print one generated case's MLIR (with its parameters in the first line)."""
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import coverage, draw_case

    share = None if context is None else float(context)
    if heatmap is not None and stats is None:
        raise click.UsageError("--heatmap goes with --stats N")
    if stats is None:
        if family is None:
            raise click.UsageError("--op is required (unless --stats)")
        click.echo(render_case(draw_case(family, seed, regime=regime, swarm=swarm, context_share=share)), nl=False)
        return
    found = []
    for name in [family] if family else list(FAMILY_MODULES):
        found.append(coverage(name, stats, seed=seed, regime=regime, swarm=swarm, context_share=share))
        click.echo(found[-1].report(pairs))
    if heatmap is not None:
        from shapefuzz.families.heatmap import write_heatmap

        click.echo(f"wrote {write_heatmap(found, heatmap)}")
