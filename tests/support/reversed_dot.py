"""A compile error every release from 3.0.0 to 3.13 gives word for word on llvm-cpu (cause-7af5034ab8,
shrunk by an audit): shared by the range tests."""

# the audit's 11-line form of cause-7af5034ab8: a reduction read reversed, tiled to a size-1 slice
REVERSED_DOT = """func.func @main(%x: tensor<2xf16>, %w: tensor<2xf16>) -> tensor<f16> {
  %cst = arith.constant 0.000000e+00 : f16
  %e = tensor.empty() : tensor<f16>
  %z = linalg.fill ins(%cst : f16) outs(%e : tensor<f16>) -> tensor<f16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (1 - d0)>, affine_map<(d0) -> ()>], iterator_types = ["reduction"]} ins(%x, %w : tensor<2xf16>, tensor<2xf16>) outs(%z : tensor<f16>) {
  ^bb0(%a: f16, %b: f16, %acc: f16):
    %m = arith.mulf %a, %b : f16
    %s = arith.addf %acc, %m : f16
    linalg.yield %s : f16
  } -> tensor<f16>
  return %r : tensor<f16>
}
"""
ERROR = ("'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be greater than or "
         "equal to 2, but found 1")
