"""The command line: one click group, one module per command. Every user error becomes one line on
stderr and exit 2; compiler failures are results, reported with exit 1."""

from __future__ import annotations

import os
import sqlite3
import sys

import click

from shapefuzz import __version__

from shapefuzz.process import interrupts
from shapefuzz.cli import backends, bisect, bundle, check, corpus, export, fuzz, gen, onnx_ops, onnx_suite, replay, report, shrink, \
    triage
from shapefuzz.cli.params import ReleaseVersion, array_cap_option
from shapefuzz.cli.common import EXIT_USAGE, IREE_BIN_HELP, IREE_VERSION_HELP, Session, refuse_empty_values
from shapefuzz.errors import ClusterLost, ShapefuzzError


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shapefuzz")
@click.option("--iree-bin", type=click.Path(file_okay=False), help=IREE_BIN_HELP)
@click.option("--iree-version", type=ReleaseVersion(), metavar="X.Y.Z", help=IREE_VERSION_HELP)
@array_cap_option
@click.pass_context
def cli(ctx: click.Context, iree_bin: str | None, iree_version: str | None) -> None:
    """shapefuzz: hunts shape and layout bugs in the IREE compiler."""
    ctx.obj = Session(iree_bin, iree_version)


for _command in (backends.backends, check.check, gen.gen, shrink.shrink, fuzz.fuzz,
                 replay.replay, corpus.corpus, export.export, bisect.bisect, onnx_suite.onnx_suite, onnx_ops.onnx_ops,
                 report.report, triage.triage, bundle.bundle, bundle.bundle_run, bundle.bundle_judge):
    cli.add_command(_command)
refuse_empty_values(cli)  # every command's text and path values, and the group's own (--iree-bin)


def _prepare() -> None:
    """What every command needs before its arguments are parsed (signals that unwind are already
    set): Hypothesis's files kept out of the user's folder, the environment's array cap checked,
    and the temporary folders of commands killed with SIGKILL removed."""
    from shapefuzz.process.cleanup import sweep_stale_temps
    from shapefuzz.schema import max_array_bytes
    from shapefuzz.iree.toolchain import cache_root

    # Hypothesis caches what it learns into ./.hypothesis unless told otherwise; the user's
    # folder is theirs (campaign workers inherit the variable).
    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = str(cache_root() / "hypothesis")
    sweep_stale_temps()
    max_array_bytes()  # SHAPEFUZZ_MAX_ARRAY_BYTES=lots is one line now, not a silent 1 GiB


def main() -> None:
    interrupts.forget()
    previous = interrupts.install()
    try:
        _prepare()
        try:
            cli.main(standalone_mode=False)
        except SystemExit as done:  # a command's own exit (0, 1 or another code)
            _end(done.code)
            raise
        _end(None)
    except click.exceptions.Abort as abort:  # click turns a KeyboardInterrupt into Abort
        click.echo(f"shapefuzz: {interrupts.word(abort.__context__)}", err=True)
        sys.exit(interrupts.exit_code(abort.__context__))
    except click.ClickException as error:
        click.echo(f"shapefuzz: error: {error.format_message()}", err=True)
        sys.exit(EXIT_USAGE)
    except ClusterLost as error:
        click.echo(f"shapefuzz: error: {_one_line(error)}", err=True)
        _leave_now(EXIT_TEMPFAIL)
    except ShapefuzzError as error:
        click.echo(f"shapefuzz: error: {_one_line(error)}", err=True)
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt as stop:  # SIGINT, SIGTERM or SIGHUP: 130, 143, 129
        click.echo(f"shapefuzz: {interrupts.word(stop)}", err=True)
        sys.exit(interrupts.exit_code(stop))
    except OSError as error:  # our own files: a full disk, a read-only folder, no permission
        where = f"{error.filename}: " if error.filename else ""
        click.echo(f"shapefuzz: error: {where}{error.strerror or _one_line(error)}", err=True)
        sys.exit(EXIT_USAGE)
    except sqlite3.Error as error:
        click.echo(f"shapefuzz: error: campaign database: {_one_line(error)}", err=True)
        sys.exit(EXIT_USAGE)
    except MemoryError:
        click.echo("shapefuzz: error: out of memory (an input too large? see --max-array-bytes)", err=True)
        sys.exit(EXIT_USAGE)
    except Exception as error:  # our bug: never exit 1, which means "found a failure"
        click.echo(f"shapefuzz: internal error (a shapefuzz bug): {type(error).__name__}: {_one_line(error)}"
                   f"{_save_traceback()}", err=True)
        sys.exit(EXIT_INTERNAL)
    finally:
        interrupts.restore(previous)  # (main called in-process, by a test)


def _end(code: int | str | None) -> None:
    """The command ran to its end: it exits with `code`, unless a signal it took was lost on the
    way (swallowed inside a gc callback or a `__del__`): then one line and 128 + the signal, never
    0 or 1 (a CI job killed by its timeout must not read as a success)."""
    final = interrupts.final_code(code) if code is None or isinstance(code, int) else code
    if final != code:
        click.echo(f"shapefuzz: {interrupts.word()}", err=True)
        sys.exit(final)


EXIT_INTERNAL = 70  # EX_SOFTWARE
EXIT_TEMPFAIL = 75  # EX_TEMPFAIL: the Ray head went away; the same command resumes


def _leave_now(code: int) -> None:
    """Exit without Ray's exit hook, which waits for a head that is gone (a minute, then a crash):
    what the exit would do for us is done here (children reaped, output flushed)."""
    from shapefuzz.process.sandbox import reap_at_exit

    reap_at_exit()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _one_line(error: BaseException) -> str:
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    return (" ".join(lines) if len(lines) <= 3 else lines[0])[:1000]


def _save_traceback() -> str:
    """Where the traceback of an internal error went (a file, so stderr stays one line)."""
    import tempfile
    import traceback

    try:
        fd, path = tempfile.mkstemp(prefix="shapefuzz-crash-", suffix=".txt")
        with os.fdopen(fd, "w") as handle:
            handle.write(traceback.format_exc())
        return f"; traceback in {path}"
    except OSError:
        return ""
