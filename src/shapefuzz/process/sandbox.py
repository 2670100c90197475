"""Runs one compiler or runtime call in a sandbox: its own process group, a wall-clock timeout,
an address-space cap, captured output with a size limit. The whole group is killed on timeout,
on Ctrl-C, and after a normal exit (so no grandchild is left running). Never `shell=True`."""

from __future__ import annotations

import ctypes
import functools
import math
import os
import re
import resource
import select
import signal
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, replace
from typing import Mapping, Sequence

from shapefuzz.errors import UsageError
from shapefuzz.process.guardian import same_group, start_time
from shapefuzz.process.interrupts import Cancelled, check as check_signals
from shapefuzz.model import ProcessResult
from shapefuzz.process.time_bounds import OutOfTime, binding

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

    timeout: float = 120.0  # seconds of wall clock, plus the time it waited for a CPU (STARVED_ALLOWANCE)
    memory_bytes: int | None = 8 * GIB  # address-space cap; None for none
    output_bytes: int = 256 * 1024  # kept of each of stdout and stderr (head and tail)
    # On timeout, first a SIGABRT to the busiest thread and this many seconds to die of it (LLVM's
    # handler prints that thread's stack: where a compile hangs); then the group's SIGKILL. 0: none.
    abort_grace: float = 0.0

    def __post_init__(self) -> None:
        # A limit that is not a limit (-1, 0, nan, inf) would silently disable it.
        if not isinstance(self.timeout, (int, float)) or not math.isfinite(self.timeout) or self.timeout <= 0:
            raise UsageError(f"timeout {self.timeout!r}: give a positive, finite number of seconds")
        if self.memory_bytes is not None and (not isinstance(self.memory_bytes, int) or self.memory_bytes <= 0):
            raise UsageError(f"memory cap {self.memory_bytes!r}: give a positive number of bytes")
        if not isinstance(self.output_bytes, int) or self.output_bytes <= 0:
            raise UsageError(f"output cap {self.output_bytes!r}: give a positive number of bytes")
        if not isinstance(self.abort_grace, (int, float)) or not 0 <= self.abort_grace <= 10:
            raise UsageError(f"abort grace {self.abort_grace!r}: give 0 to 10 seconds")

    def with_timeout(self, timeout: float) -> "Limits":
        return replace(self, timeout=timeout)  # every other field as it is, however many there are


_PR_SET_PDEATHSIG, _PR_SET_CHILD_SUBREAPER = 1, 36
_libc = ctypes.CDLL(None, use_errno=True)
# Set in every sandboxed child's environment (and so in its descendants'): how a process that
# a compiler left behind is told apart from our other children once it is reparented to us.
SANDBOX_MARK = "SHAPEFUZZ_SANDBOXED"
# A shapefuzz that itself runs inside a sandbox (a test, a bench) must not pass the mark on to its
# own children (campaign workers), or it would take them for strays.
os.environ.pop(SANDBOX_MARK, None)
_live: set[int] = set()  # sandbox children running now, in any thread
_live_lock = threading.Lock()
_subreaper_pid = [0]
# The sessions of the latest sandbox children (insertion-ordered), each with its leader's start
# time: a number kept after its session ended may be given to an unrelated process (pid reuse).
_sessions: dict[int, int | None] = {}
_MAX_SESSIONS = 1024
_cancelled = threading.Event()  # the command is stopping: no new child, running ones killed


def become_subreaper() -> bool:
    """Makes this process a child subreaper (Linux): descendants orphaned below it (a compiler's
    child that called setsid and outlived it) are reparented here rather than to init, so
    `kill_strays` can find and kill them. Once per process; False where unsupported."""
    if _subreaper_pid[0] == os.getpid():
        return True
    if _libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        return False
    _subreaper_pid[0] = os.getpid()
    return True


_guardian: list = [None, False]  # [its stdin, wanted]: started by the first sandboxed call of a command


def _forget_guardian() -> None:
    # A forked child (a campaign worker under the fork start method) must not write into its
    # parent's guardian: a group it announces and, killed, never withdraws would stay listed there
    # and be killed when the parent ends, long after its number went to another process.
    _guardian[0], _guardian[1] = None, False


os.register_at_fork(after_in_child=_forget_guardian)


def want_guardian() -> None:
    """In a command's own process (the CLI sets it; campaign workers have their own way): the
    first sandboxed call starts `guardian.py`, which kills what is left if we are killed."""
    _guardian[1] = True


def _tell_guardian(line: str) -> None:
    """One line to the guardian (started on first use); never fails the call it guards."""
    if not _guardian[1]:
        return
    if _guardian[0] is None:
        import sys

        from shapefuzz.process import guardian
        try:
            # -I: not the script's folder on sys.path (our bisect.py would shadow the standard one)
            proc = subprocess.Popen([sys.executable, "-I", "-S", guardian.__file__, str(os.getpid())],
                                    stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    close_fds=True, text=True)
        except OSError:
            _guardian[1] = False
            return
        _guardian[0] = proc.stdin
    try:
        _guardian[0].write(line + "\n")
        _guardian[0].flush()
    except (OSError, ValueError):  # it died: carry on without it
        _guardian[1] = False


def set_parent_death_signal(sig: int, parent_pid: int) -> bool:
    """The kernel sends `sig` to this process when its parent dies (even by SIGKILL). False when
    the parent is already gone (the signal would never come)."""
    _libc.prctl(_PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    return os.getppid() == parent_pid


def _children() -> list[int]:
    """Direct children of this process (every thread's), from /proc."""
    pids: list[int] = []
    try:
        for task in os.listdir("/proc/self/task"):
            try:
                with open(f"/proc/self/task/{task}/children") as handle:
                    pids += [int(p) for p in handle.read().split()]
            except OSError:
                continue
    except OSError:
        return []
    return pids


def _is_sandboxed(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as handle:
            return (SANDBOX_MARK + "=1").encode() in handle.read().split(b"\0")
    except OSError:
        return False


def _session(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[3])
    except (OSError, ValueError, IndexError):
        return None


def _escaped(pid: int) -> bool:
    """An adopted orphan of a sandboxed call: it carries the mark, or it sits in the session of a
    sandbox child we started (each starts its own), which catches one that cleared its
    environment. One that also called setsid is caught by `reap_at_exit`."""
    session = _session(pid)
    return _is_sandboxed(pid) or (session in _sessions and same_group(session, _sessions[session]))


def reap_at_exit() -> int:
    """The command's process ending (the console entry calls this): every child left and its
    group is killed, in a process that became a subreaper, so nothing a compiler started (a
    daemon that called setsid and cleared its environment) outlives the command."""
    if _subreaper_pid[0] != os.getpid():
        return 0
    return kill_strays(everything=True, patience=2.0)


def kill_strays(everything: bool = False, patience: float = 5.0) -> int:
    """Kills and reaps the children a sandboxed command left behind: adopted orphans carrying the
    sandbox mark that are not a sandbox child still running. With `everything` (a worker going
    down), every child and its group. Killing one orphans its children onto us (we are a
    subreaper), so this repeats until none is left. Returns how many were killed."""
    killed = 0
    deadline = time.monotonic() + patience
    while time.monotonic() < deadline:
        with _live_lock:  # the children and the live set read together: a child another thread
            live = set(_live)  # starts (under this lock) is never taken for a stray
            children = _children()
        targets = [p for p in children if everything or (p not in live and _escaped(p))]
        if not targets:
            break
        for pid in targets:
            _kill_group(pid)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        for pid in targets:  # wait for each to die, so its own children are ours by the next round
            try:
                os.waitpid(pid, 0)
            except ChildProcessError:
                pass
        killed += len(targets)
    return killed


# A line `--mlir-print-ir-after-failure` prints before each dump: it names the failing pass
# (triage.failing_pass). A failing link step prints the whole LLVM module after it (516 KB for a
# softmax chain's "undefined symbol: fmaxf"), which put the header in the cut middle of a 256 KB
# capture: the same failure read "[?]" there and "[iree-hal-serialize-target-executables]" on a
# smaller module, two bug identities.
_DUMP_HEADER_LINE = re.compile(rb"^// -----// IR Dump After [^\n]{1,4000}$", re.MULTILINE)
_KEPT_HEADER_BYTES = 16 << 10
# A backtrace's frame lines (LLVM's " #12 0x00007f... symbol File.cpp:0:0"): where a crash or a hang
# failed is read from them (triage.failing_pass), so a long output around a stack never cuts it by
# length; 64 KB holds some 300 frames, deeper than any reader looks.
_FRAME_LINE = re.compile(rb"^\s*#\d+ 0x[0-9a-fA-F]+ [^\n]{1,4000}$", re.MULTILINE)
_KEPT_FRAME_BYTES = 64 << 10


class _Capture:
    """Keeps the head and the tail of a stream, at most `limit` bytes in all, as it arrives:
    a child writing gigabytes costs reading them, never memory or disk. The IR-dump header lines
    and backtrace frame lines of the cut middle are kept too (at most 16 KB and 64 KB of them),
    between head and tail."""

    def __init__(self, limit: int) -> None:
        self.half = max(1, limit // 2)
        self.limit = limit
        self.head = bytearray()
        self.tail = bytearray()
        self.headers = bytearray()
        self.frames = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if len(self.head) < self.half:
            take = self.half - len(self.head)
            self.head += data[:take]
            data = data[take:]
        self.tail += data
        if len(self.tail) > 2 * self.half + 65536:
            self._drop(len(self.tail) - self.half)

    def _drop(self, n: int) -> None:
        """The tail's first `n` bytes (moved back to a line's end, so no line is split between what
        goes and what stays) leave the capture; their dump header and frame lines stay."""
        end = self.tail.rfind(b"\n", 0, n)
        n = end + 1 if end >= 0 else n
        self._keep(bytes(self.tail[:n]))
        del self.tail[:n]

    def _keep(self, data: bytes) -> None:
        self.headers += _kept_lines(_DUMP_HEADER_LINE, b"IR Dump After", data, _KEPT_HEADER_BYTES - len(self.headers))
        self.frames += _kept_lines(_FRAME_LINE, b" 0x", data, _KEPT_FRAME_BYTES - len(self.frames))

    def text(self) -> str:
        if self.total <= self.limit:
            data = bytes(self.head + self.tail)
        else:
            tail = bytes(self.tail[-self.half:])
            hidden = len(self.tail) - len(tail)  # the tail's front, not shown: its lines are kept (whole lines)
            if hidden > 0 and self.tail[hidden - 1:hidden] != b"\n":  # and the line the tail starts inside
                end = self.tail.find(b"\n", hidden)
                hidden = end + 1 if end >= 0 else len(self.tail)
            front = bytes(self.tail[:hidden])
            headers = self.headers + _kept_lines(_DUMP_HEADER_LINE, b"IR Dump After", front,
                                                 _KEPT_HEADER_BYTES - len(self.headers))
            frames = self.frames + _kept_lines(_FRAME_LINE, b" 0x", front, _KEPT_FRAME_BYTES - len(self.frames))
            cut = self.total - len(self.head) - len(tail)
            data = bytes(self.head) + f"\n... [{cut} bytes cut] ...\n".encode() + headers + frames + tail
        return data.decode("utf-8", errors="replace")


def _kept_lines(pattern: re.Pattern[bytes], marker: bytes, data: bytes, room: int) -> bytes:
    """The lines of `data` that `pattern` matches (only looked for when `marker` is in it), one a
    line, within `room` bytes."""
    kept = b""
    if room > 0 and marker in data:
        for match in pattern.finditer(data):
            if len(kept) + len(match.group(0)) + 1 > room:
                break
            kept += match.group(0) + b"\n"
    return kept


def _limit_child(memory_bytes: int | None) -> None:
    # Runs in the child between fork and exec. The death signal makes the kernel kill the child
    # when the process that started it dies, even by SIGKILL (a killed campaign worker leaves no
    # compiler running); it is kept across exec. Costs about 2 ms a call (fork instead of vfork).
    _libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    signal.pthread_sigmask(signal.SIG_SETMASK, [])  # a thread that leaves signals to the main one does not pass that on
    if memory_bytes is not None:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # no core dumps from crashing compilers


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _busiest_thread(pid: int) -> int:
    """The thread of `pid` to abort for a stack of where it hangs: one running now (a loop that does
    not end runs; a pool waiting on it sleeps), the one with the most CPU time among them; the main
    thread when none runs (a deadlock) or /proc cannot tell."""
    running = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/stat") as handle:
                    fields = handle.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == "R":
                running.append((int(fields[11]) + int(fields[12]), int(tid)))
    except (OSError, ValueError, IndexError):
        return pid
    return max(running)[1] if running else pid


def _abort_for_stack(proc: subprocess.Popen, pipes: dict[int, _Capture], grace: float) -> None:
    """SIGABRT to the busiest thread of a child past its timeout, then its output read for up to
    `grace` seconds while it prints its stack and dies (the caller kills the group after, dead
    or not: a child that ignores SIGABRT costs `grace`, never a process left behind)."""
    tid = _busiest_thread(proc.pid)
    tgkill = getattr(_libc, "tgkill", None)  # glibc 2.30 and later
    try:
        if tid == proc.pid or tgkill is None or tgkill(proc.pid, tid, signal.SIGABRT) != 0:
            os.kill(proc.pid, signal.SIGABRT)  # the process: the kernel picks a thread
    except (ProcessLookupError, PermissionError):
        return
    _pump(proc, pipes, grace)


# A child that wanted the CPU but waited for it (a loaded machine: more runnable threads than
# cores) is given that time back, up to this many times its timeout more: a compile that only
# starved is no hang. A child that sleeps or blocks waits on nothing and gets nothing back.
STARVED_ALLOWANCE = 2.0


def starved_seconds(pid: int) -> float:
    """How long the child's most-starved thread has waited, runnable, for a CPU (the run delay in
    /proc/PID/task/TID/schedstat); 0 where the kernel does not say."""
    worst = 0
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                    worst = max(worst, int(f.read().split()[1]))
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return 0.0
    return worst / 1e9


def _pump(proc: subprocess.Popen, pipes: dict[int, _Capture], timeout: float, allowance: float = 0.0) -> bool:
    """Reads the child's output pipes into their captures until it exits (True) or the timeout
    passes (False). Wakes the moment it exits (pidfd); Popen.wait(timeout) polls with sleeps of
    up to 50 ms, which is most of the cost of a 50 ms verify call. With an `allowance`, the
    timeout is moved on by the time the child spent starved of a CPU, up to allowance x timeout."""
    start = time.monotonic()
    deadline = start + timeout
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        pidfd = None
    poller = select.poll()
    for fd in pipes:
        poller.register(fd, select.POLLIN | select.POLLHUP)
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    open_pipes = set(pipes)
    try:
        while True:
            check_signals()  # a stop Python swallowed (a gc callback took the signal): honoured here
            if pidfd is None and proc.poll() is not None:
                return True
            left = deadline - time.monotonic()
            if left <= 0 and allowance > 0:  # time back for the time it waited for a CPU
                deadline = start + timeout + min(starved_seconds(proc.pid), allowance * timeout)
                left = deadline - time.monotonic()  # (asked again at the new deadline: it may starve on)
            if left <= 0:
                return False
            # (a second at most: an interrupt that is only a flag, as Ray's cancel of a task, is
            # noticed between two polls)
            wait_ms = min(left * 1000, 1000) if pidfd is not None else min(left * 1000, 50)  # poll takes an int
            for fd, _ in poller.poll(wait_ms):
                if fd == pidfd:
                    return True
                data = os.read(fd, 1 << 16)
                if data:
                    pipes[fd].add(data)
                else:
                    poller.unregister(fd)
                    open_pipes.discard(fd)
    finally:
        if pidfd is not None:
            os.close(pidfd)


def _drain(pipes: dict[int, _Capture]) -> None:
    """What the child wrote before it exited, without waiting for a grandchild that still holds
    the pipe open."""
    for fd, capture in pipes.items():
        os.set_blocking(fd, False)
        while True:
            try:
                data = os.read(fd, 1 << 16)
            except BlockingIOError:
                break
            except OSError:
                break
            if not data:
                break
            capture.add(data)


def run_sandboxed(
    argv: Sequence[str],
    limits: Limits = Limits(),
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin_text: str | None = None,
) -> ProcessResult:
    """Run argv to completion or until its limits; never raises for the child's misbehaviour (under
    a `time_bounds.time_bound`, the timeout is clipped to what the bound has left, and a call it
    cuts raises `OutOfTime`, which that bound catches).
    A child that ends by a SIGKILL we did not send is run once more before its end is believed:
    no program crashes with SIGKILL (it comes from outside: the OOM killer, another process), so
    unconfirmed it is the machine's doing, never a crash finding; confirmed, it stands."""
    argv = tuple(str(a) for a in argv)
    result = _run_once(argv, limits, cwd, env, stdin_text)
    if result.signal == signal.SIGKILL:
        return _run_once(argv, limits, cwd, env, stdin_text)  # its end, whatever it is, is the result
    return result


def cancel_running() -> int:
    """The command is stopping (Ctrl-C in the main thread while other threads run sandboxed calls):
    every running child's group is killed now, and every sandboxed call in any thread, running or
    about to start, raises `Cancelled` instead of returning. Returns how many were killed."""
    with _live_lock:
        _cancelled.set()
        running = list(_live)
    for pid in running:
        _kill_group(pid)
    return len(running)


def resume() -> None:
    """Sandboxed calls run again (a command run in-process by a test, after `cancel_running`)."""
    _cancelled.clear()


def _run_once(argv: tuple[str, ...], limits: Limits, cwd: str | None, env: Mapping[str, str] | None,
              stdin_text: str | None) -> ProcessResult:
    if _cancelled.is_set():
        raise Cancelled()
    check_signals()  # a stop owed (swallowed inside a gc callback): no new child, the command unwinds
    bound = binding()  # a whole step's time bound (--bisect-time): this call gets no more than it has left
    clipped = None
    if bound is not None and bound.end != math.inf:
        left = bound.left()
        if left <= 0:
            raise OutOfTime(bound)
        if left < limits.timeout:
            limits, clipped = replace(limits, timeout=left, abort_grace=0.0), bound
    become_subreaper()
    child_env = dict(env if env is not None else os.environ)
    child_env[SANDBOX_MARK] = "1"
    captures = {}
    with tempfile.TemporaryFile() as inp:
        if stdin_text is not None:
            inp.write(stdin_text.encode())
            inp.seek(0)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        captures = {out_r: _Capture(limits.output_bytes), err_r: _Capture(limits.output_bytes)}
        start = time.perf_counter()
        try:
            with _live_lock:  # registered before kill_strays in another thread can see it
                if _cancelled.is_set():
                    raise Cancelled()
                proc = subprocess.Popen(
                    argv,
                    stdin=inp,
                    stdout=out_w,
                    stderr=err_w,
                    cwd=cwd,
                    env=child_env,
                    start_new_session=True,  # own session and process group: killpg reaches every descendant
                    preexec_fn=functools.partial(_limit_child, limits.memory_bytes),
                    close_fds=True,
                )
                _live.add(proc.pid)
                started = start_time(proc.pid)  # not reaped before `-PID` is told: still this child
                _tell_guardian(f"+{proc.pid}:{started}" if started is not None else f"+{proc.pid}")
                _sessions[proc.pid] = started  # start_new_session: its session id is its pid
                while len(_sessions) > _MAX_SESSIONS:
                    del _sessions[next(iter(_sessions))]
        except BaseException:
            for fd in (out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        os.close(out_w)
        os.close(err_w)
        timed_out = False
        try:
            # no time back past a step's bound (clipped): the bound is the bound
            timed_out = not _pump(proc, captures, limits.timeout, 0.0 if clipped else STARVED_ALLOWANCE)
            if timed_out and limits.abort_grace > 0:
                _abort_for_stack(proc, captures, limits.abort_grace)
        finally:  # also on Ctrl-C or a kill of the worker: take the children down with us
            # The group is killed while its leader is unreaped (a zombie at worst), so the number
            # is still this group's: killed after the reap it could name a stranger's new group.
            _kill_group(proc.pid)
            with _live_lock:
                _tell_guardian(f"-{proc.pid}")
            proc.wait()
            with _live_lock:  # only once reaped: to kill_strays in another thread an unreaped
                _live.discard(proc.pid)  # child no longer live would be a stray to reap
            kill_strays()  # and those that left its group (setsid), reparented to us
            try:
                _drain(captures)
            finally:
                for fd in captures:
                    os.close(fd)
        seconds = time.perf_counter() - start
        stdout = captures[out_r].text()
        stderr = captures[err_r].text()
    if _cancelled.is_set():
        raise Cancelled()  # killed by `cancel_running`, or finished as the command stops: no result
    if timed_out and clipped is not None:
        raise OutOfTime(clipped)  # cut by the step's bound, not the call's own limit: no hang to report
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
