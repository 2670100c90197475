"""The corpus on disk: save a finding, update an entry's meta.json, load and find entries.

Writes are atomic: a new entry is built in a hidden temporary folder and renamed into place; an
update either rewrites meta.json alone (`files.atomic_write`) or, when a smaller reproducer
arrives, builds the whole new folder and swaps it in with one rename (RENAME_EXCHANGE on Linux).
A SIGKILL at any instant leaves the old entry or the new one whole; stray temporary folders are
hidden (dot-names) and cleaned up by the next save. One writer at a time per corpus (a lock file).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import shutil
import uuid
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from shapefuzz import schema
from shapefuzz.corpus.entry import (
    CASE_FORM, CORPUS_FORMAT, EXPECTED_DIR, EXPECTED_FAILING, EXPECTED_STATES, INPUTS_DIR, META, REPRO_SCRIPT,
    REPRODUCER, CorpusEntry, Finding, Sizes, UnreadableEntry, entry_id, now_text, reproducer_sizes,
)
from shapefuzz.corpus.schema import check_meta
from shapefuzz.corpus.views import comment_text, repro_script, scrub, strip_paths
from shapefuzz.errors import CorpusError
from shapefuzz.files import atomic_write, fsync_dir, named, open_regular
from shapefuzz.schema import SchemaError
from shapefuzz.size import smaller
from shapefuzz.triage.record import as_json_value, bug_record, kept_bug_fields, read_bug
from shapefuzz.triage.shown import reproducer_digest

_TMP_PREFIX, _OLD_PREFIX, _LOCK = ".tmp-", ".old-", ".lock"
MAX_SIGHTING_KEYS = 1000  # sightings' keys an entry keeps (meta.json `sighting_keys`)
_GITIGNORE = ".lock\n.tmp-*\n.old-*\n"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def _new_meta(finding: Finding, eid: str, when: str, sizes: Sizes) -> dict[str, Any]:
    case = finding.case
    return {
        "format": CORPUS_FORMAT,
        "id": eid,
        "signature": finding.signature.to_json(),
        "signature_text": str(finding.signature),
        "backend": finding.signature.backend,
        "stage": finding.signature.stage.value,
        "status": finding.signature.status.value,
        "family": case.family if case else None,
        "params": case.params if case else None,
        "seed": int(finding.seed),
        "backends": list(dict.fromkeys(finding.backends)),
        "toolchain_version": finding.toolchain_version,
        "toolchain_versions": [finding.toolchain_version],
        "compile_command": strip_paths(list(finding.compile_command)),
        "first_seen": when,
        "last_seen": when,
        "count": 1,
        "expected_state": EXPECTED_FAILING,
        "flaky": bool(finding.flaky),
        "sizes": sizes.to_json(),
        "inputs": [],
        "expected": [],
        "detail": scrub(finding.detail),
        "notes": "",
        "cause": finding.cause,
        "triage": finding.triage,
        "triage_evidence": comment_text(finding.evidence, 2000),
        # which program the evidence describes: a later, smaller reproducer makes it another's (triage.shown)
        "triage_evidence_of": reproducer_digest(finding.mlir) if finding.evidence else "",
        "bug": bug_record(finding.signature.to_json(), scrub(finding.detail), finding.backends, finding.mlir),
        **({"origin": comment_text(finding.origin, 500)} if finding.origin else {}),
    }


def _with_newline(text: str) -> str:
    return text if text.endswith("\n") else text + "\n"


def _write_payload(folder: Path, finding: Finding, meta: dict[str, Any]) -> None:
    """Writes every file of an entry into `folder` (a fresh temporary folder), meta.json last."""
    (folder / REPRODUCER).write_text(_with_newline(finding.mlir))
    meta["inputs"], meta["expected"] = [], []
    for key, sub, stem, arrays in (
        ("inputs", INPUTS_DIR, "arg", finding.inputs),
        ("expected", EXPECTED_DIR, "result", finding.expected),
    ):
        if not arrays:
            continue
        (folder / sub).mkdir()
        for i, array in enumerate(arrays):
            name = f"{sub}/{stem}{i}.npy"
            np.save(folder / name, np.require(array, requirements="C"), allow_pickle=False)
            meta[key].append(name)
    meta.pop("onnx_model", None), meta.pop("import_command", None), meta.pop("case_form", None)
    meta.pop("reference", None)
    if finding.reference:  # what made expected/ when no family's NumPy reference did (a voted text stage)
        meta["reference"] = comment_text(finding.reference, 300)
    if finding.case_form is not None:  # the generated case the reproducer was cut from, beside it
        (folder / CASE_FORM).write_text(_with_newline(finding.case_form))
        meta["case_form"] = CASE_FORM
    if finding.onnx_model is not None:  # the model the reproducer was imported from, beside it
        from shapefuzz.corpus.onnx_files import MODEL_FILE, model_meta

        (folder / MODEL_FILE).write_bytes(finding.onnx_model)
        meta.update(model_meta(REPRODUCER))
    script = folder / REPRO_SCRIPT
    script.write_text(repro_script(meta))
    script.chmod(0o755)
    _write_json(folder / META, meta)


@contextmanager
def _locked(corpus_dir: Path) -> Iterator[None]:
    """One writer at a time per corpus (parallel campaign workers, two campaigns)."""
    # O_NOFOLLOW: a lock file planted as a symbolic link must not create or open a file elsewhere;
    # one planted as a FIFO or device is refused unopened (open_regular), never waited on.
    with named(corpus_dir / _LOCK):
        fd = open_regular(corpus_dir / _LOCK, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW)
    with open(fd, "a") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


_libc = None


def _exchange(a: Path, b: Path) -> bool:
    """Atomically swap two paths (Linux renameat2 RENAME_EXCHANGE). False where unsupported."""
    global _libc
    try:
        if _libc is None:
            _libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = _libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    if renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _swap_in(corpus_dir: Path, new: Path, final: Path) -> None:
    """Replace folder `final` by folder `new`, so that the entry is always whole."""
    if _exchange(new, final):
        shutil.rmtree(new, ignore_errors=True)  # `new` now holds the old entry
        return
    # No atomic exchange: move the old one aside first; _recover puts it back after a crash.
    old = corpus_dir / f"{_OLD_PREFIX}{final.name}.{uuid.uuid4().hex[:8]}"
    os.rename(final, old)
    os.rename(new, final)
    shutil.rmtree(old, ignore_errors=True)


def _recover(corpus_dir: Path) -> None:
    """Under the lock: remove half-built folders, restore an entry moved aside by a killed swap."""
    for child in corpus_dir.iterdir():
        if child.name.startswith(_TMP_PREFIX):
            shutil.rmtree(child, ignore_errors=True)
        elif child.name.startswith(_OLD_PREFIX):
            original = corpus_dir / child.name[len(_OLD_PREFIX):].rsplit(".", 1)[0]
            if original.exists():
                shutil.rmtree(child, ignore_errors=True)
            else:
                os.rename(child, original)


def _prepare(corpus_dir: Path) -> None:
    corpus_dir.mkdir(parents=True, exist_ok=True)
    ignore = corpus_dir / ".gitignore"
    if not ignore.exists():
        atomic_write(ignore, _GITIGNORE.encode())


def save_finding(
    corpus_dir: str | os.PathLike, finding: Finding, now: datetime | str | None = None, sighting: bool = True,
    run_key: str | None = None,
) -> tuple[Path, bool]:
    """Adds a finding to the corpus: (entry folder, True when a new entry was created).

    An existing entry (same signature) gets count+1, last_seen and the toolchain version; its
    reproducer, inputs and expected outputs are replaced only by a smaller reproducer.
    `sighting=False` is for a smaller reproducer of a failure already counted (a shrink result):
    it may replace the reproducer but does not add to count or last_seen. `run_key` names the
    sighting (a bundle's device run of one case, `bundle.layout.Results.run_key`): one already in
    the entry's `sighting_keys` changes nothing, so judging the same results twice counts them once."""
    corpus_dir = Path(corpus_dir)
    _prepare(corpus_dir)
    when = now_text(now)
    eid = entry_id(finding.signature)
    final = corpus_dir / eid
    sizes = reproducer_sizes(finding.mlir, finding.inputs)
    with named(final), _locked(corpus_dir):
        _recover(corpus_dir)
        for stray in final.glob(".*.tmp") if final.is_dir() else ():
            stray.unlink(missing_ok=True)  # a meta.json rewrite killed before its os.replace
        if final.is_symlink():
            raise CorpusError(f"{final} is a symbolic link, not an entry folder; remove it")
        if not final.exists():
            tmp = corpus_dir / f"{_TMP_PREFIX}{eid}.{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            meta = _new_meta(finding, eid, when, sizes)
            if run_key is not None:
                meta["sighting_keys"] = [run_key]
            _write_payload(tmp, finding, meta)
            os.rename(tmp, final)
            fsync_dir(corpus_dir)
            return final, True
        try:
            old_meta = load_entry(final).meta
            old_text = (final / REPRODUCER).read_text()
        except (OSError, ValueError) as error:
            raise CorpusError(f"{final}: existing entry is unreadable ({_reason(error)}); fix or remove it") from None
        except CorpusError as error:
            raise CorpusError(f"{final}: existing entry is unreadable ({error}); fix or remove it") from None
        if run_key is not None and run_key in (old_meta.get("sighting_keys") or ()):
            return final, False  # this very sighting was saved before: nothing to add
        meta = dict(old_meta)
        if run_key is not None:  # the last MAX_SIGHTING_KEYS keys: a results file is judged again soon after, if at all
            meta["sighting_keys"] = [*(old_meta.get("sighting_keys") or ())][-(MAX_SIGHTING_KEYS - 1):] + [run_key]
        if sighting:
            meta["count"] = int(old_meta.get("count", 1)) + 1
            meta["last_seen"] = max(str(old_meta.get("last_seen", "")), when)
        meta["first_seen"] = min(str(old_meta.get("first_seen", when)), when)
        versions = list(old_meta.get("toolchain_versions") or [])
        if finding.toolchain_version not in versions:
            versions.append(finding.toolchain_version)
        meta["toolchain_versions"] = versions
        meta["backends"] = list(dict.fromkeys([*old_meta.get("backends", []), *finding.backends]))
        meta["flaky"] = bool(old_meta.get("flaky")) and finding.flaky  # reproduced once: not flaky
        meta["cause"] = finding.cause or old_meta.get("cause", "")
        meta["triage"] = finding.triage or old_meta.get("triage", "")
        meta["triage_evidence"] = comment_text(finding.evidence, 2000) or old_meta.get("triage_evidence", "")
        if finding.evidence:  # of this finding's program, which may not be the entry's reproducer
            meta["triage_evidence_of"] = reproducer_digest(finding.mlir)
        if smaller(_with_newline(finding.mlir), old_text):  # never a larger file
            case = finding.case
            meta.update(
                family=case.family if case else None,
                params=case.params if case else None,
                seed=int(finding.seed),
                compile_command=strip_paths(list(finding.compile_command)),
                detail=scrub(finding.detail) or old_meta.get("detail", ""),
                bug={**bug_record(finding.signature.to_json(), scrub(finding.detail) or str(old_meta.get("detail") or ""),
                                  meta["backends"], finding.mlir),
                     **kept_bug_fields(old_meta.get("bug"), old_text, finding.mlir)},
                sizes=sizes.to_json(),
                toolchain_version=finding.toolchain_version,
            )
            tmp = corpus_dir / f"{_TMP_PREFIX}{eid}.{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            _write_payload(tmp, finding, meta)
            _swap_in(corpus_dir, tmp, final)
        else:
            atomic_write(final / META, (json.dumps(meta, indent=2, ensure_ascii=False) + "\n").encode())
        fsync_dir(corpus_dir)
        return final, False


def update_meta(path: str | os.PathLike, **changes: Any) -> dict[str, Any]:
    """Rewrites fields of one entry's meta.json atomically (replay --update, marking "fixed")."""
    folder = Path(path)
    if "expected_state" in changes and changes["expected_state"] not in EXPECTED_STATES:
        raise CorpusError(f"expected state must be one of {', '.join(EXPECTED_STATES)}")
    with _locked(folder.parent):
        try:
            meta = load_entry(folder).meta  # validated; a symlinked entry or meta.json is refused
        except CorpusError as error:
            raise CorpusError(f"{folder}: {error}") from None
        meta.update(changes)
        if "bug" in changes:  # an object of JSON values, whoever built it
            meta["bug"] = as_json_value(read_bug(changes["bug"]))
        atomic_write(folder / META, (json.dumps(meta, indent=2, ensure_ascii=False) + "\n").encode())
        atomic_write(folder / REPRO_SCRIPT, repro_script(meta).encode(), mode=0o755)
    return meta


# ----------------------------------------------------------------------------- reading


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__


def _load_arrays(folder: Path, names: list[str], what: str) -> list[np.ndarray] | None:
    if not names:
        return None
    arrays = []
    for name in names:
        try:
            path = schema.relative_file(name, f"{META}: {what}", folder)
            if not path.is_file():
                raise SchemaError(f"missing {name}")
            arrays.append(schema.load_npy(path, name))
        except SchemaError as error:
            raise CorpusError(str(error)) from None
    return arrays


def _read_text(path: Path, what: str) -> str:
    if path.is_symlink():
        raise CorpusError(f"{what} is a symbolic link (refused)")
    if not path.is_file():
        raise CorpusError(f"missing {what}" + (" (not a shapefuzz corpus entry)" if what == META else ""))
    try:
        if path.stat().st_size > 64 << 20:
            raise CorpusError(f"{what} is larger than 64 MiB")
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise CorpusError(f"{what} is not UTF-8 text") from None
    except OSError as error:
        raise CorpusError(f"{what}: {error.strerror or _reason(error)}") from None


def load_entry(path: str | os.PathLike) -> CorpusEntry:
    """Reads one entry folder; raises CorpusError with a one-line reason when it is broken.
    Symbolic links (the folder, its files) are refused: an entry copied in from elsewhere must
    not make shapefuzz read or write outside the corpus. A relative path is made absolute first
    (normalized, links kept): `replay .` from inside an entry, as its repro.sh says, names it."""
    folder = Path(os.path.abspath(path))
    if folder.is_symlink():
        raise CorpusError(f"{folder.name} is a symbolic link, not an entry folder (refused)")
    if not folder.is_dir():
        raise CorpusError(f"{folder} is not a corpus entry folder")
    try:
        meta = check_meta(schema.load_json(_read_text(folder / META, META), META), folder.name)
    except SchemaError as error:
        raise CorpusError(str(error)) from None
    mlir = _read_text(folder / REPRODUCER, REPRODUCER)
    if not mlir.strip():
        raise CorpusError(f"{REPRODUCER} is empty")
    inputs = _load_arrays(folder, list(meta.get("inputs") or []), "inputs")
    expected = _load_arrays(folder, list(meta.get("expected") or []), "expected")
    return CorpusEntry(folder, meta, mlir, inputs, expected)


def _is_entry_candidate(child: Path) -> bool:
    return child.is_dir() and not child.name.startswith((".", "_"))


def entry_folders(corpus_dir: str | os.PathLike) -> list[Path]:
    """The corpus's entry folders in id order (a path that is itself an entry folder: just it)."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(f"{corpus_dir}: no such corpus folder")
    if (corpus_dir / META).exists():
        return [corpus_dir]
    return sorted((c for c in corpus_dir.iterdir() if _is_entry_candidate(c)), key=lambda c: c.name)


def iter_entries(corpus_dir: str | os.PathLike) -> Iterator[CorpusEntry | UnreadableEntry]:
    """Every folder in the corpus, in id order: a CorpusEntry, or an UnreadableEntry with the reason.
    A path that is itself an entry folder yields just that entry. (To list, `corpus.listing`.)"""
    for child in entry_folders(corpus_dir):
        try:
            yield load_entry(child)
        except CorpusError as error:
            yield UnreadableEntry(child, str(error))


def find_entry(spec: str | os.PathLike, corpus_dir: str | os.PathLike | None = None) -> CorpusEntry:
    """An entry named by its folder path, or by its id (or a unique prefix) inside `corpus_dir`."""
    path = Path(spec)
    if path.is_dir():
        return load_entry(path)
    base = Path(corpus_dir) if corpus_dir is not None else Path("corpus")
    if base.is_dir():
        exact = base / str(spec)
        if exact.is_dir():
            return load_entry(exact)
        matches = sorted(c for c in base.iterdir() if _is_entry_candidate(c) and str(spec) in c.name)
        if len(matches) == 1:
            return load_entry(matches[0])
        if len(matches) > 1:
            names = ", ".join(m.name for m in matches[:4])
            raise CorpusError(f"{spec!r} matches {len(matches)} entries ({names}...); give more of the id")
    raise CorpusError(f"no corpus entry {str(spec)!r} (give an entry folder, or an id inside {base}/)")


