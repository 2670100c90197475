"""Target limits kept apart from bugs in a campaign's causes (no IREE): a cause never holds both a
documented gap of a target (`triage.target_limits`, verdict `target limit`) and a compiler bug.

The engine ties buckets into causes by identity and by the candidates that hit them, so one attention
candidate failing on Vulkan (no SPIR-V attention pipeline: a limit) and on ROCm (a bug) could tie the
two; and the report merges causes whose reproducers are one program. So before the report's splits
a cause holding both is split (`split_target_limits`: the limits become `<cause>.target-limit`), and
no merge joins a limit with anything else (`apart_by_limit`, asked by `campaign.causes.merging`)."""

from __future__ import annotations

from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.triage.target_limits import rule_of_message

LIMIT_SUFFIX = ".target-limit"


def is_limit(bucket: BucketRow) -> bool:
    """A bucket of a documented target gap: its verdict, or a signature that names a rule."""
    return bucket.triage == Triage.TARGET_LIMIT or rule_of_message(str(bucket.sig_json.get("message", ""))) is not None


def split_target_limits(groups: dict[str, list[BucketRow]]) -> dict[str, list[BucketRow]]:
    """Each cause holding target-limit buckets beside others as two: the others keep the name, the
    limits become `<name>.target-limit` (each keeps its buckets' order)."""
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        limits = [b for b in members if is_limit(b)]
        if limits and len(limits) < len(members):
            out[name] = [b for b in members if not is_limit(b)]
            out[name + LIMIT_SUFFIX] = limits
        else:
            out[name] = members
    return out


def apart_by_limit(xs: list[BucketRow], ys: list[BucketRow]) -> bool:
    """Whether two causes must stay apart because together they would hold a limit and a bug."""
    kinds = {is_limit(b) for b in (*xs, *ys)}
    return len(kinds) > 1


__all__ = ["LIMIT_SUFFIX", "apart_by_limit", "is_limit", "split_target_limits"]
