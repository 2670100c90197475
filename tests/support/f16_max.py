"""The f16 max whose lowering depends on the host CPU (issue #43 item 2): `arith.maxnumf` on 1 x f16
lowers to an `fmaxf` libcall the embedded linker cannot resolve ("undefined symbol: fmaxf") unless
the CPU has AVX512-FP16 (sapphirerapids compiles it; x86-64-v3/v4, znver4 do not)."""

FMAXF = """func.func @main(%a: tensor<1xf16>, %b: tensor<1xf16>) -> tensor<1xf16> {
  %e = tensor.empty() : tensor<1xf16>
  %r = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>], iterator_types = ["parallel"]} ins(%a, %b : tensor<1xf16>, tensor<1xf16>) outs(%e : tensor<1xf16>) {
  ^bb0(%x: f16, %y: f16, %o: f16):
    %m = arith.maxnumf %x, %y : f16
    linalg.yield %m : f16
  } -> tensor<1xf16>
  return %r : tensor<1xf16>
}
"""
