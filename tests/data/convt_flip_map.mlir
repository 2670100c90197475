// shapefuzz-case: {"family":"conv_transpose","params":{"ci":9,"co":1,"dilation":[1],"dtype":"f32","dyn_x":[false,false,true],"flip":"map","form":"generic","fwd_layout":[0,1,2],"groups":1,"in_size":[2],"kernel":[5],"n":3,"out_pad":[0],"pad_hi":[2],"pad_lo":[1],"pad_mode":"pad","rank":1,"stride":[1],"w_layout":[2,1,0],"w_order":"split","x_expand":"late"},"version":1}
// conv-transpose (backward-data conv) decomposed into zero insertion, padding, filter flip and a forward conv
func.func @main(%x: tensor<3x9x?xf32>, %w: tensor<5x1x9xf32>) -> tensor<3x1x?xf32> {
    %c2 = arith.constant 2 : index
    %d0 = tensor.dim %x, %c2 : tensor<3x9x?xf32>
    %s1 = affine.apply affine_map<()[s0] -> (s0 + 5)>()[%d0]
    %p2 = tensor.pad %x low[0, 0, 3] high[0, 0, 2] {
    ^bb0(%p2_i0: index, %p2_i1: index, %p2_i2: index):
      %p2_zero = arith.constant 0.000000e+00 : f32
      tensor.yield %p2_zero : f32
    } : tensor<3x9x?xf32> to tensor<3x9x?xf32>
    %e3 = tensor.empty() : tensor<5x1x9xf32>
    %wf4 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (4 - d0, d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} ins(%w : tensor<5x1x9xf32>) outs(%e3 : tensor<5x1x9xf32>) {
    ^bb0(%in: f32, %out: f32):
      linalg.yield %in : f32
    } -> tensor<5x1x9xf32>
    %e5 = tensor.empty() : tensor<1x9x5xf32>
    %wt6 = linalg.transpose ins(%wf4 : tensor<5x1x9xf32>) outs(%e5 : tensor<1x9x5xf32>) permutation = [1, 2, 0]
    %s7 = affine.apply affine_map<()[s0] -> (s0 + 1)>()[%d0]
    %e8 = tensor.empty(%s7) : tensor<3x1x?xf32>
    %z9_zero = arith.constant 0.000000e+00 : f32
    %z9 = linalg.fill ins(%z9_zero : f32) outs(%e8 : tensor<3x1x?xf32>) -> tensor<3x1x?xf32>
    %conv10 = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2, d3, d4) -> (d0, d3, d2 + d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d1, d3, d4)>, affine_map<(d0, d1, d2, d3, d4) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel", "reduction", "reduction"]} ins(%p2, %wt6 : tensor<3x9x?xf32>, tensor<1x9x5xf32>) outs(%z9 : tensor<3x1x?xf32>) {
    ^bb0(%a: f32, %b: f32, %acc: f32):
      %m = arith.mulf %a, %b : f32
      %sum = arith.addf %acc, %m : f32
      linalg.yield %sum : f32
    } -> tensor<3x1x?xf32>
    return %conv10 : tensor<3x1x?xf32>
}
