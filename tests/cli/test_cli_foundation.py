"""`shapefuzz backends` and `shapefuzz check`, run as a user would, including bad input."""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

DATA = Path(__file__).resolve().parents[1] / "data"


def shapefuzz(*args, env=None):
    return subprocess.run([sys.executable, "-m", "shapefuzz", *map(str, args)], capture_output=True, text=True, env=env)


def assert_one_line_error(result, *fragments):
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("shapefuzz: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.mark.iree
def test_backends_json_lists_every_backend():
    result = shapefuzz("backends", "--json")
    data = json.loads(result.stdout)
    assert data["toolchain"]["version"].startswith("3.13")
    names = {b["name"]: b for b in data["backends"]}
    assert names["llvm-cpu"]["executes"] and names["rocm-gfx942"]["compiles"] and not names["rocm-gfx942"]["executes"]
    assert names["llvm-cpu-data-tiling"]["affects"] == ["contraction"] and names["llvm-cpu-o3"]["affects"] == []
    assert data["off_for_release"] == []  # 3.13 parses every family and form


@pytest.mark.iree
def test_check_passing_file_exits_0_and_failing_exits_1(tmp_path):
    ok = shapefuzz("check", DATA / "matmul.mlir", "--backends", "llvm-cpu", "--json")
    assert ok.returncode == 0, ok.stderr
    assert json.loads(ok.stdout)["verdict"] == "pass"
    bad = shapefuzz("check", DATA / "conv1d_stride3.mlir", "--backends", "llvm-cpu", "--json")
    assert bad.returncode == 1
    data = json.loads(bad.stdout)
    assert data["verdict"] == "fail"
    entry = data["backends"]["llvm-cpu"]
    assert (entry["stage"], entry["status"]) == ("compile", "error") and entry["signature"].startswith("llvm-cpu/compile/error: ")


@pytest.mark.iree
def test_check_with_given_inputs(tmp_path):
    a = np.arange(32, dtype=np.float32).reshape(4, 8) / 4
    b = np.ones((8, 3), dtype=np.float32)
    np.savez(tmp_path / "in.npz", a, b)
    result = shapefuzz("check", DATA / "matmul.mlir", "--backends", "cpu", "--inputs", tmp_path / "in.npz")
    assert result.returncode == 0 and "verdict: pass" in result.stdout


def test_missing_file():
    assert_one_line_error(shapefuzz("check", "no/such.mlir"), "no such file")


def test_binary_and_empty_files(tmp_path):
    (tmp_path / "b.mlir").write_bytes(b"\x7fELF\0\0\x01")
    assert_one_line_error(shapefuzz("check", tmp_path / "b.mlir"), "binary")
    (tmp_path / "e.mlir").write_text("  \n")
    assert_one_line_error(shapefuzz("check", tmp_path / "e.mlir"), "empty")


@pytest.mark.iree
def test_not_mlir_and_not_verifying(tmp_path):
    (tmp_path / "t.mlir").write_text("hello, this is not MLIR\n")
    assert_one_line_error(shapefuzz("check", tmp_path / "t.mlir", "--backends", "llvm-cpu"), "does not verify")
    text = (DATA / "matmul.mlir").read_text().replace("-> tensor<4x3xf32> {", "-> tensor<4x5xf32> {")
    (tmp_path / "v.mlir").write_text(text)
    assert_one_line_error(shapefuzz("check", tmp_path / "v.mlir", "--backends", "llvm-cpu"), "does not verify")


def test_unknown_backend_suggests():
    assert_one_line_error(shapefuzz("check", DATA / "matmul.mlir", "--backends", "llvm-cpuu"), "did you mean 'llvm-cpu'")


def test_iree_bin_without_tools(tmp_path):
    assert_one_line_error(shapefuzz("--iree-bin", tmp_path, "backends"), "no executable iree-compile")


def test_one_duration_for_fuzz_and_shrink(tmp_path):
    # 1h30m is a valid --time for both; the file check comes after the option is accepted.
    assert_one_line_error(shapefuzz("shrink", tmp_path / "none.mlir", "--time", "1h30m"), "no such file")
    for command in (["shrink", tmp_path / "none.mlir"], ["fuzz", "--campaign", tmp_path / "camp"]):
        assert_one_line_error(shapefuzz(*command, "--time", "soon"), "--time 'soon': not a duration")
    assert not (tmp_path / "camp").exists()


def test_iree_bin_before_or_after_the_subcommand(tmp_path):
    for args in (["--iree-bin", tmp_path / "missing", "backends"], ["backends", "--iree-bin", tmp_path / "missing"],
                 ["check", DATA / "matmul.mlir", "--iree-bin", tmp_path / "missing"]):
        assert_one_line_error(shapefuzz(*args), "--iree-bin", "no such folder")


@pytest.mark.iree
def test_iree_bin_after_the_subcommand_is_used(toolchain, tmp_path):
    folder = tmp_path / "bin"
    folder.mkdir()
    for name, path in (("iree-compile", toolchain.compile_bin), ("iree-opt", toolchain.opt_bin),
                       ("iree-run-module", toolchain.run_bin)):
        (folder / name).symlink_to(path)
    result = shapefuzz("backends", "--json", "--iree-bin", folder)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["toolchain"]["source"] == str(folder)
    # After the subcommand wins over before it, as the nearer option.
    result = shapefuzz("--iree-bin", tmp_path / "missing", "backends", "--json", "--iree-bin", folder)
    assert result.returncode == 0 and json.loads(result.stdout)["toolchain"]["source"] == str(folder)
