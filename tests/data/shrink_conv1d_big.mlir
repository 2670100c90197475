// A bloated variant of conv1d_stride3.mlir for the shrinker's tests: a wide stride-23 conv whose
// single output window leaves most of the input unread, plus a dynamic side computation, unused
// ops and extra results. iree-compile 3.13 rejects it with the same error as the small file
// ("'linalg.generic' op inferred input/output operand #N has shape's dimension #N to be N, but found N").
func.func @main(%input: tensor<6x29x24xf32>, %filter: tensor<7x24x40xf32>, %bias: tensor<40xf32>, %extra: tensor<?x37xf32>) -> (tensor<6x1x40xf32>, tensor<40xf32>, tensor<?x37xf32>) {
  %zero = arith.constant 0.0 : f32
  %one = arith.constant 1.0 : f32
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %rows = tensor.dim %extra, %c0 : tensor<?x37xf32>
  %unused_empty = tensor.empty() : tensor<29x24xf32>
  %unused_fill = linalg.fill ins(%one : f32) outs(%unused_empty : tensor<29x24xf32>) -> tensor<29x24xf32>
  %empty = tensor.empty() : tensor<6x1x40xf32>
  %init = linalg.fill ins(%zero : f32) outs(%empty : tensor<6x1x40xf32>) -> tensor<6x1x40xf32>
  %conv = linalg.conv_1d_nwc_wcf {dilations = dense<1> : tensor<1xi64>, strides = dense<23> : tensor<1xi64>}
      ins(%input, %filter : tensor<6x29x24xf32>, tensor<7x24x40xf32>)
      outs(%init : tensor<6x1x40xf32>) -> tensor<6x1x40xf32>
  %bempty = tensor.empty() : tensor<40xf32>
  %bias2 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]}
      ins(%bias : tensor<40xf32>) outs(%bempty : tensor<40xf32>) {
  ^bb0(%b: f32, %o: f32):
    %d = arith.addf %b, %one : f32
    linalg.yield %d : f32
  } -> tensor<40xf32>
  %xempty = tensor.empty(%rows) : tensor<?x37xf32>
  %scaled = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%extra : tensor<?x37xf32>) outs(%xempty : tensor<?x37xf32>) {
  ^bb0(%x: f32, %o: f32):
    %m = arith.mulf %x, %x : f32
    linalg.yield %m : f32
  } -> tensor<?x37xf32>
  %neg = arith.negf %one : f32
  return %conv, %bias2, %scaled : tensor<6x1x40xf32>, tensor<40xf32>, tensor<?x37xf32>
}
