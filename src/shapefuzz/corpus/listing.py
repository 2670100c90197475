"""Every entry of a corpus, fast at thousands of entries: what `corpus list`, INDEX.md and a
campaign's summary and dashboard read (the checked meta.json of each entry, or why it is
unreadable).

Loading an entry in full (`load_entry`) renders its params and reads its arrays: ~10 ms, 50 s
for a 5,000-entry corpus on a busy machine. A listing reads and checks every meta.json each time
(its types, ids and names, as `load_entry` does) but renders the params and reads the
reproducer and arrays only for an entry it has not seen pass in this state before. What passed
is kept in the user's cache (~/.cache/shapefuzz/listings/), keyed by the sha256 of meta.json and
the (inode, size, mtime) of every other file the entry names, and by the shapefuzz code that
checked it: a changed entry, or another shapefuzz, is loaded in full again. The cache holds only
"these exact bytes passed", never a value that is shown: a broken or forged cache costs a full
load, never a wrong listing."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

from shapefuzz import schema
from shapefuzz.corpus.entry import META, REPRODUCER, EntryView, UnreadableEntry
from shapefuzz.corpus.schema import check_meta
from shapefuzz.corpus.store import entry_folders, load_entry
from shapefuzz.errors import CorpusError
from shapefuzz.files import atomic_write, read_bytes
from shapefuzz.schema import SchemaError

_MAX_META = 64 << 20
# A file written this recently may be written again within the filesystem's timestamp tick with
# the same size (as git's "racy" index entries): its entry is not cached until it is older.
_RACY_SECONDS = 2.0


def list_entries(corpus_dir: str | os.PathLike) -> list[EntryView | UnreadableEntry]:
    """Every folder of the corpus in id order: its checked meta (EntryView), or why it is not a
    readable entry; the same verdicts `iter_entries` gives, without a full load per entry."""
    corpus_dir = Path(corpus_dir)
    started = time.time()
    folders = entry_folders(corpus_dir)
    cache_path = _cache_path(corpus_dir)
    passed = _read_cache(cache_path)
    now: dict[str, str] = {}
    out: list[EntryView | UnreadableEntry] = []
    for folder in folders:
        try:
            data = _meta_bytes(folder)
            meta = check_meta(schema.load_json(data.decode("utf-8"), META), folder.name, render=False)
            key, newest = _key(folder, data, meta)
            if passed.get(folder.name) != key:
                load_entry(folder)  # renders the params, reads the reproducer and the arrays
                key, newest = _key(folder, data, meta)  # unchanged unless written meanwhile
            if newest < started - _RACY_SECONDS:
                now[folder.name] = key
            out.append(EntryView(Path(os.path.abspath(folder)), meta))
        except UnicodeDecodeError:
            out.append(UnreadableEntry(folder, f"{META} is not UTF-8 text"))
        except SchemaError as error:
            out.append(UnreadableEntry(folder, str(error)))
        except CorpusError as error:
            out.append(UnreadableEntry(folder, str(error)))
    if now != passed:
        _write_cache(cache_path, now)
    return out


def _meta_bytes(folder: Path) -> bytes:
    """meta.json's bytes, refused as load_entry refuses it (a link, missing, huge, unreadable)."""
    path = folder / META
    if folder.is_symlink():
        raise CorpusError(f"{folder.name} is a symbolic link, not an entry folder (refused)")
    if path.is_symlink():
        raise CorpusError(f"{META} is a symbolic link (refused)")
    if not path.is_file():
        raise CorpusError(f"missing {META} (not a shapefuzz corpus entry)")
    try:
        if path.stat().st_size > _MAX_META:
            raise CorpusError(f"{META} is larger than 64 MiB")
        return read_bytes(path)
    except OSError as error:
        raise CorpusError(f"{META}: {error.strerror or error}") from None


def _key(folder: Path, meta_bytes: bytes, meta: dict[str, Any]) -> tuple[str, float]:
    """What an entry's full check depended on (meta.json's bytes, the state of every file it
    names), and the newest of those files' modification times."""
    names = [REPRODUCER, "model.onnx", *(meta.get("inputs") or []), *(meta.get("expected") or [])]
    parts, newest = [hashlib.sha256(meta_bytes).hexdigest()], 0.0
    for name in names:
        try:
            st = os.lstat(folder / name)
            parts.append(f"{name}:{st.st_ino}:{st.st_size}:{st.st_mtime_ns}:{st.st_ctime_ns}:{st.st_mode}")
            newest = max(newest, st.st_mtime)
        except (OSError, ValueError):
            parts.append(f"{name}:-")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest(), newest


def _code_stamp() -> str:
    """The shapefuzz code that checks entries (a verdict of another version is not reused)."""
    from shapefuzz.templates import templates_dir

    package = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    # The rooms whose code decides an entry's verdict, and the vocabulary at the package root.
    rooms = ("corpus", "families", "judge", "invoke", "iree", "process", "triage")
    for root, pattern in (*((package / room, "**/*.py") for room in rooms), (package, "*.py"),
                          (templates_dir(), "*")):
        for path in sorted(root.glob(pattern)):
            try:
                st = path.stat()
            except OSError:
                continue
            digest.update(f"{path}:{st.st_size}:{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:32]


def forget_listing(corpus_dir: str | os.PathLike) -> None:
    """Drop the listing cache of `corpus_dir`: the next `list_entries` loads every entry in full
    (bench/make_corpus.py times a listing cold and warm)."""
    _cache_path(Path(corpus_dir)).unlink(missing_ok=True)


def _cache_path(corpus_dir: Path) -> Path:
    from shapefuzz.iree.toolchain import cache_root

    where = hashlib.sha256(os.path.realpath(corpus_dir).encode()).hexdigest()[:24]
    return cache_root() / "listings" / f"{where}.json"


def _read_cache(path: Path) -> dict[str, str]:
    """{entry name: key} from the cache, or {} when it is missing, broken or another code's."""
    try:
        data = json.loads(read_bytes(path).decode("utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    if not isinstance(data, dict) or data.get("code") != _code_stamp() or not isinstance(data.get("passed"), dict):
        return {}
    return {k: v for k, v in data["passed"].items() if isinstance(k, str) and isinstance(v, str)}


_KEEP_LISTINGS = 64  # corpora remembered; the least recently listed are forgotten


def _write_cache(path: Path, passed: dict[str, str]) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, json.dumps({"code": _code_stamp(), "passed": passed}).encode())
        others = sorted(path.parent.glob("*.json"), key=lambda p: p.stat().st_mtime, reverse=True)
        for stale in others[_KEEP_LISTINGS:]:
            stale.unlink(missing_ok=True)
    except OSError:
        pass  # a read-only or full cache: the next listing loads in full again, nothing is wrong


__all__ = ["forget_listing", "list_entries"]
