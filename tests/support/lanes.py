"""Shared by the tests (moved out of test_lanes.py, which other tests imported)."""

from __future__ import annotations

from pathlib import Path
import numpy as np
import pytest
from shapefuzz.iree.backends import ALIASES, BACKENDS, DEFAULT_BACKENDS, VARIANTS, executing_backends
from shapefuzz.iree.mlirinfo import element_types, module_traits
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import Expectation, check_module
from shapefuzz.iree.toolchain import find_toolchain
from support.fakes import make_fake_toolchain


CONV = """func.func @main(%x: tensor<1x6x6x3xf32>, %w: tensor<3x3x3x4xf32>) -> tensor<1x4x4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<1x4x4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %r = linalg.conv_2d_nhwc_hwcf ins(%x, %w : tensor<1x6x6x3xf32>, tensor<3x3x3x4xf32>) outs(%f : tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}
"""


def conv_expectation() -> Expectation:
    rng = np.random.default_rng(3)
    x = (rng.integers(-8, 9, (1, 6, 6, 3)) / 4).astype(np.float32)
    w = (rng.integers(-8, 9, (3, 3, 3, 4)) / 4).astype(np.float32)
    ref = np.zeros((1, 4, 4, 4), np.float32)
    for i in range(4):
        for j in range(4):
            ref[0, i, j] = np.einsum("hwc,hwcf->f", x[0, i:i + 3, j:j + 3], w)
    return Expectation([x, w], [ref])
