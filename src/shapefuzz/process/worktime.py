"""Where a worker's time goes outside the compiler and runtime: cheap per-process timers by part
(the NumPy reference, ONNX's second judge, reading the action log, the run's input and output
files, temporary files, start-up imports, the sandbox's own work around each compiler and runtime
process: its environment, pipes and reaping). A campaign takes the difference around a task
(`since`) and reports the split beside the share spent in compiler and runtime processes
(`execute.tool_seconds`, which these parts never overlap)."""

from __future__ import annotations

import time
from contextlib import contextmanager
from typing import Iterator

# The parts, in the order reports list them (new ones at the end: a store keeps them by name).
# "validate": a case checked only on lanes that compile here is still rendered and its arrays sized
# (no inputs, no reference are built for it).
PARTS = ("start-up", "reference", "judge", "compare", "action log", "inputs", "files", "processes", "validate")

_SPENT: dict[str, float] = {}
_OPEN = [0]  # timed blocks open now


@contextmanager
def timed(part: str) -> Iterator[None]:
    """Adds the wall time of the block to `part` (nested blocks of another part are not
    subtracted: time one layer at a time)."""
    start = time.perf_counter()
    _OPEN[0] += 1
    try:
        yield
    finally:
        _OPEN[0] -= 1
        _SPENT[part] = _SPENT.get(part, 0.0) + time.perf_counter() - start


def add(part: str, seconds: float) -> None:
    _SPENT[part] = _SPENT.get(part, 0.0) + seconds


def add_untimed(part: str, seconds: float) -> None:
    """`add`, unless a timed block is open (the time is already that block's: the probe's
    processes at start-up)."""
    if not _OPEN[0]:
        add(part, seconds)


_TAKEN: dict[str, float] = {}


def take() -> dict[str, float]:
    """Seconds per part spent since the last take, parts with none left out. A worker runs one
    task at a time, so each task hands back what was spent since the task before: its own parts,
    and the worker's start-up with its first."""
    out = {part: round(spent - _TAKEN.get(part, 0.0), 4) for part, spent in _SPENT.items()}
    out = {part: seconds for part, seconds in out.items() if seconds > 0.0}
    _TAKEN.update(_SPENT)
    return out


def skip() -> None:
    """Forget what was spent since the last take, start-up aside (a task whose time is not split,
    a shrink, leaves it for the next task that is)."""
    _TAKEN.update((part, spent) for part, spent in _SPENT.items() if part != "start-up")
