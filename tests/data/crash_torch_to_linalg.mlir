func.func @main(%indices: !torch.vtensor<[],si64>) -> !torch.vtensor<[1],si8> {
  %int1 = torch.constant.int 1
  %false = torch.constant.bool false
  %none = torch.constant.none
  %int5 = torch.constant.int 5
  %hot1 = torch.aten.one_hot %indices, %int1 : !torch.vtensor<[],si64>, !torch.int -> !torch.vtensor<[1],si64>
  %hot_c2 = torch.aten.to.dtype %hot1, %int1, %false, %false, %none : !torch.vtensor<[1],si64>, !torch.int, !torch.bool, !torch.bool, !torch.none -> !torch.vtensor<[1],si8>
  %scaled3 = torch.aten.mul.Scalar %hot_c2, %int5 : !torch.vtensor<[1],si8>, !torch.int -> !torch.vtensor<[1],si8>
  return %scaled3 : !torch.vtensor<[1],si8>
}
