"""What a resume may not change without saying so: the pins that decide what a campaign draws.

A campaign's first session stores its families, backends (and whether every candidate goes on
each of them), seed, context share and lanes per candidate in the store's `config` meta. A
resume that leaves one out keeps the campaign's own; one that names another value would mix two
campaigns' draws in one store and one set of counts. `changed_pins` names each difference as
"--ops differs: the campaign ran conv,topk; this run asks for scatter"; the resume is refused
(exit 2) unless `--force` is given, and then it says them and the new values are stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence


@dataclass(frozen=True)
class PinChange:
    flag: str
    ran: str
    asks: str

    def line(self) -> str:
        return f"{self.flag} differs: the campaign ran {self.ran}; this run asks for {self.asks}"


def _names(names: Sequence[str]) -> str:
    return ",".join(names)


def _share(value: float) -> str:
    return f"context share {value:g}"


def changed_pins(stored: Mapping[str, Any], *, families: Sequence[str] | None = None,
                 backends: Sequence[str] | None = None, seed: int | None = None,
                 context_share: float | None = None, lanes_per_candidate: int | None = None) -> list[PinChange]:
    """The pins this run names (None: not given) that differ from the stored ones. Families and
    backends are compared as sets (their order is the campaign's); a pin the store does not hold
    (a campaign from before it was stored) cannot differ."""
    changes = []
    if families is not None and stored.get("families") is not None and set(families) != set(stored["families"]):
        changes.append(PinChange("--ops", _names(stored["families"]), _names(families)))
    if backends is not None and stored.get("backends") is not None:
        ran = list(stored["backends"])
        if set(backends) != set(ran):
            changes.append(PinChange("--backends", _names(ran), _names(backends)))
        elif not stored.get("forced"):  # --backends puts every candidate on each named lane
            lanes = stored.get("lanes_per_candidate") or 2
            changes.append(PinChange("--backends", f"{_names(ran)} in turn, {lanes} lanes a candidate",
                                     f"{_names(backends)} on every candidate"))
    if seed is not None and stored.get("seed") is not None and seed != stored["seed"]:
        changes.append(PinChange("--seed", f"seed {stored['seed']}", f"seed {seed}"))
    if context_share is not None and stored.get("context_share") is not None \
            and context_share != stored["context_share"]:
        changes.append(PinChange("--context-share", _share(stored["context_share"]), _share(context_share)))
    if lanes_per_candidate is not None and stored.get("lanes_per_candidate") is not None \
            and lanes_per_candidate != stored["lanes_per_candidate"] and not stored.get("forced"):
        changes.append(PinChange("--lanes-per-candidate", f"{stored['lanes_per_candidate']} lanes a candidate",
                                 f"{lanes_per_candidate}"))
    return changes


def refusal(changes: Sequence[PinChange]) -> str:
    """The one line a resume with other pins is refused with."""
    them = "it" if len(changes) == 1 else "them"
    return (". ".join(c.line() for c in changes) + f". Leave {them} out to resume the campaign as it was, give "
            f"--force to change {them} (the campaign's counts then mix both), or choose another --campaign folder")


def keep_order(asked: Sequence[str], stored: Sequence[str] | None) -> tuple[str, ...]:
    """`asked` in the stored order when they are the same names (the order steers the draws)."""
    if stored is not None and set(asked) == set(stored):
        return tuple(stored)
    return tuple(asked)


__all__ = ["PinChange", "changed_pins", "keep_order", "refusal"]
