// shapefuzz-case: {"family":"matmul","params":{"a_unsigned":false,"a_zp":0,"a_zp_per":"tensor","alpha":1.0,"b_unsigned":false,"b_zp":0,"b_zp_per":"tensor","batch":[1],"batch_dyn":[false],"bcast":"a","beta":1.0,"bias":"none","big":false,"context":[{"from":"i4","op":"dequantize","operand":0,"scale":0.25,"zero_point":-2},{"drop":-1,"extra":[0,2],"offsets":[0,1],"op":"slice","operand":0,"strides":[3,3]},{"dim":1,"form":"extract","op":"reverse","operand":0},{"drop":-1,"extra":[1,1],"offsets":[0,0],"op":"slice","operand":1,"strides":[1,3]}],"dtype":"f32","form":"generic","k":17,"k_dyn":true,"m":1,"m_dyn":false,"n":1,"n_dyn":false,"out":"f32","trans_a":false,"trans_b":false,"vec":"matvec"},"version":1}
func.func private @root(%a: tensor<1x?xf32>, %b: tensor<1x?xf32>) -> tensor<1x1xf32> {
  %zero = arith.constant 0.0 : f32
  %acc_e = tensor.empty() : tensor<1x1xf32>
  %acc = linalg.fill ins(%zero : f32) outs(%acc_e : tensor<1x1xf32>) -> tensor<1x1xf32>
  %mm = linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]}
    ins(%a, %b : tensor<1x?xf32>, tensor<1x?xf32>) outs(%acc : tensor<1x1xf32>) {
  ^bb0(%x: f32, %y: f32, %acc_in: f32):
    %prod = arith.mulf %x, %y : f32
    %sum = arith.addf %acc_in, %prod : f32
    linalg.yield %sum : f32
  } -> tensor<1x1xf32>
  return %mm : tensor<1x1xf32>
}

func.func @main(%arg0: tensor<1x?xi8>, %arg1: tensor<2x?xf32>) -> tensor<1x1xf32> {
  %cx_c2 = arith.constant 2 : index
  %cx_c3 = arith.constant 3 : index
  %cx_c4 = arith.constant 4 : index
  %cx_c1 = arith.constant 1 : index
  %cx1_cst = arith.constant -2 : i32
  %cx2_cst = arith.constant 0.25 : f32
  %cx3_d = tensor.dim %arg0, %cx_c1 : tensor<1x?xi8>
  %cx4_e = tensor.empty(%cx3_d) : tensor<1x?xf32>
  %cx5_g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%arg0 : tensor<1x?xi8>) outs(%cx4_e : tensor<1x?xf32>) {
  ^bb0(%q: i8, %o: f32):
    %q4 = arith.trunci %q : i8 to i4
    %w = arith.extsi %q4 : i4 to i32
    %s = arith.subi %w, %cx1_cst : i32
    %f = arith.sitofp %s : i32 to f32
    %r = arith.mulf %f, %cx2_cst : f32
    linalg.yield %r : f32
  } -> tensor<1x?xf32>
  %cx6_d = tensor.dim %cx5_g, %cx_c1 : tensor<1x?xf32>
  %cx7_t = arith.subi %cx6_d, %cx_c4 : index
  %cx8_q = arith.divui %cx7_t, %cx_c3 : index
  %cx9_n = arith.addi %cx8_q, %cx_c1 : index
  %cx10_sl = tensor.extract_slice %cx5_g[0, 1] [1, %cx9_n] [3, 3] : tensor<1x?xf32> to tensor<1x?xf32>
  %cx11_d = tensor.dim %cx10_sl, %cx_c1 : tensor<1x?xf32>
  %cx12_last = arith.subi %cx11_d, %cx_c1 : index
  %cx13_e = tensor.empty(%cx11_d) : tensor<1x?xf32>
  %cx14_g = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} outs(%cx13_e : tensor<1x?xf32>) {
  ^bb0(%o: f32):
    %i0 = linalg.index 0 : index
    %i1 = linalg.index 1 : index
    %r = arith.subi %cx12_last, %i1 : index
    %v = tensor.extract %cx10_sl[%i0, %r] : tensor<1x?xf32>
    linalg.yield %v : f32
  } -> tensor<1x?xf32>
  %cx15_d = tensor.dim %arg1, %cx_c1 : tensor<2x?xf32>
  %cx16_t = arith.subi %cx15_d, %cx_c2 : index
  %cx17_q = arith.divui %cx16_t, %cx_c3 : index
  %cx18_n = arith.addi %cx17_q, %cx_c1 : index
  %cx19_sl = tensor.extract_slice %arg1[0, 0] [1, %cx18_n] [1, 3] : tensor<2x?xf32> to tensor<1x?xf32>
  %cx20_root = func.call @root(%cx14_g, %cx19_sl) : (tensor<1x?xf32>, tensor<1x?xf32>) -> tensor<1x1xf32>
  return %cx20_root : tensor<1x1xf32>
}
