"""Campaign throughput benchmark.

Runs a fixed-seed campaign with --jobs 1 and --jobs 2 (fresh folders each), then makes the same
compiler and runtime calls for the same candidates in a plain loop, and prints:
  - candidates per minute per core,
  - the share of worker time spent in the compiler and runtime (the rest is shapefuzz itself),
  - shapefuzz's throughput relative to the bare loop (1.0 = no overhead at all),
  - the --jobs 2 / --jobs 1 throughput ratio,
  - with --phases: the bare loop again, compiling the target-independent part once per candidate
    (--compile-to=PHASE) and only the rest per backend (--compile-from=PHASE).

    .venv/bin/python bench/bench_campaign.py --count 300          # the full benchmark
    .venv/bin/python bench/bench_campaign.py --count 30 --phases  # a quick look
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from shapefuzz.backends import BACKENDS
from shapefuzz.campaign.iree import input_seed, load_family
from shapefuzz.campaign.progress import Progress
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.case import Case
from shapefuzz.execute import _verify_argv
from shapefuzz.mlirinfo import function_info
from shapefuzz.toolchain import find_toolchain


def campaign(toolchain, args, jobs: int, folder: Path) -> dict:
    request = FuzzRequest(ops=args.ops, backends=tuple(args.backends.split(",")), count=args.count, jobs=jobs,
                          seed=args.seed, campaign=str(folder), shrink=False)
    start = time.perf_counter()
    summary = run_campaign(request, toolchain, Progress(quiet=True))
    wall = time.perf_counter() - start
    return {"jobs": jobs, "wall": wall, "candidates": summary.candidates, "tool": summary.tool_seconds,
            "task": summary.task_seconds, "buckets": len(summary.buckets), "verdicts": summary.verdicts}


def _candidates(folder: Path) -> list[Case]:
    con = sqlite3.connect(folder / "campaign.sqlite")
    rows = con.execute("SELECT family, payload, seed FROM candidates WHERE verdict != 'lost' ORDER BY idx").fetchall()
    con.close()
    return [(Case(f, p), s) for f, p, s in rows]


def _run(argv: list[str]) -> bool:
    return subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600).returncode == 0


def bare_loop(toolchain, cases, backends: list[str], phase: str | None = None) -> tuple[float, list]:
    """The same verify/compile/run calls, as plain subprocesses; only the calls are timed."""
    probe = toolchain.probe
    total, verdicts = 0.0, []
    with tempfile.TemporaryDirectory(prefix="bench-bare-") as tmp:
        for i, (case, seed) in enumerate(cases):
            family = load_family(case.family)
            text = case.header() + "\n" + family.render(case.params)
            mlir = os.path.join(tmp, f"c{i}.mlir")
            Path(mlir).write_text(text)
            inputs = family.make_inputs(case.params, input_seed(seed))
            in_args = []
            for k, a in enumerate(inputs):
                np.save(os.path.join(tmp, f"in{k}.npy"), np.ascontiguousarray(a))
                in_args.append(f"--input=@{os.path.join(tmp, f'in{k}.npy')}")
            info = function_info(text)
            outs = [f"--output=@{os.path.join(tmp, f'out{k}.npy')}" for k in range(info.results)]
            start = time.perf_counter()
            ok = [_run(_verify_argv(toolchain, mlir, split=False))]
            source, extra = mlir, []
            if phase:
                source = os.path.join(tmp, f"c{i}.{phase}.mlir")
                flags = BACKENDS[backends[0]].compile_flags(probe) or ()
                ok.append(_run([str(toolchain.compile_bin), mlir, *flags, f"--compile-to={phase}", "-o", source]))
                extra = [f"--compile-from={phase}"]
            for name in backends:
                b = BACKENDS[name]
                vmfb = os.path.join(tmp, f"c{i}-{name}.vmfb")
                compiled = _run([str(toolchain.compile_bin), source, *(b.compile_flags(probe) or ()), *extra, "-o", vmfb])
                ok.append(compiled)
                if compiled and b.executes(probe):
                    ok.append(_run([str(toolchain.run_bin), f"--module={vmfb}", f"--device={b.driver}",
                                    f"--function={info.name}", *in_args, *outs]))
            total += time.perf_counter() - start
            verdicts.append(tuple(ok))
    return total, verdicts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--ops", default="topk,scatter,conv,conv_transpose,one_hot")
    parser.add_argument("--backends", default="llvm-cpu,vmvx,rocm-gfx942")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--phases", nargs="?", const="global-optimization", default=None,
                        help="also try compiling up to PHASE once per candidate (default: global-optimization)")
    parser.add_argument("--skip-jobs2", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    toolchain = find_toolchain()
    backends = args.backends.split(",")
    results: dict = {"count": args.count, "backends": backends, "ops": args.ops}
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        one = campaign(toolchain, args, 1, Path(tmp) / "j1")
        results["jobs1"] = one
        cases = _candidates(Path(tmp) / "j1")
        bare, bare_verdicts = bare_loop(toolchain, cases, backends)
        results["bare_seconds"] = bare
        if not args.skip_jobs2:
            results["jobs2"] = campaign(toolchain, args, 2, Path(tmp) / "j2")
        if args.phases:
            phased, phased_verdicts = bare_loop(toolchain, cases, backends, args.phases)
            same = sum(a[0:1] + a[1:] == (b[0],) + b[2:] for a, b in zip(bare_verdicts, phased_verdicts))
            results["phases"] = {"phase": args.phases, "seconds": phased, "same_outcomes": same, "of": len(cases)}
    n = one["candidates"]
    per_min_core = n / one["wall"] * 60
    lines = [
        f"{n} candidates ({args.ops} on {args.backends}), seed {args.seed}",
        f"jobs 1: {one['wall']:.1f}s wall, {per_min_core:.1f} candidates/min/core, {one['buckets']} buckets",
        f"  time in compiler+runtime: {one['tool'] / one['wall']:.1%} of wall "
        f"({one['tool'] / one['task']:.1%} of worker time); shapefuzz itself: {1 - one['tool'] / one['wall']:.1%}",
        f"  bare loop of the same calls: {bare:.1f}s; shapefuzz throughput / bare = {bare / one['wall']:.3f}",
    ]
    if "jobs2" in results:
        two = results["jobs2"]
        lines.append(f"jobs 2: {two['wall']:.1f}s wall, {two['candidates'] / two['wall'] * 60 / 2:.1f} candidates/min/core; "
                     f"jobs2/jobs1 throughput = {(two['candidates'] / two['wall']) / (n / one['wall']):.2f}x")
    if "phases" in results:
        p = results["phases"]
        lines.append(f"phases (--compile-to={p['phase']} once, --compile-from per backend): {p['seconds']:.1f}s "
                     f"vs bare {bare:.1f}s = {bare / p['seconds']:.2f}x; same outcomes on {p['same_outcomes']}/{p['of']}")
    print(json.dumps(results, indent=2) if args.json else "\n".join(lines))


if __name__ == "__main__":
    sys.exit(main())
