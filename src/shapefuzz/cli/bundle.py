"""`shapefuzz bundle`, `bundle-run` and `bundle-judge`: compile cases here for a device that is on
another machine, run them there with the runtime alone, read the results back here."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from shapefuzz.cli.common import EXIT_FOUND, EXIT_OK, Session, toolchain_options
from shapefuzz.cli.params import SEED, POSITIVE, Bytes, Seconds, not_empty
from shapefuzz.families.registry import DEFAULT_FAMILIES


@click.command()
@click.option("--target", type=click.Choice(["cuda", "llvm-cpu"]), default="cuda", show_default=True,
              help="What to compile for (llvm-cpu: a bundle this machine's runtime can run, to try the runner).")
@click.option("--arch", default=None, callback=not_empty,
              help="NVIDIA compute capability for --target cuda (default sm_80: IREE 3.13 builds no sm_90 code, "
                   "and the driver JIT-compiles sm_80's PTX on newer GPUs).")
@click.option("--n", "count", type=POSITIVE, default=None, help="Cases to draw (not with --from-corpus).")
@click.option("--out", "out", type=click.Path(), required=True, callback=not_empty, help="A new (or empty) folder for the bundle.")
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed of the draws (as a campaign's --seed).")
@click.option("--ops", default=None, callback=not_empty, help=f"Comma-separated op families (default: {', '.join(DEFAULT_FAMILIES)}).")
@click.option("--context-share", type=float, default=None,
              help="Share of cases drawn inside a producer/consumer chain (default 0.5, as a campaign).")
@click.option("--jobs", "-j", type=click.IntRange(1, 64), default=2, show_default=True, help="Parallel compiles.")
@click.option("--compile-timeout", type=Seconds(), default=None, help="Seconds per compile (default 120).")
@click.option("--max-tensor-bytes", type=Bytes(), default="1M", show_default=True,
              help="A case declaring a larger tensor is drawn again (the bundle travels to the device).")
@click.option("--variant", default=None, callback=not_empty,
              help="Compile with a pipeline variant of the target's lane (cuda: o3, aggressive-fusion, "
                   "single-dispatch, no-igemm; `shapefuzz backends` lists them).")
@click.option("--from-corpus", "from_corpus", type=click.Path(), default=None, callback=not_empty,
              help="Instead of drawing: this corpus's entries of the bundle's lane, each chain case with its ladder "
                   "(the root alone, the chain without each context op the shrinker can drop).")
@click.option("--lane", default=None, callback=not_empty,
              help="The lane to compile for, by name (cuda-sm80-o3), instead of --target/--arch/--variant.")
@toolchain_options
@click.pass_obj
def bundle(session: Session, target, arch, count, out, seed, ops, context_share, jobs, compile_timeout,
           max_tensor_bytes, variant, from_corpus, lane) -> None:
    """Draw cases as a campaign does (or take a corpus's entries and their ladders), compile them here
    for a device elsewhere, write a bundle folder that `shapefuzz bundle-run` runs there with the IREE
    runtime alone."""
    from shapefuzz.bundle.build import BundleRequest, build_bundle, lane_named
    from shapefuzz.errors import UsageError
    from shapefuzz.schema import human_bytes

    if (count is None) == (from_corpus is None):
        raise UsageError("give --n (cases to draw) or --from-corpus CORPUS, one of them")
    if lane is not None:
        if arch is not None or variant is not None:
            raise UsageError("--lane names the lane: leave out --arch and --variant")
        target, arch, variant = lane_named(lane)
    request = BundleRequest(target, arch, count or 0, Path(out), seed, ops, context_share, jobs, compile_timeout,
                            max_tensor_bytes, variant, None if from_corpus is None else Path(from_corpus))
    built = build_bundle(request, session.toolchain, lambda line: click.echo(line))
    states = ", ".join(f"{n} {state}" for state, n in built.states.items() if n)
    click.echo(f"bundle {built.folder}: {states}; {human_bytes(built.bytes)} in {built.seconds:.0f}s")
    click.echo(f"run it where the device is: PYTHONPATH=<runtime wheel dir>:src python3 -m shapefuzz bundle-run "
               f"{built.folder} --out results.json")


@click.command("bundle-run", context_settings={"ignore_unknown_options": True, "allow_extra_args": True,
                                               "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def bundle_run(args) -> None:
    """Run a bundle on its device with the IREE runtime alone (see `shapefuzz bundle-run --help`)."""
    from shapefuzz.bundle.runner import main

    sys.exit(main(list(args)))


@click.command("bundle-judge")
@click.argument("folder", type=click.Path(exists=True, file_okay=False))
@click.argument("results", type=click.Path(exists=True, dir_okay=False))
@click.option("--save", "corpus_dir", type=click.Path(file_okay=False), default=None, callback=not_empty,
              help="Save each device-only failure into this corpus folder (as a campaign saves a finding).")
@click.option("--localize-time", "localize_seconds", type=Seconds(minimum=0.0), default=None,
              help="Seconds to place each device-only wrong value here (same flags on llvm-cpu, then the device "
                   "lane's IR finished on llvm-cpu phase by phase; default 60, 0: not placed).")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
@toolchain_options
@click.pass_obj
def bundle_judge(session: Session, folder, results, corpus_dir, localize_seconds, as_json) -> None:
    """Read a bundle's results back here: each failure on the device is checked again on llvm-cpu
    (right there: a finding of the device's lane; wrong there too: the reference or a shared bug)."""
    from shapefuzz.bundle import layout
    from shapefuzz.bundle.judge import judge, table_lines
    from shapefuzz.bundle.ladder import save_verdicts, verdicts

    from shapefuzz.judge.localize_probe import DEFAULT_SECONDS

    seconds = DEFAULT_SECONDS if localize_seconds is None else localize_seconds
    corpus = None if corpus_dir is None else Path(corpus_dir)
    rows = judge(Path(folder), Path(results), session.toolchain, corpus, seconds)
    manifest = layout.read_manifest(Path(folder))  # read and checked by judge
    ladder = verdicts(Path(folder), manifest.cases, rows) if manifest.from_corpus else None
    if as_json:
        import json

        table = [row.to_json() for row in rows]
        click.echo(json.dumps(table if ladder is None else {"rows": table, "ladder": [v.to_json() for v in ladder]},
                              indent=1))
    else:
        for line in table_lines(rows) + [v.line() for v in ladder or []]:
            click.echo(line)
    if ladder and corpus is not None:
        written = save_verdicts(corpus, ladder, manifest.bundle_id)
        if not as_json:
            click.echo(f"wrote {written} verdicts into {corpus_dir} (meta.json bug.ladder, bug.chain where decided)")
    sys.exit(EXIT_FOUND if any(row.device_finding for row in rows) else EXIT_OK)
