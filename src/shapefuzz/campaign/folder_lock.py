"""What a campaign folder must be before a campaign touches it, and the lock held on it for the
campaign's life. A folder holding files but no campaign database is someone's own folder (their
`report.md` would be replaced): refused. A second campaign on a folder in use is refused in one
line naming the holder (pid, host, since when), rather than computing the same candidates twice."""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import time
from pathlib import Path

from shapefuzz.campaign.database import DB_NAME
from shapefuzz.process.cleanup import process_ended
from shapefuzz.errors import CorpusError, UsageError
from shapefuzz.files import open_regular, special_kind

LOCK_NAME = "campaign.lock"
_OURS_ALONE = {LOCK_NAME}  # a campaign killed before its database was created leaves only this


def check_campaign_folder(folder: Path) -> None:
    """Refuses a file, a folder with no campaign in it that is not empty, and a database or lock
    that is not a regular file (a FIFO would hang the open)."""
    if not folder.exists() and not folder.is_symlink():
        return
    if not folder.is_dir():
        raise CorpusError(f"campaign folder {folder} is a file, not a folder")
    try:
        names = set(os.listdir(folder))
    except OSError as error:
        raise CorpusError(f"cannot read campaign folder {folder}: {error.strerror}") from None
    for name in (DB_NAME, LOCK_NAME):
        if name in names:
            try:
                st = os.lstat(folder / name)
            except OSError:
                continue
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else special_kind(st.st_mode)
            if kind is not None:
                raise CorpusError(f"campaign folder {folder}: {name} is {kind}, not a regular file (refused)")
    if DB_NAME not in names and names - _OURS_ALONE:
        shown = ", ".join(sorted(names - _OURS_ALONE)[:3])
        raise UsageError(f"--campaign {folder} holds files of its own ({shown}{', ...' if len(names) > 4 else ''}) "
                         "but no campaign; give a new or empty folder (a campaign writes report.md and "
                         "buckets.svg there)")


DEAD_HOLDER_WAIT_S = 5.0  # how long a lock whose named holder is dead may take to go


def _holder_dead(holder: str) -> bool:
    """Whether the lock note names a process of this host that no longer runs. Its lock can
    outlive it a moment: a compiler it was starting when killed (between fork and exec, in a
    session of its own, out of a group kill's reach) holds a copy of the descriptor until its exec
    closes it. A CI run once met that moment right after a SIGKILLed campaign was reaped."""
    words = holder.split()  # "pid N on HOST since ..."
    named = len(words) >= 4 and words[0] == "pid" and words[1].isdigit() and words[3] == socket.gethostname()
    return named and process_ended(int(words[1]))


class CampaignLock:
    """An exclusive flock on `campaign.lock`, naming its holder inside; released on close (and by
    the kernel when the process dies, even by SIGKILL, so a stale lock never blocks a resume)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / LOCK_NAME
        try:
            folder.mkdir(parents=True, exist_ok=True)
            self.fd = open_regular(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW)
        except OSError as error:
            raise CorpusError(f"cannot create campaign folder {folder}: {error.strerror}") from None
        deadline = time.monotonic() + DEAD_HOLDER_WAIT_S
        while True:
            try:
                fcntl.flock(self.fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                holder = os.pread(self.fd, 200, 0).decode("utf-8", "replace").strip() or "another process"
                if not _holder_dead(holder) or time.monotonic() >= deadline:
                    os.close(self.fd)
                    raise UsageError(f"campaign {folder} is in use by {holder}; wait for it to finish or give "
                                     "another --campaign folder") from None
                time.sleep(0.05)
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
        holder = f"pid {os.getpid()} on {socket.gethostname()} since {stamp}"
        try:
            os.ftruncate(self.fd, 0)
            os.pwrite(self.fd, holder.encode() + b"\n", 0)
        except OSError:
            pass  # a full disk: the lock holds all the same; only its note is missing

    def release(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)  # closing the only descriptor drops the flock
            self.fd = -1


def hold_campaign(folder: Path) -> CampaignLock:
    """The folder checked, then locked for the campaign's life (call `release` when done)."""
    check_campaign_folder(folder)
    return CampaignLock(folder)
