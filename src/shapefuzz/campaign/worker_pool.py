"""Worker processes that survive anything a candidate does. Each worker runs one task at a time;
the compiler and runtime run in the sandbox below it. A worker that dies, or runs past its task's
deadline, is killed with its children and replaced, and that task alone is reported lost.

Knows nothing of IREE: a task is (kind, candidate, lanes or a shrink's job) and the worker hands it to the
`Target`'s check, confirm or shrink (`values.perform`); what comes back is typed (`TaskValue`), and
read as a check's `Done.outcome` or a shrink's `Done.shrunk`."""

from __future__ import annotations

import contextlib
import multiprocessing
import multiprocessing.connection
import os
import select
import signal
import threading
import time
import traceback
from dataclasses import dataclass
from typing import Union

from shapefuzz.process import interrupts
from shapefuzz.campaign.outcomes import (
    Candidate, EnvironmentCondition, Outcome, ShrinkJob, ShrinkOutcome, Target, TaskKind, perform,
)
from shapefuzz.errors import EnvironmentFault
from shapefuzz.process.sandbox import become_subreaper, kill_strays
from shapefuzz.process.worktime import add


# What a worker returns for a task: a check's or a confirm's `Outcome`; a shrink's `ShrinkOutcome`, or
# None when it has nothing to tell (`values.perform`). None too when the task was lost or failed.
TaskValue = Union[Outcome, ShrinkOutcome, None]


@dataclass(frozen=True)
class Task:
    tid: int
    kind: TaskKind  # which of the target's check, confirm, shrink the worker calls
    candidate: Candidate
    lanes: tuple[str, ...]
    deadline: float  # seconds of wall clock before the worker is killed
    job: ShrinkJob | None = None  # a shrink's instructions (its lanes are its backend alone)

    @property
    def argument(self) -> tuple[str, ...] | ShrinkJob:
        """What the target's method takes after the candidate: the lanes, or a shrink's job."""
        return self.job if self.kind == TaskKind.SHRINK and self.job is not None else self.lanes


@dataclass(frozen=True)
class Done:
    task: Task
    value: TaskValue  # what the target returned (None when lost)
    seconds: float  # the worker's wall time for the task
    error: str = ""  # a traceback (our bug) or why the worker was lost
    lost: bool = False  # the worker died or ran past the deadline
    environment: EnvironmentCondition | None = None  # our machine failed the task (retried, never its outcome)

    @property
    def outcome(self) -> Outcome | None:
        """A check's or a confirm's value (None when lost or failed)."""
        if self.value is None or isinstance(self.value, Outcome):
            return self.value
        raise TypeError(f"a {self.task.kind.value} task returned a {type(self.value).__name__}, not an Outcome")

    @property
    def shrunk(self) -> ShrinkOutcome | None:
        """A shrink's value (None when it had nothing to tell, or was lost or failed)."""
        if self.value is None or isinstance(self.value, ShrinkOutcome):
            return self.value
        raise TypeError(f"a {self.task.kind.value} task returned a {type(self.value).__name__}, not a ShrinkOutcome")


def _terminate(signum, frame):  # SIGTERM in a worker: unwind, so the sandbox kills its child group
    # (through `interrupts.take`: held inside a block that makes or removes a temporary folder,
    # and owed when Python swallows it, as the command's own handler is)
    interrupts.take(signum, SystemExit(128 + signum))


def _die_with(parent_pid: int) -> None:
    """A worker must not outlive the campaign (a SIGKILLed `shapefuzz fuzz` left workers that
    started new compiles and wrote the corpus seconds later). Three layers:
    - the kernel sends SIGTERM when the parent dies (parent-death signal), which unwinds the
      task: the sandbox kills the compiler's group, nothing more is saved;
    - the worker is a child subreaper, so a compiler's child that called setsid and outlived it
      is reparented to the worker, and killed with the rest on the way out;
    - a thread watches the parent (pidfd) and, should the main thread be stuck in C code, kills
      every child and their groups itself and exits at once."""
    from shapefuzz.process.sandbox import become_subreaper, kill_strays, set_parent_death_signal

    become_subreaper()
    if not set_parent_death_signal(signal.SIGTERM, parent_pid):
        os._exit(1)  # the campaign died before we got here
    try:
        pidfd = os.pidfd_open(parent_pid)
    except (AttributeError, OSError):
        return

    def watch() -> None:
        select.select([pidfd], [], [])
        kill_strays(everything=True)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def _worker_main(conn: multiprocessing.connection.Connection, target: Target, parent_pid: int | None = None,
                 spawned: float | None = None) -> None:
    if spawned is not None:  # the interpreter's start and the target's imports (unpickling it), before this line
        add("start-up", max(0.0, time.time() - spawned))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the parent's to handle
    signal.signal(signal.SIGTERM, _terminate)
    interrupts.keep_swallowed()
    if parent_pid is not None:
        _die_with(parent_pid)
    try:
        _serve(conn, target)
    finally:
        from shapefuzz.process.sandbox import kill_strays

        kill_strays(everything=True)


def _serve(conn: multiprocessing.connection.Connection, target: Target) -> None:
    target.worker_init()
    while True:
        interrupts.check()  # a SIGTERM Python swallowed (in a gc callback) still ends the worker
        try:
            task: Task | None = conn.recv()
        except (EOFError, OSError):
            return
        if task is None:
            return
        start = time.perf_counter()
        environment = None
        value: TaskValue
        try:
            value, error = perform(target, task.kind, task.candidate, task.argument), ""
        except EnvironmentFault as fault:  # our machine, not the candidate: a value the engine retries on
            value, error, environment = None, traceback.format_exc(limit=8), EnvironmentCondition.of(fault)
        except Exception:  # our bug on one candidate: report it, keep the worker
            value, error = None, traceback.format_exc(limit=8)
        try:
            conn.send((task.tid, value, time.perf_counter() - start, error, environment))
        except (OSError, ValueError):
            return


# What a worker starts with, unless the user set it (the environment it inherits, put back at
# once): a worker is one of `jobs` side by side, so NumPy's BLAS threads inside it (the reference,
# ONNX's judge) only oversubscribe the cores, and OpenBLAS's waiting threads spin: one thread.
# Hypothesis's plugins are installed packages' hooks for their own tests (trio's imports pytest):
# a worker draws nothing, and loading them was a sixth of its start-up.
WORKER_ENVIRONMENT = {"OPENBLAS_NUM_THREADS": "1", "HYPOTHESIS_NO_PLUGINS": "1"}


@contextlib.contextmanager
def _worker_environment():
    added = [var for var in WORKER_ENVIRONMENT if var not in os.environ]
    os.environ.update({var: WORKER_ENVIRONMENT[var] for var in added})
    try:
        yield
    finally:
        for var in added:
            os.environ.pop(var, None)


class _Worker:
    def __init__(self, ctx, target: Target) -> None:  # ctx: a multiprocessing context
        self.conn, child = ctx.Pipe()
        self.proc = ctx.Process(target=_worker_main, args=(child, target, os.getpid(), time.time()), daemon=True)
        with _worker_environment():
            self.proc.start()
        child.close()
        self.task: Task | None = None
        self.started = 0.0

    def kill(self, grace: float = 3.0) -> None:
        if self.proc.is_alive():
            self.proc.terminate()  # SIGTERM: the worker unwinds and its sandbox kills the compiler
            self.proc.join(grace)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(grace)
        self.conn.close()


class WorkerPool:
    def __init__(self, target: Target, jobs: int, start_method: str = "spawn") -> None:
        self.target = target
        self.jobs = jobs
        self.ctx = multiprocessing.get_context(start_method)
        # Compilers' children that escape their group and outlive a killed worker come here, to
        # be killed (kill_strays) rather than run on under init.
        become_subreaper()
        self.workers = [_Worker(self.ctx, target) for _ in range(jobs)]
        self.replaced = 0

    @property
    def idle(self) -> int:
        return sum(w.task is None for w in self.workers)

    @property
    def busy(self) -> list[Task]:
        return [w.task for w in self.workers if w.task is not None]

    def submit(self, task: Task) -> None:
        worker = next(w for w in self.workers if w.task is None)
        worker.task, worker.started = task, time.monotonic()
        try:
            worker.conn.send(task)
        except (OSError, ValueError):
            pass  # a dead worker: wait() reports the task lost and replaces it

    def wait(self, timeout: float) -> list[Done]:
        """Finished (or lost) tasks, waiting at most `timeout` seconds for the first."""
        busy = [(w, w.task) for w in self.workers if w.task is not None]
        if not busy:
            time.sleep(min(timeout, 0.05))
            return []
        now = time.monotonic()
        soonest = min(w.started + task.deadline for w, task in busy) - now
        handles = [w.conn for w, _ in busy] + [w.proc.sentinel for w, _ in busy]
        ready = set(multiprocessing.connection.wait(handles, max(0.0, min(timeout, soonest))))
        done: list[Done] = []
        for w, task in busy:
            if w.conn in ready or w.proc.sentinel in ready:
                message = None
                try:
                    if w.conn.poll():
                        message = w.conn.recv()
                except (EOFError, OSError):
                    message = None
                if message is not None:
                    _, value, seconds, error, environment = message
                    done.append(Done(task, value, seconds, error, environment=environment))
                    w.task = None
                    continue
                if w.proc.is_alive() and w.conn in ready:
                    continue
                code = w.proc.exitcode
                why = f"worker died ({_describe_exit(code)}) on this candidate; worker replaced"
                done.append(Done(task, None, time.monotonic() - w.started, why, lost=True))
                self._replace(w)
            elif time.monotonic() - w.started > task.deadline:
                done.append(Done(task, None, time.monotonic() - w.started,
                                 f"worker ran past its {task.deadline:.0f}s deadline; killed and replaced", lost=True))
                self._replace(w)
        return done

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        kill_strays()
        self.workers[self.workers.index(worker)] = _Worker(self.ctx, self.target)
        self.replaced += 1

    def abandon(self) -> list[Task]:
        """Kill the busy workers (their children go with them); return the tasks they held."""
        lost = []
        for w in self.workers:
            if w.task is not None:
                lost.append(w.task)
                w.kill(grace=2.0)
                w.task = None
        kill_strays()
        return lost

    def close(self) -> None:
        for w in self.workers:
            if w.task is None and w.proc.is_alive():
                try:
                    w.conn.send(None)
                except (OSError, ValueError):
                    pass
        deadline = time.monotonic() + 3.0
        for w in self.workers:
            w.proc.join(max(0.0, deadline - time.monotonic()))
            w.kill(grace=1.0)
        kill_strays()


def _describe_exit(code: int | None) -> str:
    if code is None:
        return "still running"
    if code < 0:
        try:
            return signal.Signals(-code).name
        except ValueError:
            return f"signal {-code}"
    return f"exit {code}"
