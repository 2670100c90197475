"""Values that were taken for something they are not (issue 47, defects 4-7): an empty option value
read as "not given" (`fuzz --campaign ''` ran in ./shapefuzz-campaign, `corpus index ''` wrote
INDEX.md into the current folder), NaN and infinity as `corpus rederive --localize-time`, an
unreadable corpus entry skipped by `corpus rederive` without a word and exit 0, and a resume
snapshot (or a localization record) nested 200,000 deep: a RecursionError, exit 70. The compiler
is a fake: nothing here is about IREE."""

from __future__ import annotations

import json
import math
import sqlite3
import sys
from pathlib import Path

import pytest

from support.campaign_fakes import make_fake_iree  # noqa: E402

PLAIN = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
CAMPAIGN = ["--count", "1", "--ops", "topk", "--backends", "rocm-gfx942", "--no-shrink", "--no-bisect", "--no-localize",
            "--jobs", "1", "--plain"]
DEEP = "[" * 200_000 + "]" * 200_000


@pytest.fixture()
def cli(tmp_path, monkeypatch, capsys):
    """Runs a command in this process against the fake toolchain, in `tmp_path/work` (nothing else
    there): (exit code, stdout, stderr), with no traceback and, on exit 2, one error line."""
    from shapefuzz.cli import main

    bin_dir = make_fake_iree(tmp_path / "bin")
    work = tmp_path / "work"
    work.mkdir()
    (work / "plain.mlir").write_text(PLAIN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    monkeypatch.setenv("FAKE_IREE_MODE", "ok")
    monkeypatch.setenv("SHAPEFUZZ_FETCH_RELEASES", "0")
    monkeypatch.delenv("SHAPEFUZZ_IREE_BIN", raising=False)
    monkeypatch.chdir(work)

    def call(*args: str, mode: str = "ok", fake: bool = True) -> tuple[int, str, str]:
        monkeypatch.setenv("FAKE_IREE_MODE", mode)
        monkeypatch.setattr(sys, "argv", ["shapefuzz", *(["--iree-bin", str(bin_dir)] if fake else []), *args])
        code = 0
        try:
            main()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, err
        if code == 2:
            errors = [line for line in err.splitlines() if line.startswith("shapefuzz:")]
            assert len(errors) == 1, err
        return code, out, err

    call.work = work
    return call


# ----------------------------------------------------------------------------- 7: '' is not "not given"


@pytest.mark.parametrize("args,option", [
    (["check", "plain.mlir", "--backends", "rocm-gfx942", "--inputs", ""], "--inputs"),
    (["fuzz", *CAMPAIGN, "--campaign", ""], "--campaign"),
    (["fuzz", *CAMPAIGN, "--corpus", ""], "--corpus"),
    (["shrink", "plain.mlir", "--corpus", ""], "--corpus"),
    (["corpus", "list", ""], "CORPUS_DIR"),
    (["corpus", "index", ""], "CORPUS_DIR"),
    (["corpus", "rederive", "--corpus", ""], "--corpus"),
    (["corpus", "add", "plain.mlir", "--backends", "rocm-gfx942", "--corpus", ""], "--corpus"),
    (["corpus", "show", "x", "--corpus", ""], "--corpus"),
    (["replay", ""], "CORPUS_DIR"),
    (["export", "x", "--corpus", ""], "--corpus"),
    (["bisect", "x", "--corpus", ""], "--corpus"),
    (["report", ""], "CAMPAIGN"),
    (["triage", ""], "CAMPAIGN_DIR"),
    (["check", "plain.mlir", "--iree-bin", ""], "--iree-bin"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else None)
def test_an_empty_value_is_one_line_exit_2_and_nothing_is_written(cli, args, option):
    code, out, err = cli(*args, fake=option != "--iree-bin")
    assert code == 2 and option in err and "empty" in err, (code, out, err)
    assert sorted(p.name for p in cli.work.iterdir()) == ["plain.mlir"]  # no ./corpus, INDEX.md, campaign


# ----------------------------------------------------------------------------- 5: finite numbers


@pytest.mark.parametrize("value", ["nan", "inf", "-inf", "1e400", "NaN"])
def test_corpus_rederive_localize_time_must_be_finite(cli, value):
    code, _, err = cli("corpus", "rederive", "--localize-time", value)
    assert code == 2 and "--localize-time" in err and "finite" in err, err


@pytest.mark.parametrize("field,flag", [("bisect_time", "--bisect-time"), ("localize_time", "--localize-time")])
@pytest.mark.parametrize("value", [math.nan, math.inf])
def test_a_requests_budget_in_seconds_must_be_finite(field, flag, value):
    """A campaign started from code (bench, cluster) gives seconds as numbers: NaN passed as a
    bisect phase of NaN seconds; now the same one line as the command line's."""
    from shapefuzz.campaign.run import FuzzRequest, bisect_seconds, localize_seconds
    from shapefuzz.errors import UsageError

    with pytest.raises(UsageError, match=flag):
        (bisect_seconds if field == "bisect_time" else localize_seconds)(FuzzRequest(**{field: value}))
    assert bisect_seconds(FuzzRequest(bisect_time=0.0)) == 0.0  # 0: the phase is off, as before


def test_a_nan_duration_is_not_called_too_long():
    from shapefuzz.durations import parse_duration
    from shapefuzz.errors import UsageError

    with pytest.raises(UsageError, match="not a duration"):
        parse_duration(math.nan, "--shrink-time")


# ----------------------------------------------------------------------------- 6: rederive says what it skipped


def _corpus_with_a_broken_entry(root: Path) -> tuple[Path, str, list[str]]:
    from shapefuzz.corpus import Finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    corpus = root / "corpus"
    sig = Signature("rocm-gfx942", Stage.COMPILE, Status.ERROR, "boom")
    good = save_finding(corpus, Finding(sig, PLAIN, ("rocm-gfx942",), None, 0, None, None, "3.13.0", [],
                                        "error: boom"))[0].name
    broken = []
    for name, meta in (("rocm-gfx942-compile-error-000000000001", "{ not json"),
                       ("rocm-gfx942-compile-error-000000000002", None)):
        folder = corpus / name
        folder.mkdir()
        if meta is None:  # a whole meta.json, its reproducer gone
            (folder / "meta.json").write_text((corpus / good / "meta.json").read_text())
        else:
            (folder / "meta.json").write_text(meta)
        broken.append(name)
    return corpus, good, broken


def test_corpus_rederive_names_each_entry_it_could_not_read_and_exits_3(cli, tmp_path):
    corpus, good, broken = _corpus_with_a_broken_entry(tmp_path)
    code, out, err = cli("corpus", "rederive", "--corpus", str(corpus), "--localize-time", "0")
    assert code == 3, (code, out, err)
    lines = out.splitlines()
    for name in broken:
        said = [line for line in lines if line.startswith(f"{name}: not rederived: unreadable (")]
        assert said and len(said[0]) > len(name) + 30, out  # which one, and why
    assert any(line.startswith(f"{good}: ") and "not rederived" not in line for line in lines), out  # still done
    assert "1 entries rederived; 2 unreadable" in out, out
    assert json.loads((corpus / good / "meta.json").read_text()).get("bug"), "the readable entry was not rederived"


# ----------------------------------------------------------------------------- 4: JSON nested too deep


def _campaign(cli, tmp_path, mode: str = "ok") -> Path:
    camp = tmp_path / "camp"
    code, out, err = cli("fuzz", *CAMPAIGN, "--campaign", str(camp), "--corpus", str(tmp_path / "corpus"), mode=mode)
    assert code == 0, (out, err)
    return camp


def _set_meta(camp: Path, key: str, value: str) -> None:
    con = sqlite3.connect(camp / "campaign.sqlite")
    try:
        con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))
        con.commit()
    finally:
        con.close()


def test_a_resume_snapshot_nested_200000_deep_is_ignored_with_one_note(cli, tmp_path):
    from shapefuzz.campaign.resume_state import SNAPSHOT_KEY

    camp = _campaign(cli, tmp_path)
    _set_meta(camp, SNAPSHOT_KEY, DEEP)
    code, out, err = cli("fuzz", *CAMPAIGN[:1], "2", *CAMPAIGN[2:], "--campaign", str(camp))
    assert code == 0, (code, out[-2000:], err[-2000:])
    notes = [line for line in (out + err).splitlines() if "resume snapshot" in line]
    assert len(notes) == 1 and "nested" in notes[0] and "replayed" in notes[0], out + err


def test_a_localization_record_nested_200000_deep_is_no_localization(cli, tmp_path):
    from shapefuzz.campaign.localizing import LOCALIZE_META

    camp = _campaign(cli, tmp_path, mode="words")
    con = sqlite3.connect(camp / "campaign.sqlite")
    try:
        sigs = [row[0] for row in con.execute("SELECT sig FROM buckets")]
    finally:
        con.close()
    assert sigs
    for sig in sigs:
        _set_meta(camp, LOCALIZE_META + sig, DEEP)
    code, out, err = cli("report", str(camp), "--json")
    assert code == 0, (code, out[-2000:], err[-2000:])
