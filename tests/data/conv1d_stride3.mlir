// A stride-3 1-D convolution whose single output window needs only input element 0:
// iree-compile 3.13 rejects it on every backend.
func.func @main(%input: tensor<1x3x1xf32>, %filter: tensor<2x1x1xf32>) -> tensor<1x1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %empty = tensor.empty() : tensor<1x1x1xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  %conv = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<3> : tensor<1xi64>}
      ins(%input, %filter : tensor<1x3x1xf32>, tensor<2x1x1xf32>)
      outs(%init : tensor<1x1x1xf32>) -> tensor<1x1x1xf32>
  return %conv : tensor<1x1x1xf32>
}
