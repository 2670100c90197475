"""The command line. Every user error becomes one line on stderr and exit 2; compiler failures
are results, reported with exit 1."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click
import numpy as np

from shapefuzz import __version__
from shapefuzz.backends import BACKENDS, resolve_backends
from shapefuzz.errors import InvalidInputError, ShapefuzzError, UsageError
from shapefuzz.toolchain import ENV_IREE_BIN, Toolchain, find_toolchain

EXIT_OK, EXIT_FOUND, EXIT_USAGE = 0, 1, 2


class Session:
    """The one domain object on the click context: which toolchain, found lazily."""

    def __init__(self, iree_bin: str | None) -> None:
        self.iree_bin = iree_bin
        self._toolchain: Toolchain | None = None

    @property
    def toolchain(self) -> Toolchain:
        if self._toolchain is None:
            self._toolchain = find_toolchain(self.iree_bin)
        return self._toolchain


class BackendList(click.ParamType):
    """A comma-separated list of backend names or aliases (cpu, vulkan, rocm, cuda, all)."""

    name = "backends"

    def convert(self, value, param, ctx):
        if isinstance(value, tuple):
            return value
        try:
            return resolve_backends(value)
        except UsageError as error:
            self.fail(str(error), param, ctx)


def read_mlir(path: str) -> str:
    """The text of an MLIR file, or a one-line UsageError."""
    file = Path(path)
    if not file.exists():
        raise UsageError(f"no such file: {path}")
    if file.is_dir():
        raise UsageError(f"{path} is a folder, not an MLIR file")
    data = file.read_bytes()
    if not data.strip():
        raise InvalidInputError(f"{path} is empty")
    if b"\0" in data[:4096]:
        raise InvalidInputError(f"{path} is a binary file, not MLIR text")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidInputError(f"{path} is not UTF-8 text") from None


def load_inputs(path: str) -> list[np.ndarray]:
    try:
        with np.load(path, allow_pickle=False) as archive:
            names = sorted(archive.files, key=lambda n: (len(n), n))  # arr_0, arr_1, ..., arr_10
            return [archive[name] for name in names]
    except (OSError, ValueError) as error:
        raise UsageError(f"--inputs {path}: not a readable .npz file ({error})") from None


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="shapefuzz")
@click.option(
    "--iree-bin",
    envvar=ENV_IREE_BIN,
    type=click.Path(file_okay=False),
    help="Folder with iree-compile, iree-opt and iree-run-module (default: the pinned wheels).",
)
@click.pass_context
def cli(ctx: click.Context, iree_bin: str | None) -> None:
    """shapefuzz: hunts shape and layout bugs in the IREE compiler."""
    ctx.obj = Session(iree_bin)


@cli.command()
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def backends(session: Session, as_json: bool) -> None:
    """The toolchain and, for each backend, whether it compiles and executes here."""
    toolchain = session.toolchain
    probe = toolchain.probe
    rows = [
        {
            "name": b.name,
            "description": b.description,
            "compiles": b.compiles(probe),
            "executes": b.executes(probe),
            "availability": b.availability(probe),
            "flags": list(b.compile_flags(probe) or ()),
            "device": b.driver,
        }
        for b in BACKENDS.values()
    ]
    if as_json:
        click.echo(json.dumps({
            "toolchain": {"source": toolchain.source, "iree_compile": str(toolchain.compile_bin),
                          "iree_run_module": str(toolchain.run_bin) if toolchain.run_bin else None,
                          "version": probe.version},
            "devices": list(probe.devices),
            "backends": rows,
        }, indent=2))
        return
    click.echo(f"toolchain: {toolchain.source} ({toolchain.compile_bin})")
    click.echo(f"version:   {probe.version}")
    click.echo(f"devices:   {', '.join(probe.devices) or 'none'}")
    for row in rows:
        click.echo(f"  {row['name']:<16} {row['availability']:<40} {row['description']}")
    if not probe.has_device("vulkan"):
        click.echo("note: no Vulkan device: install Debian's mesa-vulkan-drivers for the software driver", err=True)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Comma-separated backends or aliases (cpu, vulkan, rocm, cuda, all).")
@click.option("--inputs", "inputs_path", type=click.Path(), default=None,
              help=".npz of the function's arguments in order (arr_0, arr_1, ...).")
@click.option("--dynamic-size", default=4, show_default=True,
              help="Size given to each '?' dim when inputs are generated.")
@click.option("--seed", default=0, show_default=True, help="Seed for generated inputs.")
@click.option("--compile-timeout", default=120.0, show_default=True, help="Seconds per compile.")
@click.option("--no-confirm", is_flag=True, help="Do not re-run failures to rule out flakiness.")
@click.option("--forms", is_flag=True,
              help="Generated files only: also check every equivalent formulation (metamorphic oracle).")
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.pass_obj
def check(session: Session, file: str, backend_names, inputs_path, dynamic_size, seed,
          compile_timeout, no_confirm, forms, as_json) -> None:
    """Verify FILE, compile it on each backend, run it where a device exists and compare."""
    from shapefuzz.checkfile import check_file, check_file_forms

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


@cli.command()
@click.option("--op", "family", required=True, help="Op family: conv, conv_transpose, scatter, one_hot, topk.")
@click.option("--seed", default=0, show_default=True)
def gen(family: str, seed: int) -> None:
    """Print one generated case's MLIR (with its parameters in the first line)."""
    from shapefuzz.families import render_case
    from shapefuzz.generate import draw_case

    click.echo(render_case(draw_case(family, seed)), nl=False)


@cli.command()
@click.argument("file", type=click.Path(dir_okay=True))
@click.option("-o", "--output", "out", default=None, help="Where to write the result (default FILE.min.mlir).")
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Backends to look for the failure on (default: llvm-cpu, vmvx, vulkan-spirv, rocm-gfx942, cuda-sm80).")
@click.option("--backend", "backend", default=None, help="Keep the failure on this backend (default: the first failing).")
@click.option("--signature", "signature_text", default=None, help="Keep the failure whose signature matches TEXT.")
@click.option("--time", "time_limit", default="10m", show_default=True, help="Time limit: 90s, 5m, 1h.")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=1, show_default=True, help="Parallel trials.")
@click.option("--compile-timeout", default=120.0, show_default=True, help="Seconds for the first compile.")
@click.option("--corpus", "corpus_dir", default=None, help="Also save the result and new failures to this corpus.")
@click.pass_obj
def shrink(session: Session, file, out, backend_names, backend, signature_text, time_limit, jobs,
           compile_timeout, corpus_dir) -> None:
    """Minimize FILE while it keeps failing with the same signature."""
    from shapefuzz.shrink.run import parse_duration, result_lines, shrink_file

    text = read_mlir(file)
    if backend is not None and backend not in BACKENDS:
        resolve_backends(backend)  # raises with a suggestion
    result = shrink_file(
        file, text, session.toolchain, backend_names or resolve_backends(None), out=out,
        signature_text=signature_text, backend=backend, time_limit=parse_duration(time_limit), jobs=jobs,
        compile_timeout=compile_timeout, corpus=corpus_dir, progress=lambda line: click.echo(line, err=True),
    )
    for line in result_lines(result):
        click.echo(line)
    sys.exit(130 if result.stopped_because == "interrupted" else EXIT_OK)


@cli.command()
@click.option("--ops", default=None, help="Comma-separated op families (default: all): conv, conv_transpose, scatter, one_hot, topk.")
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Backends or aliases (default: llvm-cpu, vmvx, vulkan-spirv, rocm-gfx942, cuda-sm80).")
@click.option("--time", "time_budget", default=None, help="Active time for the whole campaign: 45s, 90m, 8h.")
@click.option("--count", type=int, default=None, help="Candidates in the whole campaign.")
@click.option("--jobs", "-j", type=int, default=None, help="Parallel workers (default: the cores).")
@click.option("--seed", type=int, default=None, help="Campaign seed (default 0; a resumed campaign keeps its own).")
@click.option("--campaign", "campaign_dir", default=None, help="Campaign folder (default: ./shapefuzz-campaign).")
@click.option("--corpus", "corpus_dir", default=None, help="Corpus folder (default: CAMPAIGN/corpus).")
@click.option("--compile-timeout", type=float, default=None, help="Seconds per compile (default 120).")
@click.option("--no-shrink", is_flag=True, help="Do not shrink new buckets in the background.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@click.pass_obj
def fuzz(session: Session, ops, backend_names, time_budget, count, jobs, seed, campaign_dir, corpus_dir,
         compile_timeout, no_shrink, as_json) -> None:
    """Run (or resume) a campaign until its budget is spent or Ctrl-C; bucket and save findings."""
    from shapefuzz.campaign.report import json_text, text_lines
    from shapefuzz.campaign.run import FuzzRequest, run_campaign

    request = FuzzRequest(ops, backend_names, time_budget, count, jobs, seed, campaign_dir, corpus_dir,
                          not no_shrink, compile_timeout, tuple(sys.argv[1:]))
    summary = run_campaign(request, session.toolchain)
    if as_json:
        click.echo(json_text(summary))
    else:
        for line in text_lines(summary):
            click.echo(line)
    sys.exit(EXIT_OK)


from shapefuzz.corpus_cli import COMMANDS as _CORPUS_COMMANDS  # noqa: E402 - replay, corpus, export, bisect

for _command in _CORPUS_COMMANDS:
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
