"""What the real ONNX path costs per case: building the model, importing it with iree-import-onnx's
in-process importer (cold and from the hash cache), the command-line importer for comparison, and
ONNX's reference as the second judge. Prints one line per family.

    .venv/bin/python bench/bench_onnx_import.py [--draws 40]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

from shapefuzz.iree import onnx_import
from shapefuzz.case import Case
from shapefuzz.families import get_family
from shapefuzz.families.frontends import onnx_model, spelled, spellings_for
from shapefuzz.families.generate import draw_params
from shapefuzz.judge.onnx_judge import second_opinion


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--draws", type=int, default=40)
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        report.details = measure(args.draws, report.figures)


def measure(draws: int, figures: harness.Figures) -> dict:
    cli_seconds: list[float] = []
    details = {}
    for name in ("conv", "conv_transpose", "scatter", "one_hot", "topk"):
        family = get_family(name)
        spelling = next(s for s in spellings_for(name) if s.frontend == "onnx")
        build, cold, warm, judge = [], [], [], []
        for seed in range(draws):
            p = family.load(draw_params(name, seed, swarm=True))
            if not spelling.expressible(p):
                continue
            q = spelled(p, spelling)
            t = time.perf_counter()
            model = onnx_model(family, q)
            build.append(time.perf_counter() - t)
            if model is None:
                continue
            onnx_import.forget_imports()  # a cold import on purpose
            t = time.perf_counter()
            onnx_import.import_model(model)
            cold.append(time.perf_counter() - t)
            t = time.perf_counter()
            onnx_import.import_model(model)
            warm.append(time.perf_counter() - t)
            case = Case.make(name, q)
            inputs = family.make_inputs(q, seed)
            opinion = second_opinion(case, inputs, family.reference(q, inputs))
            if opinion is not None:
                judge.append(opinion.seconds)
            if len(cli_seconds) < 3:
                with tempfile.TemporaryDirectory() as tmp:
                    (Path(tmp) / "m.onnx").write_bytes(model.SerializeToString())
                    tool = Path(sys.executable).with_name("iree-import-onnx")
                    t = time.perf_counter()
                    subprocess.run([str(tool), "m.onnx", "-o", "m.mlir"], cwd=tmp, check=True)
                    cli_seconds.append(time.perf_counter() - t)

        def ms(xs: list[float]) -> str:
            return f"{statistics.mean(xs) * 1e3:6.1f} ms (max {max(xs) * 1e3:6.1f})" if xs else "   -"

        print(f"{name:<15} models {len(cold):>3}  build {ms(build)}  import {ms(cold)}  cached {ms(warm)}  "
              f"onnx.reference {ms(judge)}")
        for label, values in (("import", cold), ("import from the cache", warm)):
            if values:
                figures.add(f"{name}: {label}, mean of {len(values)}", statistics.mean(values) * 1e3, "ms")
        details[name] = {"build": build, "import": cold, "cached": warm, "onnx.reference": judge}
    if cli_seconds:
        figures.add(f"iree-import-onnx command line, mean of {len(cli_seconds)} (Python start included)",
                    statistics.mean(cli_seconds), "s")
    details["command line"] = cli_seconds
    return details


if __name__ == "__main__":
    main()
