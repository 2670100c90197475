"""Campaigns: long, parallel, resumable fuzzing runs that bucket failures and keep every finding.

`engine` (the loop, steering, bucketing; no IREE), `pool` (worker processes), `store` (SQLite
state), `iree` (the IREE target the engine drives), `report` and `progress` (what the user sees),
`run` (puts them together for `shapefuzz fuzz`)."""

from shapefuzz.campaign.config import CampaignConfig, format_duration, parse_duration
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Outcome, Target

__all__ = ["CampaignConfig", "Candidate", "Engine", "Failure", "Outcome", "Target", "format_duration",
           "parse_duration"]
