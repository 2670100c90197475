"""Runs one compiler or runtime call in a sandbox: its own process group, a wall-clock timeout,
an address-space cap, captured output with a size limit. The whole group is killed on timeout,
on Ctrl-C, and after a normal exit (so no grandchild is left running). Never `shell=True`."""

from __future__ import annotations

import ctypes
import functools
import os
import re
import resource
import select
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass
from typing import Mapping, Sequence

from shapefuzz.model import ProcessResult

GIB = 1 << 30

# Texts that mean the child ran into the address-space cap rather than a bug of its own.
_OOM_PATTERN = re.compile(
    r"out of memory|std::bad_alloc|Cannot allocate memory|failed to allocate|Allocation failed"
    r"|RESOURCE_EXHAUSTED|MemoryError",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Limits:
    """Budget for one child process."""

    timeout: float = 120.0  # seconds of wall clock
    memory_bytes: int | None = 8 * GIB  # address-space cap; None for none
    output_bytes: int = 256 * 1024  # kept of each of stdout and stderr (head and tail)

    def with_timeout(self, timeout: float) -> "Limits":
        return Limits(timeout, self.memory_bytes, self.output_bytes)


_PR_SET_PDEATHSIG = 1
_libc = ctypes.CDLL(None, use_errno=True)


def _limit_child(memory_bytes: int | None) -> None:
    # Runs in the child between fork and exec. The death signal makes the kernel kill the child
    # when the process that started it dies, even by SIGKILL (a killed campaign worker leaves no
    # compiler running); it is kept across exec. Costs about 2 ms a call (fork instead of vfork).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if memory_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core dumps from crashing compilers


def _read_limited(handle, limit: int) -> str:
    handle.seek(0, os.SEEK_END)
    size = handle.tell()
    handle.seek(0)
    if size <= limit:
        data = handle.read()
    else:
        half = limit // 2
        head = handle.read(half)
        handle.seek(size - half)
        tail = handle.read(half)
        data = head + f"\n... [{size - limit} bytes cut] ...\n".encode() + tail
    return data.decode("utf-8", errors="replace")


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _wait(proc: subprocess.Popen, timeout: float) -> None:
    """Wait for the child, waking the moment it exits. Popen.wait(timeout) polls with sleeps of
    up to 50 ms, which is most of the cost of a 50 ms verify call; a pidfd wakes at once."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        proc.wait(timeout=timeout)
        return
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        if not poller.poll(timeout * 1000):
            raise subprocess.TimeoutExpired(proc.args, timeout)
        proc.wait()
    finally:
        os.close(pidfd)


def run_sandboxed(
    argv: Sequence[str],
    limits: Limits = Limits(),
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
) -> ProcessResult:
    """Run argv to completion or until its limits; never raises for the child's misbehaviour."""
    argv = tuple(str(a) for a in argv)
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, tempfile.TemporaryFile() as inp:
        if stdin_text is not None:
            inp.write(stdin_text.encode())
            inp.seek(0)
        start = time.perf_counter()
        proc = subprocess.Popen(
            argv,
            stdin=inp,
            stdout=out,
            stderr=err,
            cwd=cwd,
            env=dict(env) if env is not None else None,
            start_new_session=True,  # own session and process group: killpg reaches every descendant
            preexec_fn=functools.partial(_limit_child, limits.memory_bytes),
            close_fds=True,
        )
        timed_out = False
        try:
            _wait(proc, limits.timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc.pid)
            proc.wait()
        except BaseException:  # Ctrl-C or a kill of the worker: take the children down with us
            _kill_group(proc.pid)
            proc.wait()
            raise
        finally:
            _kill_group(proc.pid)  # grandchildren that outlived the leader
        seconds = time.perf_counter() - start
        stdout = _read_limited(out, limits.output_bytes)
        stderr = _read_limited(err, limits.output_bytes)
    code = proc.returncode
    sig = -code if code is not None and code < 0 else None
    out_of_memory = (
        not timed_out
        and code != 0
        and limits.memory_bytes is not None
        and bool(_OOM_PATTERN.search(stderr[-8192:] + stderr[:8192]))
    )
    return ProcessResult(
        argv=argv,
        returncode=None if timed_out else code,
        signal=None if timed_out else sig,
        timed_out=timed_out,
        out_of_memory=out_of_memory,
        stdout=stdout,
        stderr=stderr,
        seconds=seconds,
    )
