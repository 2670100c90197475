"""Tasks our own machine failed (a full disk, an I/O error: the target raised EnvironmentFault):
retried later, never recorded as the candidate's outcome, the condition said once (no IREE)."""

from __future__ import annotations

import collections
import time

from shapefuzz.campaign.state import CampaignState
from shapefuzz.campaign.worker_pool import Done, Task

ENVIRONMENT_RETRY_SECONDS = 30.0  # a task our environment failed is retried after this long
MAX_ENVIRONMENT_RETRIES = 3


class Retries:
    """The tasks waiting for their retry; counted, and each condition said once, in the
    campaign's `state` (its stats and its `say`)."""

    def __init__(self, state: CampaignState) -> None:
        self._state = state
        self.queue: collections.deque[tuple[float, Task]] = collections.deque()  # (when, the task again)
        self.counts: collections.Counter[str] = collections.Counter()

    def fault(self, task: Task, done: Done) -> bool:
        """True when `done` failed for our machine's sake: the task is queued for its retry (at
        most MAX_ENVIRONMENT_RETRIES times; then it is left for the next session)."""
        if done.value is not None or done.environment is None:
            return False
        condition = done.environment.text
        self._state.stats.environment_faults += 1
        key = f"{task.kind.value}:{task.candidate.key}:{task.lanes[:1]}:{task.job.key if task.job else ''}"
        self.counts[key] += 1
        if self.counts[key] > MAX_ENVIRONMENT_RETRIES:
            self._state.say(f"our environment failed {task.kind.value} of {task.candidate.key} "
                      f"{MAX_ENVIRONMENT_RETRIES + 1} times ({condition}); left for the next session")
            return True
        if condition not in self._state.stats.conditions:
            self._state.stats.conditions.add(condition)
            self._state.say(f"our environment, not the compiler: {condition}; the {task.kind.value} is retried in "
                      f"{ENVIRONMENT_RETRY_SECONDS:.0f}s (free space in TMPDIR)")
        self.queue.append((time.monotonic() + ENVIRONMENT_RETRY_SECONDS, task))
        return True

    def due(self) -> Task | None:
        """The first task whose retry is due (to be handed out again as a new task), or None."""
        if self.queue and self.queue[0][0] <= time.monotonic():
            return self.queue.popleft()[1]
        return None

    @property
    def waiting(self) -> bool:
        return bool(self.queue)


__all__ = ["ENVIRONMENT_RETRY_SECONDS", "MAX_ENVIRONMENT_RETRIES", "Retries"]
