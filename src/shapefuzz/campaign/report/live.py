"""The live terminal views of `fuzz` and `shrink`, drawn with rich: a progress bar against the
time or count budget with its ETA, the rate, causes by triage verdict, the newest causes and the
workers busy (fuzz); the time budget, steps accepted and the sizes before and now (shrink).
Messages scroll above the view. Used only on a terminal and without `--plain`; elsewhere the
plain log lines of progress.py (`Progress`) are written, so logs and CI stay readable."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, TextIO

from shapefuzz.campaign.config import format_duration
from shapefuzz.campaign.discovery import lines as discovery_lines
from shapefuzz.campaign.engine import Snapshot
from shapefuzz.shrink.engine import Accepted
from shapefuzz.size import Metrics, measure

TRIAGE_STYLES = {"compiler bug": "bold red", "target limit": "grey50", "suspected driver": "dark_orange",
                 "ours": "magenta", "flaky": "grey50"}


def wanted(plain: bool, stream: TextIO | None = None) -> bool:
    """The live view is drawn on a terminal unless --plain (or TERM=dumb) says otherwise."""
    import os

    stream = stream or sys.stderr
    return not plain and stream.isatty() and os.environ.get("TERM", "") != "dumb"


class _View:
    def __init__(self, stream: TextIO | None = None) -> None:
        from rich.console import Console
        from rich.live import Live

        self.console = Console(file=stream or sys.stderr, highlight=False)
        self.live = Live(console=self.console, get_renderable=self.render, refresh_per_second=2,
                         redirect_stdout=False, redirect_stderr=False)
        self.live.start()

    def render(self) -> Any:
        raise NotImplementedError

    def message(self, text: str) -> None:
        from rich.text import Text

        self.console.print(Text(str(text)))  # above the view; never parsed as markup

    def close(self) -> None:
        if self.live.is_started:
            self.live.refresh()
            self.live.stop()


def _bar(completed: float, total: float | None):
    from rich.progress_bar import ProgressBar

    return ProgressBar(total=total, completed=min(completed, total or completed), width=40)


class CampaignView(_View):
    """The `Progress` callable of the engine, drawn live."""

    def __init__(self, folder: str | Path, stream: TextIO | None = None) -> None:
        self.folder = str(folder)
        self.snap: Snapshot | None = None
        super().__init__(stream)

    def __call__(self, kind: str, value: Any) -> None:
        if kind == "message":
            self.message(value)
        elif kind == "tick":
            self.snap = value

    def render(self) -> Any:
        from rich.table import Table
        from rich.text import Text

        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        s = self.snap
        if s is None:
            grid.add_row("campaign", Text(f"{self.folder}: starting"))
            return grid
        if s.seconds_limit is not None:
            total = s.seconds_limit
            bar, done = _bar(s.active, total), f"{format_duration(s.active)} / {format_duration(total)}"
            eta = format_duration(max(0.0, total - s.active))
        elif s.count_limit is not None:
            total, left = s.count_limit, max(0, s.count_limit - s.done)
            bar, done = _bar(s.done, total), f"{s.done} / {total} candidates"
            eta = format_duration(left / s.rate_per_min * 60) if s.rate_per_min > 0 else "?"
        else:
            bar, done, eta = _bar(0, None), format_duration(s.active), "-"
        line = Table.grid(padding=(0, 2))
        line.add_row(bar, Text(done), Text(f"ETA {eta}", style="cyan"))
        grid.add_row("budget", line)
        grid.add_row("candidates", Text(f"{s.done} ({s.session_done} this session)  {s.rate_per_min:.1f}/min  "
                                        f"workers {s.in_flight}/{s.jobs or '?'} busy  lanes {len(s.lanes)}"))
        if s.pool:
            grid.add_row("cluster", Text(s.pool))
        causes = Text(f"{s.causes}")
        for verdict, n in sorted(s.by_triage.items(), key=lambda kv: list(TRIAGE_STYLES).index(kv[0])
                                 if kv[0] in TRIAGE_STYLES else 99):
            causes.append("  ")
            causes.append(f"{verdict} {n}", style=TRIAGE_STYLES.get(verdict, ""))
        causes.append(f"   buckets {s.buckets}" + (f" (+{s.flaky} flaky)" if s.flaky else ""))
        grid.add_row("causes", causes)
        for i, line_text in enumerate(s.newest_causes):
            grid.add_row("newest" if i == 0 else "", Text(line_text, overflow="ellipsis", no_wrap=True))
        for i, line_text in enumerate(discovery_lines(s.discovery)):
            grid.add_row("more time?" if i == 0 else "", Text(line_text))
        if s.allocation:
            grid.add_row("drawn most", Text(s.allocation, overflow="ellipsis", no_wrap=True))
        return grid


class ShrinkView(_View):
    """`shrink FILE`, drawn live: the time budget, steps accepted, the sizes before and now."""

    def __init__(self, name: str, text: str, time_limit: float | None, stream: TextIO | None = None) -> None:
        import time

        self.name, self.limit, self.start = name, time_limit, time.monotonic()
        self.before = self.now = measure(text)
        self.steps, self.last = 0, ""
        super().__init__(stream)

    def step(self, step: Accepted, metrics: Metrics) -> None:
        self.steps, self.last, self.now = self.steps + 1, step.pass_name, metrics

    def render(self) -> Any:
        import time

        from rich.table import Table
        from rich.text import Text

        elapsed = time.monotonic() - self.start
        grid = Table.grid(padding=(0, 1))
        grid.add_column(style="bold", no_wrap=True)
        grid.add_column()
        line = Table.grid(padding=(0, 2))
        if self.limit is not None:
            line.add_row(_bar(elapsed, self.limit), Text(f"{format_duration(elapsed)} / {format_duration(self.limit)}"),
                         Text(f"at most {format_duration(max(0.0, self.limit - elapsed))} left", style="cyan"))
        else:
            line.add_row(_bar(0, None), Text(f"{format_duration(elapsed)} (no time limit)"))
        grid.add_row("shrink", Text(self.name))
        grid.add_row("time", line)
        grid.add_row("steps", Text(f"{self.steps} accepted" + (f", last by {self.last}" if self.last else "")))
        b, n = self.before, self.now
        grid.add_row("size", Text(f"elements {b.elements} -> {n.elements}   ops {b.ops} -> {n.ops}   "
                                  f"lines {b.lines} -> {n.lines}"))
        return grid
