"""What `--mlir-print-ir-after-failure` (the flag every compile passes so a failure names its pass)
costs on compiles that pass: generated cases compiled for llvm-cpu with and without it, interleaved
(so machine noise hits both alike), CPU seconds of the compiler (user + system) summed per way.
Goal: with / without <= 1.05.

    .venv/bin/python bench/bench_failure_flag.py [--cases 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile

import harness

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.case import Case
from shapefuzz.families import FAMILY_MODULES, render_case
from shapefuzz.iree.input_dialect import input_type_flags
from shapefuzz.families.generate import draw_params
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.triage.failing_pass import PRINT_IR_AFTER_FAILURE


def _cpu_of(argv: list[str]) -> tuple[float, int]:
    before = harness.children_cpu()
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    return harness.children_cpu() - before, code


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        report.details = measure(args, report.figures)


def measure(args: argparse.Namespace, figures: harness.Figures) -> dict:
    toolchain = find_toolchain(None)
    flags = list(BACKENDS["llvm-cpu"].compile_flags(toolchain.probe))
    families = list(FAMILY_MODULES)
    with tempfile.TemporaryDirectory() as tmp:
        cases = []
        seed = 0
        while len(cases) < args.cases and seed < args.cases * 20:  # cases that compile: the flag's quiet path
            family = families[seed % len(families)]
            seed += 1
            text = render_case(Case.make(family, draw_params(family, seed)))
            path = os.path.join(tmp, f"c{len(cases)}.mlir")
            with open(path, "w") as handle:
                handle.write(text)
            argv = [str(toolchain.compile_bin), path, *flags, *input_type_flags(text), "-o", os.devnull]
            if _cpu_of(argv)[1] == 0:
                cases.append(argv)
        pair = harness.Interleaved("without", "with")
        for _ in range(args.rounds):
            for argv in cases:
                flagged = argv[:-2] + [PRINT_IR_AFTER_FAILURE] + argv[-2:]
                pair.measure(lambda: _cpu_of(argv)[0], lambda: _cpu_of(flagged)[0])
    figures.add("passing cases (llvm-cpu)", len(cases))
    figures.add("rounds", args.rounds)
    figures.add("compiler CPU without the flag", sum(pair.first), "s")
    figures.add("compiler CPU with the flag", sum(pair.second), "s")
    figures.add("with / without", pair.ratio(), "x", "<= 1.05")
    return pair.to_json()


if __name__ == "__main__":
    main()
