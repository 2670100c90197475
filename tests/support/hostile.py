"""Shared by the tests (moved out of test_hostile.py, which other tests imported)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path
import numpy as np
import pytest
from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402


SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")


def run(tmp: Path, *args: str, fake: bool = True, env_extra: dict | None = None, timeout: float = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    argv = [SHAPEFUZZ]
    if fake:
        argv += ["--iree-bin", str(make_fake_iree(tmp / "bin"))]
    env = fake_env(tmp, "ok", **(env_extra or {}))
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd or tmp)


def one_line(result: subprocess.CompletedProcess, code: int, *needles: str) -> str:
    """The promise: exit `code`, one error line on stderr (after any progress lines: shrink and
    fuzz report as they go), no traceback; returns the line."""
    err = result.stderr.strip()
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    errors = [line for line in err.splitlines() if line.startswith("shapefuzz:")]
    assert len(errors) == 1 and err.splitlines()[-1] == errors[0], err
    err = errors[0]
    for needle in needles:
        assert needle in err, err
    return err


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under `folder` with its size and mtime: to show nothing outside changed."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            st = path.lstat()
            out[str(path)] = (st.st_size, st.st_mtime_ns)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


PLAIN_MLIR = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"


def _finding(message: str = "boom", detail: str = "error: boom", backend: str = "rocm-gfx942", **kw):
    from shapefuzz.corpus import Finding
    from shapefuzz.model import Signature, Stage, Status

    return Finding(signature=Signature(backend, Stage.COMPILE, Status.ERROR, message), mlir=PLAIN_MLIR,
                        backends=(backend,), case=None, seed=0, inputs=None, expected=None,
                        toolchain_version="3.13.0", compile_command=["iree-compile", "reproducer.mlir"],
                        detail=detail, **kw)


def hostile_entry(corpus: Path, message: str = "boom", **meta_changes) -> Path:
    from shapefuzz.corpus import save_finding

    path, _ = save_finding(corpus, _finding(message))
    if meta_changes:
        meta = json.loads((path / "meta.json").read_text())
        meta.update(meta_changes)
        (path / "meta.json").write_text(json.dumps(meta))
    return path


@pytest.fixture()
def small_disk(tmp_path):
    """A 4 MiB tmpfs (root only; the suite runs as root here). Elsewhere these probes skip: the
    in-process ENOSPC test below covers the same seam by monkeypatching."""
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True)
    if result.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root?)")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], capture_output=True)


def fill(mount: Path) -> Path:
    """Writes until the disk is full; returns the filler (delete it to make room again)."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            os.write(fd, b"\0" * 65536)
    except OSError:
        pass
    finally:
        os.close(fd)
    for i in range(10000):  # and the last few bytes and inodes
        try:
            (mount / f"f{i}").write_bytes(b"\0" * 512)
        except OSError:
            break
    return filler


def generated_case(tmp: Path, header: str | None = None) -> Path:
    """A generated topk case; `header` replaces its `// shapefuzz-case:` line."""
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import draw_case

    text = render_case(draw_case("topk", 1))
    if header is not None:
        text = header + "\n" + text.split("\n", 1)[1]
    path = tmp / f"case{abs(hash(header)) % 10**8}.mlir"
    path.write_text(text)
    return path


CAMPAIGN = ["--count", "2", "--ops", "topk", "--backends", "rocm-gfx942", "--no-shrink", "--jobs", "1"]


@pytest.fixture()
def cli(tmp_path, monkeypatch, capsys):
    """Runs a command in this process against the fake toolchain (no interpreter start, so a
    probe of input handling costs milliseconds): returns (exit code, its one error line), after
    checking the promises (no traceback, one line, never 1 or 70)."""
    from shapefuzz.cli import main
    from shapefuzz.schema import ENV_MAX_ARRAY_BYTES

    bin_dir = make_fake_iree(tmp_path / "bin")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_IREE_MODE", "ok")
    monkeypatch.setenv(ENV_MAX_ARRAY_BYTES, "1G")  # so the value an option writes is undone
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    monkeypatch.delenv("SHAPEFUZZ_IREE_BIN", raising=False)
    monkeypatch.chdir(tmp_path)

    def call(*args: str, env: dict | None = None, fake: bool = True) -> tuple[int, str]:
        for key, value in (env or {}).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setattr(sys, "argv", ["shapefuzz", *(["--iree-bin", str(bin_dir)] if fake else []), *args])
        code = 0
        try:
            main()
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 0
        out, err = capsys.readouterr()
        assert "Traceback" not in out + err, err
        errors = [line for line in err.splitlines() if line.startswith("shapefuzz:")]
        assert code in (0, 2, 3) and (code != 2 or len(errors) == 1), (code, err)
        return code, errors[0] if errors else ""
    return call


def expect_2(result: tuple[int, str], *needles: str) -> str:
    code, line = result
    assert code == 2, (code, line)
    for needle in needles:
        assert needle in line, line
    return line
