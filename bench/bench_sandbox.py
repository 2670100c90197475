"""Per-call overhead of the sandbox against calling the same binary directly.

Interleaves the two ways (so machine noise hits both alike) and prints the ratio of medians.
Goal: sandboxed / direct <= 1.05 for a real iree-compile call.

    .venv/bin/python bench/bench_sandbox.py [--calls 30]
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile

import harness

from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.process.sandbox import Limits, run_sandboxed

MODULE = """func.func @main(%a: tensor<4x8xf32>, %b: tensor<8x3xf32>) -> tensor<4x3xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x3xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x3xf32>) -> tensor<4x3xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x3xf32>) outs(%f : tensor<4x3xf32>) -> tensor<4x3xf32>
  return %r : tensor<4x3xf32>
}
"""
GOAL = "<= 1.05"  # for a real iree-compile call; an iree-opt call is too short for it


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--calls", type=int, default=30)
    args = parser.parse_args(argv)
    toolchain = find_toolchain()
    with harness.session(args) as report, tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "m.mlir")
        with open(src, "w") as f:
            f.write(MODULE)
        details = {}
        for label, argv_, goal in (
            ("iree-compile llvm-cpu (matmul)", [str(toolchain.compile_bin), src, "--iree-hal-target-device=local",
                                                "--iree-hal-local-target-device-backends=llvm-cpu",
                                                "--iree-llvmcpu-target-cpu=host", "-o", os.path.join(tmp, "m.vmfb")],
             GOAL),
            ("iree-opt verify", [str(toolchain.opt_bin), src, "-o", os.devnull], ""),
        ):
            def direct(argv_: list[str] = argv_) -> None:
                subprocess.run(argv_, capture_output=True, check=True)

            def boxed(argv_: list[str] = argv_) -> None:
                result = run_sandboxed(argv_, Limits(timeout=120))
                assert result.ok, result.stderr

            pair = harness.Interleaved("direct", "sandboxed")
            for _ in range(args.calls):
                pair.measure(lambda: harness.wall_seconds(direct), lambda: harness.wall_seconds(boxed))
            report.figures.add(f"{label}: direct, median of {args.calls}", 1000 * statistics.median(pair.first), "ms")
            report.figures.add(f"{label}: sandboxed, median of {args.calls}", 1000 * statistics.median(pair.second),
                               "ms")
            report.figures.add(f"{label}: sandboxed / direct", pair.median_ratio(), "x", goal)
            details[label] = pair.to_json()
        report.details = details


if __name__ == "__main__":
    main()
