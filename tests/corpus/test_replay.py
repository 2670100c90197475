"""`shapefuzz replay` on a tiny corpus built in a tmp dir, with the real compiler: each outcome
once (still failing, fixed, changed, regressed, not runnable, unreadable), exit codes, and that
replay writes nothing unless asked."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from shapefuzz.cli import cli
from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status

pytestmark = pytest.mark.iree

DATA = Path(__file__).resolve().parents[1] / "data"
CONV = (DATA / "conv1d_stride3.mlir").read_text()
MATMUL = (DATA / "matmul.mlir").read_text()
CONV_MESSAGE = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"


def _finding(sig: Signature, mlir: str, inputs=None, expected=None) -> Finding:
    return Finding(signature=sig, mlir=mlir, backends=(sig.backend,), case=None, seed=0, inputs=inputs,
                   expected=expected, toolchain_version="3.13.0", compile_command=["iree-compile", "reproducer.mlir"],
                   detail="")


def _build(corpus: Path) -> dict[str, str]:
    a = (np.arange(32, dtype=np.float32).reshape(4, 8) % 5) / 4
    b = (np.arange(24, dtype=np.float32).reshape(8, 3) % 3) / 4
    names = {}

    def add(key, sig, mlir, **kw):
        path, _ = save_finding(corpus, _finding(sig, mlir, **kw))
        names[key] = path.name
        return path

    add("still", Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, CONV_MESSAGE), CONV)
    add("changed", Signature("llvm-cpu", Stage.COMPILE, Status.CRASH, "SIGSEGV in mlir::foo"), CONV)
    add("fixed", Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values"), MATMUL,
        inputs=[a, b], expected=[a @ b])
    regressed = add("regressed", Signature("vmvx", Stage.COMPILE, Status.ERROR, CONV_MESSAGE), CONV)
    update_meta(regressed, expected_state="fixed")
    add("nodevice", Signature("cuda-sm80", Stage.RUN, Status.CRASH, "SIGSEGV"), MATMUL)
    broken = add("badjson", Signature("vmvx", Stage.RUN, Status.ERROR, "x"), MATMUL)
    (broken / "meta.json").write_text("{ nope")
    add("noparse", Signature("vmvx", Stage.COMPILE, Status.ERROR, "y"), MATMUL.replace("linalg.matmul", "linalg.matmool"))
    return names


def _digest(folder: Path) -> str:
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and p.name != ".lock"):
        h.update(str(path.relative_to(folder)).encode() + path.read_bytes())
    return h.hexdigest()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    folder = tmp_path_factory.mktemp("corpus")
    return folder, _build(folder)


def test_replay_table_and_exit_status(corpus):
    folder, names = corpus
    before = _digest(folder)
    run = CliRunner().invoke(cli, ["replay", str(folder), "--jobs", "2", "--no-confirm", "--json"])
    report = json.loads(run.output)
    outcomes = {e["id"]: e for e in report["entries"]}
    assert outcomes[names["still"]]["outcome"] == "still failing"
    assert outcomes[names["changed"]]["outcome"] == "changed"
    assert outcomes[names["changed"]]["now"] == f"llvm-cpu/compile/error: {CONV_MESSAGE}"
    assert outcomes[names["fixed"]]["outcome"] == "fixed"
    assert outcomes[names["regressed"]]["outcome"] == "still failing" and outcomes[names["regressed"]]["regressed"]
    assert outcomes[names["nodevice"]]["outcome"] == "not runnable"
    assert outcomes[names["badjson"]]["outcome"] == "unreadable"
    assert "not valid JSON" in outcomes[names["badjson"]]["detail"]
    assert outcomes[names["noparse"]]["outcome"] == "unreadable"
    assert "does not verify" in outcomes[names["noparse"]]["detail"]
    assert report["toolchain"]["version"].startswith("3.")
    assert report["summary"] == {"still failing": 2, "fixed": 1, "changed": 1, "not runnable": 1,
                                 "unreadable": 2, "regressed": 1}
    assert run.exit_code == 1 == report["exit_code"]  # a "fixed" entry fails again
    assert _digest(folder) == before  # replay never rewrites the corpus unless asked


def test_replay_text_table_and_filters(corpus):
    folder, names = corpus
    run = CliRunner().invoke(cli, ["replay", str(folder), "--backends", "llvm-cpu", "--no-confirm"])
    lines = run.output.splitlines()
    assert lines[0].startswith("toolchain: ")
    row = next(line for line in lines if line.startswith(names["fixed"]))
    assert row.split()[1:] == ["failing", "fixed", "(differs", "from", "recorded", "state)"]
    assert "backend not selected" in run.output  # vmvx entries with --backends llvm-cpu
    assert f"now: llvm-cpu/compile/error: {CONV_MESSAGE}" in run.output
    assert run.exit_code == 3  # nothing regressed among the selected, but two entries are unreadable


def test_replay_update_records_state(tmp_path):
    a = np.ones((4, 8), np.float32)
    b = np.ones((8, 3), np.float32)
    still, _ = save_finding(tmp_path, _finding(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, CONV_MESSAGE), CONV))
    fixed, _ = save_finding(tmp_path, _finding(Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values"),
                                               MATMUL, inputs=[a, b], expected=[a @ b]))
    strict = CliRunner().invoke(cli, ["replay", str(tmp_path), "--no-confirm", "--strict"])
    assert strict.exit_code == 1  # the "failing" matmul entry now passes: differs from its record
    run = CliRunner().invoke(cli, ["replay", str(tmp_path), "--no-confirm", "--update"])
    assert run.exit_code == 0, run.output
    meta = load_entry(fixed).meta
    assert meta["expected_state"] == "fixed" and meta["fixed_in"].startswith("3.")
    assert meta["last_replay"]["outcome"] == "fixed"
    assert load_entry(still).meta["last_replay"]["outcome"] == "still failing"
    again = CliRunner().invoke(cli, ["replay", str(tmp_path), "--no-confirm", "--strict"])
    assert again.exit_code == 0, again.output  # now everything is as recorded


def test_replay_of_one_entry_folder_and_user_errors(corpus, tmp_path):
    folder, names = corpus
    run = CliRunner().invoke(cli, ["replay", str(folder / names["still"]), "--no-confirm"])
    assert run.exit_code == 0 and "still failing" in run.output and names["changed"] not in run.output
    # `shapefuzz replay .` from inside the entry, as its repro.sh says
    shapefuzz = Path(sys.executable).parent / "shapefuzz"
    here = subprocess.run([str(shapefuzz), "replay", ".", "--no-confirm"], cwd=folder / names["still"],
                          capture_output=True, text=True)
    assert here.returncode == 0 and "1 still failing" in here.stdout and " 0 unreadable" in here.stdout, here.stdout
    shapefuzz = Path(sys.executable).parent / "shapefuzz"
    missing = subprocess.run([str(shapefuzz), "replay", str(tmp_path / "nope")], capture_output=True, text=True)
    assert missing.returncode == 2
    assert missing.stderr.strip().count("\n") == 0 and "no such corpus folder" in missing.stderr
