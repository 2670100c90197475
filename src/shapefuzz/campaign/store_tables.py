"""The tables of a campaign's store (`campaign.sqlite`, campaign/database.py) and the values one
row of the allocation table holds (campaign/allocation.py reads and writes them through the store)."""

from __future__ import annotations

from dataclasses import dataclass

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS candidates (
    key TEXT PRIMARY KEY,          -- content hash of the candidate (family + parameters)
    idx INTEGER NOT NULL,          -- position in the campaign's sequence
    seed INTEGER NOT NULL,
    family TEXT NOT NULL,
    features TEXT NOT NULL,        -- JSON list
    backends TEXT NOT NULL,        -- JSON list of the backends it was checked on
    verdict TEXT NOT NULL,         -- pass / fail / invalid / flaky / error / lost
    outcome TEXT NOT NULL,         -- JSON {backend: status}
    payload TEXT NOT NULL,         -- what regenerates it (the parameters, JSON)
    size INTEGER NOT NULL,
    tool_seconds REAL NOT NULL,    -- time inside the compiler and runtime
    task_seconds REAL NOT NULL,    -- the worker's wall time for the candidate
    finished REAL NOT NULL,        -- campaign-active seconds when it finished
    error TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS hits (
    candidate TEXT NOT NULL, bucket TEXT NOT NULL, backend TEXT NOT NULL,
    PRIMARY KEY (candidate, bucket)
);
CREATE TABLE IF NOT EXISTS buckets (
    sig TEXT PRIMARY KEY,          -- str(Signature)
    sig_json TEXT NOT NULL,
    backend TEXT NOT NULL, stage TEXT NOT NULL, status TEXT NOT NULL,
    family TEXT NOT NULL,          -- the family of the first candidate that hit it
    count INTEGER NOT NULL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL,       -- campaign-active seconds
    first_wall REAL NOT NULL, last_wall REAL NOT NULL,       -- epoch seconds
    state TEXT NOT NULL,           -- pending (awaiting its re-run) / confirmed / flaky
    repro_key TEXT NOT NULL, repro_size INTEGER NOT NULL, repro_text TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    corpus_entry TEXT NOT NULL DEFAULT '',
    shrunk_size INTEGER,
    cause TEXT NOT NULL DEFAULT '',           -- the cause this bucket belongs to (see engine.Causes)
    triage TEXT NOT NULL DEFAULT '',          -- compiler bug / target limit / suspected driver / flaky / ours
    evidence TEXT NOT NULL DEFAULT '',        -- why that triage verdict
    rehits INTEGER NOT NULL DEFAULT 0,        -- hits after the bucket was saturated
    rehit_seconds REAL NOT NULL DEFAULT 0,    -- worker time those re-hits cost
    shrink TEXT NOT NULL DEFAULT ''           -- '' / pending / done / failed / skipped
);
CREATE TABLE IF NOT EXISTS sessions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, started REAL NOT NULL, active REAL NOT NULL,
    candidates INTEGER NOT NULL, argv TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS set_aside (backend TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
""" + """
-- Compiler coverage (campaign/coverage_map.py). Added to format 2 without a version bump: an older
-- shapefuzz ignores these tables, and opening an older store creates them empty.
CREATE TABLE IF NOT EXISTS coverage (
    lane TEXT NOT NULL, pass TEXT NOT NULL, pattern TEXT NOT NULL,  -- pattern '': the pass itself ran
    count INTEGER NOT NULL,        -- instrumented compiles on this lane that reached it
    first_seen REAL NOT NULL,      -- campaign-active seconds
    first_wall REAL NOT NULL,      -- epoch seconds
    first_candidate TEXT NOT NULL,
    PRIMARY KEY (lane, pass, pattern)
);
CREATE TABLE IF NOT EXISTS covered (   -- one row per instrumented compile
    candidate TEXT NOT NULL, lane TEXT NOT NULL,
    items INTEGER NOT NULL,        -- passes and (pass, pattern) pairs it reached
    new INTEGER NOT NULL,          -- of those, never reached on this lane before
    finished REAL NOT NULL,
    PRIMARY KEY (candidate, lane)
);
CREATE TABLE IF NOT EXISTS failing_passes (   -- the pass a bucket's compile failed in, from its action log
    bucket TEXT PRIMARY KEY, pass TEXT NOT NULL
);
-- Allocation by yield (campaign/allocation.py), added to format 2 without a version bump like the
-- coverage tables: per cell, what the campaign spent and found there, written with each candidate.
CREATE TABLE IF NOT EXISTS allocation (
    kind TEXT NOT NULL,            -- draw (family/shape) / lane (family/lane) / feature (family/feature)
    name TEXT NOT NULL,
    checks INTEGER NOT NULL, seconds REAL NOT NULL, causes REAL NOT NULL,
    recent_seconds REAL NOT NULL, recent_causes REAL NOT NULL,   -- discounted by the cell's own seconds
    requests INTEGER NOT NULL, misses INTEGER NOT NULL,          -- draws that asked for it; of another shape
    PRIMARY KEY (kind, name)
);
-- Where confirm and shrink time went (campaign/task_log.py), added to format 2 like the tables above:
-- one row per confirming re-run and per shrink, read by benchmarks only.
CREATE TABLE IF NOT EXISTS tasks (
    kind TEXT NOT NULL,            -- confirm / shrink
    candidate TEXT NOT NULL, family TEXT NOT NULL,
    buckets TEXT NOT NULL,         -- JSON list: the buckets it ran for
    what TEXT NOT NULL,            -- their kinds, stage/status, comma-separated
    lanes TEXT NOT NULL,           -- JSON {lane: [role, seconds]}
    seconds REAL NOT NULL,         -- the worker's wall time for the task
    result TEXT NOT NULL,          -- what came of it
    facts TEXT NOT NULL DEFAULT '{}',  -- JSON: a shrink's figures (trials, steps, seconds by part)
    finished REAL NOT NULL         -- campaign-active seconds
);
-- A resume and its checkpoints read candidates in index order, or those from an index on.
CREATE INDEX IF NOT EXISTS candidates_by_idx ON candidates (idx);
"""


CELL_KINDS = ("draw", "lane", "feature")  # the allocation table's rows (campaign/allocation.py)


@dataclass
class CellRecord:
    """What one allocation cell spent and found: totals, and the recent part (discounted by the
    cell's own seconds, campaign/allocation.py) its rate is read from."""

    checks: int = 0
    seconds: float = 0.0
    causes: float = 0.0
    recent_seconds: float = 0.0
    recent_causes: float = 0.0
    requests: int = 0  # draws that asked for this cell (draw cells)
    misses: int = 0  # of those, candidates that came back of another shape (a family that takes no chain)

    def row(self) -> tuple[int, float, float, float, float, int, int]:
        return (self.checks, self.seconds, self.causes, self.recent_seconds, self.recent_causes,
                self.requests, self.misses)


@dataclass(frozen=True)
class CellRow:
    """One row of the `allocation` table: `kind` (one of CELL_KINDS) and `name` ("family/what")."""

    kind: str
    name: str
    record: CellRecord


__all__ = ["CELL_KINDS", "SCHEMA", "CellRecord", "CellRow"]
