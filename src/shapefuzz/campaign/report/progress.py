"""Live progress: one line rewritten in place on a terminal; plain, timestamped log lines
(a status line every 30 s, plus each message) when not a terminal."""

from __future__ import annotations

import shutil
import sys
import time
from typing import Any, Callable, TextIO

from shapefuzz.campaign.config import format_duration
from shapefuzz.campaign.discovery import short_text
from shapefuzz.campaign.engine import Snapshot

# What the engine reports to, as (kind, value): a Progress, or the live view (report/live.py).
ProgressFn = Callable[[str, Any], None]


def _status(s: Snapshot) -> str:
    left = ""
    if s.left is not None:
        left = f"  {format_duration(max(0.0, s.left))} left"
    elif s.count_left is not None:
        left = f"  {max(0, s.count_left)} to go"
    flaky = f" (+{s.flaky} flaky)" if s.flaky else ""
    return (f"{s.done} cases  {s.rate_per_min:.1f}/min  findings {s.findings}  causes {s.causes}  "
            f"buckets {s.buckets}{flaky}{left}"
            + (f"  {short_text(s.discovery)}" if short_text(s.discovery) else "")
            + (f"  {s.pool}" if s.pool else "") + (f"  newest: {s.newest}" if s.newest else ""))


class Progress:
    def __init__(self, stream: TextIO | None = None, tty: bool | None = None, quiet: bool = False,
                 log_every: float = 30.0) -> None:
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty() if tty is None else tty
        self.quiet = quiet
        self.log_every = log_every
        self._last_log = 0.0
        self._line = False
        self.start = time.monotonic()

    def __call__(self, kind: str, value: Any) -> None:
        if self.quiet:
            return
        if kind == "message":
            self._clear()
            self.stream.write(f"{self._stamp()}{value}\n")
        elif kind == "tick":
            text = _status(value)
            if self.tty:
                width = shutil.get_terminal_size((100, 20)).columns - 1
                self.stream.write("\r\x1b[K" + text[:width])
                self._line = True
            elif time.monotonic() - self._last_log >= self.log_every:
                self._last_log = time.monotonic()
                self.stream.write(f"{self._stamp()}{text}\n")
        self.stream.flush()

    def _stamp(self) -> str:
        return "" if self.tty else f"[{format_duration(time.monotonic() - self.start):>6}] "

    def _clear(self) -> None:
        if self._line:
            self.stream.write("\r\x1b[K")
            self._line = False

    def close(self) -> None:
        self._clear()
        self.stream.flush()
