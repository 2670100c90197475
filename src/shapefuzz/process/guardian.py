"""The guardian of a shapefuzz command: a tiny process (`python -I -S guardian.py PID`, standard
library only) that outlives a SIGKILL of the command. The command's sandbox tells it, one line
each on its stdin, which process groups it starts (`+PGID:START`, the leader's start time) and
which are gone (`-PGID`, sent before the leader is reaped); when
the pipe closes (the command exited or was killed), it kills the groups still listed and removes
the command's temporary folders (`shapefuzz-<kind>-PID-*`). A compiler's own children die with
it, not only the compiler (whose parent-death signal covers it alone). A group whose number now
names another process (pid reuse) is left alone: it is someone else's. Out of its reach: a child
that called setsid (a daemon); the command kills those itself when it ends normally."""

import os
import re
import shutil
import signal
import sys
import tempfile
import time


def start_time(pid: int) -> int | None:
    """When `pid` started (clock ticks since boot, /proc/PID/stat field 22), None when there is no
    such process. A number and its start time name one process: a pid reused since differs."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def same_group(pgid: int, started: int | None) -> bool:
    """Whether process group `pgid` is still the one whose leader started at `started`. While any
    member lives the number cannot be reused, so a group without a leader process is the same one;
    a process of that number with another start time means the group is gone and the number was
    given to someone else (pid_max is 32768 on many machines: a stale number comes round fast)."""
    now = start_time(pgid)
    return now is None or started is None or now == started


def main(owner: int) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C to the terminal's group is the command's
    groups: dict[int, int | None] = {}  # pgid -> its leader's start time
    for line in sys.stdin:
        pgid, _, started = line.strip()[1:].partition(":")
        if line[:1] not in "+-" or not pgid.isdigit() or not (started.isdigit() or not started):
            continue
        if line[0] == "+":
            groups[int(pgid)] = int(started) if started else start_time(int(pgid))
        else:
            groups.pop(int(pgid), None)
    groups = {pgid: started for pgid, started in groups.items() if same_group(pgid, started)}
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    if groups:  # and those that left the group but not the session (each sandbox child starts one)
        for name in os.listdir("/proc"):
            try:
                with open(f"/proc/{name}/stat") as handle:
                    if int(handle.read().rsplit(")", 1)[1].split()[3]) in groups:
                        os.kill(int(name), signal.SIGKILL)
            except (OSError, ValueError, IndexError):
                continue
    if _lives_on(owner):
        return  # the command closed the pipe and lives on: its folders are its own
    pattern = re.compile(rf"shapefuzz-[a-z]+-{owner}-")
    root = tempfile.gettempdir()
    for name in os.listdir(root):
        path = os.path.join(root, name)
        if pattern.match(name) and os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path, ignore_errors=True)


def _lives_on(owner: int, wait_s: float = 5.0) -> bool:
    """Whether the owner still runs. A killed owner closes our pipe before it is a zombie, and a
    zombie answers kill(pid, 0) until its parent reaps it: so a dying owner gets a moment to die,
    and a zombie counts as dead (the race once left a killed check's folder behind)."""
    deadline = time.monotonic() + wait_s
    while True:
        try:
            with open(f"/proc/{owner}/stat") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except (OSError, IndexError):
            return False  # gone
        if state in "ZX":
            return False
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)


if __name__ == "__main__":
    main(int(sys.argv[1]))
