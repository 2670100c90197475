"""The campaign's shared state, in one owner (no IREE). The engine's parts once took each mutable
piece they share (the buckets, the causes, the candidates tried, the sightings, the counters) as
one more positional argument, each holding a reference to the same object; now the engine makes
one `CampaignState` and hands it to the parts that read or change it. With it: the session its
results are written under, the campaign clock (`active`), and `say`, a line for the user (kept in
`stats.messages` and told to the progress display). `Guides` are the parts that choose what is
drawn and where, and learn from each check: the drawing part and the bucket book share them."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from shapefuzz.campaign.allocation import Allocation
from shapefuzz.campaign.causes.cause_ties import Causes
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.discovery import Sightings
from shapefuzz.campaign.lanecost import LaneCost
from shapefuzz.campaign.lanes import LanePlan
from shapefuzz.campaign.outcomes import Stats
from shapefuzz.campaign.steering import Steering
from shapefuzz.campaign.trial_book import TrialBook


def _silent(text: str) -> None:
    """Where a line for the user goes when nobody shows it (a part built alone in a test)."""


@dataclass
class CampaignState:
    """What the engine's parts share and change: `buckets` by signature, their `causes`, the
    candidates `tried` (checked), the discovery `sightings`, the session's `stats`, the `trials`
    a shrink need not repeat; `session` (the store's), `active_before` (active seconds of the
    earlier sessions) and `tell` (the progress display's sink for a line)."""

    buckets: dict[str, BucketRow] = field(default_factory=dict)
    causes: Causes = field(default_factory=Causes)
    tried: set[str] = field(default_factory=set)
    sightings: Sightings = field(default_factory=lambda: Sightings((), ()))
    stats: Stats = field(default_factory=Stats)
    trials: TrialBook = field(default_factory=TrialBook)
    session: int = 0
    active_before: float = 0.0
    tell: Callable[[str], None] = _silent
    clock_stopped_at: float | None = None  # the active time when the fuzzing ended

    def say(self, text: str) -> None:
        """A line for the user: kept for the summary, and shown."""
        self.stats.messages.append(text)
        self.tell(text)

    def active(self) -> float:
        """Seconds of fuzzing in the whole campaign: the clock stops when the fuzzing does, so the
        shrinks, localizing and ranging after it (each writes the session's time as it ticks) leave
        the per-minute rates the campaign's."""
        if self.clock_stopped_at is not None:
            return self.clock_stopped_at
        return self.active_before + (time.monotonic() - self.stats.session_start)

    def stop_clock(self) -> None:
        if self.clock_stopped_at is None:
            self.clock_stopped_at = self.active()


@dataclass(frozen=True)
class Guides:
    """The parts that choose what is drawn and where, and learn from each check: the lane `plan`,
    saturation `steering`, the `lane_cost` of slow kinds, and the yield `allocation` (None: none
    kept; the drawing part follows it only when it is on)."""

    plan: LanePlan
    steering: Steering
    lane_cost: LaneCost
    allocation: Allocation | None = None


__all__ = ["CampaignState", "Guides"]
