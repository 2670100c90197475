"""Writing our own files so that a failure (a full disk, a read-only folder) leaves the old file
whole and the error names the file meant, not a temporary (the CLI prints it as one line)."""

from __future__ import annotations

import os
import uuid
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator


@contextmanager
def named(path: str | os.PathLike) -> Iterator[None]:
    """An OSError inside that names no file (a write or close on a full disk) is re-raised naming `path`."""
    try:
        yield
    except OSError as error:
        if error.filename is None and error.errno is not None:
            raise OSError(error.errno, error.strerror, str(path)) from None
        raise


def write_text(path: str | os.PathLike, text: str) -> None:
    """A plain write (temporary files) whose errors name the file."""
    with named(path):
        Path(path).write_text(text)


def atomic_write(path: str | os.PathLike, data: bytes, mode: int = 0o644) -> None:
    """Writes a whole file or nothing: a hidden temporary beside it, then os.replace (which
    replaces a symbolic link in the way rather than writing through it). The temporary is
    removed when the write fails (a full disk), and the error goes up unchanged."""
    path = Path(path)
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
