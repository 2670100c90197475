"""The campaign's record of compiles a shrink need not run again, by lane: the failing lanes of its
checks and confirming re-runs (`Outcome.trials`) and every trial of its shrinks
(`ShrinkOutcome.trials`), each as its target recorded it (for IREE a `shrink.trials.Trial`: the
text's hash, the lane's flags, the mode, the result and the limits it ran under). A shrink on a
lane is handed what its lane holds (`ShrinkJob.trials`): its bucket's reproducer is not checked
again, and a text another cause's shrink tried there is not compiled again. Within one campaign
session, in the head: values travel with the tasks, so a cluster's nodes share it too."""

from __future__ import annotations

import collections
from typing import Any, Iterable

PER_LANE = 5000  # trials kept per lane, the newest (a shrink's job carries its lane's)


class TrialBook:
    def __init__(self, per_lane: int = PER_LANE) -> None:
        self.per_lane = per_lane
        self._lanes: dict[str, dict[Any, Any]] = collections.defaultdict(dict)

    def add(self, trials: Iterable[Any]) -> None:
        """Keep these (a later run of the same key replaces an earlier one it does not cover:
        the confirm's run at the full limits replaces the check's blow-up at half of them)."""
        for trial in trials:
            lane = self._lanes[trial.lane]
            old = lane.get(trial.key)
            if old is not None and old.covers(trial.timeout, trial.memory):
                continue
            lane.pop(trial.key, None)
            lane[trial.key] = trial
            if len(lane) > self.per_lane:
                del lane[next(iter(lane))]

    def on(self, lane: str) -> tuple[Any, ...]:
        """What a shrink on `lane` is handed."""
        return tuple(self._lanes.get(lane, {}).values())


__all__ = ["PER_LANE", "TrialBook"]
