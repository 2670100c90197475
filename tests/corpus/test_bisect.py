"""Bisection over releases. The search logic with a stub installer and checker (no network);
the real thing (two releases downloaded into a cache) only with SHAPEFUZZ_TEST_BISECT=1."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.recheck.bisect import bisect_entry, select_versions, version_key
from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.errors import ToolchainError, UsageError
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult

VERSIONS = ["3.1.0", "3.2.0", "3.3.0", "3.4.0", "3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0", "3.10.0",
            "3.11.0", "3.12.0", "3.13.0"]
SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom")


@pytest.fixture
def entry(tmp_path):
    path, _ = save_finding(tmp_path, Finding(SIG, "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None, 0,
                                             None, None, "3.13.0", [], "error: boom"))
    return load_entry(path)


def fake(bad: set[str], unknown: set[str] = frozenset(), broken: set[str] = frozenset()):
    calls: list[str] = []

    def installer(version):
        calls.append(version)
        if version in broken:
            raise ToolchainError(f"cannot install IREE {version}: no wheel")
        return version

    def check(entry, version):
        outcome = (ReplayOutcome.NOT_RUNNABLE if version in unknown else
                   ReplayOutcome.STILL_FAILING if version in bad else ReplayOutcome.FIXED)
        return ReplayResult(entry.id, entry.path, outcome, "failing", SIG)

    return installer, check, calls


def test_finds_first_failing_and_first_fixed_with_few_installs(entry):
    bad = {"3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0", "3.10.0"}
    installer, check, calls = fake(bad)
    entry = load_entry(entry.path)
    # Recorded with 3.13.0 (fixed there in this story): found failing elsewhere, then both edges.
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    assert (result.first_failing, result.first_fixed) == ("3.5.0", "3.11.0")
    assert len(set(calls)) <= 12  # fewer than every release
    assert "first failing release: 3.5.0" in "\n".join(result.lines())


def test_still_failing_at_the_newest_release(entry):
    installer, check, calls = fake({v for v in VERSIONS if version_key(v) >= (3, 8)})
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    assert (result.first_failing, result.first_fixed) == ("3.8.0", None)
    assert len(calls) <= 5  # 3.13.0 first, then a binary search below it


def test_releases_that_cannot_tell_are_stepped_over(entry):
    installer, check, _ = fake({"3.6.0", "3.7.0", "3.8.0", "3.9.0", "3.10.0", "3.11.0", "3.12.0", "3.13.0"},
                               unknown={"3.7.0"}, broken={"3.6.0"})
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    assert result.first_failing in ("3.6.0", "3.8.0")
    installer, check, _ = fake(set(VERSIONS))
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    assert result.first_failing == "3.1.0" and "oldest release" in result.note
    installer, check, _ = fake(set())
    result = bisect_entry(entry, VERSIONS[-2:], check=check, installer=installer)
    assert result.first_failing is None and "no release" in result.note


def test_version_ranges():
    assert select_versions("3.11.0..3.13.0", VERSIONS) == ["3.11.0", "3.12.0", "3.13.0"]
    assert select_versions("..3.2.0", VERSIONS) == ["3.1.0", "3.2.0"]
    assert select_versions("3.13.0,3.2.0", VERSIONS) == ["3.2.0", "3.13.0"]
    with pytest.raises(UsageError):
        select_versions("4.0.0..5.0.0", VERSIONS)
    with pytest.raises(UsageError):
        select_versions("3.2.1", VERSIONS)


@pytest.mark.skipif(not os.environ.get("SHAPEFUZZ_TEST_BISECT"),
                    reason="downloads two IREE releases (~200 MB); set SHAPEFUZZ_TEST_BISECT=1")
def test_real_bisect_over_two_releases(tmp_path):
    shapefuzz = Path(sys.executable).parent / "shapefuzz"
    data = Path(__file__).resolve().parents[1] / "data" / "conv1d_stride3.mlir"
    added = subprocess.run([str(shapefuzz), "corpus", "add", str(data), "--backends", "llvm-cpu",
                            "--corpus", str(tmp_path)], capture_output=True, text=True)
    assert added.returncode == 0, added.stderr
    entry = next(p for p in tmp_path.iterdir() if p.name.startswith("llvm-cpu"))
    run = subprocess.run([str(shapefuzz), "bisect", str(entry), "--versions", "3.12.0..3.13.0"],
                         capture_output=True, text=True, timeout=3000)
    assert run.returncode == 0, run.stderr
    assert "first failing release:" in run.stdout and "3.13.0" in run.stdout


def test_result_names_the_last_release_that_worked(entry):
    installer, check, _ = fake({"3.5.0", "3.6.0", "3.7.0", "3.8.0", "3.9.0", "3.10.0"})
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    meta = result.to_meta("2026-11-22T00:00:00Z")
    assert (meta["last_passing"], meta["first_failing"], meta["first_fixed"]) == ("3.4.0", "3.5.0", "3.11.0")
    installer, check, _ = fake({"3.5.0", "3.6.0"}, broken={"3.4.0"})  # the release before cannot tell
    result = bisect_entry(entry, VERSIONS, check=check, installer=installer)
    assert result.first_failing == "3.5.0" and result.last_passing is None


@pytest.mark.iree
def test_the_command_judges_each_release_by_the_same_failure(tmp_path, monkeypatch, toolchain):
    """`shapefuzz bisect ENTRY` judges a release as a campaign's regression range does (stage,
    status, failing pass, with the generic-form retry), not by the message alone; real 3.13."""
    from click.testing import CliRunner

    import shapefuzz.recheck.bisect
    from shapefuzz.cli import cli
    from shapefuzz.cli.corpus import add_file

    _, saved = add_file(tmp_path, (Path(__file__).resolve().parents[1] / "data" / "conv1d_stride3.mlir").read_text(),
                        ["llvm-cpu"], toolchain)
    monkeypatch.setattr(shapefuzz.recheck.bisect, "available_versions", lambda: ["3.13.0"])
    run = CliRunner().invoke(cli, ["bisect", str(saved[0][0]), "--versions", "3.13.0"])
    assert run.exit_code == 0, run.output
    assert "the same failure (compile/error" in run.output and "first failing release: 3.13.0" in run.output
