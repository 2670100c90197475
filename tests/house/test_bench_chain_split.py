"""bench/bench_chain_split.py's fixed sample: which stored chain candidates it re-checks (issue #33)."""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from bench_chain_split import sample  # noqa: E402


def _store(path: Path, rows: list[tuple[str, float, str, dict]]) -> Path:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE candidates (key TEXT, family TEXT, seed INTEGER, payload TEXT, backends TEXT, "
               "task_seconds REAL, features TEXT, verdict TEXT, outcome TEXT)")
    for i, (key, task, verdict, outcome) in enumerate(rows):
        payload = {"n": i, "context": [{"op": "relu", "result": 0}]} if key != "lone" else {"n": i}
        db.execute("INSERT INTO candidates VALUES (?, 'norm', ?, ?, ?, ?, ?, ?, ?)",
                   (key, i, json.dumps(payload), json.dumps(list(outcome)), task,
                    json.dumps(["regime:large"] if key == "c5" else []), verdict, json.dumps(outcome)))
    db.commit()
    db.close()
    return path


def test_the_sample_is_the_costliest_passing_chains_then_those_around_the_median(tmp_path):
    ok = {"llvm-cpu": ["ok", 1.0], "vmvx": ["ok", 1.0]}
    rows = [(f"c{i}", float(i), "pass", ok) for i in range(10)]
    rows += [("lone", 99.0, "pass", ok), ("failed", 50.0, "fail", {"llvm-cpu": ["timeout", 60.0]})]
    store = _store(tmp_path / "a.sqlite", rows)
    picked = sample([store], top=2, mid=2)
    assert [r["key"] for r in picked] == ["c9", "c8", "c5", "c4"]  # 10 chains: median between c5 and c4
    assert picked[0]["lanes"] == ("llvm-cpu", "vmvx") and picked[2]["large"] and not picked[3]["large"]


def test_the_timeout_sample_rechecks_only_the_lanes_that_timed_out(tmp_path):
    rows = [("c0", 61.0, "fail", {"llvm-cpu": ["ok", 1.0], "rocm-gfx942": ["timeout", 60.0]}),
            ("c1", 2.0, "pass", {"llvm-cpu": ["ok", 1.0]})]
    picked = sample([_store(tmp_path / "a.sqlite", rows)], top=30, mid=30, timeouts=True)
    assert [(r["key"], r["lanes"]) for r in picked] == [("c0", ("rocm-gfx942",))]
