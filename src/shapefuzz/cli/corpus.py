"""`shapefuzz corpus list|show|index|rederive|mark|add`: triage views of a corpus and adding to it."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

import re

import click

from shapefuzz.cli.common import read_mlir, toolchain_options
from shapefuzz.cli.params import BackendList, SEED, Seconds
from shapefuzz.corpus import DEFAULT_CORPUS

if TYPE_CHECKING:
    from shapefuzz.model import CheckReport
    from shapefuzz.iree.toolchain import Toolchain


@click.group()
def corpus() -> None:
    """Triage views of a corpus: list the buckets, show one, rebuild INDEX.md."""


def _entries(corpus_dir: str):
    from shapefuzz.corpus import list_entries

    return list_entries(corpus_dir)


@corpus.command("list")
@click.argument("corpus_dir", default=DEFAULT_CORPUS, type=click.Path(file_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print one JSON object.")
@toolchain_options
def corpus_list(corpus_dir: str, as_json: bool) -> None:
    """One line per bucket: count, backend, stage, status, first/last seen, versions, expected state."""
    from shapefuzz.corpus import UnreadableEntry

    entries = _entries(corpus_dir)
    if as_json:
        click.echo(json.dumps([
            {"id": e.id, "unreadable": e.reason} if isinstance(e, UnreadableEntry) else
            {"id": e.id, "count": e.count, "family": e.meta.get("family"), **e.signature.to_json(),
             "first_seen": e.meta["first_seen"], "last_seen": e.meta["last_seen"],
             "versions": list(e.toolchain_versions), "expected_state": e.expected_state, "flaky": e.flaky}
            for e in entries], indent=2))
        return
    width = max([len(e.id) for e in entries] + [5])
    click.echo(f"{'ENTRY':<{width}}  {'COUNT':>5}  {'FAMILY':<14} {'BACKEND':<14} {'STAGE':<8} {'STATUS':<9} "
               f"{'FIRST':<10} {'LAST':<10} {'EXPECTED':<8} VERSIONS")
    for e in entries:
        if isinstance(e, UnreadableEntry):
            click.echo(f"{e.id:<{width}}  unreadable: {e.reason}")
            continue
        sig = e.signature
        click.echo(f"{e.id:<{width}}  {e.count:>5}  {e.meta.get('family') or '-':<14} {sig.backend:<14} "
                   f"{sig.stage.value:<8} {sig.status.value:<9} {e.meta['first_seen'][:10]:<10} "
                   f"{e.meta['last_seen'][:10]:<10} {e.expected_state + ('*' if e.flaky else ''):<8} "
                   f"{', '.join(e.toolchain_versions)}")
        click.echo(f"{'':<{width}}  {sig.message[:110]}")
    click.echo(f"{sum(not isinstance(e, UnreadableEntry) for e in entries)} entries"
               f"{'' if all(not isinstance(e, UnreadableEntry) for e in entries) else ', some unreadable'}")


@corpus.command("show")
@click.argument("entry")
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False),
              help="Where to look the id up.")
@toolchain_options
def corpus_show(entry: str, corpus_dir: str) -> None:
    """One entry: its signature, where it came from, its history and how to reproduce it."""
    from shapefuzz.corpus import find_entry

    e = find_entry(entry, corpus_dir)
    m = e.meta
    rows = [
        ("entry", e.id), ("folder", str(e.path)), ("signature", str(e.signature)),
        ("family", m.get("family") or "- (not generated)"),
        ("params", json.dumps(m.get("params"), sort_keys=True) if m.get("params") is not None else "-"),
        ("seed", str(e.seed)), ("checked on", ", ".join(e.backends)),
        ("count", str(e.count)), ("first seen", m["first_seen"]), ("last seen", m["last_seen"]),
        ("versions", ", ".join(e.toolchain_versions)), ("expected", e.expected_state + (" (flaky)" if e.flaky else "")),
        ("sizes", ", ".join(f"{k} {v}" for k, v in (m.get("sizes") or {}).items())),
        ("inputs", ", ".join(f"{name} {a.dtype}{list(a.shape)}" for name, a in zip(m.get("inputs") or [], e.inputs or []))
         or "-"),
        ("expected out", ", ".join(f"{name} {a.dtype}{list(a.shape)}"
                                   for name, a in zip(m.get("expected") or [], e.expected or [])) or "-"),
        ("reproduce", f"sh {Path(e.path) / 'repro.sh'}"),
        ("compile", " ".join(m.get("compile_command") or []) or "-"),
    ]
    if m.get("last_replay"):
        last = m["last_replay"]
        rows.append(("last replay", f"{last.get('date')} on {last.get('toolchain')}: {last.get('outcome')}"))
    if m.get("fixed_in"):
        rows.append(("fixed in", m["fixed_in"]))
    bug = m.get("bug") or {}
    for key, name in (("severity", "severity"), ("component", "component"), ("failing_pass", "failing pass"),
                      ("scope", "scope")):
        if bug.get(key):
            rows.append((name, str(bug[key])))
    if isinstance(bug.get("regression"), dict) and bug["regression"].get("text"):
        rows.append(("regression", bug["regression"]["text"]))
    if m.get("reported"):
        rows.append(("reported", m["reported"]))
    for key, value in rows:
        click.echo(f"{key + ':':<14} {value}")
    detail = (m.get("detail") or "").strip().splitlines()
    if detail:
        click.echo("detail:")
        for line in detail[:12]:
            click.echo(f"  {line[:200]}")
    click.echo("reproducer.mlir:")
    for line in e.mlir.splitlines()[:60]:
        click.echo(f"  {line}")


@corpus.command("index")
@click.argument("corpus_dir", default=DEFAULT_CORPUS, type=click.Path(file_okay=False))
@toolchain_options
def corpus_index(corpus_dir: str) -> None:
    """Regenerate CORPUS_DIR/INDEX.md from the entry folders."""
    from shapefuzz.corpus import rebuild_index

    click.echo(str(rebuild_index(corpus_dir)))


@corpus.command("rederive")
@click.argument("entries", nargs=-1)
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False))
@click.option("--localize-time", "localize_time", default=60.0, show_default=True, type=Seconds(minimum=0.0),
              help="Seconds to localize each wrong value or run-time failure that still fails (0: keep the old "
                   "localization).")
@click.option("--bisect", "do_bisect", is_flag=True,
              help="Also take each entry's regression range over the releases in the toolchain cache (none is "
                   "downloaded), judged by its failing or localized pass.")
@toolchain_options
@click.pass_obj
def corpus_rederive(session, entries: tuple[str, ...], corpus_dir: str, localize_time: float, do_bisect: bool) -> None:
    """Re-derive the entries' records (all of CORPUS by default) with this shapefuzz and toolchain:
    each reproducer re-checked on its backend, its detail, failing pass, component, severity and
    scope computed again, a wrong value localized by running intermediate IR, a cause named where
    it has none (with --bisect, a regression range); INDEX.md rebuilt."""
    from shapefuzz.corpus import CorpusEntry, UnreadableEntry, find_entry, load_entry, rebuild_index
    from shapefuzz.errors import CorpusError
    from shapefuzz.recheck.replay import EXIT_UNREADABLE, rederive
    from shapefuzz.recheck.regression import range_into_entry, releases_to_try

    versions = releases_to_try() if do_bisect else []  # fewer than two: one line, exit 2, before any work
    # named entries: one that does not load is the usual one line, exit 2, before any work
    chosen = [find_entry(e, corpus_dir) for e in entries] if entries else _entries(corpus_dir)
    unreadable = 0
    for item in chosen:
        try:  # the listing gives views of meta.json alone; a re-check needs the reproducer and arrays
            if isinstance(item, UnreadableEntry):
                entry, reason = None, item.reason
            else:
                entry, reason = item if isinstance(item, CorpusEntry) else load_entry(item.path), ""
        except CorpusError as error:
            entry, reason = None, str(error).splitlines()[0] if str(error) else "unreadable"
        if entry is None:  # said, and counted: the others are still rederived
            unreadable += 1
            click.echo(f"{item.id}: not rederived: unreadable ({reason[:300]})")
            continue
        click.echo(rederive(entry, session.toolchain, localize_seconds=localize_time))
        if versions:
            click.echo(f"  regression range: {range_into_entry(entry.path, versions)}")
    if Path(corpus_dir).is_dir():
        click.echo(str(rebuild_index(corpus_dir)))
    if unreadable:  # as `replay`: 3 when some entry could not be read
        click.echo(f"{len(chosen) - unreadable} entries rederived; {unreadable} unreadable (see above)")
        sys.exit(EXIT_UNREADABLE)


@corpus.command("mark")
@click.argument("entry")
@click.argument("state", type=click.Choice(["failing", "fixed"]), required=False)
@click.option("--reported", metavar="URL", default=None,
              help="The upstream issue this bug is filed as: later campaigns and replay count its cause as known.")
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False))
@toolchain_options
def corpus_mark(entry: str, state: str | None, reported: str | None, corpus_dir: str) -> None:
    """Record ENTRY's expected state (replay exits 1 when a "fixed" entry fails again) and/or the
    upstream issue it was reported as (--reported URL)."""
    from shapefuzz.corpus import find_entry, update_meta
    from shapefuzz.errors import UsageError

    if state is None and reported is None:
        raise UsageError("corpus mark: give a state (failing or fixed) and/or --reported URL")
    if reported is not None and not re.fullmatch(r"https?://[^\s/]+\.[^\s/]+(?:/\S*)?", reported):
        raise UsageError(f"--reported {reported[:80]!r} is not a URL (e.g. https://github.com/iree-org/iree/issues/123)")
    e = find_entry(entry, corpus_dir)
    changes = {k: v for k, v in (("expected_state", state), ("reported", reported)) if v is not None}
    update_meta(e.path, **changes)
    click.echo(f"{e.id}: " + "; ".join(f"expected {state}" if k == "expected_state" else f"reported as {v}"
                                       for k, v in changes.items()))



@corpus.command("add")
@click.argument("file", type=click.Path(dir_okay=False))
@click.option("--backends", "backend_names", type=BackendList(), default=None,
              help="Comma-separated backends or aliases (cpu, vulkan, rocm, cuda, all).")
@click.option("--corpus", "corpus_dir", default=DEFAULT_CORPUS, show_default=True, type=click.Path(file_okay=False))
@click.option("--seed", type=SEED, default=0, show_default=True, help="Seed for generated inputs.")
@click.option("--compile-timeout", type=Seconds(), default=120.0, show_default=True, help="Seconds per compile.")
@toolchain_options
@click.pass_obj
def corpus_add(session, file: str, backend_names, corpus_dir: str, seed: int, compile_timeout: float) -> None:
    """Check FILE and save each confirmed failure as a corpus entry (merged with an existing one)."""
    from shapefuzz.iree.backends import resolve_backends
    from shapefuzz.errors import InvalidInputError

    text = read_mlir(file)
    report, saved = add_file(corpus_dir, text, backend_names or resolve_backends(None), session.toolchain,
                             seed=seed, compile_timeout=compile_timeout)
    if report.verify_error:
        raise InvalidInputError(f"{file} does not verify: {report.verify_error.strip().splitlines()[0]}")
    for path, created in saved:
        click.echo(f"{'new' if created else 'merged':<6} {path}")
    if not saved:
        click.echo(f"no confirmed failure on {', '.join(r.backend for r in report.results)}: nothing saved")
    sys.exit(0 if saved else 1)


def add_file(
    corpus_dir: str | Path,
    text: str,
    backends: Sequence[str],
    toolchain: Toolchain,
    seed: int = 0,
    compile_timeout: float = 120.0,
    inputs: list | None = None,
) -> tuple[CheckReport, list[tuple[Path, bool]]]:
    """`corpus add`'s work: checks an MLIR file (a user's crash, say) with the oracle and saves each confirmed
    failure as an entry. It runs the oracle, so it lives with the command, above the corpus."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.corpus import make_finding, save_finding
    from shapefuzz.errors import ShapefuzzError
    from shapefuzz.iree.mlirinfo import function_info, random_inputs
    from shapefuzz.model import Stage
    from shapefuzz.judge.modulecheck import check_file
    from shapefuzz.judge.oracle import case_expectation

    report, _ = check_file(text, backends, toolchain, inputs=inputs, seed=seed, compile_timeout=compile_timeout)
    case = case_from_mlir(text)
    saved_inputs, expected = inputs, None
    if case is not None and inputs is None:
        expectation = case_expectation(case, seed)
        saved_inputs, expected = expectation.inputs, expectation.expected
    elif saved_inputs is None:
        try:
            saved_inputs = random_inputs(function_info(text), seed, 4)
        except ShapefuzzError:
            saved_inputs = None
    saved = []
    for result in report.failures:
        if result.flaky or result.signature is None:
            continue
        needs_numbers = result.stage in (Stage.RUN, Stage.COMPARE)
        finding = make_finding(
            result.signature, text, toolchain, backends=tuple(backends), case=case, seed=seed,
            inputs=saved_inputs if needs_numbers else None, expected=expected if needs_numbers else None,
            detail=result.detail)
        saved.append(save_finding(corpus_dir, finding))
    return report, saved
