"""An issue found on a variant lane (llvm-cpu-o3) whose plain lane fails the same way with the
shown reproducer gives the plain lane's compile command in its steps, and says so (issue #43,
audit B, 2c1205cadd: the steps kept `--iree-opt-level=O3` where plain rocm-gfx942 failed alike).
Where the plain lane passes, the variant's own command stays. Real IREE 3.13."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from shapefuzz.cli import cli
from shapefuzz.corpus.entry import make_finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.model import Signature, Stage, Status

DATA = Path(__file__).resolve().parents[1] / "data"
MESSAGE = "'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N"
PASSES = """func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %r = linalg.add ins(%a, %b : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


def _issue(toolchain, tmp_path: Path, mlir: str) -> str:
    sig = Signature("llvm-cpu-o3", Stage.COMPILE, Status.ERROR, MESSAGE)
    folder, _ = save_finding(tmp_path / "corpus", make_finding(sig, mlir, toolchain, backends=("llvm-cpu-o3",)))
    out = tmp_path / "issue.md"
    run = CliRunner().invoke(cli, ["export", str(folder), "--format", "issue", "-o", str(out)])
    assert run.exit_code == 0, run.output
    return out.read_text()


def _compile_step(text: str) -> str:
    return re.findall(r"```sh\n(.*?)\n```", text, re.DOTALL)[0]


@pytest.mark.iree
def test_a_plain_lane_failing_alike_gives_the_steps_its_command(toolchain, tmp_path):
    text = _issue(toolchain, tmp_path, (DATA / "conv1d_stride3.mlir").read_text())
    step = _compile_step(text)
    assert "--iree-opt-level=O3" not in step and "--iree-hal-target-device=local" in step, step
    assert "Found on llvm-cpu-o3 (" in text and "the plain llvm-cpu lane fails the same way with this reproducer" in text
    assert "rejects valid input for the `llvm-cpu` backend" in text
    assert "--iree-opt-level=O3" not in (tmp_path / "issue.files" / "run.sh").read_text()


@pytest.mark.iree
def test_a_variant_only_failure_keeps_the_variants_command(toolchain, tmp_path):
    """The plain lane compiles this module, so nothing is moved (the entry's own command stays)."""
    text = _issue(toolchain, tmp_path, PASSES)
    assert "--iree-opt-level=O3" in _compile_step(text)
    assert "Found on llvm-cpu-o3" not in text
