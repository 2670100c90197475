"""The campaign's state in SQLite (WAL mode): every candidate tried, every bucket, every session.
Each result is written in one transaction, so a SIGKILL at any instant leaves whole rows only;
a resumed campaign reads its statistics back from here and never tries a candidate twice.

Speaks plain values (strings, numbers, JSON); knows nothing of IREE."""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterator, Sequence, overload

from shapefuzz.campaign.rows import RowReader, meta_object, meta_seconds, meta_split
from shapefuzz.campaign.outcomes import BucketState, Failure, ShrinkState, Triage, Verdict
from shapefuzz.campaign.store_tables import CELL_KINDS, SCHEMA as _SCHEMA, CellRecord, CellRow
from shapefuzz.errors import CorpusError
from shapefuzz.model import Stage, Status

FORMAT_VERSION = 2  # 2: buckets carry cause, triage, re-hit costs and a persisted shrink state
DB_NAME = "campaign.sqlite"


_BUCKET_COLUMNS = ("sig, sig_json, backend, stage, status, family, count, first_seen, last_seen, first_wall, "
                   "last_wall, state, repro_key, repro_size, repro_text, detail, corpus_entry, shrunk_size, "
                   "cause, triage, evidence, rehits, rehit_seconds, shrink")
_ADDED_IN_2 = (("cause", "TEXT NOT NULL DEFAULT ''"), ("triage", "TEXT NOT NULL DEFAULT ''"),
               ("evidence", "TEXT NOT NULL DEFAULT ''"), ("rehits", "INTEGER NOT NULL DEFAULT 0"),
               ("rehit_seconds", "REAL NOT NULL DEFAULT 0"), ("shrink", "TEXT NOT NULL DEFAULT ''"))


@dataclass(frozen=True, kw_only=True)
class CandidateRow:
    key: str
    idx: int
    seed: int
    family: str
    features: tuple[str, ...]
    backends: tuple[str, ...]
    verdict: Verdict
    outcome: dict[str, list]  # lane -> [status text, seconds], as written
    payload: str
    size: int
    tool_seconds: float
    task_seconds: float
    finished: float
    error: str = ""


@dataclass(frozen=True, kw_only=True)
class BucketRow:
    """One bucket as the store keeps it. Read its failure as `failure` (its signature, identity and
    detail, typed) and `stage`/`status` as the enums; `sig_json` is the stored form, written back as read."""

    sig: str
    sig_json: dict[str, Any]
    backend: str
    stage: Stage
    status: Status
    family: str
    count: int
    first_seen: float
    last_seen: float
    first_wall: float
    last_wall: float
    state: BucketState
    repro_key: str
    repro_size: int
    repro_text: str
    detail: str
    corpus_entry: str  # the corpus folder, "" until saved
    shrunk_size: int | None
    # Set while a save is under way: how many times the entry had been saved before. A session
    # killed between the corpus write and the row update finds the count one higher and does
    # not save twice. (Written into the corpus_entry column as "?N".)
    saving: int | None = None
    cause: str = ""
    triage: Triage | None = None  # None: written before buckets were triaged ('' in the store)
    evidence: str = ""
    rehits: int = 0
    rehit_seconds: float = 0.0
    shrink: ShrinkState = ShrinkState.NONE  # not asked for / pending / done / failed / skipped (another of its cause)

    def __post_init__(self) -> None:
        # a row built from the stage's and status's text holds the enums all the same
        object.__setattr__(self, "stage", Stage(self.stage))
        object.__setattr__(self, "status", Status(self.status))

    @property
    def failure(self) -> Failure:
        """The typed failure this bucket holds (its key `sig` is str() of its signature)."""
        return Failure.from_fields(self.sig_json, self.detail)

    @property
    def message(self) -> str:
        """Its signature's (normalized) message."""
        return self.failure.signature.message


def _is_corrupt(error: sqlite3.Error) -> bool:
    """SQLITE_CORRUPT or SQLITE_NOTADB; a full disk (SQLITE_FULL), I/O or permission errors are not."""
    code = getattr(error, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (11, 26)
    return "malformed" in str(error) or "not a database" in str(error)


class CampaignStore:
    """One campaign folder's database. Opening checks the format version and integrity; a newer
    or corrupt database is a CorpusError and nothing is written."""

    def __init__(self, folder: Path, create: bool = True) -> None:
        self.folder = Path(folder)
        self.path = self.folder / DB_NAME
        self._before: dict[int, float] = {}  # per session: the active seconds of the sessions before it
        if self.folder.exists() and not self.folder.is_dir():
            raise CorpusError(f"campaign folder {self.folder} is a file, not a folder")
        existed = self.path.exists()
        if not existed and not create:
            raise CorpusError(f"no campaign in {self.folder} (no {DB_NAME})")
        if existed:
            self._check_header()
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CorpusError(f"cannot create campaign folder {self.folder}: {error.strerror}") from None
        try:
            self.db = sqlite3.connect(self.path, isolation_level=None, timeout=30.0)
            empty = self.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()[0] == 0
            if existed and not empty:
                self._check_existing()  # read-only: a database we refuse is left byte for byte
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            if existed and not empty:
                self.db.executescript(_SCHEMA)  # tables added in this version
                self._upgrade()
            else:  # new, or killed before its first transaction committed
                # One script, one transaction: a kill here leaves either no tables or all of them.
                self.db.executescript(
                    "BEGIN;" + _SCHEMA
                    + f"INSERT OR REPLACE INTO meta VALUES ('format_version', '{FORMAT_VERSION}');"
                    + f"INSERT OR REPLACE INTO meta VALUES ('created', '{time.time()}');COMMIT;"
                )
        except sqlite3.DatabaseError as error:
            if _is_corrupt(error):
                raise CorpusError(f"campaign database {self.path} is corrupt or unreadable ({error}); "
                                  "move it aside or choose another --campaign folder") from None
            # A full disk, a read-only folder, no permission: the database is fine, the place is not.
            raise CorpusError(f"cannot open campaign database {self.path}: {error}") from None

    @classmethod
    def attach(cls, folder: Path) -> "CampaignStore":
        """Another thread's connection to a store this process has opened (an SQLite connection
        belongs to its thread): no header check, schema script or upgrade, which the first one
        ran. (Running them again from the campaign's range thread kept a Ctrl-C from reaching the
        campaign on a cluster until it ended.)"""
        store = cls.__new__(cls)
        store.folder = Path(folder)
        store.path = store.folder / DB_NAME
        store.db = sqlite3.connect(store.path, isolation_level=None, timeout=30.0)
        return store

    def _check_header(self) -> None:
        try:
            from shapefuzz.files import open_regular

            with open(open_regular(self.path), "rb") as handle:  # a FIFO planted here never hangs
                head = handle.read(16)
        except OSError as error:
            raise CorpusError(f"cannot read campaign database {self.path}: {error.strerror}") from None
        if head and head != b"SQLite format 3\x00":
            raise CorpusError(f"campaign database {self.path} is corrupt (not an SQLite file); "
                              "move it aside or choose another --campaign folder")

    def _check_existing(self) -> None:
        ok = self.db.execute("PRAGMA quick_check").fetchone()
        if not ok or ok[0] != "ok":
            raise sqlite3.DatabaseError(ok[0] if ok else "integrity check failed")
        try:
            row = self.db.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
        except sqlite3.OperationalError:
            row = None
        if row is None:
            raise CorpusError(f"{self.path} is not a shapefuzz campaign database (no format version)")
        text = str(row[0])
        if not (text.isascii() and text.isdigit() and len(text) <= 6 and int(text) >= 1):
            # 'abc', '3.0', '' or -1: not a version we wrote; upgrading it would destroy evidence
            raise CorpusError(f"{self.path}: format version {text[:20]!r} is not one shapefuzz writes; "
                              "move it aside or choose another --campaign folder")
        version = int(text)
        if version > FORMAT_VERSION:
            raise CorpusError(
                f"campaign {self.folder} was written by a newer shapefuzz (format {version}, this one "
                f"reads up to {FORMAT_VERSION}); upgrade shapefuzz or choose another --campaign folder"
            )

    def _upgrade(self) -> None:
        """A format-1 campaign gains the bucket columns of format 2 (one transaction)."""
        have = {r[1] for r in self.db.execute("PRAGMA table_info(buckets)")}
        missing = [(n, t) for n, t in _ADDED_IN_2 if n not in have]
        if missing or self.get_meta("format_version") != str(FORMAT_VERSION):
            with self.transaction() as db:
                for name, kind in missing:
                    db.execute(f"ALTER TABLE buckets ADD COLUMN {name} {kind}")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('format_version', ?)", (str(FORMAT_VERSION),))

    def close(self) -> None:
        self.db.close()

    def check_rows(self) -> None:
        """Reads every row once through its checked reader (a resume does, before it writes
        anything): a value shapefuzz never writes is a CorruptStoreError naming it."""
        for _ in self.candidates():
            pass
        self.buckets(), self.sessions(), self.hits(), self.set_aside_backends(), self.extra_time(), self.worker_split()
        for kind in ("check", "confirm", "shrink"):
            self.worker_time(kind), self.worker_time_by_family(kind)
        for (key,) in self.db.execute("SELECT key FROM meta WHERE key LIKE 'regression:%' OR key='lane_kin'"):
            self.meta_object(key)
        self.coverage_items(), self.covered(), self.failing_passes(), self.cells()

    # --- transactions -------------------------------------------------------------------
    class _Tx:
        def __init__(self, db: sqlite3.Connection) -> None:
            self.db = db

        def __enter__(self) -> sqlite3.Connection:
            self.db.execute("BEGIN IMMEDIATE")
            return self.db

        def __exit__(self, kind, value, tb) -> None:
            self.db.execute("COMMIT" if kind is None else "ROLLBACK")

    def transaction(self) -> "_Tx":
        return CampaignStore._Tx(self.db)

    # --- meta ---------------------------------------------------------------------------
    def get_meta(self, key: str, default: str | None = None) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        return row[0] if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # --- sessions (active time survives restarts) ----------------------------------------
    def start_session(self, argv: list[str]) -> int:
        with self.transaction() as db:
            cur = db.execute("INSERT INTO sessions (started, active, candidates, argv) VALUES (?, 0, 0, ?)",
                             (time.time(), json.dumps(argv)))
            assert cur.lastrowid is not None  # the INSERT's row
            return cur.lastrowid

    def active_before(self, session: int) -> float:
        return sum(active for _, active, _ in self.sessions(before=session))

    def _session_part(self, session: int, active: float) -> float:
        """The part of the campaign's active seconds `active` that is this session's: a row holds its
        own session's seconds (a resumed campaign's sessions are summed; writing the whole campaign's
        time there counted the earlier sessions twice: a resume that only confirmed a re-run doubled
        a 20-minute campaign's active time and halved its rates)."""
        before = self._before.get(session)
        if before is None:
            before = self._before[session] = self.active_before(session)
        return max(0.0, active - before)

    def sessions(self, before: int | None = None) -> list[tuple[float, float, int]]:
        """(started, active seconds, candidates) of each session, checked, oldest first."""
        out = []
        for id_, started, active, count in self.db.execute(
                "SELECT id, started, active, candidates FROM sessions WHERE id < ? ORDER BY id",
                (before if before is not None else 1 << 62,)):
            r = RowReader(self.path, "sessions", id_)
            out.append((r.seconds("started", started), r.seconds("active", active), r.integer("candidates", count)))
        return out

    # --- candidates ---------------------------------------------------------------------
    def record(self, row: CandidateRow, hits: list[tuple[str, str]], session: int, active: float,
               bucket_updates: Sequence[BucketRow] = (), coverage: "CoverageRecord | None" = None,
               split: dict[str, float] | None = None, cells: Sequence[CellRow] = ()) -> None:
        """A finished candidate, its bucket hits, what its instrumented compiles reached, where its
        worker time outside compiler and runtime went (`split`), the allocation cells it changed
        and the session's clock, in one transaction."""
        with self.transaction() as db:
            _put_cells(db, cells)
            if split:
                self._add_split(db, split)
            if coverage is not None:
                _put_coverage(db, row.key, coverage)
            db.execute(
                "INSERT OR IGNORE INTO candidates VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (row.key, row.idx, row.seed, row.family, json.dumps(list(row.features)),
                 json.dumps(list(row.backends)), Verdict(row.verdict).value, json.dumps(row.outcome), row.payload,
                 row.size, row.tool_seconds, row.task_seconds, row.finished, row.error),
            )
            db.executemany("INSERT OR IGNORE INTO hits VALUES (?,?,?)", [(row.key, sig, b) for sig, b in hits])
            for bucket in bucket_updates:
                self._put_bucket(db, bucket)
            db.execute("UPDATE sessions SET active=?, candidates=candidates+1 WHERE id=?",
                       (self._session_part(session, active), session))

    def add_hits(self, candidate: str, hits: list[tuple[str, str]], bucket_updates: Sequence[BucketRow] = ()) -> None:
        """Buckets a candidate hit on a re-run (a confirmation on sibling lanes), with the bucket
        rows that changed because of them, in one transaction: a resumed campaign ties them again."""
        with self.transaction() as db:
            db.executemany("INSERT OR IGNORE INTO hits VALUES (?,?,?)", [(candidate, sig, b) for sig, b in hits])
            for bucket in bucket_updates:
                self._put_bucket(db, bucket)

    def tick(self, session: int, active: float) -> None:
        """The session's clock, from the campaign's active seconds (`Engine.active`)."""
        with self.transaction() as db:
            db.execute("UPDATE sessions SET active=? WHERE id=?", (self._session_part(session, active), session))

    def has_candidate(self, key: str) -> bool:
        return self.db.execute("SELECT 1 FROM candidates WHERE key=?", (key,)).fetchone() is not None

    def candidate_keys(self) -> set[str]:
        return {RowReader(self.path, "candidates", k).text("key", k, max_len=200)
                for (k,) in self.db.execute("SELECT key FROM candidates")}

    def candidate_count(self, below: int | None = None) -> int:
        """Candidates in the store (with `below`: those with an index below it)."""
        where, args = ("", ()) if below is None else (" WHERE idx < ?", (below,))
        return int(self.db.execute("SELECT COUNT(*) FROM candidates" + where, args).fetchone()[0])

    def next_index(self) -> int:
        row = self.db.execute("SELECT key, MAX(idx) FROM candidates").fetchone()
        return 0 if row[1] is None else RowReader(self.path, "candidates", row[0]).integer("idx", row[1]) + 1

    def candidate(self, key: str) -> CandidateRow | None:
        r = self.db.execute("SELECT * FROM candidates WHERE key=?", (key,)).fetchone()
        return _candidate(self.path, r) if r else None

    def candidates(self) -> Iterator[CandidateRow]:
        lists: dict[Any, tuple[str, ...]] = {}  # the lane lists read (a campaign has few distinct ones)
        for r in self.db.execute("SELECT * FROM candidates ORDER BY idx"):
            yield _candidate(self.path, r, lists)

    def hits(self) -> list[tuple[str, str, str]]:
        return [_texts(self.path, "hits", ("candidate", "bucket", "backend"), r)
                for r in self.db.execute("SELECT candidate, bucket, backend FROM hits")]

    # --- buckets ------------------------------------------------------------------------
    def bucket(self, sig: str) -> BucketRow | None:
        r = self.db.execute(f"SELECT {_BUCKET_COLUMNS} FROM buckets WHERE sig=?", (sig,)).fetchone()
        return self._here(_bucket(self.path, r), self._corpus_here()) if r else None

    def buckets(self) -> list[BucketRow]:
        corpus = self._corpus_here()
        return [self._here(_bucket(self.path, r), corpus)
                for r in self.db.execute(f"SELECT {_BUCKET_COLUMNS} FROM buckets ORDER BY first_seen, sig")]

    def _corpus_here(self) -> Path | None:
        """The campaign's corpus folder as seen from here (`campaign.corpus_place`), where it exists."""
        from shapefuzz.campaign.corpus_place import stored_corpus

        corpus = stored_corpus(self.folder, self.meta_object("config") or {})
        return corpus if corpus is not None and corpus.is_dir() else None

    @staticmethod
    def _here(row: BucketRow, corpus: Path | None) -> BucketRow:
        """A bucket's saved entry inside the campaign's corpus as it is now: the store keeps the path
        it was saved at, which names the original folder's corpus once the campaign folder is copied
        or moved (a resume or triage of a copy read, and renamed causes in, the original's entries)."""
        name = Path(row.corpus_entry).name
        if corpus is None or name in ("", ".", ".."):
            return row
        return replace(row, corpus_entry=str(corpus / name))

    def put_bucket(self, bucket: BucketRow) -> None:
        with self.transaction() as db:
            self._put_bucket(db, bucket)

    @staticmethod
    def _put_bucket(db: sqlite3.Connection, b: BucketRow) -> None:
        db.execute(
            f"INSERT OR REPLACE INTO buckets ({_BUCKET_COLUMNS}) VALUES ({','.join('?' * 24)})",
            (b.sig, json.dumps(b.sig_json), b.backend, Stage(b.stage).value, Status(b.status).value, b.family, b.count, b.first_seen,
             b.last_seen, b.first_wall, b.last_wall, BucketState(b.state).value, b.repro_key, b.repro_size,
             b.repro_text, b.detail, b.corpus_entry if b.saving is None else f"?{b.saving}", b.shrunk_size,
             b.cause, "" if b.triage is None else Triage(b.triage).value, b.evidence, b.rehits, b.rehit_seconds,
             ShrinkState(b.shrink).value),
        )

    def add_time(self, kind: str, task_seconds: float, family: str = "") -> None:
        """Worker time spent on one kind of task (check, confirm, shrink), for the time shares;
        with `family`, also that family's part of it (where a campaign's time went)."""
        with self.transaction() as db:
            for key in (f"worker_seconds_{kind}", *((f"worker_seconds_{kind}:{family}",) if family else ())):
                row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           (key, str(meta_seconds(self.path, key, row and row[0]) + task_seconds)))

    def worker_time(self, kind: str) -> float:
        key = f"worker_seconds_{kind}"
        return meta_seconds(self.path, key, self.get_meta(key))

    def worker_time_by_family(self, kind: str) -> dict[str, float]:
        prefix = f"worker_seconds_{kind}:"
        rows = self.db.execute("SELECT key, value FROM meta WHERE key LIKE ?", (prefix + "%",)).fetchall()
        return {key[len(prefix):]: meta_seconds(self.path, key, value) for key, value in rows}

    def meta_object(self, key: str) -> dict[str, Any] | None:
        """A meta value holding a JSON object (config, lane_kin, regression ranges), checked."""
        return meta_object(self.path, key, self.get_meta(key))

    def add_extra_time(self, tool_seconds: float, task_seconds: float, split: dict[str, float] | None = None) -> None:
        """Worker time spent on confirming re-runs (not on any one candidate's row)."""
        with self.transaction() as db:
            if split:
                self._add_split(db, split)
            for key, value in (("extra_tool_seconds", tool_seconds), ("extra_task_seconds", task_seconds)):
                row = db.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
                db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                           (key, str(meta_seconds(self.path, key, row and row[0]) + value)))

    _SPLIT = "worker_split"

    def _add_split(self, db: sqlite3.Connection, split: dict[str, float]) -> None:
        row = db.execute("SELECT value FROM meta WHERE key=?", (self._SPLIT,)).fetchone()
        total = meta_split(self.path, self._SPLIT, row and row[0])
        for part, seconds in split.items():
            total[part] = total.get(part, 0.0) + seconds
        db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (self._SPLIT, json.dumps(total)))

    def worker_split(self) -> dict[str, float]:
        """Worker seconds of checks and confirming re-runs outside compiler and runtime, by part
        (worktime.PARTS); {} for a campaign from before they were timed."""
        return meta_split(self.path, self._SPLIT, self.get_meta(self._SPLIT))

    def extra_time(self) -> tuple[float, float]:
        tool, task = (meta_seconds(self.path, key, self.get_meta(key))
                      for key in ("extra_tool_seconds", "extra_task_seconds"))
        return tool, task

    # --- backends set aside -------------------------------------------------------------
    def put_cells(self, cells: Sequence[CellRow], replace: bool = False) -> None:
        """Allocation rows (a replay of an older store's candidates; `replace`: instead of every
        row there), in one transaction."""
        with self.transaction() as db:
            if replace:
                db.execute("DELETE FROM allocation")
            _put_cells(db, cells)

    def cells(self) -> list[CellRow]:
        """The allocation table's rows, checked."""
        out = []
        for r in self.db.execute("SELECT kind, name, checks, seconds, causes, recent_seconds, recent_causes, "
                                 "requests, misses FROM allocation ORDER BY kind, name"):
            c = RowReader(self.path, "allocation", f"{r[0]}:{r[1]}")
            kind = c.text("kind", r[0], max_len=20)
            if kind not in CELL_KINDS:
                c.fail(f"kind: {kind!r} is not one of draw, lane, feature")
            name = c.text("name", r[1], max_len=2000)
            if "/" not in name:
                c.fail(f"name: {name[:60]!r} is not family/what")
            out.append(CellRow(kind, name, CellRecord(
                c.integer("checks", r[2]), c.seconds("seconds", r[3]), c.seconds("causes", r[4]),
                c.seconds("recent_seconds", r[5]), c.seconds("recent_causes", r[6]), c.integer("requests", r[7]),
                c.integer("misses", r[8]))))
        return out

    def set_aside(self, backend: str, reason: str) -> None:
        with self.transaction() as db:
            db.execute("INSERT OR REPLACE INTO set_aside VALUES (?,?,?)", (backend, reason, time.time()))

    # --- coverage (campaign/coverage_map.py), checked --------------------------------------------
    def coverage_items(self) -> list[tuple[str, str, str, int, float, float, str, str]]:
        """(lane, pass, pattern, count, first seen, first wall, first candidate, its family) of
        every item reached, in the order first reached."""
        query = ("SELECT c.lane, c.pass, c.pattern, c.count, c.first_seen, c.first_wall, c.first_candidate, "
                 "COALESCE(k.family, '') FROM coverage c LEFT JOIN candidates k ON k.key = c.first_candidate "
                 "ORDER BY c.first_seen, c.lane, c.pass, c.pattern")
        out = []
        for lane, pass_name, pattern, count, seen, wall, first, family in self.db.execute(query):
            r = RowReader(self.path, "coverage", (lane, pass_name, pattern))
            out.append((r.text("lane", lane), r.text("pass", pass_name), r.text("pattern", pattern),
                        r.integer("count", count), r.seconds("first_seen", seen), r.seconds("first_wall", wall),
                        r.text("first_candidate", first), r.text("family", family)))
        return out

    def covered(self) -> list[tuple[str, str, int, str]]:
        """(candidate, lane, items new there, its family) of each instrumented compile, in the
        order they finished."""
        query = ("SELECT c.candidate, c.lane, c.new, COALESCE(k.family, '') FROM covered c "
                 "LEFT JOIN candidates k ON k.key = c.candidate ORDER BY c.finished, c.rowid")
        out = []
        for key, lane, new, family in self.db.execute(query):
            r = RowReader(self.path, "covered", (key, lane))
            out.append((r.text("candidate", key), r.text("lane", lane), r.integer("new", new), r.text("family", family)))
        return out

    def failing_passes(self) -> dict[str, str]:
        return dict(_texts(self.path, "failing_passes", ("bucket", "pass"), r)
                    for r in self.db.execute("SELECT bucket, pass FROM failing_passes"))

    def set_aside_backends(self) -> dict[str, str]:
        return dict(_texts(self.path, "set_aside", ("backend", "reason"), r)
                    for r in self.db.execute("SELECT backend, reason FROM set_aside"))


@dataclass(frozen=True)
class CoverageRecord:
    """What one candidate's instrumented compiles reached: per lane, the (pass, pattern) items
    (pattern "" for a pass) and how many were new there; the failing pass of new buckets."""

    lanes: dict[str, tuple[tuple[str, str], ...]]
    new: dict[str, int]
    active: float
    wall: float
    failing_passes: dict[str, str] = field(default_factory=dict)  # bucket -> pass


def _put_cells(db: sqlite3.Connection, cells: Sequence[CellRow]) -> None:
    db.executemany("INSERT OR REPLACE INTO allocation VALUES (?,?,?,?,?,?,?,?,?)",
                   [(c.kind, c.name, *c.record.row()) for c in cells])


def _put_coverage(db: sqlite3.Connection, key: str, cov: CoverageRecord) -> None:
    for lane, items in cov.lanes.items():
        db.executemany(
            "INSERT INTO coverage VALUES (?,?,?,1,?,?,?) ON CONFLICT (lane, pass, pattern) DO UPDATE SET count=count+1",
            [(lane, p, q, cov.active, cov.wall, key) for p, q in items])
        db.execute("INSERT OR REPLACE INTO covered VALUES (?,?,?,?,?)",
                   (key, lane, len(items), cov.new.get(lane, 0), cov.active))
    db.executemany("INSERT OR IGNORE INTO failing_passes VALUES (?,?)", list(cov.failing_passes.items()))


@overload
def _texts(path: Path, table: str, columns: tuple[str, str], r: tuple) -> tuple[str, str]: ...
@overload
def _texts(path: Path, table: str, columns: tuple[str, str, str], r: tuple) -> tuple[str, str, str]: ...
def _texts(path: Path, table: str, columns: tuple[str, ...], r: tuple) -> tuple[str, ...]:
    """A row of one-line text columns (hits, set_aside, coverage names), checked."""
    reader = RowReader(path, table, r[0])
    return tuple(reader.text(c, v, max_len=100_000) for c, v in zip(columns, r))


def _candidate(path: Path, r: tuple, lists: dict[Any, tuple[str, ...]] | None = None) -> CandidateRow:
    c, lists = RowReader(path, "candidates", r[0]), {} if lists is None else lists
    backends = lists[r[5]] if r[5] in lists else c.text_list("backends", r[5])
    if len(lists) < 256:
        lists[r[5]] = backends
    return CandidateRow(
        key=c.text("key", r[0], max_len=200), idx=c.integer("idx", r[1]), seed=c.integer("seed", r[2]),
        family=c.text("family", r[3]), features=c.text_list("features", r[4]), backends=backends,
        verdict=c.choice("verdict", r[6], Verdict), outcome=c.outcome("outcome", r[7]), payload=c.text("payload", r[8]),
        size=c.integer("size", r[9]), tool_seconds=c.seconds("tool_seconds", r[10]),
        task_seconds=c.seconds("task_seconds", r[11]), finished=c.seconds("finished", r[12]),
        error=c.free_text("error", r[13]))


def _bucket(path: Path, r: tuple) -> BucketRow:
    b = RowReader(path, "buckets", r[0])
    entry, saving = b.text("corpus_entry", r[16]), None
    if entry.startswith("?"):
        digits = entry[1:]
        if not (digits.isascii() and digits.isdigit() and len(digits) <= 18):
            b.fail(f"corpus_entry: {entry[:40]!r} is neither a folder nor a save under way ('?N')")
        entry, saving = "", int(digits)
    sig_json = b.json_object("sig_json", r[1])
    row = BucketRow(
        sig=b.text("sig", r[0]), sig_json=sig_json, backend=b.text("backend", r[2]), stage=b.choice("stage", r[3], Stage),
        status=b.choice("status", r[4], Status), family=b.text("family", r[5]), count=b.integer("count", r[6]),
        first_seen=b.seconds("first_seen", r[7]), last_seen=b.seconds("last_seen", r[8]),
        first_wall=b.seconds("first_wall", r[9]), last_wall=b.seconds("last_wall", r[10]),
        state=b.choice("state", r[11], BucketState), repro_key=b.text("repro_key", r[12], max_len=200),
        repro_size=b.integer("repro_size", r[13]), repro_text=b.free_text("repro_text", r[14]),
        detail=b.free_text("detail", r[15]), corpus_entry=entry, shrunk_size=b.optional_integer("shrunk_size", r[17]),
        saving=saving, cause=b.text("cause", r[18]),
        triage=None if r[19] == "" else b.choice("triage", r[19], Triage), evidence=b.free_text("evidence", r[20]),
        rehits=b.integer("rehits", r[21]), rehit_seconds=b.seconds("rehit_seconds", r[22]),
        shrink=b.choice("shrink", r[23], ShrinkState))
    try:  # the signature it holds: what confirming, saving and reporting rebuild
        row.failure  # noqa: B018
        typed = all(isinstance(sig_json[k], str) for k in ("backend", "stage", "status", "message"))
    except (KeyError, TypeError, ValueError, AttributeError):
        typed = False
    if not typed:
        b.fail(f"sig_json: {_show_json(sig_json)} is not a failure signature (backend, stage, status, message)")
    return row


def _show_json(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 60 else text[:57] + "..."
