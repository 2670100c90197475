"""The command line: one click group, one module per command. Every user error becomes one line on
stderr and exit 2; compiler failures are results, reported with exit 1."""

from __future__ import annotations

import sys

import click

from shapefuzz import __version__
from shapefuzz.cli import backends, bisect, check, corpus, export, fuzz, gen, replay, shrink
from shapefuzz.cli.common import EXIT_USAGE, IREE_BIN_HELP, IREE_VERSION_HELP, Session
from shapefuzz.errors import ShapefuzzError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shapefuzz")
@click.option("--iree-bin", type=click.Path(file_okay=False), help=IREE_BIN_HELP)
@click.option("--iree-version", metavar="X.Y.Z", help=IREE_VERSION_HELP)
@click.pass_context
def cli(ctx: click.Context, iree_bin: str | None, iree_version: str | None) -> None:
    """shapefuzz: hunts shape and layout bugs in the IREE compiler."""
    ctx.obj = Session(iree_bin, iree_version)


for _command in (backends.backends, check.check, gen.gen, shrink.shrink, fuzz.fuzz,
                 replay.replay, corpus.corpus, export.export, bisect.bisect):
    cli.add_command(_command)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("shapefuzz: interrupted", err=True)
        sys.exit(130)
    except click.ClickException as error:
        click.echo(f"shapefuzz: error: {error.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except ShapefuzzError as error:
        click.echo(f"shapefuzz: error: {error}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        click.echo("shapefuzz: interrupted", err=True)
        sys.exit(130)
