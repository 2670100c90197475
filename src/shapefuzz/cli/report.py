"""`shapefuzz report CAMPAIGN`: a campaign's report again, from its store: the terminal summary,
`--json`, or the HTML dashboard (`--html`, written as report.html in the campaign folder or to
`-o FILE`)."""

from __future__ import annotations

from pathlib import Path

import click

from shapefuzz.cli.common import Session, toolchain_options
from shapefuzz.errors import ShapefuzzError


@click.command("report")
@click.argument("campaign", type=click.Path(file_okay=False))
@click.option("--html", "as_html", is_flag=True, help="Write the HTML dashboard (report.html in CAMPAIGN, or -o FILE).")
@click.option("-o", "--output", "out", default=None, type=click.Path(dir_okay=False),
              help="With --html: the file to write (links stay relative to it).")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as one JSON object.")
@toolchain_options
@click.pass_obj
def report(session: Session, campaign: str, as_html: bool, out: str | None, as_json: bool) -> None:
    """Report on a campaign folder (the summary; --html: the dashboard with plots and links)."""
    from shapefuzz.campaign.report.summary import json_text, summarize, text_lines
    from shapefuzz.campaign.database import CampaignStore

    if out is not None and not as_html:
        raise click.UsageError("-o/--output goes with --html")
    store = CampaignStore(Path(campaign), create=False)
    try:
        summary = summarize(store, store.get_meta("stopped") or "")
        if as_html:
            from shapefuzz.campaign.report.dashboard import write_dashboard
            from shapefuzz.campaign.report.issue_texts import IssueTexts

            try:
                toolchain = session.toolchain
            except ShapefuzzError as error:  # the page is still worth having, without bug reports
                click.echo(f"note: no toolchain ({error}); the dashboard links no bug reports", err=True)
                toolchain = None
            path = write_dashboard(store, Path(out) if out else None, summary, IssueTexts(store.folder, toolchain, say=lambda line: click.echo(line, err=True)))
            click.echo(f"wrote {path}")
        elif as_json:
            click.echo(json_text(summary))
        else:
            for line in text_lines(summary):
                click.echo(line)
    finally:
        store.close()
