"""A torch-dialect module's argument types are read as torch types (`!torch.vtensor<[4,6],si8>`
once matched `tensor<...>` inside `vtensor<`: rank 0, element "[4,6],si8"), so `shapefuzz check`
makes inputs for a user's torch module and takes its `--inputs`."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from shapefuzz.iree.mlirinfo import TensorType, function_info, parse_tensor_type

TORCH_ADD = """func.func @main(%arg0: !torch.vtensor<[4],f32>) -> !torch.vtensor<[4],f32> {
  %int1 = torch.constant.int 1
  %0 = torch.aten.add.Tensor %arg0, %arg0, %int1 : !torch.vtensor<[4],f32>, !torch.vtensor<[4],f32>, !torch.int -> !torch.vtensor<[4],f32>
  return %0 : !torch.vtensor<[4],f32>
}
"""


def test_torch_argument_types_are_parsed_as_torch_types():
    assert parse_tensor_type(" !torch.vtensor<[4,?],si8>") == TensorType((4, None), "si8")
    assert parse_tensor_type(" !torch.vtensor<[],f32>") == TensorType((), "f32")
    assert parse_tensor_type(" tensor<2x?xf16>") == TensorType((2, None), "f16")
    info = function_info("func.func @main(%a: !torch.vtensor<[4,6],ui8>, %b: tensor<3xi8>) -> tensor<3xi8> {")
    assert info.args == (TensorType((4, 6), "ui8"), TensorType((3,), "i8"))


@pytest.mark.iree
def test_check_runs_a_users_torch_module(tmp_path, toolchain):
    path = tmp_path / "add.mlir"
    path.write_text(TORCH_ADD)
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "llvm-cpu"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    np.savez(tmp_path / "x.npz", np.arange(4, dtype=np.float32))
    out = subprocess.run([sys.executable, "-m", "shapefuzz", "check", str(path), "--backends", "llvm-cpu",
                          "--inputs", str(tmp_path / "x.npz")], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
