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
from shapefuzz.cli.corpus import add_file
from shapefuzz.model import Signature, Stage, Status

pytestmark = pytest.mark.iree

DATA = Path(__file__).resolve().parents[1] / "data"
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


# --- comparisons the oracle makes: top-k ties, scatter duplicates ------------------------------------------------


def _generated_entry(folder, toolchain, case, message, expected=None, state="fixed"):
    from shapefuzz.corpus import make_finding
    from shapefuzz.families import render_case
    from shapefuzz.judge.oracle import case_expectation

    e = case_expectation(case, 0)
    sig = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, message)
    path, _ = save_finding(folder, make_finding(sig, render_case(case), toolchain, case=case, inputs=e.inputs,
                                                expected=expected if expected is not None else e.expected,
                                                detail="result 1 differs"))
    update_meta(path, expected_state=state)
    return path, e


TIES = {"dim": 1, "dtype": "f32", "dynamic": [False, True], "form": "topk", "indices": "implicit", "k": 3,
        "largest": True, "shape": [2, 7], "transpose": False, "use": "both", "values": "ties"}


@pytest.fixture(scope="module")
def ties(tmp_path_factory, toolchain):
    """A top-k entry whose saved indices are a different right answer from IREE's (ties reordered),
    and one whose saved values are wrong."""
    from shapefuzz.case import Case
    from shapefuzz.export_checks import topk_ambiguous
    from shapefuzz.judge.oracle import case_expectation

    folder = tmp_path_factory.mktemp("ties")
    case = Case.make("topk", TIES)
    e = case_expectation(case, 0)
    assert topk_ambiguous(e.inputs[0], 1, 3, True)
    values, indices = e.expected
    # Every slice of this input selects three equal values or a tie at the boundary; reversing
    # the indices of each slice's equal values gives another right answer.
    other = indices.copy()
    for r in range(other.shape[0]):
        for v in np.unique(values[r]):
            at = np.flatnonzero(values[r] == v)
            other[r, at] = other[r, at[::-1]]
    right, _ = _generated_entry(folder, toolchain, case, "ties reordered", [values, other])
    wrong, _ = _generated_entry(folder, toolchain, case, "ties wrong values", [values + 1, indices])
    return {"right": right, "wrong": wrong, "indices": indices, "other": other}


def test_topk_ties_are_judged_by_selected_values(ties, tmp_path):
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    export(ties["right"], "run-module", tmp_path / "right")
    assert (tmp_path / "right" / "check.py").exists()
    ok = subprocess.run(["sh", str(tmp_path / "right" / "run.sh")], env=env, capture_output=True, text=True)
    assert ok.returncode == 0 and "[SUCCESS]" in ok.stdout, ok.stdout + ok.stderr[-500:]
    # IREE's own exact check of the same outputs against the saved (equally right) indices fails:
    # the false alarm the exported check avoids. The module and inputs are those run.sh used.
    outputs = [np.load(tmp_path / "right" / "outputs" / f"result{i}.npy") for i in range(2)]
    if not np.array_equal(outputs[1], ties["other"]):
        exact = subprocess.run(["iree-run-module", f"--module={tmp_path / 'right' / 'module.vmfb'}",
                                "--device=local-task", "--input=@inputs/arg0.npy",
                                "--expected_output=@expected/result0.npy",
                                f"--expected_output=2x3xi32={' '.join(map(str, ties['other'].ravel()))}"],
                               env=env, capture_output=True, text=True, cwd=tmp_path / "right")
        assert exact.returncode != 0 and "[FAILED]" in exact.stdout
    export(ties["wrong"], "run-module", tmp_path / "wrong", "--expect", "fixed")
    bad = subprocess.run(["sh", str(tmp_path / "wrong" / "run.sh")], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "[FAILED] result 0" in bad.stdout
    export(ties["right"], "pytest", tmp_path / "test_right.py")
    export(ties["wrong"], "pytest", tmp_path / "test_wrong.py", "--expect", "fixed")
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tmp_path)],
                         env=env, capture_output=True, text=True, cwd=tmp_path)
    assert "1 failed, 1 passed" in run.stdout, run.stdout[-2000:]
    assert "result 0: 6 of 6 elements differ" in run.stdout


@pytest.mark.parametrize("fmt", ["lit", "iree-test-suites"])
def test_formats_that_cannot_judge_ties_say_why(ties, tmp_path, fmt):
    run = subprocess.run([str(BIN / "shapefuzz"), "export", str(ties["right"]), "--format", fmt, "-o",
                          str(tmp_path / "out")], capture_output=True, text=True)
    assert run.returncode == 2 and run.stderr.count("\n") == 1, run.stderr
    assert f"{fmt} cannot represent entry" in run.stderr and "ties" in run.stderr
    assert not (tmp_path / "out").exists()


# --- iree-test-suites -------------------------------------------------------------------------------------------


def run_suite_test(test_dir: Path, config: dict, tmp: Path) -> str | None:
    """What iree-test-suites' runner does with a test folder (torch_ops `run_quality_test`):
    compile test.mlir with the config's flags, run with the JSON's inputs, compare every output with
    numpy.allclose(rtol, atol, equal_nan). None when it passes, else why."""
    import json

    io = json.loads((test_dir / "run_module_io.json").read_text())
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    vmfb = tmp / io["vmfb_name"]
    compiled = subprocess.run(["iree-compile", *config["iree_compile_flags"], str(test_dir / io["file_name"]),
                               "-o", str(vmfb)], env=env, capture_output=True, text=True)
    if compiled.returncode:
        return "compile: " + compiled.stderr.strip().splitlines()[0]
    outputs = [tmp / f"output_{i}.npy" for i in range(len(io["expected_output"]))]
    ran = subprocess.run(["iree-run-module", f"--module={vmfb}", f"--function={io['function_name']}",
                          *config["iree_run_module_flags"], *[f"--input=@{test_dir / a}" for a in io["flat_args"]],
                          *[f"--output=@{o}" for o in outputs]], env=env, capture_output=True, text=True)
    if ran.returncode:
        return "run: " + ran.stderr.strip()[-300:]
    for name, out in zip(io["expected_output"], outputs):
        if not np.allclose(np.load(out), np.load(test_dir / name), rtol=io["rtol"], atol=io["atol"],
                           equal_nan=io["equal_nan"]):
            return f"compare: {name} differs"
    return None


def _scatter_with_duplicates():
    from shapefuzz.families.generate import draw_case

    for seed in range(400):
        case = draw_case("scatter", seed)
        p = case.params
        # plain operands: a constant index form meets a known canonicalize bug of 3.13 (not what this tests)
        if (p.get("duplicates") and p.get("frontend", "linalg") == "linalg" and not p.get("operand")
                and np.prod(p["orig_shape"]) <= 256):
            return case
    pytest.skip("no scatter case with duplicate coordinates among the first 400 seeds")


def test_iree_test_suites_folder_runs_through_iree_run_module(corpus, tmp_path, toolchain):
    import json

    scatter = _scatter_with_duplicates()
    dup, _ = _generated_entry(tmp_path / "c", toolchain, scatter, "scatter with duplicates")
    for name, entry, passes in (("right", corpus["right"], True), ("wrong", corpus["wrong"], False),
                                ("dup", dup, True)):
        out = tmp_path / name
        export(entry, "iree-test-suites", out)
        tests = list((out / "shapefuzz").iterdir())
        assert len(tests) == 1
        files = sorted(p.name for p in tests[0].iterdir())
        assert "test.mlir" in files and "run_module_io.json" in files and "expected_result_0.npy" in files
        config = json.loads(next((out / "configs").iterdir()).read_text())
        qualified = f"shapefuzz/{tests[0].name}"
        problem = run_suite_test(tests[0], config, tmp_path)
        assert (problem is None) == passes, (name, problem)
        # The config names the failing test as an expected run failure, as the suite's configs do.
        assert (qualified in config["expected_run_failures"]) == (not passes)
    conv = tmp_path / "conv"
    export(corpus["conv"], "iree-test-suites", conv)
    config = json.loads(next((conv / "configs").iterdir()).read_text())
    test = next((conv / "shapefuzz").iterdir())
    assert config["expected_compile_failures"] == [f"shapefuzz/{test.name}"]
    assert run_suite_test(test, config, tmp_path).startswith("compile: ")


# --- issue ------------------------------------------------------------------------------------------------------


def _sections(text: str) -> list[str]:
    return re.findall(r"^### (.+)$", text, re.MULTILINE)


def _shell_blocks(text: str) -> list[str]:
    return re.findall(r"```sh\n(.*?)\n```", text, re.DOTALL)


def test_issue_for_a_compile_failure(corpus, tmp_path):
    import shutil

    conv = shutil.copytree(corpus["conv"], tmp_path / "c" / corpus["conv"].name)  # the shared entry stays as it is
    update_meta(conv, bisect={"first_failing": "3.11.0", "last_passing": "3.10.0", "first_fixed": None,
                              "versions": ["3.1.0", "3.13.0"], "note": "", "date": "2026-11-22"})
    out = tmp_path / "conv.md"
    export(conv, "issue", out)
    text = out.read_text()
    assert _sections(text) == ["What happened?", "Steps to reproduce your issue",
                               "What component(s) does this issue relate to?", "Version information",
                               "Additional context"]
    # (it breaks in dispatch creation: every target meets it, the text says so, not "for the llvm-cpu backend")
    assert "`iree-compile` rejects valid input for any target: it breaks in IREE dispatch creation, before codegen " \
           "(shown here for the `llvm-cpu` backend" in text
    assert "'linalg.generic' op inferred input/output operand #1" in text
    assert "IREE compiler version 3.13" in text  # iree-compile --version, as printed
    assert "\n\nCompiler\n" in text
    assert "worked in 3.10.0, fails from 3.11.0" in text
    assert "llvm-cpu: fails the same way (this issue)" in text
    assert (DATA / "conv1d_stride3.mlir").read_text().strip().splitlines()[-1] in text  # the IR inline
    # The commands run as written in the attached folder, and fail as described.
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    [compile_cmd] = _shell_blocks(text)
    ran = subprocess.run(["sh", "-c", compile_cmd], cwd=tmp_path / "conv.files", env=env, capture_output=True,
                         text=True)
    assert ran.returncode != 0 and "'linalg.generic' op inferred" in ran.stderr
    # An entry saved without the raw error (a campaign's) shows the error its backend gives today.
    bare = shutil.copytree(conv, tmp_path / "bare" / conv.name)
    update_meta(bare, detail="")
    export(bare, "issue", tmp_path / "again.md")
    assert "error: 'linalg.generic' op inferred input/output operand #1" in (tmp_path / "again.md").read_text()


def test_issue_for_a_compile_error_on_a_lane_that_only_compiles_builds_no_reference(toolchain, tmp_path, monkeypatch):
    """A compile failure on a lane that only compiles here (its entry keeps no arrays): the issue
    needs the reproducer alone, so neither the export nor its re-check makes inputs or the NumPy
    reference of the case (a 2048-cube matmul's here; a large attention's took seconds and GBs)."""
    from shapefuzz.case import Case
    from shapefuzz.corpus import load_entry, make_finding
    from shapefuzz.families import render_case
    from shapefuzz.families.base import Family

    case = Case.make("matmul", {"frontend": "linalg", "dtype": "f32", "out": "f32", "batch": [], "batch_dyn": [],
                                "m": 2048, "n": 2048, "k": 2048, "m_dyn": False, "n_dyn": False, "k_dyn": False,
                                "trans_a": False, "trans_b": False, "bcast": "none", "vec": "", "form": "named",
                                "a_zp": 0, "b_zp": 0, "alpha": 1.0, "beta": 1.0, "bias": "none", "big": False})
    sig = Signature("rocm-gfx942", Stage.COMPILE, Status.ERROR, "error: 'func.func' op failed to distribute")
    path, _ = save_finding(tmp_path / "corpus", make_finding(
        sig, render_case(case), toolchain, case=case, detail="m.mlir:3:5: error: 'func.func' op failed to distribute"))
    assert load_entry(path).inputs is None  # as a campaign saves a compile-only lane's failure

    def refuse(*args, **kwargs):
        raise AssertionError("the case's inputs or NumPy reference were built")

    monkeypatch.setattr(Family, "reference", refuse)
    monkeypatch.setattr(Family, "make_inputs", refuse)
    out = tmp_path / "rocm.md"
    export(path, "issue", out)
    text = out.read_text()
    assert "`iree-compile` rejects valid input for the `rocm-gfx942` backend" in text
    assert "'func.func' op failed to distribute" in text and "Inputs:" not in text
    assert "- rocm-gfx942: compiles (no device to run it here)" in text  # re-checked: compiled, not run
    files = tmp_path / "rocm.files"
    assert sorted(f.name for f in files.iterdir()) == ["reproducer.mlir", "run.sh"]
    assert "iree-compile reproducer.mlir" in (files / "run.sh").read_text()
    assert "--module=module.vmfb" not in (files / "run.sh").read_text()  # compiles only


def test_issue_for_wrong_values(corpus, tmp_path):
    out = tmp_path / "wrong.md"
    export(corpus["wrong"], "issue", out)
    text = out.read_text()
    assert "computes wrong values: its results differ from the expected results saved with the reproducer" in text
    assert "Expected results:" in text  # not a generated case: no NumPy reference of ours
    assert "Not bisected yet" in text
    assert "llvm-cpu: fails the same way (this issue)" in text  # against its saved (stand-in) reference
    compile_cmd, run_cmd = _shell_blocks(text)
    assert "--input=@inputs/arg0.npy" in run_cmd and "--expected_output=@expected/result0.npy" in run_cmd
    env = dict(os.environ, PATH=f"{BIN}:{os.environ['PATH']}")
    for cmd in (compile_cmd, run_cmd):
        ran = subprocess.run(["sh", "-c", cmd], cwd=tmp_path / "wrong.files", env=env, capture_output=True, text=True)
    assert ran.returncode != 0 and "[FAILED]" in ran.stdout  # the saved reference says a @ b + 1


def test_issue_quotes_the_campaigns_triage_verdict_and_its_evidence(corpus, tmp_path):
    import shutil

    wrong = shutil.copytree(corpus["wrong"], tmp_path / "t" / corpus["wrong"].name)
    update_meta(wrong, triage="compiler bug",
                triage_evidence="every backend disagrees, but form [pad_mode='insert'] matches it on llvm-cpu",
                notes="placed by hand in GenericVectorizationPass")
    export(wrong, "issue", tmp_path / "t.md")
    text = (tmp_path / "t.md").read_text()
    assert ("- Triage: compiler bug (every backend disagrees, but form [pad_mode='insert'] matches it on llvm-cpu)"
            in text)
    assert "Analysis: placed by hand in GenericVectorizationPass" in text  # an engineer's notes travel with it
