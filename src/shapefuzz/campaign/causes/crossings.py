"""The cross-trigger runs kept in a campaign's store (meta `crossings`): what the report merges by,
and what the cross-triggering step (`campaign.causes.crosstrigger`) appends to, one run at a time."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, Callable, Iterable

from shapefuzz.campaign.database import BucketRow, CampaignStore

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


def shown_crossed(rows: Iterable[BucketRow], entry_of: Callable[[BucketRow], tuple[dict, str | None]]) \
        -> list[tuple[str, str]]:
    """(source bucket, target bucket) where the source's shown reproducer, run on the target's lane by
    the shown step (`campaign.shown_runs`), failed there with the target's very identity (a strong one:
    the same pass and message): the cross-trigger the report merges by, run for the text's sake. The
    audit's case: a reversed-map generic first seen failing in GPUApplyTilingLevel on rocm's
    single-dispatch lane, shrunk, failed in workgroup tiling on rocm-gfx942 exactly as the bug it was
    filed apart from. Only a bucket whose entry is its own is a source."""
    from shapefuzz.triage.severity import Severity, severity_of
    from shapefuzz.triage.shown import shown_runs_of

    # a size past a limit keeps its pass and message but not its size in an identity: a real 130,560-byte
    # top-k scratch and a 2^53-1 one are two bugs that read alike (campaign.causes.merging.split_real_limits)
    rows = [b for b in rows if severity_of(b.stage, b.status, b.message, b.detail)
            not in (Severity.SIZING_BUG, Severity.RESOURCE_LIMIT)]
    by_lane: dict[tuple[str, str], list[str]] = {}
    for b in rows:
        if b.sig_json.get("strong") and b.sig_json.get("identity"):
            by_lane.setdefault((b.backend, str(b.sig_json["identity"])), []).append(b.sig)
    out = []
    for b in rows:
        meta, mlir = entry_of(b) if b.corpus_entry else ({}, None)
        if mlir is None or meta.get("signature_text", b.sig) != b.sig:
            continue
        record = shown_runs_of(meta, mlir)
        for run in record.runs if record is not None else ():
            out += [(b.sig, target) for target in by_lane.get((run.lane, run.identity), ()) if run.identity
                    and target != b.sig]
    return out


def keep(store: CampaignStore, crossing: Crossing) -> None:
    runs = [asdict(c) for c in crossings(store)] + [asdict(crossing)]
    store.set_meta(CROSSINGS_META, json.dumps({"runs": runs}, sort_keys=True))


__all__ = ["CANNOT_TELL", "CROSSINGS_META", "Crossing", "NO", "SAME_FAILURE", "SAME_PASS_AND_OP", "crossed", "crossings",
           "keep", "shown_crossed"]
