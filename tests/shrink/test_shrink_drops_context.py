"""A shrink keeps no op its failure does not need (issue #43, "minimal means minimal"), against the
real IREE 3.13 compiler: the stride-3 conv that llvm-cpu rejects (a sub-second compile), wrapped in
a reshape producer and a reshape consumer that no operand of the same type can replace, shrinks to
the bare conv on arguments. Before the root passes it kept both reshapes."""

from __future__ import annotations

import pytest

from shapefuzz.invoke.execute import verify
from shapefuzz.shrink.run import shrink_file

pytestmark = pytest.mark.iree

WRAPPED = """\
func.func @main(%flat: tensor<3xf32>, %filter: tensor<2x1x1xf32>) -> tensor<1xf32> {
  %input = tensor.expand_shape %flat [[0, 1, 2]] output_shape [1, 3, 1] : tensor<3xf32> into tensor<1x3x1xf32>
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %conv = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<3> : tensor<1xi64>}
      ins(%input, %filter : tensor<1x3x1xf32>, tensor<2x1x1xf32>)
      outs(%init : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %out = tensor.collapse_shape %conv [[0, 1, 2]] : tensor<1x1x1xf32> into tensor<1xf32>
  return %out : tensor<1xf32>
}
"""


def test_the_producer_and_consumer_around_the_failing_op_go(toolchain, tmp_path):
    out = tmp_path / "wrapped.min.mlir"
    result = shrink_file("wrapped.mlir", WRAPPED, toolchain, ("llvm-cpu",), out=str(out), time_limit=120)
    minimized = out.read_text()
    assert result.confirmed is True and verify(minimized, toolchain) is None
    assert "linalg.conv_1d_nwc_wcf" in minimized
    assert "expand_shape" not in minimized and "collapse_shape" not in minimized, minimized
    # the function, the conv, its init and the return: nothing else (it kept 6 ops, 9 lines before)
    assert result.after.ops <= 4 and result.after.lines <= 7, minimized
    assert result.stats.per_pass["cut_producers"][2] >= 1 and result.stats.per_pass["return_early"][2] >= 1
