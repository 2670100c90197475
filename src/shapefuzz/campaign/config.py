"""What a campaign is asked to do: families, backends, a budget, jobs, a seed, where to keep things.
Parsed and checked here so the engine only ever sees valid values."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.errors import UsageError

_DURATION = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$")
_UNITS = {"": 1.0, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0}


def parse_duration(text: str) -> float:
    """Seconds from "45s", "90m", "8h", "1.5h", "2d" or a bare number of seconds.
    Compound forms ("1h30m") are accepted too."""
    raw = str(text).strip().lower()
    parts = re.findall(r"(\d+(?:\.\d+)?)\s*([smhd])", raw)
    if parts and re.fullmatch(r"(?:\s*\d+(?:\.\d+)?\s*[smhd])+\s*", raw):
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    else:
        match = _DURATION.match(raw)
        if not match:
            raise UsageError(f"--time {text!r}: not a duration; write e.g. 45s, 90m, 8h or 1h30m")
        seconds = float(match.group(1)) * _UNITS[match.group(2)]
    if seconds <= 0:
        raise UsageError(f"--time {text!r}: the budget must be more than zero")
    return seconds


def format_duration(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    if h:
        return f"{h}h{m:02d}m"
    if m:
        return f"{m}m{s:02d}s"
    return f"{s}s"


def resolve_names(value: str | None, known: tuple[str, ...], what: str, flag: str) -> tuple[str, ...] | None:
    """A comma-separated list checked against `known`; an unknown name is a one-line error with
    the closest match. None stays None (the caller's default)."""
    if value is None:
        return None
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names:
        raise UsageError(f"{flag}: no {what} given; choose from {', '.join(known)}")
    for name in names:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; choose from {', '.join(known)}"
            raise UsageError(f"{flag}: unknown {what} {name!r}{hint}")
    return tuple(dict.fromkeys(names))


@dataclass(frozen=True)
class CampaignConfig:
    """A validated request. Budgets are campaign totals: a resumed campaign finishes what is left."""

    campaign_dir: Path
    corpus_dir: Path
    families: tuple[str, ...]
    backends: tuple[str, ...]
    seed: int
    jobs: int
    count: int | None = None  # candidates in the whole campaign; None: no count limit
    seconds: float | None = None  # active seconds in the whole campaign; None: no time limit
    shrink: bool = True


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
