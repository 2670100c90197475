"""Which pending shrink runs next, and which bucket of a cause is the one shrunk. Within the shrink
share every compiler-bug cause gets one shrink before any cause gets a second; causes go in the
report's order (compiler bugs, then by severity: wrong values first; new before known; the first
found first). A cause's bucket to shrink is one spelled in linalg where it has one (a torch or
ONNX spelling only when it has none), on its cheapest lane. Plain values: the engine's bucket book
(`book.py`) applies them to its buckets."""

from __future__ import annotations

from typing import Callable, Iterable

from shapefuzz.campaign.store import BucketRow
from shapefuzz.campaign.triage_rules import cause_triage
from shapefuzz.campaign.values import ShrinkState, Triage
from shapefuzz.frontend import is_torch
from shapefuzz.size import measure
from shapefuzz.triage.severity import severity_of


def frontend_spelled(bucket: BucketRow) -> bool:
    """Whether the bucket's reproducer is a torch or ONNX spelling (torch-dialect input) rather
    than linalg."""
    return is_torch(bucket.repro_text)


def severity_rank(bucket: BucketRow) -> int:
    """The bucket's severity as an order (0: wrong values), as `campaign.bugs` ranks its cause."""
    elements = measure(bucket.repro_text).elements if bucket.repro_text else None
    return int(severity_of(bucket.stage, bucket.status, bucket.sig_json.get("message", ""), bucket.detail, elements))


def choose(members: Iterable[BucketRow], lane_seconds: Callable[[BucketRow], float]) -> BucketRow | None:
    """The bucket of a cause to shrink: linalg-spelled first, then the cheapest lane (the seconds
    its reproducer's check took there), then the first found."""
    return min(members, key=lambda b: (frontend_spelled(b), lane_seconds(b), b.first_seen, b.sig), default=None)


def cause_order(members: list[BucketRow], started: bool, known_before: float,
                rank: Callable[[BucketRow], int] = severity_rank) -> tuple:
    """A cause's place in the shrink order: causes with no shrink yet (`started`: one done or
    running) before any second; compiler bugs first; the most severe first; new (first seen in
    this session, at or after `known_before`) before known; the first found first."""
    first = min(b.first_seen for b in members)
    return (started, cause_triage(members) != Triage.COMPILER_BUG, min(rank(b) for b in members),
            first < known_before, first)


def shrink_started(members: Iterable[BucketRow], running: set[str]) -> bool:
    """Whether a cause already has its shrink: one done, or one running now."""
    return any(b.shrink == ShrinkState.DONE or b.sig in running for b in members)


__all__ = ["cause_order", "choose", "frontend_spelled", "severity_rank", "shrink_started"]
