"""`shapefuzz export`: each format runs as written, with the real compiler. The lit files are run
by a minimal lit stand-in (RUN lines through bash with pipefail, `not`/`not --crash` and a
substring FileCheck) since lit and FileCheck are not installed here."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shapefuzz.cli import cli
from shapefuzz.corpus import Finding, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.replay import add_file

pytestmark = pytest.mark.iree

DATA = Path(__file__).parent / "data"
BIN = Path(sys.executable).parent

NOT = """#!/usr/bin/env python3
import subprocess, sys
args = sys.argv[1:]
crash = args[:1] == ["--crash"]
rc = subprocess.run(args[1:] if crash else args).returncode
sys.exit(0 if (rc < 0 if crash else rc != 0) else 1)
"""
FILECHECK = """#!/usr/bin/env python3
import re, sys
checks = [m.group(1).strip() for m in re.finditer(r"//\\s*CHECK:(.*)", open(sys.argv[1]).read())]
text, at = sys.stdin.read(), 0
for check in checks:
    found = text.find(check, at)
    if found < 0:
        sys.exit(f"CHECK not found: {check}")
    at = found + len(check)
"""


@pytest.fixture(scope="module")
def tools(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tools")
    for name, body in (("not", NOT), ("FileCheck", FILECHECK)):
        (folder / name).write_text(body)
        (folder / name).chmod(0o755)
    return folder


def run_lit(path: Path, tools: Path, tmp: Path) -> int:
    """Runs every RUN line of `path` like lit does (bash, pipefail); the status of the first failure."""
    env = dict(os.environ, PATH=f"{tools}:{BIN}:{os.environ['PATH']}")
    for line in path.read_text().splitlines():
        match = re.match(r"//\s*RUN:\s*(.*)$", line)
        if not match:
            continue
        command = match.group(1).replace("%s", str(path)).replace("%t", str(tmp / "t"))
        rc = subprocess.run(["bash", "-o", "pipefail", "-c", command], env=env, capture_output=True).returncode
        if rc:
            return rc
    return 0


@pytest.fixture(scope="module")
def corpus(tmp_path_factory, toolchain):
    folder = tmp_path_factory.mktemp("corpus")
    _, saved = add_file(folder, (DATA / "conv1d_stride3.mlir").read_text(), ["llvm-cpu"], toolchain)
    conv = saved[0][0]
    a = (np.arange(32, dtype=np.float32).reshape(4, 8) % 5) / 4
    b = (np.arange(24, dtype=np.float32).reshape(8, 3) % 3) / 4
    matmul = (DATA / "matmul.mlir").read_text()

    def entry(message, expected):
        return save_finding(folder, Finding(
            Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, message), matmul, ("llvm-cpu",), None, 0,
            [a, b], [expected], "3.13.0", [], "result 0 differs"))[0]

    right = entry("fixed one", a @ b)
    update_meta(right, expected_state="fixed")
    wrong = entry("wrong values", a @ b + 1)  # stands in for a backend that computes wrong numbers
    return {"conv": conv, "right": right, "wrong": wrong}


def export(entry: Path, fmt: str, out: Path, *extra: str) -> None:
    run = CliRunner().invoke(cli, ["export", str(entry), "--format", fmt, "-o", str(out), *extra])
    assert run.exit_code == 0, run.output


def test_lit_compile_failure_asserts_the_error(corpus, tools, tmp_path):
    out = tmp_path / "conv.mlir"
    export(corpus["conv"], "lit", out)
    text = out.read_text()
    assert "// RUN: not iree-compile %s" in text
    assert "// CHECK: error: 'linalg.generic' op inferred input/output operand #1" in text
    assert run_lit(out, tools, tmp_path) == 0  # passes while the bug is there
    export(corpus["conv"], "lit", out, "--expect", "fixed")
    assert run_lit(out, tools, tmp_path) != 0  # the "once fixed" test fails today


def test_lit_numbers(corpus, tools, tmp_path):
    export(corpus["right"], "lit", tmp_path / "right.mlir")  # marked fixed: positive RUN lines
    assert "--expected_output=" in (tmp_path / "right.mlir").read_text()
    assert run_lit(tmp_path / "right.mlir", tools, tmp_path) == 0
    export(corpus["wrong"], "lit", tmp_path / "wrong.mlir")  # failing: `not iree-run-module` + [FAILED]
    assert "// CHECK: [FAILED]" in (tmp_path / "wrong.mlir").read_text()
    assert run_lit(tmp_path / "wrong.mlir", tools, tmp_path) == 0


def test_run_module_folder_runs_as_written(corpus, tmp_path):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    export(corpus["right"], "run-module", tmp_path / "right")
    names = sorted(str(p.relative_to(tmp_path / "right")) for p in (tmp_path / "right").rglob("*.*"))
    assert names == ["expected/result0.npy", "inputs/arg0.npy", "inputs/arg1.npy", "reproducer.mlir", "run.sh"]
    ok = subprocess.run(["sh", str(tmp_path / "right" / "run.sh")], env=env, capture_output=True, text=True)
    assert ok.returncode == 0 and "[SUCCESS]" in ok.stdout, ok.stderr[-500:]
    export(corpus["wrong"], "run-module", tmp_path / "wrong")
    bad = subprocess.run(["sh", str(tmp_path / "wrong" / "run.sh")], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "[FAILED]" in bad.stdout
    export(corpus["conv"], "run-module", tmp_path / "conv")
    crash = subprocess.run(["sh", str(tmp_path / "conv" / "run.sh")], env=env, capture_output=True, text=True)
    assert crash.returncode != 0 and "'linalg.generic' op inferred" in crash.stderr


def test_pytest_files_run(corpus, tmp_path):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    export(corpus["conv"], "pytest", tmp_path / "test_conv.py")
    export(corpus["right"], "pytest", tmp_path / "test_right.py")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rxX", str(tmp_path)],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-2000:]
    assert "1 passed, 1 xfailed" in run.stdout


def test_export_errors_are_one_line(corpus, tmp_path):
    missing = subprocess.run([str(BIN / "shapefuzz"), "export", "no-such-entry", "--corpus", str(tmp_path)],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "no corpus entry" in missing.stderr
