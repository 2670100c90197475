"""Campaigns: long, parallel, resumable fuzzing runs that bucket failures and keep every finding.

`engine` (the loop, steering, bucketing; no IREE), `pool` (worker processes), `store` (SQLite
state), `iree` (the IREE target the engine drives), `causes` (one bug each: its buckets tied, split
and merged, its verdict and bug fields), `report` and `progress` (what the user sees),
`run` (puts them together for `shapefuzz fuzz`).

The names below are loaded on first use: a worker process imports `campaign.iree` and
`campaign.worker_pool`, and importing the engine, the store and the steering with them only
lengthened every worker's start-up."""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {"CampaignConfig": "config", "format_duration": "config", "parse_duration": "config",
          "Candidate": "engine", "Engine": "engine", "Failure": "engine", "Outcome": "engine", "Target": "engine"}

__all__ = ["CampaignConfig", "Candidate", "Engine", "Failure", "Outcome", "Target", "format_duration",
           "parse_duration"]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(f"shapefuzz.campaign.{_WHERE[name]}"), name)
    raise AttributeError(f"module 'shapefuzz.campaign' has no attribute {name!r}")
