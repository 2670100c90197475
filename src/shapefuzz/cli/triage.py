"""`shapefuzz triage CAMPAIGN`: a campaign's causes as bugs, in severity order (new before known),
each with its failing pass, component, scope and regression range; `--bisect` takes the ranges
still missing over the releases in the toolchain cache (a spread of older releases fetched into it
first, as `fuzz` does). Writes report.md and the corpus entries'
bug fields again."""

from __future__ import annotations

import json
from pathlib import Path

import click

from shapefuzz.cli.common import toolchain_options
from shapefuzz.cli.params import Duration


@click.command("triage")
@click.argument("campaign_dir", type=click.Path(file_okay=False))
@click.option("--bisect", "do_bisect", is_flag=True,
              help="Take the regression range of every compiler-bug cause that has none, over the releases in "
                   "the toolchain cache (a spread of older ones fetched into it first; see --fetch-releases).")
@click.option("--bisect-time", type=Duration(), default=None, help="Most time --bisect may take checking releases, each compile included (default: no limit; fetching releases first is not counted).")
@click.option("--localize", "do_localize", is_flag=True,
              help="Localize every wrong value or run-time failure that has no localization yet (the phase and pass "
                   "where it starts, by executing intermediate IR), then run the reproducers of causes placed at one "
                   "pass on each other's lanes (cross-triggering: one bug).")
@click.option("--localize-time", type=Duration(), default=None, help="Most time --localize may take (default 3m).")
@click.option("--fetch-releases", type=int, default=None, metavar="N",
              help="With --bisect: older releases to have first (as `fuzz` fetches them; default 3, 0: only what "
                   "is cached).")
@click.option("--json", "as_json", is_flag=True, help="Print the causes as one JSON object.")
@toolchain_options
@click.pass_obj
def triage(session, campaign_dir: str, do_bisect: bool, bisect_time: float | None, do_localize: bool,
           localize_time: float | None, fetch_releases: int | None, as_json: bool) -> None:
    """List CAMPAIGN's causes as bugs (and with --bisect, find since when each fails)."""
    from shapefuzz.campaign.causes.cause_facts import annotate_corpus, bisect_causes
    from shapefuzz.campaign.report.summary import summarize, write_report
    from shapefuzz.campaign.database import DB_NAME, CampaignStore
    from shapefuzz.errors import UsageError

    folder = Path(campaign_dir)
    if not (folder / DB_NAME).is_file():
        raise UsageError(f"{campaign_dir} is not a campaign folder (no {DB_NAME}); give the --campaign folder of "
                         "a `shapefuzz fuzz` run")
    say = (lambda line: click.echo(line, err=True))
    store = CampaignStore(folder, create=False)
    try:
        summary = summarize(store, "triage")
        if do_localize:
            from shapefuzz.campaign.causes.crosstrigger import DEFAULT_CROSS_SECONDS, cross_trigger
            from shapefuzz.campaign.localizing import DEFAULT_LOCALIZE_SECONDS, localize_causes

            seconds = DEFAULT_LOCALIZE_SECONDS if localize_time is None else float(localize_time)
            if localize_causes(store, summary.causes, session.toolchain, seconds, say, only_new=False):
                summary = summarize(store, "triage")
            if cross_trigger(store, summary.causes, session.toolchain, min(DEFAULT_CROSS_SECONDS, seconds), say):
                summary = summarize(store, "triage")
            from shapefuzz.campaign.shown_runs import shown_facts

            shown_facts(summary.causes, session.toolchain, seconds, say)  # what the issue texts say of their reproducers
        if do_bisect:
            from shapefuzz.recheck.regression import releases_to_try

            if any(not c.regression for c in summary.findings):
                _fetch_releases(fetch_releases, say)

            versions = releases_to_try(say=say)
            if bisect_causes(store, summary.findings, bisect_time, versions, say, only_new=False,
                             again_without_range=True):
                summary = summarize(store, "triage")
        write_report(summary, folder)
        annotate_corpus(store, summary.causes, say)
    finally:
        store.close()
    if as_json:
        click.echo(json.dumps({"campaign": str(folder), "causes": [c.to_json() for c in summary.causes]}, indent=2))
        return
    findings = summary.findings
    click.echo(f"{len(summary.causes)} cause(s), {len(findings)} compiler bug(s) "
               f"({sum(c.new for c in findings)} new), in severity order:")
    for c in summary.causes:
        known = "new" if c.new else f"known{': ' + c.reported if c.reported else ''}"
        click.echo(f"{c.name}  [{c.verdict_label}; {c.severity.label}; {known}]")
        click.echo(f"    {c.component}" + (f"; fails in {c.failing_place}" if c.failing_pass else "")
                   + f"; {c.scope}; lanes: {', '.join(c.lanes)}")
        click.echo(f"    {c.message[:160]}")
        if c.one_bug_seen_several_ways:
            click.echo(f"    one bug: {c.lanes_text()}")
        if c.regression:
            click.echo(f"    regression: {c.regression_text}")
        if c.corpus_entries:
            click.echo(f"    -> {Path(c.corpus_entries[0]).name}")


def _fetch_releases(count: int | None, say) -> None:
    """The spread of older releases `fuzz` fetches, fetched here before bisecting (in the
    foreground; each that cannot be fetched is one line and the rest goes on)."""
    from shapefuzz.campaign.run import FuzzRequest, fetch_knobs
    from shapefuzz.iree.release_fetch import PipSource, ReleaseFetcher
    from shapefuzz.iree.releases import installed_version

    knobs = fetch_knobs(FuzzRequest(fetch_releases=count))
    if knobs.releases > 0:
        ReleaseFetcher(PipSource(say), installed_version(), knobs, say).run()
