"""An engine built from flat keywords, for the test helpers that pass a caller's keywords through
(`**kw`): the engine's own (`progress`, `pool_factory`, `observer`) go to it, the rest into its
frozen `EngineConfig`."""

from __future__ import annotations

from typing import Any

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Engine, EngineConfig, Limits

ENGINE_KEYWORDS = ("progress", "pool_factory", "observer")


def build_engine(target: Any, store: CampaignStore, groups: tuple[str, ...], lanes: tuple[str, ...], seed: int,
                 jobs: int, limits: Limits, **kw: Any) -> Engine:
    own = {name: kw.pop(name) for name in ENGINE_KEYWORDS if name in kw}
    return Engine(target, store, EngineConfig(groups, tuple(lanes), seed, jobs, limits, **kw), **own)
