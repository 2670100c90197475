"""Writing our own files so that a failure (a full disk, a read-only folder) leaves the old file
whole and the error names the file meant, not a temporary (the CLI prints it as one line)."""

from __future__ import annotations

import errno
import os
import re
import shutil
import stat
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from shapefuzz.errors import CorpusError


@contextmanager
def named(path: str | os.PathLike) -> Iterator[None]:
    """An OSError inside that names no file (a write or close on a full disk) is re-raised naming `path`."""
    try:
        yield
    except OSError as error:
        if error.filename is None and error.errno is not None:
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise


_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
          (stat.S_ISSOCK, "a socket"), (stat.S_ISDIR, "a folder"))


def special_kind(mode: int) -> str | None:
    """What a file that is not a regular file is ("a FIFO", "a folder"), None for a regular file."""
    for test, kind in _KINDS:
        if test(mode):
            return kind
    return None if stat.S_ISREG(mode) else "not a regular file"


def refuse_special(path: str | os.PathLike, st: os.stat_result) -> None:
    kind = special_kind(st.st_mode)
    if kind is not None:
        code = errno.EISDIR if kind == "a folder" else errno.EINVAL
        raise OSError(code, f"{kind}, not a regular file (refused)", str(path))


def open_regular(path: str | os.PathLike, flags: int = os.O_RDONLY, mode: int = 0o644) -> int:
    """A file descriptor of a regular file. A FIFO, device or socket is refused before it is
    opened (stat) and again after (fstat, opened with O_NONBLOCK so a FIFO swapped in between
    cannot hang the open); the descriptor is blocking again when returned."""
    try:
        refuse_special(path, os.stat(path))
    except FileNotFoundError:
        if not flags & os.O_CREAT:
            raise
    fd = os.open(path, flags | os.O_NONBLOCK | os.O_CLOEXEC, mode)
    try:
        refuse_special(path, os.fstat(fd))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file (a FIFO or device is an OSError naming it, never a hang)."""
    with open(open_regular(path), "rb") as handle:
        return handle.read()


def write_text(path: str | os.PathLike, text: str) -> None:
    """A plain write (temporary files) whose errors name the file."""
    with named(path):
        Path(path).write_text(text)


def atomic_write(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Writes a whole file or nothing: a hidden temporary beside it, then os.replace (which
    replaces a symbolic link in the way rather than writing through it). The temporary is
    removed when the write fails (a full disk), and the error goes up unchanged."""
    path = Path(path)
    if path.name in ("", ".", ".."):
        raise OSError(errno.EISDIR, "a folder, not a file name", str(path))
    try:  # a device node, FIFO or folder in the way is refused, never replaced (a link is replaced)
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISLNK(st.st_mode):
            refuse_special(path, st)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex[:8]}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
        with open(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as error:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(error, OSError) and error.errno is not None:
            raise OSError(error.errno, error.strerror, str(path)) from None  # name the file, not the temporary
        raise


# ----------------------------------------------------------------------------- names read back

_UNSAFE = re.compile(r"[\x00-\x1f\x7f/\\]")  # control characters (NUL included) and separators
MAX_NAME = 200


class UnsafeName(CorpusError):
    """A name read from a campaign folder or corpus (a cause, an entry folder) that would not stay
    a plain file name inside its folder: `..`, an absolute path, a separator, a control character,
    or a link on the way. Such a name never becomes a path."""


def safe_name(name: object, what: str) -> str:
    """`name` when it is one plain file name (what the store or a meta.json says), else UnsafeName."""
    text = name if isinstance(name, str) else ""
    if not text or text in (".", "..") or len(text) > MAX_NAME or _UNSAFE.search(text) or text != text.strip():
        shown = repr(name)[:60]
        raise UnsafeName(f"{what} {shown} is not a plain file name (refused; was the folder tampered with?)")
    return text


def child(parent: str | os.PathLike, name: object, what: str) -> Path:
    """The one way a name read back from disk becomes a path: `parent/name`, with `name` a plain
    file name (safe_name), the path not a symbolic link, and resolving inside `parent`."""
    parent = Path(parent)
    path = parent / safe_name(name, what)
    if path.is_symlink():
        raise UnsafeName(f"{what} {path} is a symbolic link (refused, never followed)")
    if os.path.dirname(os.path.realpath(path)) != os.path.realpath(parent):
        raise UnsafeName(f"{what} {path} resolves outside {parent} (refused)")
    return path


def real_dir(path: str | os.PathLike) -> Path:
    """`path` as a real folder of ours to write into: a symbolic link in its place is replaced
    (removed, never followed), a missing folder created; a file in the way is an OSError."""
    path = Path(path)
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    if path.is_symlink() or not path.is_dir():
        raise OSError(errno.ENOTDIR, "not a folder", str(path))
    return path


def fresh_dir(path: str | os.PathLike) -> Path:
    """`path` emptied for a rewrite: whatever was there (a folder, a file, a symbolic link) is
    removed without following a link, and a real empty folder made."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(path)  # rmtree never follows links inside (it unlinks them)
        else:
            path.unlink()
    path.mkdir(parents=True)
    return path


def fsync_dir(path: str | os.PathLike) -> None:
    """Makes a rename inside `path` durable (best effort: some file systems refuse it)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def disk_full(error: BaseException | None) -> bool:
    """Whether `error`, or an error it was raised from, is a full disk or an exhausted quota."""
    seen = 0
    while error is not None and seen < 16:
        if isinstance(error, OSError) and error.errno in DISK_FULL:
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False
