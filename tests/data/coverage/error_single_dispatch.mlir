// conv_transpose (3.13): fails in TileAndDistributeToWorkgroupsUsingForallOpPass on llvm-cpu-single-dispatch
// conv-transpose (backward-data conv) decomposed into zero insertion, padding, filter flip and a forward conv
func.func @main(%x: tensor<1x3x3xf32>, %w: tensor<3x3x2xf32>) -> tensor<1x2x3xf32> {
    %p0 = tensor.pad %x low[0, 0, 1] high[0, 0, 1] {
    ^bb0(%p0_i0: index, %p0_i1: index, %p0_i2: index):
      %p0_zero = arith.constant 0.000000e+00 : f32
      tensor.yield %p0_zero : f32
    } : tensor<1x3x3xf32> to tensor<1x3x5xf32>
    %e1 = tensor.empty() : tensor<3x3x2xf32>
    %wf2 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, 2 - d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<3x3x2xf32>) outs(%e1 : tensor<3x3x2xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<3x3x2xf32>
    %e3 = tensor.empty() : tensor<2x3x3xf32>
    %wt4 = linalg.transpose ins(%wf2 : tensor<3x3x2xf32>) outs(%e3 : tensor<2x3x3xf32>) permutation = [2, 0, 1]
    %e5 = tensor.empty() : tensor<1x2x3xf32>
    %z6_zero = arith.constant 0.000000e+00 : f32
    %z6 = linalg.fill ins(%z6_zero : f32) outs(%e5 : tensor<1x2x3xf32>) -> tensor<1x2x3xf32>
    %conv7 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p0, %wt4 : tensor<1x3x5xf32>, tensor<2x3x3xf32>) outs(%z6 : tensor<1x2x3xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %sum = arith.addf %acc, %m : f32
      linalg.yield %sum : f32
    } -> tensor<1x2x3xf32>
    return %conv7 : tensor<1x2x3xf32>
}
