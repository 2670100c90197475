"""`shapefuzz onnx-suite`: ONNX's node conformance tests for our op families, imported by IREE's
ONNX importer, on every lane, against the tests' own expected outputs."""

from __future__ import annotations

import json
import os
import sys

import click

from shapefuzz.process import interrupts
from shapefuzz.iree.backends import resolve_backends
from shapefuzz.cli.common import EXIT_FOUND, EXIT_OK, Session, toolchain_options
from shapefuzz.cli.params import BackendList, Seconds, array_cap_option


def _names(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    names = tuple(n.strip() for n in value.split(",") if n.strip())
    if not names:
        raise click.BadParameter("empty list")
    return names


@click.command("onnx-suite")
@click.option("--ops", default=None, metavar="OP,...",
              help="ONNX ops whose node tests to run, or `all` (default: our families' ops: Conv, ConvTranspose, "
                   "Gather*, Scatter*, OneHot, TopK, pools).")
@click.option("--tests", "test_names", default=None, metavar="NAME,...", help="Only these node tests (by name).")
@click.option("--data", "data_dir", type=click.Path(), default=None,
              help="Read node tests from folders `python -m onnx.backend.test.cmd_tools generate-data` wrote "
                   "(default: build them in memory from the onnx wheel).")
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Comma-separated backends or aliases (cpu, vulkan, rocm, cuda, all).")
@click.option("--jobs", "-j", default=2, show_default=True, type=click.IntRange(1, 64), help="Tests run in parallel.")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds per compile.")
@click.option("--no-confirm", is_flag=True, help="Do not re-run failures to rule out flakiness.")
@click.option("--save", is_flag=True, help="Save each failing test and lane into the corpus, with its origin.")
@click.option("--corpus", "corpus_dir", type=click.Path(file_okay=False), default="corpus", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@click.option("--expected", "expected_path", type=click.Path(dir_okay=False), default=None,
              help="Judge the lane against the expected failures you keep, in the form of IREE's own "
                   "onnx_ops_<config>.json (expected_compile_failures, expected_run_failures, skip_*): exit 1 "
                   "only for a failure the file does not expect. Needs one lane (--backends).")
@click.option("--write-expected", "write_path", type=click.Path(dir_okay=False), default=None,
              help="Write this run's failures on the lane as such a file (keeping --expected's name, flags and "
                   "skips, and its entries for tests not run). Needs one lane.")
@toolchain_options
@array_cap_option
@click.pass_obj
def onnx_suite(session: Session, ops, test_names, data_dir, backend_names, jobs, compile_timeout, no_confirm, save,
               corpus_dir, as_json, expected_path, write_path) -> None:
    """Run ONNX's node tests through iree-import-onnx and every lane: pass/fail/unsupported per op and lane
    (--ops all: every op's). Exit 1 when a test fails on some lane (with --expected: a failure the list
    does not expect)."""
    from shapefuzz.errors import UsageError
    from shapefuzz.recheck.onnx_suite import DEFAULT_OPS, FAIL, check_ops, collect, read_folder, run_suite, save_failures, \
        table, to_json
    from shapefuzz.recheck.replay import budget_with
    from shapefuzz.recheck.expected_failures import judge, judged_lines, lists_for
    from shapefuzz.recheck.expected_failures import load as load_expected

    op_list = check_ops(_names(ops) or DEFAULT_OPS) if ops is not None or data_dir is None else None
    if data_dir is not None:
        tests = read_folder(data_dir, op_list)
    else:
        assert op_list is not None  # chosen above whenever there is no --data
        tests = collect(op_list)
    wanted = _names(test_names)
    if wanted:
        unknown = sorted(set(wanted) - {t.name for t in tests})
        if unknown:
            raise UsageError(f"no node test named {unknown[0]!r} among the {len(tests)} collected")
        tests = [t for t in tests if t.name in wanted]
    if not tests:
        raise UsageError("no node tests to run")
    lanes = backend_names or resolve_backends(None)
    if (expected_path or write_path) and len(lanes) != 1:
        raise UsageError(f"--expected and --write-expected judge one lane; give one with --backends "
                         f"(got {len(lanes)}: {', '.join(lanes[:4])}{', ...' if len(lanes) > 4 else ''})")
    listed = load_expected(expected_path) if expected_path else None  # a bad file: one line, before any compile
    if write_path and not os.path.isdir(os.path.dirname(os.path.abspath(write_path))):
        raise UsageError(f"--write-expected {write_path}: no such folder to write it into")
    budget = budget_with(compile_timeout)

    def progress(result) -> None:  # (on stderr, --json too: a sweep of every op takes a while)
        marks = " ".join(f"{k}:{v.outcome}" for k, v in result.lanes.items())
        click.echo(f"{result.test.name}: {marks}", err=True)

    finished = run_suite(tests, lanes, session.toolchain, budget, jobs, confirm=not no_confirm, progress=progress)
    results = finished.results  # all of them, or those that finished before Ctrl-C or SIGTERM
    if finished.stopped is not None:
        click.echo(f"shapefuzz: {interrupts.word(finished.stopped)}: {len(results)} of {len(tests)} node tests "
                   "finished; the table and --save cover those", err=True)
    saved = save_failures(results, corpus_dir, session.toolchain) if save else []
    judged = judge(results, lanes[0], listed) if listed is not None else None
    if write_path:
        from shapefuzz.files import atomic_write

        try:
            atomic_write(write_path, (json.dumps(lists_for(results, lanes[0], listed), indent=2) + "\n").encode())
        except OSError as error:
            raise UsageError(f"--write-expected {write_path}: {error.strerror or error}") from None
    if as_json:
        payload = to_json(results, lanes)
        payload["saved"] = saved
        if judged is not None:
            payload["expected"] = {"file": expected_path, "as_expected": judged.as_expected,
                                   "unexpected": [dict(zip(("test", "expected", "seen"), u)) for u in judged.unexpected],
                                   "better_than_listed": [dict(zip(("test", "listed"), n)) for n in judged.newly_passing],
                                   "skipped": judged.skipped, "not_judged": judged.not_judged}
        click.echo(json.dumps(payload, indent=2))
    else:
        rows = table(results, lanes)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        click.echo("pass/fail/unsupported per op and lane:")
        for row in rows:
            click.echo("  " + "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(row)))
        for r in results:
            for lane, lr in r.lanes.items():
                if lr.outcome == FAIL:
                    click.echo(f"fail: {r.test.name} on {lane}: {lr.why}")
        for line in saved:
            click.echo(line)
        if judged is not None:
            for line in judged_lines(judged, lanes[0], expected_path):
                click.echo(line)
        if write_path:
            click.echo(f"wrote {write_path}")
    failed = judged.failed if judged is not None else any(lr.outcome == FAIL for r in results for lr in r.lanes.values())
    if finished.stopped is not None:
        sys.exit(interrupts.exit_code(finished.stopped))
    sys.exit(EXIT_FOUND if failed else EXIT_OK)
