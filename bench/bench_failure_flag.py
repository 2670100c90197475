"""What `--mlir-print-ir-after-failure` (the flag every compile passes so a failure names its pass)
costs on compiles that pass: generated cases compiled for llvm-cpu with and without it, interleaved
(so machine noise hits both alike), CPU seconds of the compiler (user + system) summed per way.
Goal: with / without <= 1.05.

    .venv/bin/python bench/bench_failure_flag.py [--cases 8] [--rounds 2]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import tempfile

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.case import Case
from shapefuzz.families import FAMILY_MODULES, render_case
from shapefuzz.iree.input_dialect import input_type_flags
from shapefuzz.families.generate import draw_params
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.triage.failing_pass import PRINT_IR_AFTER_FAILURE


def _cpu_of(argv: list[str]) -> tuple[float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    code = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
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
        totals = {"without": 0.0, "with": 0.0}
        for _ in range(args.rounds):
            for i, argv in enumerate(cases):
                for way in (("without", "with") if i % 2 else ("with", "without")):
                    extra = [PRINT_IR_AFTER_FAILURE] if way == "with" else []
                    totals[way] += _cpu_of(argv[:-2] + extra + argv[-2:])[0]
    print(f"{len(cases)} passing cases x {args.rounds} rounds on llvm-cpu")
    print(f"compiler CPU seconds without the flag: {totals['without']:.2f}")
    print(f"compiler CPU seconds with the flag:    {totals['with']:.2f}")
    print(f"with / without: {totals['with'] / totals['without']:.3f}")


if __name__ == "__main__":
    main()
