"""The cross-trigger runs kept in a campaign's store (meta `crossings`): what the report merges by,
and what the cross-triggering step (`campaign.causes.crosstrigger`) appends to, one run at a time."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any

from shapefuzz.campaign.database import CampaignStore

CROSSINGS_META = "crossings"
SAME_FAILURE, SAME_PASS_AND_OP, NO, CANNOT_TELL = "same failure", "same pass and op", "no", "cannot tell"


@dataclass(frozen=True)
class Crossing:
    """One run: `source`'s reproducer (a bucket's corpus entry) on `target`'s lane."""

    source: str  # the bucket whose reproducer ran
    target: str  # the bucket whose lane it ran on and whose failure it was judged against
    lane: str
    verdict: str  # SAME_FAILURE, SAME_PASS_AND_OP, NO or CANNOT_TELL
    got: str = ""  # what it did there, one line
    seconds: float = 0.0

    @property
    def triggers(self) -> bool:
        return self.verdict in (SAME_FAILURE, SAME_PASS_AND_OP)

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Crossing":
        return Crossing(str(data["source"]), str(data["target"]), str(data["lane"]), str(data["verdict"]),
                        str(data.get("got", "")), float(data.get("seconds", 0.0)))


def crossings(store: CampaignStore | None) -> list[Crossing]:
    """The runs kept in the store (none for no store)."""
    record = store.meta_object(CROSSINGS_META) if store is not None else None
    runs = (record or {}).get("runs")
    return [Crossing.from_json(r) for r in runs if isinstance(r, dict)] if isinstance(runs, list) else []


def crossed(store: CampaignStore | None) -> list[tuple[str, str]]:
    """(source bucket, target bucket) of each run that cross-triggered."""
    return [(c.source, c.target) for c in crossings(store) if c.triggers]


def keep(store: CampaignStore, crossing: Crossing) -> None:
    runs = [asdict(c) for c in crossings(store)] + [asdict(crossing)]
    store.set_meta(CROSSINGS_META, json.dumps({"runs": runs}, sort_keys=True))


__all__ = ["CANNOT_TELL", "CROSSINGS_META", "Crossing", "NO", "SAME_FAILURE", "SAME_PASS_AND_OP", "crossed", "crossings",
           "keep"]
