"""What a campaign engine is configured with (no IREE): the families and lanes, the seed, the
workers, the budget and every knob of confirming, shrinking, steering and drawing. One frozen
value, built once (`run.py` from the checked `CampaignConfig`, tests and benches directly) and
read by the engine; the engine's mutable state is `state.CampaignState`'s."""

from __future__ import annotations

from dataclasses import dataclass, field

from shapefuzz.campaign.coverage_map import CoverageKnobs
from shapefuzz.campaign.steering import SteeringKnobs

MIN_SHRINK_SECONDS = 20.0  # a shrink is not started with less time than this


@dataclass
class Limits:
    count: int | None = None  # candidates in the whole campaign
    seconds: float | None = None  # active seconds in the whole campaign


@dataclass(frozen=True)
class EngineConfig:
    """Everything the engine is configured with; see `Engine` for what each part does with it."""

    groups: tuple[str, ...]  # the op families drawn from
    lanes: tuple[str, ...]  # the backends (those set aside in the store are left out on start)
    seed: int = 0
    jobs: int = 1  # worker processes
    limits: Limits = field(default_factory=Limits)
    confirm: bool = True  # a new bucket gets its confirming re-run
    shrink: bool = False
    draws: int = 2  # candidates drawn per slot, the rarest kept
    set_aside_after: int = 3  # a lane that times out on this many candidates in a row is set aside
    reference: str | None = None  # the lane every other is judged against (default: the first)
    lanes_per_candidate: int | None = None  # None: every lane checks every candidate
    knobs: SteeringKnobs = SteeringKnobs()
    coverage: CoverageKnobs = CoverageKnobs(share=0.0)  # coverage feedback (off unless asked for)
    shrink_share: float = 0.25  # most of the worker time background shrinking may take
    shrink_seconds: float = 300.0  # most one shrink may take
    final_shrink_seconds: float = 0.0  # a phase after the budget for what is still pending
    min_shrink_seconds: float = MIN_SHRINK_SECONDS
    compile_only: tuple[str, ...] = ()  # lanes that only compile here (large rounds go to them)
    large_every: int = 0  # every n-th candidate is a large round (0: none)
    until_saturated: float | None = None  # stop once the Good-Turing chance stays below this (discovery.py)
    allocate: bool = False  # draw families, shapes and lanes by yield (allocation.py); kept either way
    argv: tuple[str, ...] = ()  # the command line, kept with the session
    start_method: str = "spawn"  # multiprocessing's, for the local worker pool


__all__ = ["MIN_SHRINK_SECONDS", "EngineConfig", "Limits"]
