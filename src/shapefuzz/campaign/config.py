"""What a campaign is asked to do: families, backends, a budget, jobs, a seed, where to keep things.
Parsed and checked here so the engine only ever sees valid values: after parsing, the campaign
reads `CampaignConfig` alone, never the raw request."""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shapefuzz.durations import format_duration, parse_duration  # noqa: F401 - re-exported
from shapefuzz.errors import UsageError

if TYPE_CHECKING:
    from shapefuzz.iree.release_fetch import FetchKnobs


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
    rotate: bool = True  # the reference lane plus a rotating share of the others (False: --backends forced)
    lanes_per_candidate: int = 2  # the reference + this many - 1 others, in turn
    memory_cap: int | None = None  # bytes for candidate checks; None: the target's default
    shrink_time: float = 0.0  # a final phase for pending shrinks once the budget is spent
    shrink_share: float = 0.25  # most of the worker time background shrinking may take
    saturate_after: int = 3
    explore: float = 0.05
    fail_on: str = "never"  # "new": exit 1 when a new compiler-bug cause was found
    coverage: float = 0.15  # share of candidates compiled with the action log (0: coverage feedback off)
    until_saturated: float | None = None  # stop once the Good-Turing chance stays below this (campaign/discovery.py)
    jobs_given: bool = True  # False: `jobs` is this machine's default (a cluster then runs a task per CPU)
    compile_timeout: float | None = None  # seconds for one compile; None: the default budget's
    coverage_steer: bool = False  # coverage steers draws and lanes (`--steer`), not only measured
    coverage_lanes: bool = True  # with coverage_steer, False: steered draws, but lane slots by rotation
    argv: tuple[str, ...] = ()  # the command line, for the store's session row
    bisect_seconds: float = 120.0  # the regression-range phase's budget (0: off)
    localize_seconds: float | None = None  # the localization step's budget (None: its default; 0: off)
    fetch: FetchKnobs | None = None  # older releases fetched in the background for the regression phase
    cluster: str | None = None  # a Ray cluster's address
    cluster_bind: str | None = None  # where a `--cluster local` head listens (None: 127.0.0.1)
    iree_bin: str | None = None  # the toolchain as named on the command line, for the cluster's nodes
    iree_version: str | None = None
    context_share: float | None = None  # cases drawn inside a producer/consumer chain (None: families/context's default)
    changed_pins: tuple[str, ...] = ()  # pins a resume changed with --force, one line each (campaign.pins)
    allocate: bool = True  # families, shapes and lanes by yield (campaign/allocation.py); False: by steering and rotation
    without: tuple[str, ...] = ()  # form groups left out of the draw (campaign/withheld.py)


FAIL_ON = ("never", "new")


def parse_size(text: str, flag: str) -> int:
    """Bytes from "2GiB", "2G", "1500M", "512MiB" or a bare number of bytes (at least 64MiB:
    iree-compile needs about 0.5GiB of address space)."""
    from shapefuzz.schema import parse_bytes

    value = parse_bytes(text, flag)  # exact: 400 nines are refused, not turned into infinity
    if value < 64 << 20:
        raise UsageError(f"{flag} {text!r}: give at least 64MiB (iree-compile needs about 0.5GiB of address space)")
    return value


def check_fraction(value: float | None, flag: str, low_open: bool = True) -> None:
    if value is not None and not (0.0 < value <= 1.0 if low_open else 0.0 <= value <= 1.0):
        raise UsageError(f"{flag} {value}: give a fraction between 0 and 1, e.g. 0.25")


def parse_chance(value: str | float | None, flag: str) -> float | None:
    """A chance strictly between 0 and 1 (`--until-saturated`): 0.001, 1e-3; None stays None."""
    if value is None:
        return None
    try:
        chance = float(value)
    except (TypeError, ValueError, OverflowError):
        chance = float("nan")
    if not 0.0 < chance < 1.0:  # nan and inf fail here too
        raise UsageError(f"{flag} {str(value)[:40]!r}: give a chance per candidate between 0 and 1 (not either), "
                         "e.g. 0.001")
    return chance


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)
