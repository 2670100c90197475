"""Temporary folders that name their owner, and a sweep of those whose owner is gone: a command
killed with SIGKILL cannot remove its own (SIGINT and SIGTERM unwind and remove them), so the
next command started on the machine does."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import time
from contextlib import contextmanager, nullcontext
from typing import Iterator

from shapefuzz.process import interrupts
from shapefuzz.process.worktime import timed

_OWNED = re.compile(r"shapefuzz-[a-z]+-(\d{1,10})-")
_GRACE_SECONDS = 30.0  # a folder just made by a process that is starting is never touched


def temp_prefix(kind: str) -> str:
    """`shapefuzz-<kind>-<pid>-`: the prefix of a temporary folder this process owns."""
    return f"shapefuzz-{kind}-{os.getpid()}-"


@contextmanager
def temp_dir(kind: str, part: str | None = None) -> Iterator[str]:
    """A temporary folder this process owns (`temp_prefix(kind)`), removed when the block ends.
    Made and owned, and removed, with signals held (`interrupts.holding`): a SIGINT or SIGTERM
    that lands between `mkdtemp` and the cleanup's registration, or in the middle of the removal
    (the files gone, the folder not yet), is raised once the step is done, never leaving a folder
    behind (`tempfile.TemporaryDirectory` has both windows). `part`: the making and removing
    timed as that part of a worker's time (`worktime`)."""
    path = None
    try:
        with interrupts.holding(), (timed(part) if part else nullcontext()):
            path = tempfile.mkdtemp(prefix=temp_prefix(kind))
        yield path
    finally:
        if path is not None:
            with interrupts.holding(), (timed(part) if part else nullcontext()):
                shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process
    return True


def process_ended(pid: int) -> bool:
    """Whether `pid` no longer runs on this machine: gone, or a zombie not yet reaped (which
    `_alive`'s kill(pid, 0) still answers for). Linux /proc; elsewhere never claimed."""
    if not os.path.isdir("/proc/self"):
        return False
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] in "ZX"
    except (OSError, IndexError):
        return True


def sweep_stale_temps(root: str | None = None) -> int:
    """Removes our temporary folders whose owning process no longer runs; returns how many.
    Only folders we own (same uid), never through a link; errors are ignored (best effort)."""
    root = root or tempfile.gettempdir()
    removed = 0
    try:
        names = os.listdir(root)
    except OSError:
        return 0
    now = time.time()
    for name in names:
        match = _OWNED.match(name)
        if not match or int(match.group(1)) == os.getpid() or _alive(int(match.group(1))):
            continue
        path = os.path.join(root, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not os.path.isdir(path) or os.path.islink(path) or st.st_uid != os.getuid() \
                or now - st.st_mtime < _GRACE_SECONDS:
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed += 1
    return removed
