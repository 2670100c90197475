"""A toolchain-cache folder is believed only when its name is a release number and its own
iree-compile says it is that release (issue #47): `evil/` holding `.complete`, or `3.5.0/` holding
another release, is skipped with one line saying why, never taken into a regression range or
used by `--iree-version`. The compiler's answer is kept in the folder, keyed on the binary's stat,
so it is asked once. The iree-compile here is a fake that prints a version and counts its calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.iree import releases
from shapefuzz.errors import ToolchainError
from shapefuzz.recheck.regression import local_releases

SHAPEFUZZ = [sys.executable, "-m", "shapefuzz"]


@pytest.fixture()
def cache(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("SHAPEFUZZ_IREE_BIN", raising=False)
    monkeypatch.setattr(releases, "_noted", set(), raising=False)  # each test hears its notes
    root = tmp_path / "cache" / "shapefuzz" / "toolchains"
    root.mkdir(parents=True)
    return root


def cached_release(root: Path, name: str, says: str | None) -> Path:
    """A folder as `install` leaves one (`.complete`, the packages' `iree/` tree), whose fake
    iree-compile prints `IREE compiler version <says>` (nothing when None) and counts its calls."""
    folder = root / name
    libs = folder / "iree" / "compiler" / "_mlir_libs"
    libs.mkdir(parents=True)
    (folder / ".complete").write_text(name + "\n")
    line = f'echo "  IREE compiler version {says} @ 0123abcd"' if says else "echo 'no version here'"
    binary = libs / "iree-compile"
    binary.write_text(f"#!/bin/sh\necho x >> '{folder / 'calls'}'\necho 'IREE (https://iree.dev):'\n{line}\n")
    binary.chmod(0o755)
    return folder


def calls(folder: Path) -> int:
    path = folder / "calls"
    return len(path.read_text().splitlines()) if path.exists() else 0


def test_a_folder_not_named_as_a_release_is_skipped_with_a_note(cache):
    (cache / "evil").mkdir()
    (cache / "evil" / ".complete").write_text("evil\n")
    cached_release(cache, "evil2", "3.13.0rc20261016")  # even one whose compiler is a real-looking release
    cached_release(cache, "3.13.0\nfake", "3.13.0rc20261016")  # a name that would break the line
    said: list[str] = []
    assert releases.cached_versions(said.append) == []
    assert "evil" not in local_releases(say=said.append) and "evil2" not in local_releases(say=said.append)
    assert len(said) == 3 and all("\n" not in line for line in said), said  # once each, per process
    assert any(f"{cache / 'evil'} skipped: its name is not a release number" in line for line in said), said


def test_a_folder_holding_another_release_is_skipped_and_never_used(cache):
    folder = cached_release(cache, "3.5.0", "3.4.0rc20250101")
    said: list[str] = []
    assert releases.cached_versions(said.append) == []
    assert said == [f"toolchain cache: {folder} skipped: its iree-compile says it is IREE 3.4.0rc20250101, not 3.5.0"]
    with pytest.raises(ToolchainError, match=r"IREE 3\.5\.0: .* cannot be believed .*says it is IREE 3\.4\.0"):
        releases.install("3.5.0")  # neither used nor replaced (no download): the user's folder stays
    assert (folder / ".complete").exists() and (folder / "iree").is_dir()


def test_a_compiler_that_says_no_version_is_not_believed(cache):
    cached_release(cache, "3.6.0", None)
    said: list[str] = []
    assert releases.cached_versions(said.append) == []
    assert "does not say which release it is" in said[0]


def test_a_true_release_is_believed_and_asked_once_per_binary(cache):
    folder = cached_release(cache, "3.5.0", "3.5.0rc20250606")
    assert releases.cached_versions() == ["3.5.0"]
    assert calls(folder) == 1
    kept = json.loads((folder / ".verified").read_text())
    assert kept["says"] == "3.5.0rc20250606" and kept["key"]["binary"].endswith("_mlir_libs/iree-compile")
    assert [p.name for p in folder.iterdir() if p.name.startswith(".verified")] == [".verified"]  # no temporary left
    assert releases.cached_versions() == ["3.5.0"] and local_releases().count("3.5.0") == 1
    assert calls(folder) == 1  # the kept answer, not the compiler again
    toolchain = releases.install("3.5.0")  # the cached copy, no network
    assert toolchain.compile_bin == (folder / "iree" / "compiler" / "_mlir_libs" / "iree-compile").resolve()
    assert calls(folder) == 1

    binary = folder / "iree" / "compiler" / "_mlir_libs" / "iree-compile"  # replaced by another release
    binary.write_text(binary.read_text().replace("3.5.0rc20250606", "3.7.0rc20250808") + "# longer\n")
    said: list[str] = []
    assert releases.cached_versions(said.append) == []
    assert calls(folder) == 2 and "says it is IREE 3.7.0rc20250808" in said[0]


def test_a_forged_or_garbled_answer_in_the_folder_is_not_believed(cache):
    folder = cached_release(cache, "3.5.0", "3.4.0rc20250101")
    (folder / ".verified").write_text(json.dumps({"key": {"binary": "elsewhere"}, "says": "3.5.0rc1"}))
    assert releases.cached_versions(lambda _: None) == []  # another binary's answer: asked again
    assert calls(folder) == 1 and "3.4.0" in json.loads((folder / ".verified").read_text())["says"]
    for garbled in ("{not json", "[]", json.dumps({"key": None, "says": 35})):
        (folder / ".verified").write_text(garbled)
        assert releases.cached_versions(lambda _: None) == []
    assert calls(folder) == 4


def test_a_cache_that_cannot_be_written_is_still_judged(cache, monkeypatch):
    folder = cached_release(cache, "3.5.0", "3.5.0rc20250606")

    def full(path, data, mode=0o644):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(releases, "atomic_write", full)
    assert releases.cached_versions() == ["3.5.0"] and releases.cached_versions() == ["3.5.0"]
    assert not (folder / ".verified").exists() and calls(folder) == 2  # only the asking is repeated


def _shapefuzz(*args: str, cache_home: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SHAPEFUZZ_IREE_BIN"}
    env["XDG_CACHE_HOME"] = str(cache_home)
    return subprocess.run([*SHAPEFUZZ, *args], capture_output=True, text=True, env=env, timeout=300)


def test_the_cli_skips_them_with_a_note_and_exits_2(cache, tmp_path):
    """`corpus rederive --bisect` once took `evil` and the mislabelled 3.5.0 as the releases to
    bisect over (exit 0); now they are notes, the pinned release alone is too few: exit 2."""
    (cache / "evil").mkdir()
    (cache / "evil" / ".complete").write_text("evil\n")
    cached_release(cache, "3.5.0", "3.4.0rc20250101")
    pinned = releases.installed_version()
    if pinned in ("evil", "3.5.0"):
        pytest.skip("the pinned wheels are 3.5.0")
    ranged = _shapefuzz("corpus", "rederive", "--bisect", "--corpus", str(tmp_path / "corpus"),
                        cache_home=cache.parents[1])
    assert ranged.returncode == 2, ranged.stderr
    lines = ranged.stderr.strip().splitlines()
    assert "Traceback" not in ranged.stderr
    assert lines[-1].startswith("shapefuzz: error: no other release in the toolchain cache"), lines
    assert any("evil skipped: its name is not a release number" in line for line in lines), lines
    assert any("3.5.0 skipped: its iree-compile says it is IREE 3.4.0" in line for line in lines), lines
    used = _shapefuzz("--iree-version", "3.5.0", "backends", cache_home=cache.parents[1])
    assert used.returncode == 2 and "Traceback" not in used.stderr, used.stderr
    assert used.stderr.strip().splitlines()[-1].startswith("shapefuzz: error: IREE 3.5.0: the toolchain cache's")
