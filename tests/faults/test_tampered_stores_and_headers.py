"""Hostile campaign stores, enum header fields, big corpora and a full corpus disk (issue 36,
defects 5 and 6 and two of its "also seen"): garbage inside campaign.sqlite is one line naming
table, row and column (exit 2, never 70) for `report`, `report --html` and a resume; an unknown
enum value in a case header or an entry's params is refused, never a finding; a corpus listing
reuses what it checked before; a full corpus disk stops the campaign. The compilers are fakes
except where the probe used real IREE (the RELU header)."""

from __future__ import annotations

import errno
import json
import os
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from support.hostile import fill, one_line, run, small_disk  # noqa: F401
from support.hostile import CAMPAIGN, cli, expect_2  # noqa: F401

STORE_PROBES = [  # (SQL, what the line must name)
    ("UPDATE candidates SET features='not json'", "table candidates, row", "column features: not valid JSON"),
    ("UPDATE candidates SET finished='abc'", "table candidates", "column finished"),
    ("UPDATE candidates SET features='" + "[" * 5000 + "]" * 5000 + "'", "table candidates", "column features: nested"),
    ("UPDATE buckets SET state='weird'", "table buckets", "column state: 'weird' is not one of"),
    ("UPDATE meta SET value='garbage' WHERE key='config'", "table meta, row 'config'", "column value: not valid JSON"),
    ("UPDATE candidates SET task_seconds=1e308", "table candidates", "column task_seconds: 1e+308"),
    ("UPDATE candidates SET finished=-5", "table candidates", "column finished: -5.0"),
    ("UPDATE sessions SET active=1e308", "table sessions, row 1", "column active"),
    ("UPDATE candidates SET outcome='[1, 2]'", "table candidates", "column outcome: expected an object"),
    ("UPDATE candidates SET verdict='zzz'", "table candidates", "column verdict"),
    ("UPDATE buckets SET sig_json='{}'", "table buckets", "column sig_json"),
    ("UPDATE buckets SET count='x'", "table buckets", "column count: expected an integer"),
    # a compile error is settled by its check, so the fixture's campaign may have run no confirm: the row is made
    ("INSERT OR REPLACE INTO meta VALUES ('extra_task_seconds', 'x')", "row 'extra_task_seconds'", "'x' is not a number"),
    ("UPDATE meta SET value='{\"judge\": -1}' WHERE key='worker_split'", "row 'worker_split'", "-1 is not a time"),
    ("UPDATE hits SET backend=x'00'", "table hits", "column backend"),
]
COMMANDS = {
    "report": lambda camp: ("report", str(camp)),
    "report --html": lambda camp: ("report", str(camp), "--html"),
    "resume": lambda camp: ("fuzz", "--campaign", str(camp), "--count", "4", "--jobs", "1", "--no-shrink"),
}


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One short campaign with two confirmed buckets and their corpus entries (fake compiler)."""
    tmp = tmp_path_factory.mktemp("finished")
    result = run(tmp, "fuzz", "--campaign", str(tmp / "camp"), "--corpus", str(tmp / "corpus"), *CAMPAIGN,
                 env_extra={"FAKE_IREE_MODE": "words"})
    assert result.returncode == 0, result.stderr
    return tmp


def _tampered(finished: Path, tmp_path: Path, sql: str) -> Path:
    camp = Path(shutil.copytree(finished / "camp", tmp_path / "camp"))
    shutil.copytree(finished / "corpus", tmp_path / "corpus")
    con = sqlite3.connect(camp / "campaign.sqlite")
    con.execute("UPDATE meta SET value=? WHERE key='config'",
                (json.dumps({**json.loads(con.execute("SELECT value FROM meta WHERE key='config'").fetchone()[0]),
                             "corpus": str(tmp_path / "corpus")}),))
    con.execute("UPDATE buckets SET corpus_entry=replace(corpus_entry, ?, ?)",
                (str(finished / "corpus"), str(tmp_path / "corpus")))
    assert con.execute(sql).rowcount > 0, sql
    con.commit()
    con.close()
    return camp


def _rows(camp: Path) -> tuple:
    con = sqlite3.connect(camp / "campaign.sqlite")
    try:
        return tuple(con.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("candidates", "sessions", "buckets"))
    finally:
        con.close()


# ----------------------------------------------------------------------------- defect 5: the store


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("sql,table,column", STORE_PROBES, ids=[p[0][:48] for p in STORE_PROBES])
def test_garbage_in_the_store_is_one_line_naming_table_row_and_column(tmp_path, cli, finished, command, sql,
                                                                      table, column):
    camp = _tampered(finished, tmp_path, sql)
    before = _rows(camp)
    line = expect_2(cli(*COMMANDS[command](camp)), "campaign.sqlite is corrupt", table, column)
    assert "restore it" in line
    assert _rows(camp) == before  # a refused resume writes nothing (no session row either)


def test_garbage_in_the_coverage_tables_is_refused_by_its_reader(tmp_path, finished):
    from shapefuzz.campaign.coverage_map import frontier_counts
    from shapefuzz.campaign.report.coverage_summary import coverage_rows, failing_passes
    from shapefuzz.campaign.rows import CorruptStoreError
    from shapefuzz.campaign.database import CampaignStore

    camp = _tampered(finished, tmp_path, "INSERT INTO covered VALUES ('k', 'llvm-cpu', 3, 'x', 1.0)")
    store = CampaignStore(camp, create=False)
    try:
        with pytest.raises(CorruptStoreError, match="table covered.*column new: expected an integer"):
            frontier_counts(store)
        store.db.execute("DELETE FROM covered")
        store.db.execute("INSERT INTO coverage VALUES ('llvm-cpu', 'p', '', 1, 1e308, 0, 'k')")
        with pytest.raises(CorruptStoreError, match="table coverage.*column first_seen"):
            coverage_rows(store)
        store.db.execute("INSERT INTO failing_passes VALUES ('b', x'0001')")
        with pytest.raises(CorruptStoreError, match="table failing_passes.*column pass"):
            failing_passes(store)
    finally:
        store.close()


def test_a_stored_config_naming_an_unknown_backend_is_refused_on_resume(tmp_path, cli, finished):
    camp = _tampered(finished, tmp_path, "UPDATE meta SET value='{\"backends\": [\"nope\"]}' WHERE key='config'")
    expect_2(cli(*COMMANDS["resume"](camp)), "row 'config'", "backends: 'nope' is not a known one")


def test_an_intact_store_still_reports_and_resumes(tmp_path, cli, finished):
    """The checks refuse only what shapefuzz never writes: the same campaign, untouched."""
    camp = _tampered(finished, tmp_path, "UPDATE meta SET value=value WHERE key='config'")
    assert cli(*COMMANDS["report"](camp))[0] == 0
    assert cli(*COMMANDS["report --html"](camp))[0] == 0
    assert cli(*COMMANDS["resume"](camp), env={"FAKE_IREE_MODE": "words"})[0] == 0
    assert _rows(camp)[0] == 4


def test_a_broken_entry_of_its_own_leaves_the_page_written(tmp_path, cli, finished):
    camp = _tampered(finished, tmp_path, "UPDATE meta SET value=value WHERE key='config'")
    for entry in (p for p in (tmp_path / "corpus").iterdir() if p.is_dir()):
        (entry / "meta.json").write_text("[" * 100_000 + "]" * 100_000)
    assert cli("report", str(camp), "--html")[0] == 0
    assert "cause-" in (camp / "report.html").read_text()


# ----------------------------------------------------------------------------- defect 6: enum params


def test_an_unknown_enum_value_in_a_header_is_exit_2_not_a_finding_real_iree(tmp_path, cli):
    generated = run(tmp_path, "gen", "--op", "conv", "--seed", "7", fake=False)
    assert generated.returncode == 0, generated.stderr
    text = generated.stdout
    assert '"epilogue":"relu"' in text
    (tmp_path / "conv.mlir").write_text(text)
    (tmp_path / "bad.mlir").write_text(text.replace('"epilogue":"relu"', '"epilogue":"RELU"'))
    expect_2(cli("check", str(tmp_path / "bad.mlir"), "--backends", "llvm-cpu", fake=False),
             "epilogue: 'RELU' is not one of 'none', 'relu'")
    code, _ = cli("check", str(tmp_path / "conv.mlir"), "--backends", "llvm-cpu", fake=False)
    assert code == 0  # the same case as generated: compiled, run and judged


def test_every_family_types_its_enum_like_params():
    """A plain `str` param would take any value a file gives it: each is a Literal, but the
    frontend (checked against the family's spellings) and conv's layouts (checked against its
    table); a value outside either is refused all the same."""
    from shapefuzz.families import FAMILY_MODULES, get_family, validate_params
    from shapefuzz.families.field_types import field_hints
    from shapefuzz.schema import SchemaError

    plain = {(name, field) for name in FAMILY_MODULES
             for field, hint in field_hints(get_family(name).params_type).items() if hint is str}
    # (onnx_op's op: an ONNX operator name, checked against ONNX's own schemas)
    assert plain == {(n, "frontend") for n in FAMILY_MODULES} | {("conv", "layout"), ("conv", "compute_layout"),
                                                                 ("onnx_op", "op")}
    from shapefuzz.families.generate import draw_case

    drawn = draw_case("conv", 5).params
    validate_params("conv", drawn, "params")  # as drawn: fine
    for field in ("frontend", "layout", "compute_layout", "epilogue"):
        params = {**drawn, field: "Nope"}
        with pytest.raises(SchemaError, match="not valid conv parameters"):
            validate_params("conv", params, "params")


def test_a_corpus_entry_with_an_unknown_enum_param_is_refused_on_read(tmp_path, cli, finished):
    corpus = Path(shutil.copytree(finished / "corpus", tmp_path / "corpus"))
    entry = sorted(p for p in corpus.iterdir() if p.is_dir())[0]
    meta = json.loads((entry / "meta.json").read_text())
    meta["params"]["values"] = "WIDE"
    (entry / "meta.json").write_text(json.dumps(meta))
    expect_2(cli("corpus", "show", str(entry)), "params", "values: 'WIDE' is not one of 'wide', 'ties'")
    cli("corpus", "list", str(corpus), "--json")
    code, _ = cli("corpus", "list", str(corpus), "--json")
    assert code == 0


# ----------------------------------------------------------------------------- a big corpus


def _aged(folder: Path) -> None:
    """Every file a minute old: past the window in which a listing does not trust a stat."""
    old = time.time() - 60
    for root, _, files in os.walk(folder):
        for name in files:
            os.utime(os.path.join(root, name), (old, old))


def test_a_listing_reuses_what_passed_and_sees_every_change(tmp_path, finished, monkeypatch):
    import shapefuzz.corpus.listing as listing
    from shapefuzz.corpus import Finding, UnreadableEntry, iter_entries, list_entries, save_finding
    from shapefuzz.model import Signature, Stage, Status

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    corpus = Path(shutil.copytree(finished / "corpus", tmp_path / "corpus"))
    # beside the campaign's entries (a compile-only lane's keep no arrays), one with inputs and outputs
    save_finding(corpus, Finding(Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values"),
                                 "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
                                 ("llvm-cpu",), None, 0, [np.arange(4, dtype=np.float32)],
                                 [np.zeros(4, dtype=np.float32)], "3.13.0", [], "wrong values"))
    _aged(corpus)
    full = [(e.id, getattr(e, "meta", None)) for e in iter_entries(corpus)]
    assert [(e.id, e.meta) for e in list_entries(corpus)] == full  # cold: every entry loaded in full
    loads = []
    with monkeypatch.context() as patch:
        patch.setattr(listing, "load_entry", loads.append)
        assert [(e.id, e.meta) for e in list_entries(corpus)] == full and loads == []  # warm: none loaded
    entry = next(corpus / name for name, _ in full if (corpus / name / "inputs").is_dir())  # (a compile-only
    npy = next((entry / "inputs").iterdir())  # lane's entry keeps no arrays)
    npy.write_bytes(b"\x93NUMPY garbage" + b"\0" * (npy.stat().st_size - 14))  # same size
    _aged(corpus)
    listed = {e.id: e for e in list_entries(corpus)}
    assert isinstance(listed[entry.name], UnreadableEntry) and "npy" in listed[entry.name].reason
    for cache in (tmp_path / "cache").rglob("*.json"):  # a forged cache costs a full load, nothing else
        cache.write_text(json.dumps({"code": "x", "passed": {entry.name: "forged"}}))
    assert isinstance({e.id: e for e in list_entries(corpus)}[entry.name], UnreadableEntry)
    monkeypatch.setattr(listing, "_KEEP_LISTINGS", 1)  # the cache remembers a bounded number of corpora
    other = Path(shutil.copytree(corpus, tmp_path / "other"))
    _aged(other)
    list_entries(other)
    assert len(list((tmp_path / "cache").rglob("*.json"))) == 1


# ----------------------------------------------------------------------------- a full corpus disk


def test_a_full_corpus_disk_stops_the_campaign_with_one_line(tmp_path, cli, monkeypatch):
    import shapefuzz.corpus.store as corpus_store

    saves = []

    def full(*args, **kwargs):
        saves.append(args)
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "corpus" / "x" / "meta.json"))

    camp, corpus = tmp_path / "camp", tmp_path / "corpus"
    args = ("fuzz", "--campaign", str(camp), "--corpus", str(corpus), "--count", "8", "--ops", "topk",
            "--backends", "rocm-gfx942", "--no-shrink", "--jobs", "1")
    with monkeypatch.context() as patch:
        patch.setattr(corpus_store, "_write_payload", full)
        line = expect_2(cli(*args, env={"FAKE_IREE_MODE": "words"}), "the disk is full", "No space left on device",
                        "the campaign stopped", "report in", "run the same command again to resume")
    assert len(saves) == 1  # the first failed save stops it: no "could not save" for the whole budget
    assert (camp / "report.md").is_file()
    assert _rows(camp)[0] < 8  # stopped before its budget
    assert cli(*args)[0] == 0  # room again: the resume saves what was left
    assert any(p.is_dir() for p in corpus.iterdir()) and "0 bucket(s) saved" in line


def test_a_full_corpus_disk_stops_the_campaign_on_a_real_full_disk(tmp_path, small_disk):
    """The same on a 4 MiB tmpfs filled up (root only): the campaign folder elsewhere keeps its
    report and state; the corpus disk holds nothing half-written."""
    corpus, camp = small_disk / "corpus", tmp_path / "camp"
    corpus.mkdir()
    fill(small_disk)
    result = run(tmp_path, "fuzz", "--campaign", str(camp), "--corpus", str(corpus), "--count", "8", "--ops", "topk",
                 "--backends", "rocm-gfx942", "--no-shrink", "--jobs", "1", env_extra={"FAKE_IREE_MODE": "words"})
    one_line(result, 2, "the disk is full", "the campaign stopped", "report in")
    assert "could not save" not in result.stderr
    assert (camp / "report.md").is_file() and _rows(camp)[0] < 8
    assert not [p for p in corpus.rglob("*") if p.name.startswith(".")]
