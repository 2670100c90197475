"""The campaign's triage rules over its buckets (no IREE): a bucket's verdict, and a cause's (the
most bug-like verdict among its buckets)."""

from __future__ import annotations

from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.outcomes import BucketState, Triage

_TRIAGE_ORDER = (Triage.COMPILER_BUG, Triage.TARGET_LIMIT, Triage.SUSPECTED_DRIVER, Triage.OURS, Triage.FLAKY)


def bucket_triage(bucket: BucketRow) -> Triage:
    if bucket.state == BucketState.FLAKY:
        return Triage.FLAKY
    return bucket.triage or Triage.COMPILER_BUG  # None: a bucket from before triage


def cause_triage(buckets: list[BucketRow]) -> Triage:
    """A cause is a compiler bug when any of its buckets is one (the same failure on llvm-cpu
    clears the Vulkan driver); otherwise the most bug-like verdict among them."""
    verdicts = {bucket_triage(b) for b in buckets}
    return next((t for t in _TRIAGE_ORDER if t in verdicts), Triage.FLAKY)


__all__ = ["bucket_triage", "cause_triage"]
