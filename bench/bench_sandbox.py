"""Per-call overhead of the sandbox against calling the same binary directly.

Interleaves the two ways (so machine noise hits both alike) and prints the ratio of medians.
Goal: sandboxed / direct <= 1.05 for a real iree-compile call.

    .venv/bin/python bench/bench_sandbox.py [--calls 30]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time

from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.iree.toolchain import find_toolchain

MODULE = """func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
"""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args()
    toolchain = find_toolchain()
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.mlir")
        with open(src, "w") as f:
            f.write(MODULE)
        for label, argv in (
            ("iree-compile llvm-cpu (matmul)", [str(toolchain.compile_bin), src, "--iree-hal-target-device=local",
                                                 "--iree-hal-local-target-device-backends=llvm-cpu",
                                                 "--iree-llvmcpu-target-cpu=host", "-o", os.path.join(tmp, "m.vmfb")]),
            ("iree-opt verify", [str(toolchain.opt_bin), src, "-o", os.devnull]),
        ):
            direct, boxed = [], []
            for _ in range(args.calls):
                start = time.perf_counter()
                subprocess.run(argv, capture_output=True, check=True)
                direct.append(time.perf_counter() - start)
                start = time.perf_counter()
                result = run_sandboxed(argv, Limits(timeout=120))
                boxed.append(time.perf_counter() - start)
                assert result.ok, result.stderr
            d, b = statistics.median(direct), statistics.median(boxed)
            print(f"{label:<32} direct {d * 1000:8.1f} ms   sandboxed {b * 1000:8.1f} ms   ratio {b / d:.3f}   (median of {args.calls})")


if __name__ == "__main__":
    main()
