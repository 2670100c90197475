"""The type checker passes over src/ (mypy, configured in pyproject.toml's [tool.mypy]): a name an
annotation uses but nobody imports, or a None handed on where a value is needed, fails here rather
than in a campaign. Incremental: its cache (.mypy_cache, ignored by git) makes a re-run take seconds."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_mypy_finds_no_error_in_src():
    pytest.importorskip("mypy", reason="mypy is in the test extra: pip install -e '.[test]' (scripts/bootstrap.sh)")
    run = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(ROOT / ".mypy_cache")],
        cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert run.returncode == 0, f"mypy (exit {run.returncode}):\n{run.stdout}{run.stderr}"
