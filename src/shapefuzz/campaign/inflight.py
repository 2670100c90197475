"""The tasks handed to the worker pool and not finished yet (no IREE): each task's id and
deadline, and what the rest of the campaign asks of them (is this candidate being checked, how
many checks and which shrinks run, what the running shrinks may take)."""

from __future__ import annotations

from typing import Callable, Iterable, Protocol

from shapefuzz.campaign.worker_pool import Task
from shapefuzz.campaign.outcomes import Candidate, ShrinkJob, TaskKind


class Pool(Protocol):
    """What the tasks in flight ask of a worker pool (`pool.WorkerPool`, `raypool.RayPool`)."""

    def submit(self, task: Task) -> None: ...

    def abandon(self) -> Iterable[Task]: ...


class InFlight:
    """Tasks in flight, keyed by kind and id; `deadline(lanes)`: the seconds a check on those
    lanes may take (the target's)."""

    def __init__(self, deadline: Callable[[tuple[str, ...]], float]) -> None:
        self._deadline = deadline
        self._tid = 0
        self.tasks: dict[str, Task] = {}

    def make(self, kind: TaskKind, candidate: Candidate, lanes: tuple[str, ...], job: ShrinkJob | None = None) -> Task:
        self._tid += 1
        if job is not None:  # its own time limit, plus the re-checks around it
            deadline = job.seconds * 1.5 + self._deadline(lanes)
        else:
            deadline = self._deadline(lanes)
        return Task(self._tid, kind, candidate, lanes, deadline, job)

    def submit(self, pool: Pool, task: Task) -> None:
        self.tasks[_key(task)] = task
        pool.submit(task)

    def finished(self, task: Task) -> None:
        self.tasks.pop(_key(task), None)

    def abandon(self, pool: Pool) -> None:
        """What is in flight is dropped."""
        for task in pool.abandon():
            self.finished(task)

    def __len__(self) -> int:
        return len(self.tasks)

    def checking(self, key: str) -> bool:
        """Is a task of the candidate `key` in flight? (A candidate drawn again while its first
        check runs is a duplicate too.)"""
        return any(t.candidate.key == key for t in self.tasks.values())

    def checks(self) -> int:
        return sum(t.kind == TaskKind.CHECK for t in self.tasks.values())

    def shrinks(self) -> set[str]:
        """The buckets being shrunk."""
        return {t.job.key for t in self.tasks.values() if t.job is not None}

    def shrink_seconds(self) -> float:
        """What the running shrinks may take."""
        return sum(t.job.seconds for t in self.tasks.values() if t.job is not None)


def _key(task: Task) -> str:
    return f"{task.kind.value}:{task.tid}"


__all__ = ["InFlight", "Pool"]
