// shrink_topk_sort_case.mlir without its parameter header, as a user would bring it.
func.func @main(%input: tensor<?x?x5xf32>) -> (tensor<?x7x5xi32>) {
  %c0 = arith.constant 0 : index
  %d0 = tensor.dim %input, %c0 : tensor<?x?x5xf32>
  %c1 = arith.constant 1 : index
  %d1 = tensor.dim %input, %c1 : tensor<?x?x5xf32>
  %work_init = tensor.empty(%d0, %d1) : tensor<?x5x?xf32>
  %work = linalg.transpose ins(%input : tensor<?x?x5xf32>) outs(%work_init : tensor<?x5x?xf32>) permutation = [0, 2, 1]
  %work_idx_init = tensor.empty(%d0, %d1) : tensor<?x5x?xi32>
  %work_idx = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d1, d2)>], iterator_types = ["parallel", "parallel", "parallel"]} outs(%work_idx_init : tensor<?x5x?xi32>) {
  ^bb0(%iota_out: i32):
    %iota_pos = linalg.index 2 : index
    %iota_val = arith.index_cast %iota_pos : index to i32
    linalg.yield %iota_val : i32
  } -> tensor<?x5x?xi32>
  %sorted:2 = iree_linalg_ext.sort dimension(2)
    outs(%work, %work_idx : tensor<?x5x?xf32>, tensor<?x5x?xi32>) {
  ^bb0(%lhs: f32, %rhs: f32, %idx_l: i32, %idx_r: i32):
    %pick = arith.cmpf ogt, %lhs, %rhs : f32
    iree_linalg_ext.yield %pick : i1
  } -> tensor<?x5x?xf32>, tensor<?x5x?xi32>
  %top_val = tensor.extract_slice %sorted#0[0, 0, 0] [%d0, 5, 7] [1, 1, 1] : tensor<?x5x?xf32> to tensor<?x5x7xf32>
  %top_idx = tensor.extract_slice %sorted#1[0, 0, 0] [%d0, 5, 7] [1, 1, 1] : tensor<?x5x?xi32> to tensor<?x5x7xi32>
  %res_idx_init = tensor.empty(%d0) : tensor<?x7x5xi32>
  %res_idx = linalg.transpose ins(%top_idx : tensor<?x5x7xi32>) outs(%res_idx_init : tensor<?x7x5xi32>) permutation = [0, 2, 1]
  return %res_idx : tensor<?x7x5xi32>
}
