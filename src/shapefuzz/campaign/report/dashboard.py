"""`report.html`: a campaign as one self-contained page. The plots are inline SVG (plots.py), the
page has no script and a Content-Security-Policy that lets it load nothing, so it opens the same
offline, from a mail attachment or a CI artifact. The cause table is sorted as report.md sorts
it; each cause links (relative links) to its corpus entry, its reproducer and its bug report,
which is written into the campaign folder (issue_texts.py).

Written at the end of a campaign, refreshed during one by a background thread (`Refresher`) no
more often than every REFRESH_SECONDS, and by `shapefuzz report CAMPAIGN --html`."""

from __future__ import annotations

import functools
import os
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from shapefuzz import __version__
from shapefuzz.campaign.report import plots
from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.config import format_duration
from shapefuzz.campaign.discovery import lines as discovery_lines
from shapefuzz.campaign.report.issue_texts import IssueTexts
from shapefuzz.campaign.report.allocation_table import allocation_rows
from shapefuzz.campaign.report.summary import Summary, headline, shares, summarize
from shapefuzz.campaign.report.series import Series, build
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.errors import UsageError
from shapefuzz.files import atomic_write
from shapefuzz.iree.toolchain import Toolchain

REPORT_HTML = "report.html"
REFRESH_SECONDS = 120.0  # during a campaign; measured by bench/bench_dashboard.py
ENV_REFRESH = "SHAPEFUZZ_HTML_EVERY"  # seconds between refreshes during a campaign; 0 turns them off
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@functools.cache
def _template():
    import jinja2

    from shapefuzz.templates import templates_dir

    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())), autoescape=True,
                             undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)
    return env.get_template("dashboard.html.j2")


def _link(target: Path | None, base: Path) -> str | None:
    """A relative URL from the page's folder to a file, or None when the file is not there."""
    if target is None or not target.is_file():
        return None
    rel = os.path.relpath(target.resolve(), base.resolve())
    return "/".join(quote(part) for part in Path(rel).parts)


def _regression(cause: Cause, entry_meta: dict[str, Any] | None) -> str:
    """"fails from X (worked in Y)", from the cause or its entry's recorded bisect; "" if unknown."""
    if cause.regression:  # the campaign's own record (triage)
        return cause.regression_text
    bisect = (entry_meta or {}).get("bisect")
    if not isinstance(bisect, dict) or not bisect.get("first_failing"):
        return ""
    text = f"fails from {bisect['first_failing']}"
    if bisect.get("last_passing"):
        text += f" (worked in {bisect['last_passing']})"
    if bisect.get("first_fixed"):
        text += f"; fixed in {bisect['first_fixed']}"
    return text


def _entry_meta(entry: Path) -> dict[str, Any] | None:
    """The entry's checked meta.json (its params not rendered: the page only shows fields), or
    None when it is missing or not one shapefuzz writes."""
    from shapefuzz.corpus import META, check_meta
    from shapefuzz.files import read_bytes
    from shapefuzz.schema import load_json

    try:
        return check_meta(load_json(read_bytes(entry / META).decode("utf-8"), META), entry.name, render=False)
    except (OSError, ValueError):  # (SchemaError and UnicodeDecodeError are ValueErrors)
        return None


def cause_rows(summary: Summary, base: Path, issues: IssueTexts | None) -> list[dict[str, Any]]:
    """The cause table, in the order of the report (summary.causes)."""
    buckets = {b["signature"]: b for b in summary.buckets}
    rows = []
    for cause in summary.causes:
        members = [buckets[s] for s in cause.buckets if s in buckets]
        entry = Path(cause.corpus_entries[0]) if cause.corpus_entries else None
        meta = _entry_meta(entry) if entry is not None else None
        issue = issues.write(cause, members) if issues is not None else None
        passes = sorted({str(b.get("failing_pass") or "") for b in members} - {""})
        rows.append({
            "cause": cause.name, "triage": cause.triage.value, "severity": cause.severity.label,
            "new": cause.new, "lanes": list(cause.backends), "scope": cause.scope, "reported": cause.reported,
            "component": cause.component or ("runtime" if cause.stage == "run" else "compiler"),
            "failing_pass": cause.failing_pass or ", ".join(passes),
            "regression": _regression(cause, meta), "message": cause.message, "chain": cause.chain,
            "operand": cause.operand,
            "stage": cause.stage, "status": cause.status, "hits": cause.count,
            "first_seen": format_duration(cause.first_seen), "evidence": cause.evidence,
            "entry": _link(entry / "meta.json", base) if entry else None,
            "entry_name": entry.name if entry else "",
            "reproducer": _link(entry / "reproducer.mlir", base) if entry else None,
            "issue": _link(issue, base),
        })
    if issues is not None:
        issues.keep_only(summary.causes)  # issues/ holds exactly the current causes
    return rows


def render(summary: Summary, series: Series, causes: list[dict[str, Any]], running: bool) -> str:
    empty = summary.candidates == 0
    figures = [] if empty else [
        ("Causes found over time", plots.causes_over_time(series)),
        ("Candidates per minute", plots.rate_over_time(series)),
        ("Where worker time went", plots.worker_split(series)),
        ("Outcomes per lane and family", plots.outcome_matrix(series)),
    ]
    coverage = None if empty else plots.coverage_over_time(series)
    return _template().render(
        csp=CSP, version=__version__, s=summary, causes=causes, figures=figures, coverage=coverage,
        never_reached=(summary.coverage or {}).get("never_reached", {}), empty=empty, running=running,
        headline=headline(summary), shares=shares(summary), discovery=discovery_lines(summary.discovery),
        active=format_duration(summary.active_seconds),
        updated=time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
        verdicts=", ".join(f"{k} {v}" for k, v in sorted(summary.verdicts.items())),
        allocation=allocation_rows(summary.allocation) if summary.allocation.get("cells") else [],
        allocated=bool(summary.allocation.get("on")), alloc_lanes=summary.allocation.get("lanes") or [],
    )


def write_dashboard(store: CampaignStore, out: Path | None = None, summary: Summary | None = None,
                    issues: IssueTexts | None = None, running: bool = False) -> Path:
    """report.html (or `out`) for the campaign in `store`, written atomically."""
    out = Path(out) if out is not None else store.folder / REPORT_HTML
    summary = summary or summarize(store, "running" if running else "")
    series = build(store, summary)
    causes = cause_rows(summary, out.parent, issues)
    atomic_write(out, render(summary, series, causes, running).encode())
    return out


def refresh_seconds() -> float:
    """REFRESH_SECONDS, or what SHAPEFUZZ_HTML_EVERY says (a bad value is one line, exit 2)."""
    text = os.environ.get(ENV_REFRESH, "").strip()
    if not text:
        return REFRESH_SECONDS
    try:
        seconds = float(text)
    except ValueError:
        seconds = -1.0
    if not 0 <= seconds < float("inf"):
        raise UsageError(f"{ENV_REFRESH}={text!r}: give seconds between refreshes of {REPORT_HTML} (0: none)")
    return seconds


class Refresher:
    """Rewrites report.html in a background thread while a campaign runs, at most every `every`
    seconds and only when candidates were added since the last write; its own database
    connection, so the campaign's is never shared across threads. A failure to write is told
    once and never stops the campaign."""

    def __init__(self, folder: Path, toolchain: Toolchain | None, every: float | None = None,
                 say=lambda text: None) -> None:
        self.folder, self.say = Path(folder), say
        self.every = refresh_seconds() if every is None else every
        self.issues = IssueTexts(self.folder, toolchain, say)
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_count = -1
        self.writes = 0
        self.seconds = 0.0  # spent writing, for the bench
        self._failed = False

    def start(self) -> "Refresher":
        if self.every > 0:
            self._thread = threading.Thread(target=self._loop, name="dashboard", daemon=True)
            self._thread.start()
        return self

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self.refresh()

    def refresh(self) -> None:
        start = time.thread_time()
        try:
            store = CampaignStore(self.folder, create=False)
            try:
                count = store.candidate_count()
                if count != self._last_count:
                    write_dashboard(store, issues=self.issues, running=True)
                    self._last_count = count
                    self.writes += 1
            finally:
                store.close()
        except Exception as error:  # noqa: BLE001 - the page is a view; the campaign goes on
            if not self._failed:
                self._failed = True
                self.say(f"could not refresh {self.folder / REPORT_HTML}: {error}")
        self.seconds += time.thread_time() - start

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
