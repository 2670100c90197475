"""Causes by the verdict their texts state, not the one decided on the larger candidate.

A bucket's triage verdict is decided on the candidate the campaign drew; its issue text shows that
candidate shrunk, and where the shrunk reproducer's own runs re-derived a verdict (`campaign.shown_runs`),
the text states that one (`triage.shown.stated_triage`). The report reads each bucket's verdict the same
way (`restated`), so a cause's header, its counts and its merges agree with its text.

A bucket is put in a cause when the campaign first sees it, by the verdict it had then. Two buckets
whose verdicts, as restated, name one mechanism on one kind of lane (an emulated i8 tensor losing its
last word, a race, a documented limit: `cause_ties.mechanism_key`) are one cause, as they would have
been had the campaign known it when it saw them (`merge_by_mechanism`). The audit's case: a top-k on
vulkan-llvmpipe first judged "suspected driver" and later, on its shrunk reproducer, Mesa's loop limit,
stood as cause-6373377de8-2 beside the same limit's cause-6373377de8 on vulkan-spirv."""

from __future__ import annotations

import dataclasses
from typing import Callable, Iterable

from shapefuzz.campaign.causes.cause_ties import mechanism_key
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.model import Signature
from shapefuzz.triage.shown import shown_runs_of, stated_triage


def restated(rows: Iterable[BucketRow], entry_of: Callable[[BucketRow], tuple[dict, str | None]]) -> list[BucketRow]:
    """`rows`, each with the verdict its shown reproducer's text states. `entry_of(row)`: its corpus
    entry's meta.json and reproducer text ({} and None where it has none). Only a bucket whose entry is
    its own (the entry's signature is the bucket's) takes the entry's re-derived verdict."""
    out = []
    for row in rows:
        meta, mlir = entry_of(row) if row.corpus_entry else ({}, None)
        stated = _stated(meta, mlir, row)
        out.append(row if stated is None else dataclasses.replace(row, triage=stated[0], evidence=stated[1]))
    return out


def _stated(meta: dict, mlir: str | None, row: BucketRow) -> tuple[Triage, str] | None:
    """The (verdict, evidence) the text states of `row`'s own entry where it is not the recorded one."""
    if not meta.get("triage") or mlir is None or row.triage is None:
        return None
    try:
        if str(Signature.from_json(meta["signature"])) != row.sig:
            return None
        verdict = stated_triage(meta, mlir, shown_runs_of(meta, mlir))
        if verdict.get("triage_evidence_of") == meta.get("triage_evidence_of"):
            return None  # the recorded verdict stands
        return Triage(str(verdict["triage"])), str(verdict.get("triage_evidence") or "")
    except (KeyError, TypeError, ValueError, AttributeError):  # an entry written by hand, or by an older shapefuzz
        return None


def merge_by_mechanism(groups: dict[str, list[BucketRow]]) -> dict[str, list[BucketRow]]:
    """`groups` (cause -> buckets, earliest first) with the causes whose buckets name one mechanism on one
    kind of lane merged into the earliest of them (module doc); the others as they are."""
    into: dict[str, str] = {}  # mechanism key -> the cause that holds it
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        keys = {key for b in members if (key := mechanism_key(b.sig_json, b.evidence))}
        target = next((into[key] for key in sorted(keys) if key in into), name)
        for key in keys:
            into.setdefault(key, target)
        if target == name:
            out[name] = list(members)
        else:
            out[target] = sorted([*out[target], *members], key=lambda b: b.first_seen)
    return out


__all__ = ["merge_by_mechanism", "restated"]
