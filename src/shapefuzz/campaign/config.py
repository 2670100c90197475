"""What a campaign is asked to do: families, backends, a budget, jobs, a seed, where to keep things.
Parsed and checked here so the engine only ever sees valid values."""

from __future__ import annotations

import difflib
import os
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.durations import format_duration, parse_duration  # noqa: F401 - re-exported
from shapefuzz.errors import UsageError


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
