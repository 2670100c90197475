"""The regression corpus: one self-contained folder per failure bucket, plain files that diff well.

    corpus/
      INDEX.md                              regenerated from the folders (rebuild_index)
      llvm-cpu-compile-error-3f9a0c1d2e4b/  entry id: backend-stage-status-<12 hex of the signature>
        meta.json                           signature, params, seed, versions, counts, expected state
        reproducer.mlir                     the smallest reproducer seen (with its case header if generated)
        inputs/arg0.npy ...                 the function's arguments, where numbers matter
        expected/result0.npy ...            the NumPy reference results
        repro.sh                            one command that reproduces it

Ids come from the normalized signature only, so the same bug found on two machines lands in the
same folder and different bugs never clash. Nothing in an entry names a path on the machine that
wrote it. Writes are atomic: a new entry is built in a hidden temporary folder and renamed into
place; an update either rewrites meta.json alone (os.replace) or, when a smaller reproducer
arrives, builds the whole new folder and swaps it in with one rename (RENAME_EXCHANGE on Linux).
A SIGKILL at any instant leaves the old entry or the new one whole; stray temporary folders are
hidden (dot-names) and cleaned up by the next save.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import hashlib
import json
import os
import re
import shlex
import shutil
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

import numpy as np

from shapefuzz import schema
from shapefuzz.files import atomic_write, named
from shapefuzz.case import Case, check_params
from shapefuzz.errors import CorpusError
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.schema import SchemaError
from shapefuzz.shrink.measure import size_of
from shapefuzz.triage.failing_pass import excerpt
from shapefuzz.triage.record import bug_record
from shapefuzz.triage.severity import severity_rank

if TYPE_CHECKING:
    from shapefuzz.toolchain import Toolchain

CORPUS_FORMAT = 1
# The one default corpus location for every command (fuzz, shrink --corpus, replay, export, corpus,
# bisect): ./corpus, so what a campaign finds is what `replay` and `corpus list` see next.
DEFAULT_CORPUS = "corpus"
META = "meta.json"
REPRODUCER = "reproducer.mlir"
MODULE = "module.vmfb"  # what the entry's compile command writes
REPRO_SCRIPT = "repro.sh"
INDEX = "INDEX.md"
INPUTS_DIR, EXPECTED_DIR = "inputs", "expected"
EXPECTED_FAILING, EXPECTED_FIXED = "failing", "fixed"
EXPECTED_STATES = (EXPECTED_FAILING, EXPECTED_FIXED)
MAX_DETAIL = 4000
_TMP_PREFIX, _OLD_PREFIX, _LOCK = ".tmp-", ".old-", ".lock"
_GITIGNORE = ".lock\n.tmp-*\n.old-*\n"
_REQUIRED = ("format", "id", "signature", "backends", "first_seen", "last_seen", "count", "expected_state")


@dataclass(frozen=True)
class Finding:
    """What a campaign or the shrinker hands over to be saved."""

    signature: Signature
    mlir: str  # the reproducer (full text, with the case header if generated)
    backends: tuple[str, ...]  # backends it was checked on
    case: Case | None  # parameters when generated (so it can be re-rendered/re-shrunk)
    seed: int  # input seed
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None
    toolchain_version: str
    compile_command: list[str]  # pasteable (from execute.compile_command)
    detail: str  # raw error text / mismatch description (trimmed)
    flaky: bool = False
    cause: str = ""  # the campaign's cause this bucket belongs to (one bug seen on several backends)
    triage: str = ""  # the campaign's verdict (compiler bug, target limit, suspected driver, flaky, ours)
    evidence: str = ""  # why: what the verdict rests on, and what would settle it
    onnx_model: bytes | None = None  # the ONNX model the reproducer was imported from (kept as model.onnx)
    origin: str = ""  # where it came from when not generated (an ONNX node test)


def make_finding(
    signature: Signature,
    mlir: str,
    toolchain: "Toolchain",
    *,
    backends: tuple[str, ...] | None = None,
    case: Case | None = None,
    seed: int = 0,
    inputs: list[np.ndarray] | None = None,
    expected: list[np.ndarray] | None = None,
    detail: str = "",
    flaky: bool = False,
    cause: str = "",
    triage: str = "",
    evidence: str = "",
    onnx_model: bytes | None = None,
    origin: str = "",
) -> Finding:
    """The one way a Finding is built (campaign, shrinker, `corpus add`): the compile command
    names the entry's own files, the version is the toolchain's, the case comes from the text's
    header unless given."""
    from shapefuzz.backends import BACKENDS
    from shapefuzz.case import case_from_mlir
    from shapefuzz.execute import compile_command
    from shapefuzz.onnx_files import case_model_bytes

    case = case if case is not None else case_from_mlir(mlir)
    return Finding(
        signature=signature,
        mlir=mlir,
        backends=tuple(backends or (signature.backend,)),
        case=case,
        seed=int(seed),
        inputs=inputs,
        expected=expected,
        toolchain_version=toolchain.probe.version,
        # as compiled: with the input type a torch or ONNX reproducer is compiled with
        compile_command=_with_input_type(compile_command(toolchain, BACKENDS[signature.backend], REPRODUCER, MODULE),
                                         mlir),
        detail=detail,
        flaky=flaky,
        cause=cause,
        triage=triage,
        evidence=evidence,
        onnx_model=onnx_model if onnx_model is not None else case_model_bytes(case),
        origin=origin,
    )


def _with_input_type(command: list[str], mlir: str) -> list[str]:
    from shapefuzz.frontend import input_type_flags

    extra = [f for f in input_type_flags(mlir) if f not in command]
    return [*command[:-2], *extra, *command[-2:]] if extra and command[-2:-1] == ["-o"] else command


@dataclass(frozen=True)
class Sizes:
    """How big a reproducer is, as written into meta.json. Which of two reproducers is smaller
    is decided by `shrink.measure.size_of`, the order the shrinker and the campaign use too."""

    elements: int
    lines: int
    bytes: int

    def to_json(self) -> dict[str, int]:
        return {"elements": self.elements, "lines": self.lines, "bytes": self.bytes}


@dataclass(frozen=True)
class CorpusEntry:
    """One readable entry, as loaded from its folder."""

    path: Path
    meta: dict[str, Any]
    mlir: str
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def signature(self) -> Signature:
        return Signature.from_json(self.meta["signature"])

    @property
    def case(self) -> Case | None:
        family, params = self.meta.get("family"), self.meta.get("params")
        return Case.make(family, params) if family and params is not None else None

    @property
    def seed(self) -> int:
        return int(self.meta.get("seed") or 0)

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(self.meta["backends"])

    @property
    def expected_state(self) -> str:
        return self.meta["expected_state"]

    @property
    def count(self) -> int:
        return int(self.meta["count"])

    @property
    def toolchain_versions(self) -> tuple[str, ...]:
        return tuple(self.meta.get("toolchain_versions") or ())

    @property
    def flaky(self) -> bool:
        return bool(self.meta.get("flaky"))


@dataclass(frozen=True)
class UnreadableEntry:
    """A folder in the corpus that is not a readable entry, and why (one line)."""

    path: Path
    reason: str

    @property
    def id(self) -> str:
        return self.path.name


# ----------------------------------------------------------------------------- ids, sizes, times


def entry_id(signature: Signature) -> str:
    """`<backend>-<stage>-<status>-<12 hex>`: derived from the normalized signature only, of
    lower-case letters, digits and dashes (safe as a file name and in a shell)."""
    digest = hashlib.sha256(str(signature).encode()).hexdigest()[:12]
    prefix = f"{signature.backend}-{signature.stage.value}-{signature.status.value}".lower()
    return f"{re.sub(r'[^a-z0-9-]+', '-', prefix).strip('-')[:100]}-{digest}"


_TENSOR = re.compile(r"tensor<([^<>]*)>")


def _type_elements(text: str) -> int:
    """Elements of the entry function's arguments and results as written (`?` counted as 1)."""
    from shapefuzz.mlirinfo import function_info

    try:
        info = function_info(text)
    except Exception:  # noqa: BLE001 - any unparsable text just has no size
        return 0
    total = 0
    for arg in info.args:
        total += int(np.prod([1 if d is None else d for d in arg.shape], dtype=np.int64))
    return total


def measure(mlir: str, inputs: list[np.ndarray] | None = None) -> Sizes:
    """The size of a reproducer: its input elements (actual arrays where given), lines, bytes."""
    elements = sum(int(a.size) for a in inputs) if inputs else _type_elements(mlir)
    lines = sum(1 for line in mlir.splitlines() if line.strip() and not line.lstrip().startswith("//"))
    return Sizes(elements, lines, len(mlir.encode()))


def now_text(now: datetime | str | None = None) -> str:
    if isinstance(now, str):
        return now
    moment = now or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


# ----------------------------------------------------------------------------- writing


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.write_text(json.dumps(data, indent=2, sort_keys=False, ensure_ascii=False) + "\n")


def _fsync_dir(path: Path) -> None:
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


def _atomic_write_text(path: Path, text: str) -> None:
    atomic_write(path, text.encode())


def comment_text(value: Any, limit: int = 300) -> str:
    """A value made safe for a `#` or `//` comment line: no line breaks or control characters."""
    return re.sub(r"[\x00-\x1f\x7f]+", " ", str(value))[:limit]


def repro_script(meta: dict[str, Any]) -> str:
    """repro.sh for a validated meta.json: every value it embeds is quoted (shlex) or, in a
    comment, stripped of line breaks."""
    sig = Signature.from_json(meta["signature"])
    command = ["shapefuzz", "check", REPRODUCER, "--backends", sig.backend]
    if meta.get("seed"):
        command += ["--seed", str(int(meta["seed"]))]
    versions = ", ".join(meta.get("toolchain_versions") or [])
    lines = [
        "#!/bin/sh",
        f"# shapefuzz corpus entry {comment_text(meta['id'])}",
        f"# signature: {comment_text(sig)}",
        f"# expected state: {comment_text(meta['expected_state'])}  (toolchain {comment_text(versions)})",
        'cd "$(dirname "$0")" || exit 2',
        " ".join(shlex.quote(w) for w in command),
        "# With the entry's saved inputs and expected outputs: shapefuzz replay .",
    ]
    if meta.get("import_command"):
        lines.append(f"# {REPRODUCER} is what IREE's ONNX importer makes of model.onnx:")
        lines.append("#   " + comment_text(" ".join(shlex.quote(w) for w in meta["import_command"]), 1000))
    if meta.get("compile_command"):
        lines.append("# The plain compile:")
        lines.append("#   " + comment_text(" ".join(shlex.quote(w) for w in meta["compile_command"]), 4000))
    return "\n".join(lines) + "\n"


def _strip_paths(words: list[str]) -> list[str]:
    """A compile command with machine paths reduced to file names (no absolute paths in the corpus)."""
    out = []
    for word in words:
        if "=" in word and word.startswith("-"):
            flag, _, value = word.partition("=")
            out.append(f"{flag}={os.path.basename(value)}" if os.path.isabs(value) else word)
        else:
            out.append(os.path.basename(word) if os.path.isabs(word) else word)
    if out and out[0].endswith("iree-compile"):
        out[0] = "iree-compile"
    return out


_ABS_PATH = re.compile(r"(?<![\w.~])/(?:[\w.+@-]+/)+([\w.+@-]+)")


def scrub(text: str) -> str:
    """Error text with absolute paths cut to their last component (no machine paths in the corpus)."""
    text = _CONTROL_CHARS.sub("?", text.replace("\r\n", "\n").replace("\r", "\n"))  # garbage stderr stays readable
    # head and tail: the first error lines and the top of a backtrace matter as much as the end
    return excerpt(_ABS_PATH.sub(r"\1", text), 2 * MAX_DETAIL - 100)


_CONTROL_CHARS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


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
        "compile_command": _strip_paths(list(finding.compile_command)),
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
        "bug": bug_record(finding.signature.to_json(), scrub(finding.detail), finding.backends),
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
    meta.pop("onnx_model", None), meta.pop("import_command", None)
    if finding.onnx_model is not None:  # the model the reproducer was imported from, beside it
        from shapefuzz.onnx_files import MODEL_FILE, model_meta

        (folder / MODEL_FILE).write_bytes(finding.onnx_model)
        meta.update(model_meta(REPRODUCER))
    script = folder / REPRO_SCRIPT
    script.write_text(repro_script(meta))
    script.chmod(0o755)
    _write_json(folder / META, meta)


@contextmanager
def _locked(corpus_dir: Path) -> Iterator[None]:
    """One writer at a time per corpus (parallel campaign workers, two campaigns)."""
    # O_NOFOLLOW: a lock file planted as a symbolic link must not create or open a file elsewhere.
    with named(corpus_dir / _LOCK):
        fd = os.open(corpus_dir / _LOCK, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW, 0o644)
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
        _atomic_write_text(ignore, _GITIGNORE)


def save_finding(
    corpus_dir: str | os.PathLike, finding: Finding, now: datetime | str | None = None, sighting: bool = True
) -> tuple[Path, bool]:
    """Adds a finding to the corpus: (entry folder, True when a new entry was created).

    An existing entry (same signature) gets count+1, last_seen and the toolchain version; its
    reproducer, inputs and expected outputs are replaced only by a smaller reproducer.
    `sighting=False` is for a smaller reproducer of a failure already counted (a shrink result):
    it may replace the reproducer but does not add to count or last_seen."""
    corpus_dir = Path(corpus_dir)
    _prepare(corpus_dir)
    when = now_text(now)
    eid = entry_id(finding.signature)
    final = corpus_dir / eid
    sizes = measure(finding.mlir, finding.inputs)
    with named(final), _locked(corpus_dir):
        _recover(corpus_dir)
        for stray in final.glob(".*.tmp") if final.is_dir() else ():
            stray.unlink(missing_ok=True)  # a meta.json rewrite killed before its os.replace
        if final.is_symlink():
            raise CorpusError(f"{final} is a symbolic link, not an entry folder; remove it")
        if not final.exists():
            tmp = corpus_dir / f"{_TMP_PREFIX}{eid}.{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            _write_payload(tmp, finding, _new_meta(finding, eid, when, sizes))
            os.rename(tmp, final)
            _fsync_dir(corpus_dir)
            return final, True
        try:
            old_meta = load_entry(final).meta
            old_size = size_of((final / REPRODUCER).read_text())
        except (OSError, ValueError) as error:
            raise CorpusError(f"{final}: existing entry is unreadable ({_reason(error)}); fix or remove it") from None
        except CorpusError as error:
            raise CorpusError(f"{final}: existing entry is unreadable ({error}); fix or remove it") from None
        meta = dict(old_meta)
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
        if size_of(_with_newline(finding.mlir)) < old_size:
            case = finding.case
            meta.update(
                family=case.family if case else None,
                params=case.params if case else None,
                seed=int(finding.seed),
                compile_command=_strip_paths(list(finding.compile_command)),
                detail=scrub(finding.detail) or old_meta.get("detail", ""),
                bug={**bug_record(finding.signature.to_json(), scrub(finding.detail) or str(old_meta.get("detail") or ""),
                                  meta["backends"]),
                     **{k: v for k, v in (old_meta.get("bug") or {}).items() if k in _KEPT_BUG_FIELDS}},
                sizes=sizes.to_json(),
                toolchain_version=finding.toolchain_version,
            )
            tmp = corpus_dir / f"{_TMP_PREFIX}{eid}.{uuid.uuid4().hex[:8]}"
            tmp.mkdir()
            _write_payload(tmp, finding, meta)
            _swap_in(corpus_dir, tmp, final)
        else:
            _atomic_write_text(final / META, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        _fsync_dir(corpus_dir)
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
        _atomic_write_text(folder / META, json.dumps(meta, indent=2, ensure_ascii=False) + "\n")
        script = folder / REPRO_SCRIPT
        _atomic_write_text(script, repro_script(meta))
        script.chmod(0o755)
    return meta


# ----------------------------------------------------------------------------- reading


def _reason(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else type(error).__name__


_KEPT_BUG_FIELDS = ("regression",)  # what a re-save keeps from the old record (bisected, not recomputed)


def _check_bug(value: Any, field: str) -> None:
    """meta.json `bug` (triage.record): an object of text, flags and lists of text."""
    obj = schema.obj(value, field)
    for key, item in obj.items():
        where = f"{field}.{key}"
        if isinstance(item, list):
            schema.text_list(item, where)
        elif isinstance(item, dict):
            for k, v in item.items():
                schema.text(str(v), f"{where}.{k}", max_len=2000)
        elif not isinstance(item, (str, bool)):
            raise SchemaError(f"{where}: {type(item).__name__} is not text")
        else:
            schema.text(str(item), where, max_len=2000)


def _version(value: str, field: str) -> None:
    if not re.fullmatch(r"\S{1,100}", value):  # as parse_version reads it; exports quote it anyway
        raise SchemaError(f"{field}: {value[:40]!r} is not a version")


def check_meta(meta: Any, folder_name: str) -> dict[str, Any]:
    """meta.json as this shapefuzz writes it, field by field; raises SchemaError naming the
    first bad field. Every later use of the entry (list, show, replay, export, repro.sh) may
    then rely on the types, and ids and backend names are safe in paths and shells."""
    s = schema
    s.obj(meta, META)
    missing = [key for key in _REQUIRED if key not in meta]
    if missing:
        raise SchemaError(f"{META} lacks {', '.join(missing)}")
    if not s.is_int(meta["format"]) or not 1 <= meta["format"] <= CORPUS_FORMAT:
        raise SchemaError(f"{META}: format {meta['format']!r}; this shapefuzz reads format {CORPUS_FORMAT}")
    s.ident(meta["id"], f"{META}: id")
    if meta["id"] != folder_name:
        raise SchemaError(f"{META}: id {meta['id']!r} is not the folder's name")
    sig = s.obj(meta["signature"], f"{META}: signature")
    for key in ("backend", "stage", "status", "message"):
        if key not in sig:
            raise SchemaError(f"{META}: signature lacks {key!r}")
    s.ident(sig["backend"], f"{META}: signature.backend")
    s.one_of(sig["stage"], f"{META}: signature.stage", tuple(x.value for x in Stage))
    s.one_of(sig["status"], f"{META}: signature.status", tuple(x.value for x in Status))
    s.text(sig["message"], f"{META}: signature.message", max_len=4000)
    s.text_list(meta["backends"], f"{META}: backends", s.ident, non_empty=True)
    for key in ("first_seen", "last_seen"):
        s.text(meta[key], f"{META}: {key}", max_len=64)
    s.integer(meta["count"], f"{META}: count")
    s.one_of(meta["expected_state"], f"{META}: expected_state", EXPECTED_STATES)
    optional: dict[str, Any] = {
        "signature_text": lambda v, f: s.text(v, f, max_len=5000),
        "backend": s.ident, "stage": s.text, "status": s.text,
        "seed": lambda v, f: s.integer(v, f, 0, (1 << 63) - 1),
        "toolchain_version": lambda v, f: (s.text(v, f), _version(v, f)),
        "toolchain_versions": lambda v, f: s.text_list(v, f, _version),
        "compile_command": lambda v, f: s.text_list(v, f),
        "flaky": s.boolean,
        "detail": lambda v, f: s.text(v, f, one_line=False, max_len=2 * MAX_DETAIL),
        "notes": lambda v, f: s.text(v, f, one_line=False),
        "cause": lambda v, f: s.text(v, f, max_len=64),
        "triage": lambda v, f: s.text(v, f, max_len=64),
        "triage_evidence": lambda v, f: s.text(v, f, max_len=4000),
        "bug": _check_bug, "reported": lambda v, f: s.text(v, f, max_len=2000),
        "onnx_model": lambda v, f: s.one_of(v, f, ("model.onnx",)),
        "import_command": lambda v, f: s.text_list(v, f),
        "origin": lambda v, f: s.text(v, f, max_len=1000),
        "fixed_in": lambda v, f: (s.text(v, f), _version(v, f)),
        "inputs": lambda v, f: s.text_list(v, f), "expected": lambda v, f: s.text_list(v, f),
        "sizes": lambda v, f: [s.integer(s.obj(v, f).get(k, 0), f"{f}.{k}") for k in ("elements", "lines", "bytes")],
        "last_replay": lambda v, f: [s.text(s.obj(v, f).get(k) or "", f"{f}.{k}", max_len=5000)
                                     for k in ("date", "toolchain", "outcome", "now")],
        "bisect": lambda v, f: ([s.text(s.obj(v, f).get(k) or "", f"{f}.{k}", max_len=5000)
                                 for k in ("id", "last_passing", "first_failing", "first_fixed", "note")],
                                s.text_list(v.get("versions") or [], f"{f}.versions"),
                                s.obj(v.get("tested") or {}, f"{f}.tested")),
    }
    for key, check in optional.items():
        if meta.get(key) is not None:
            check(meta[key], f"{META}: {key}")
    if meta.get("family") is not None or meta.get("params") is not None:
        if meta.get("family") is None or meta.get("params") is None:
            raise SchemaError(f"{META}: family and params go together (one is missing)")
        check_params(meta["family"], meta["params"], f"{META}: ")
        from shapefuzz.families import validate_params

        validate_params(meta["family"], meta["params"], f"{META}: params")
    return meta


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
    not make shapefuzz read or write outside the corpus."""
    folder = Path(path)
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


def iter_entries(corpus_dir: str | os.PathLike) -> Iterator[CorpusEntry | UnreadableEntry]:
    """Every folder in the corpus, in id order: a CorpusEntry, or an UnreadableEntry with the reason.
    A path that is itself an entry folder yields just that entry."""
    corpus_dir = Path(corpus_dir)
    if not corpus_dir.is_dir():
        raise CorpusError(f"{corpus_dir}: no such corpus folder")
    if (corpus_dir / META).exists():
        children = [corpus_dir]
    else:
        children = sorted((c for c in corpus_dir.iterdir() if _is_entry_candidate(c)), key=lambda c: c.name)
    for child in children:
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


# ----------------------------------------------------------------------------- index


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def rebuild_index(corpus_dir: str | os.PathLike) -> Path:
    """Regenerates corpus/INDEX.md from the entry folders (never the other way round)."""
    corpus_dir = Path(corpus_dir)
    rows = [
        "# shapefuzz corpus",
        "",
        "Generated by `shapefuzz corpus index` from the entry folders; do not edit by hand.",
        "",
        "| entry | cause | severity | component | family | backend | stage | status | count | first seen | last seen "
        "| versions | expected | signature |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    causes: set[str] = set()
    entries = 0
    broken = []
    listed = []
    for entry in iter_entries(corpus_dir):
        if isinstance(entry, UnreadableEntry):
            broken.append(f"- `{entry.id}`: {_cell(entry.reason)}")
            continue
        m, sig = entry.meta, entry.signature
        # entries from before the bug record: computed from the entry's own signature and detail
        bug = m.get("bug") or bug_record(sig.to_json(), str(m.get("detail") or ""), entry.backends)
        entries += 1
        causes.add(m.get("cause") or entry.id)  # an entry saved outside a campaign is its own cause
        # severity order, new (not reported upstream) before known
        order = (severity_rank(bug.get("severity", "")), bool(m.get("reported")), m["first_seen"], entry.id)
        listed.append((order,
            "| [{id}]({id}/) | {cause} | {sev} | {comp} | {fam} | {b} | {st} | {ss} | {n} | {f} | {l} | {v} | {e}{fl}{rep} | {msg} |".format(
                id=entry.id, cause=_cell(m.get("cause") or "-"), sev=bug.get("severity") or "-",
                comp=_cell(bug.get("component") or "-"), fam=m.get("family") or "-", b=sig.backend, st=sig.stage.value,
                ss=sig.status.value, n=entry.count, f=m["first_seen"][:10], l=m["last_seen"][:10],
                v=", ".join(entry.toolchain_versions), e=entry.expected_state, fl=" (flaky)" if entry.flaky else "",
                rep=f", [reported]({m['reported']})" if m.get("reported") else "", msg=_cell(sig.message[:120]),
            )
        ))
    rows += [row for _, row in sorted(listed)]
    rows[3:3] = [f"{entries} entries, {len(causes)} causes (one cause: the same failure on several backends).", ""]
    if broken:
        rows += ["", "Unreadable folders:", "", *broken]
    path = corpus_dir / INDEX
    _atomic_write_text(path, "\n".join(rows) + "\n")
    return path


__all__ = [
    "Finding", "make_finding", "CorpusEntry", "UnreadableEntry", "Sizes", "entry_id", "measure", "save_finding", "load_entry",
    "iter_entries", "find_entry", "rebuild_index", "update_meta", "repro_script", "check_meta", "atomic_write",
    "comment_text",
    "EXPECTED_FAILING", "EXPECTED_FIXED", "CORPUS_FORMAT",
]
