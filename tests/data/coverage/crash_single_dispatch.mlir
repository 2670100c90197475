// one_hot (3.13): crashes in MakeSingleDispatchForFunctionPass on llvm-cpu-single-dispatch
func.func @main(%indices: tensor<13xi32>, %on_t: tensor<i8>, %off_t: tensor<i8>) -> (tensor<3x13xi8>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index

    %zero_i = arith.constant 0 : i32
    %depth_i = arith.constant 3 : i32
    %depth = arith.constant 3 : index
    %on = tensor.extract %on_t[] : tensor<i8>
    %off = tensor.extract %off_t[] : tensor<i8>

    %oh_init = tensor.empty() : tensor<3x13xi8>
    %onehot = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]}
      ins(%indices : tensor<13xi32>) outs(%oh_init : tensor<3x13xi8>) {
    ^bb0(%x: i32, %o: i8):
      %cls = linalg.index 0 : index
      %cls_i = arith.index_cast %cls : index to i32
%neg = arith.cmpi slt, %x, %zero_i : i32
      %wrapped = arith.addi %x, %depth_i : i32
      %norm = arith.select %neg, %wrapped, %x : i32
      %hit = arith.cmpi eq, %norm, %cls_i : i32
      %v = arith.select %hit, %on, %off : i8
      linalg.yield %v : i8
    } -> tensor<3x13xi8>
    return %onehot : tensor<3x13xi8>
}
