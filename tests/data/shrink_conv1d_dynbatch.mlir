// The dynamic-batch variant of shrink_conv1d_big.mlir: a different 3.13 compile error on llvm-cpu
// ("slice along dimension N runs out-of-bounds: N >= N").
func.func @main(%input: tensor<?x29x24xf32>, %filter: tensor<7x24x40xf32>, %bias: tensor<40xf32>) -> (tensor<?x1x40xf32>, tensor<40xf32>, tensor<?x29x24xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = tensor.dim %input, %c0 : tensor<?x29x24xf32>
  %unused_empty = tensor.empty() : tensor<29x24xf32>
  %unused_fill = linalg.fill ins(%one : f32) outs(%unused_empty : tensor<29x24xf32>) -> tensor<29x24xf32>
  %empty = tensor.empty(%n) : tensor<?x1x40xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<?x1x40xf32>) -> tensor<?x1x40xf32>
  %conv = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<23> : tensor<1xi64>}
      ins(%input, %filter : tensor<?x29x24xf32>, tensor<7x24x40xf32>)
      outs(%init : tensor<?x1x40xf32>) -> tensor<?x1x40xf32>
  %bempty = tensor.empty() : tensor<40xf32>
  %bias2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%bias : tensor<40xf32>) outs(%bempty : tensor<40xf32>) {
  ^bb0(%b: f32, %o: f32):
    %d = arith.addf %b, %one : f32
    linalg.yield %d : f32
  } -> tensor<40xf32>
  %neg = arith.negf %one : f32
  return %conv, %bias2, %input : tensor<?x1x40xf32>, tensor<40xf32>, tensor<?x29x24xf32>
}
