"""`shapefuzz fuzz` end to end: bad input (one line, exit 2, nothing overwritten), fake compilers
that segfault, hang, blow up memory or print garbage, a SIGKILL mid-run then resume, and a
short real campaign on llvm-cpu."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")


def _fuzz(tmp_path, *args, mode="ok", timeout=120, env_extra=None, fake=True):
    argv = [SHAPEFUZZ]
    if fake:
        argv += ["--iree-bin", str(make_fake_iree(tmp_path / "bin"))]
    argv += ["fuzz", *args]
    env = fake_env(tmp_path, mode, **(env_extra or {}))
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env, cwd=tmp_path)


@pytest.mark.parametrize("args,message", [
    (["--ops", "convv"], "unknown op family 'convv'; did you mean 'conv'"),
    (["--backends", "llvm-cpuu"], "unknown backend"),
    (["--time", "8 hours"], "--time '8 hours': not a duration"),
    (["--count", "0"], "--count 0"),
])
def test_bad_arguments_one_line_exit_2(tmp_path, args, message):
    result = _fuzz(tmp_path, "--campaign", str(tmp_path / "camp"), *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "camp").exists()


def test_newer_or_corrupt_campaign_folder_exit_2(tmp_path):
    camp = tmp_path / "camp"
    camp.mkdir()
    db = camp / "campaign.sqlite"
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    con.execute("INSERT INTO meta VALUES ('format_version', '99')")
    con.commit()
    con.close()
    before = db.read_bytes()
    result = _fuzz(tmp_path, "--campaign", str(camp), "--count", "1", "--ops", "topk", "--backends", "rocm-gfx942")
    assert result.returncode == 2 and "newer shapefuzz" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and db.read_bytes() == before
    db.write_bytes(b"garbage" * 1000)
    result = _fuzz(tmp_path, "--campaign", str(camp), "--count", "1", "--ops", "topk", "--backends", "rocm-gfx942")
    assert result.returncode == 2 and "corrupt" in result.stderr and db.read_bytes() == b"garbage" * 1000


def test_faulty_compilers_cost_one_candidate_each(tmp_path):
    """segfault, hang, unbounded memory, garbage output and plain errors, mixed by candidate."""
    camp = tmp_path / "camp"
    # The fake picks a fault from the module's checksum (1 in 5 a segfault): 20 candidates make
    # every fault likely whatever the families render (12 drew no segfault once torch spellings
    # changed the texts).
    # No shrink or localization after it (the fakes' causes would keep them for a minute): those
    # steps under faulty compilers are test_guard_time_bounds' and triage/'s.
    result = _fuzz(tmp_path, "--campaign", str(camp), "--count", "20", "--ops", "topk,scatter",
                   "--backends", "rocm-gfx942", "--jobs", "2", "--compile-timeout", "2", "--json",
                   "--no-shrink", "--no-localize", mode="mix", timeout=240)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["candidates"] == 20
    statuses = {b["status"] for b in summary["buckets"]}
    assert {"crash", "error"} <= statuses, summary["buckets"]
    assert statuses <= {"crash", "error", "timeout", "oom"}
    for b in summary["buckets"]:
        assert b["state"] in ("confirmed", "flaky")
        assert b["corpus_entry"] and (Path(b["corpus_entry"]) / "meta.json").exists()
    assert (camp / "report.md").exists() and (camp / "buckets.svg").exists()


def test_backend_that_keeps_hanging_is_set_aside(tmp_path):
    camp = tmp_path / "camp"
    # (no shrink or localization of the timeout cause after it: a hang's shrink and placing are
    # test_guard_time_bounds' and triage/test_hang_place's, and here they took a minute)
    result = _fuzz(tmp_path, "--campaign", str(camp), "--count", "20", "--ops", "topk", "--backends",
                   "rocm-gfx942", "--jobs", "2", "--compile-timeout", "1", "--json", "--no-shrink", "--no-localize",
                   mode="hang", timeout=240)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert "rocm-gfx942" in summary["set_aside"]
    assert summary["stopped"] == "every backend is set aside"
    assert "backend rocm-gfx942 set aside" in result.stderr
    assert summary["candidates"] < 20


def _count(db: Path, sql: str) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute(sql).fetchone()[0]
    except sqlite3.OperationalError:
        return 0
    finally:
        con.close()


def test_sigkill_mid_run_then_resume(tmp_path):
    camp = tmp_path / "camp"
    bin_dir = make_fake_iree(tmp_path / "bin")
    argv = [SHAPEFUZZ, "--iree-bin", str(bin_dir), "fuzz", "--campaign", str(camp), "--count", "30",
            "--ops", "topk,scatter", "--backends", "rocm-gfx942,rocm-gfx90a", "--jobs", "2",
            # Shrinking against this fake turns up the other fake buckets as new (counted) sightings;
            # here only the kill and the resume may count (and no localization after each run).
            "--no-shrink", "--no-localize"]
    env = fake_env(tmp_path, "words", FAKE_IREE_DELAY="0.05")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True, cwd=tmp_path)
    db = camp / "campaign.sqlite"
    deadline = time.time() + 120
    while time.time() < deadline:
        if db.exists() and _count(db, "SELECT COUNT(*) FROM buckets WHERE corpus_entry LIKE '/%'") >= 2:
            break
        time.sleep(0.1)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    assert _count(db, "SELECT COUNT(*) FROM candidates") < 30, "the campaign ended before the kill"
    from shapefuzz.corpus import load_entry

    saved = {}
    for entry in (tmp_path / "corpus").iterdir():  # the default corpus: ./corpus
        if entry.is_dir() and not entry.name.startswith("."):
            loaded = load_entry(entry)
            saved[entry.name] = loaded.count
    assert saved and all(count == 1 for count in saved.values())
    result = subprocess.run(argv + ["--json"], env=env, capture_output=True, text=True, timeout=180, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["candidates"] == 30 and summary["sessions"] == 2
    con = sqlite3.connect(db)
    keys = [r[0] for r in con.execute("SELECT key FROM candidates")]
    assert len(keys) == len(set(keys)) == 30
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    for name in saved:
        assert load_entry(tmp_path / "corpus" / name).count == 1  # counted once
    for b in summary["buckets"]:
        assert b["corpus_entry"], b


@pytest.mark.iree
def test_short_real_campaign(tmp_path):
    camp = tmp_path / "camp"
    result = _fuzz(tmp_path, "--campaign", str(camp), "--count", "6", "--ops", "topk", "--backends", "llvm-cpu",
                   "--jobs", "2", "--json", fake=False, timeout=300,
                   env_extra={"XDG_CACHE_HOME": os.environ.get("XDG_CACHE_HOME", str(Path.home() / ".cache"))})
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["candidates"] == 6
    assert summary["verdicts"].get("invalid", 0) == 0
    assert summary["families"]["topk"]["cases"] == 6
    assert "## Per family" in (camp / "report.md").read_text()
