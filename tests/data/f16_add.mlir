func.func @main(%a: tensor<8xf16>) -> tensor<8xf16> {
  %e = tensor.empty() : tensor<8xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a : tensor<8xf16>) outs(%e : tensor<8xf16>) {
  ^bb0(%x: f16, %o: f16):
    %c = arith.constant 1.0 : f16
    %y = arith.addf %x, %c : f16
    linalg.yield %y : f16
  } -> tensor<8xf16>
  return %r : tensor<8xf16>
}
