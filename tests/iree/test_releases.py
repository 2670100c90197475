"""`--iree-version X.Y.Z`: a released toolchain from the cache `bisect` uses, without the network
once it is there; bad releases are one line and exit 2."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shapefuzz.iree.releases import cache_root, cached_versions, installed_version, version_key

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")
DATA = Path(__file__).resolve().parents[1] / "data"
# pip and any URL opener fail at once: a command that still works did not need the network.
OFFLINE = {"PIP_NO_INDEX": "1", "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_FIND_LINKS": "",
           "http_proxy": "http://127.0.0.1:9", "https_proxy": "http://127.0.0.1:9",
           "HTTP_PROXY": "http://127.0.0.1:9", "HTTPS_PROXY": "http://127.0.0.1:9"}


def shapefuzz(*args, env: dict | None = None, cwd=None) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items() if k != "SHAPEFUZZ_IREE_BIN"}
    full.update(env or {})
    return subprocess.run([SHAPEFUZZ, *map(str, args)], capture_output=True, text=True, env=full, cwd=cwd,
                          timeout=600)


def _one_line_error(result: subprocess.CompletedProcess, fragment: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert lines and lines[-1].startswith("shapefuzz: error: ") and fragment in lines[-1], result.stderr
    assert "Traceback" not in result.stderr


def _prepare_cache(cache_home: Path, version: str) -> Path:
    """A cache entry for the pinned release made from the installed wheels, as `install` leaves
    one (the packages' `iree/` tree plus `.complete`), without downloading anything."""
    spec = importlib.util.find_spec("iree.compiler")
    site = Path(list(spec.submodule_search_locations)[0]).parents[1]
    folder = cache_home / "shapefuzz" / "toolchains" / version
    folder.mkdir(parents=True)
    (folder / "iree").symlink_to(site / "iree", target_is_directory=True)
    (folder / ".complete").write_text(version + "\n")
    return folder


@pytest.mark.iree
def test_cached_release_runs_without_the_network(tmp_path):
    version = installed_version()
    if version is None:
        pytest.skip("the pinned compiler and runtime wheels are not one matched release")
    folder = _prepare_cache(tmp_path / "cache", version)
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), **OFFLINE}
    listed = shapefuzz("backends", "--json", "--iree-version", version, env=env)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["toolchain"]["source"] == str(folder / "bin")  # the cache, not the environment's wheels
    assert version_key(data["toolchain"]["version"])[:2] == version_key(version)[:2]
    checked = shapefuzz("--iree-version", version, "check", DATA / "matmul.mlir", "--backends", "llvm-cpu",
                        env=env)
    assert checked.returncode == 0 and "verdict: pass" in checked.stdout, checked.stderr


@pytest.mark.iree
def test_other_cached_release_runs_without_the_network(tmp_path):
    """An older release `bisect` (or an earlier --iree-version) installed into the user's cache."""
    others = [v for v in cached_versions() if v != installed_version()]
    if not others:
        pytest.skip(f"no release other than the pinned one in {cache_root()}; "
                    "`shapefuzz backends --iree-version 3.11.0` installs one (about 100 MB)")
    version = others[-1]
    result = shapefuzz("check", DATA / "matmul.mlir", "--backends", "llvm-cpu", "--json", "--iree-version", version,
                       env=OFFLINE)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["verdict"] == "pass"
    listed = json.loads(shapefuzz("backends", "--json", "--iree-version", version, env=OFFLINE).stdout)
    assert listed["toolchain"]["version"].startswith(version.rsplit(".", 1)[0])


def test_bad_release_numbers_are_one_line(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), **OFFLINE}
    _one_line_error(shapefuzz("backends", "--iree-version", "3.11", env=env), "give a release number")
    _one_line_error(shapefuzz("--iree-version", "3.13.0", "--iree-bin", tmp_path, "backends", env=env),
                    "give one of them")
    # Offline and not cached: the install fails, in one line.
    _one_line_error(shapefuzz("backends", "--iree-version", "3.99.0", env=env), "3.99.0")
    assert not any((tmp_path / "cache" / "shapefuzz" / "toolchains").glob("3.99.0*"))


def test_unknown_release_and_release_without_runtime(tmp_path):
    probe = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "iree-base-runtime"],
                           capture_output=True, text=True, timeout=120)
    if probe.returncode != 0:
        pytest.skip("the package index cannot be reached from here")
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    _one_line_error(shapefuzz("backends", "--iree-version", "3.99.0", env=env), "is not a release")
    # 3.7.1 exists for the compiler only (checked against the index, not assumed).
    compilers = subprocess.run([sys.executable, "-m", "pip", "index", "versions", "iree-base-compiler"],
                               capture_output=True, text=True, timeout=120).stdout
    if "3.7.1" in compilers and "3.7.1" not in probe.stdout:
        _one_line_error(shapefuzz("backends", "--iree-version", "3.7.1", env=env), "no iree-base-runtime wheel")
