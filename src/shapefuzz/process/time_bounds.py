"""Whole-step time bounds (`--bisect-time`, `--localize-time`, a localization's seconds): a bound
holds for every sandboxed call made under it, in this thread and in the jobs `parallel` starts from
it. Each call's own timeout is clipped to the time the bound has left, and a call the clip cut short
(or one started once the bound ran out) raises `OutOfTime`, never a timeout result: a compile that
hit the step's bound did not hang. `time_bound` catches its own `OutOfTime` and says it ran out.

A single 120 s compile of an old release that hung took `triage --bisect --bisect-time 30s` to
125 s: checking the clock between compiles is not a bound."""

from __future__ import annotations

import math
import time
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Callable, Iterator


@dataclass(eq=False)
class TimeBound:
    """One bound: its end on the monotonic clock, and whether a call was refused or cut by it."""

    end: float
    ran_out: bool = False

    def left(self) -> float:
        return self.end - time.monotonic()


class OutOfTime(BaseException):
    """A sandboxed call refused or cut short by a `time_bound`. Not an Exception: no `except
    Exception` on the way takes it for a compiler's failure; its own `time_bound` catches it."""

    def __init__(self, bound: TimeBound) -> None:
        super().__init__("the time bound ran out")
        self.bound = bound


_BOUNDS: ContextVar[tuple[TimeBound, ...]] = ContextVar("shapefuzz_time_bounds", default=())


@contextmanager
def time_bound(seconds: float | None) -> Iterator[TimeBound]:
    """Every sandboxed call in the block gets at most what is left of `seconds` (None: no bound of
    its own; the bounds around it still hold). On leaving, `bound.ran_out` says whether one was
    refused or cut short by it (the block then ended there)."""
    bound = TimeBound(math.inf if seconds is None else time.monotonic() + max(0.0, seconds))
    token = _BOUNDS.set(_BOUNDS.get() + (bound,))
    try:
        yield bound
    except OutOfTime as stop:
        if stop.bound is not bound:
            raise  # an outer bound's: its own block says so
        bound.ran_out = True
    finally:
        _BOUNDS.reset(token)


def unless_cut(fn: Callable[..., Any], cut: Callable[..., Any]) -> Callable[..., Any]:
    """`fn` under the bounds the caller runs under now, in whichever thread it is called (a
    shrink's trials run on its own pool); a call one of them cuts returns `cut(*args)` instead of
    raising: for a predicate, "not interesting" (a compile cut short shows nothing)."""
    bounds = _BOUNDS.get()

    def run(*args: Any, **kwargs: Any) -> Any:
        token = _BOUNDS.set(bounds)
        try:
            return fn(*args, **kwargs)
        except OutOfTime as stop:
            stop.bound.ran_out = True
            return cut(*args, **kwargs)
        finally:
            _BOUNDS.reset(token)

    return run


def binding() -> TimeBound | None:
    """The bound that ends first among those the caller runs under (None: none)."""
    bounds = _BOUNDS.get()
    return min(bounds, key=lambda b: b.end) if bounds else None


def time_left() -> float | None:
    """Seconds left of the first bound to end, None when none holds."""
    bound = binding()
    return None if bound is None or bound.end == math.inf else bound.left()


__all__ = ["OutOfTime", "TimeBound", "binding", "time_bound", "time_left", "unless_cut"]
