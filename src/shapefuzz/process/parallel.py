"""Independent jobs on threads (`onnx-suite`, `replay`) that stop promptly: on Ctrl-C or SIGTERM
the queued jobs are cancelled, the running ones' children killed (`sandbox.cancel_running`, so
their sandboxed calls raise `interrupts.Cancelled` rather than report a process we killed), and the jobs that
had finished are kept for the command to report and save before it exits 130 or 143. A job that
raises (our bug, an error its caller did not turn into a result) stops the run and reaches the
caller, whether or not it watches the results: no job's error is ever dropped."""

from __future__ import annotations

import concurrent.futures
import contextvars
from dataclasses import dataclass
from typing import Callable, Generic, Sequence, TypeVar

from shapefuzz.process import interrupts, sandbox

Item = TypeVar("Item")
Result = TypeVar("Result")
UNWIND_SECONDS = 30.0  # the running jobs' unwinding (their children are already killed)


@dataclass
class Finished(Generic[Result]):
    results: list[Result]  # the jobs that finished, in the order of their items
    stopped: KeyboardInterrupt | None = None  # the signal that stopped the rest (Terminated for SIGTERM)


def run_parallel(job: Callable[[Item], Result], items: Sequence[Item], jobs: int,
                 on_result: Callable[[Result], None] | None = None) -> Finished[Result]:
    """`job` over `items` on `jobs` threads; `on_result` sees each result as it comes. The first
    job to raise stops the rest (queued ones are not run) and its exception is raised here."""
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=max(1, jobs))
    # each job in a copy of the caller's context: the time bounds it runs under hold there too
    futures = [pool.submit(contextvars.copy_context().run, job, item) for item in items]
    stopped = None
    try:
        waiting = set(futures)
        while waiting:
            interrupts.check()  # each second: a stop Python swallowed in this thread is honoured
            done, waiting = concurrent.futures.wait(waiting, timeout=1.0,
                                                    return_when=concurrent.futures.FIRST_COMPLETED)
            for future in done:  # (those that finished this round)
                result = future.result()  # a job's exception is raised here, watched or not
                if on_result is not None:
                    on_result(result)
    except KeyboardInterrupt as stop:
        stopped = stop
        pool.shutdown(wait=False, cancel_futures=True)
        sandbox.cancel_running()
        # (a future cancelled in the queue never wakes a waiter: wait for the running ones only)
        concurrent.futures.wait([f for f in futures if not f.done()], timeout=UNWIND_SECONDS)
    finally:  # (our own bug in a job: the queued ones are not run before it is reported)
        pool.shutdown(wait=stopped is None, cancel_futures=True)
        sandbox.resume()
    # after a stop, a job that raised (Cancelled, or anything its killed children led to) is cut short
    results = [f.result() for f in futures if f.done() and not f.cancelled() and f.exception(timeout=0) is None]
    return Finished(results, stopped)


__all__ = ["Finished", "run_parallel"]
