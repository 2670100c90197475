"""Campaign throughput and economy: candidates/min, where worker time goes, the causes found
(--overhead: shapefuzz against a bare loop of the same compiler calls).

Default (the economy figures of issue "Campaigns that spend their time on new bugs"): one timed
campaign on the default families and backends with --jobs 2, as a new user would run it, then
prints candidates per minute, the share of worker time in checks / confirmations / shrinks (as
report.md counts them, until the budget was spent, and with the shrinks after it), the time spent
re-hitting saturated buckets, the distinct causes found (findings = compiler bugs) and how many were
shrunk, and where confirm and shrink seconds went (the store's task log, campaign/task_log.py).
--localize-time 0 --bisect-time 0 leave out the steps after the budget that neither confirms nor
shrinks; --shrink-share passes fuzz's.

    .venv/bin/python bench/bench_campaign.py --time 20m            # the reference measurement
    .venv/bin/python bench/bench_campaign.py --time 4m --keep DIR  # a short look, campaign kept

--overhead: the older figures instead: a fixed-count campaign with --jobs 1 and --jobs 2, then the
same compiler and runtime calls in a plain loop:
  - candidates per minute per core,
  - the share of worker time spent in the compiler and runtime (the rest is shapefuzz itself),
  - shapefuzz's throughput relative to the bare loop (1.0 = no overhead at all),
  - the --jobs 2 / --jobs 1 throughput ratio,
  - with --phases: the bare loop again, compiling the target-independent part once per candidate
    (--compile-to=PHASE) and only the rest per backend (--compile-from=PHASE).

    .venv/bin/python bench/bench_campaign.py --overhead --count 300
    .venv/bin/python bench/bench_campaign.py --overhead --count 30 --phases
"""

from __future__ import annotations

import collections
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import harness

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.campaign.iree import load_family
from shapefuzz.campaign.outcomes import INPUT_SEED_MODULUS
from shapefuzz.campaign.report.progress import Progress
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.campaign.task_log import breakdown, task_rows
from shapefuzz.case import Case
from shapefuzz.invoke.execute import verify_argv
from shapefuzz.iree.mlirinfo import function_info
from shapefuzz.iree.toolchain import find_toolchain


def _budget(value: str | None) -> str | float | None:
    """A step's budget as typed: "0" is a number (off), as the CLI passes it; else the text."""
    return 0.0 if value is not None and value.strip() == "0" else value


def economy(toolchain, args, folder: Path) -> dict:
    """One timed default campaign; the figures come from its store, as `shapefuzz fuzz` reports them."""
    request = FuzzRequest(ops=args.ops, backends=tuple(args.backends.split(",")) if args.backends else None,
                          time=args.time, jobs=args.jobs, seed=args.seed, campaign=str(folder),
                          corpus=str(folder / "corpus"), localize_time=_budget(args.localize_time),
                          bisect_time=_budget(args.bisect_time), shrink_share=args.shrink_share)
    start = time.perf_counter()
    summary = run_campaign(request, toolchain, Progress(quiet=not args.verbose))
    wall = time.perf_counter() - start
    store = CampaignStore(folder, create=False)
    try:  # the store's totals: the shrinks after the budget (the wrap-up phase) included
        worker = {"check": summary.worker_seconds.get("check", 0.0),
                  **{kind: store.worker_time(kind) for kind in ("confirm", "shrink")}}
        tasks = breakdown(task_rows(store))
    finally:
        store.close()
    total = sum(worker.values()) or 1.0
    return {
        "wall": round(wall, 1), "active": round(summary.active_seconds, 1), "candidates": summary.candidates,
        "per_minute": round(summary.rate_per_min, 1), "jobs": args.jobs,
        "worker_share": {k: round(v / total, 3) for k, v in worker.items()},
        # as report.md counts them: until the budget was spent (the final phase's shrinks left out)
        "report_share": {k: round(v / (sum(summary.worker_seconds.values()) or 1.0), 3)
                         for k, v in summary.worker_seconds.items()},
        "worker_seconds": {k: round(v, 1) for k, v in worker.items()},
        "rehit_seconds": round(summary.rehit_seconds, 1),
        "causes": len(summary.causes), "findings": len(summary.findings), "set_apart": summary.set_apart,
        "buckets": len(summary.buckets), "verdicts": summary.verdicts,
        "unsupported_lanes": sum(r.unsupported for r in summary.backends.values()),
        "cause_list": [(c.triage.value, c.stage, c.status, c.message[:100], list(c.backends)) for c in summary.causes],
        "shrunk_findings": sum(c.shrunk for c in summary.findings), "tasks": tasks,
        "verdict_counts": dict(collections.Counter(c.triage.value for c in summary.causes)),
    }


def campaign(toolchain, args, jobs: int, folder: Path) -> dict:
    request = FuzzRequest(ops=args.ops, backends=tuple(args.backends.split(",")), count=args.count, jobs=jobs,
                          seed=args.seed, campaign=str(folder), corpus=str(folder / "corpus"), shrink=False)
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
            inputs = family.make_inputs(case.params, seed % INPUT_SEED_MODULUS)
            in_args = []
            for k, a in enumerate(inputs):
                np.save(os.path.join(tmp, f"in{k}.npy"), np.ascontiguousarray(a))
                in_args.append(f"--input=@{os.path.join(tmp, f'in{k}.npy')}")
            info = function_info(text)
            outs = [f"--output=@{os.path.join(tmp, f'out{k}.npy')}" for k in range(info.results)]
            start = time.perf_counter()
            ok = [_run(verify_argv(toolchain, mlir, split=False))]
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


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--time", default="20m", help="economy mode: the campaign's active time (45s, 4m, 20m)")
    parser.add_argument("--jobs", type=int, default=2, help="economy mode: workers (default 2)")
    parser.add_argument("--keep", default=None, help="economy mode: keep the campaign in this folder")
    parser.add_argument("--verbose", action="store_true", help="economy mode: show the campaign's progress")
    parser.add_argument("--localize-time", default=None, help="economy mode: the localization step's budget (0: off)")
    parser.add_argument("--bisect-time", default=None, help="economy mode: the regression phase's budget (0: off)")
    parser.add_argument("--shrink-share", type=float, default=None, help="economy mode: --shrink-share (default: fuzz's)")
    parser.add_argument("--overhead", action="store_true", help="the older overhead figures instead")
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--ops", default=None, help="default: every family")
    parser.add_argument("--backends", default=None,
                        help="default: the campaign's default lanes (overhead mode: llvm-cpu,vmvx,rocm-gfx942)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--phases", nargs="?", const="global-optimization", default=None,
                        help="also try compiling up to PHASE once per candidate (default: global-optimization)")
    parser.add_argument("--skip-jobs2", action="store_true")
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        report.details = (overhead if args.overhead else economy_figures)(args, report.figures)


def economy_figures(args, figures: harness.Figures) -> dict:
    toolchain = find_toolchain()
    with tempfile.TemporaryDirectory(prefix="bench-campaign-") as tmp:
        folder = Path(args.keep) if args.keep else Path(tmp) / "camp"
        r = economy(toolchain, args, folder)
    apart = ", ".join(f"{n} {t}" for t, n in sorted(r["set_apart"].items())) or "none"
    print(f"{r['candidates']} candidates in {r['active']:.0f}s active with --jobs {r['jobs']} "
          f"(ops {args.ops or 'all'}, backends {args.backends or 'default'}, seed {args.seed})")
    for triage, stage, status, message, backends in r["cause_list"]:
        print(f"  {triage:16} {stage}/{status}: {message}  [{', '.join(backends)}]")
    figures.add("candidates", r["candidates"])
    figures.add("active time", r["active"], "s")
    figures.add("candidates/min", r["per_minute"], "/min")
    for kind, share in r["report_share"].items():
        figures.add(f"worker time in {kind} (as report.md: until the budget was spent)", 100 * share, "%")
    share = r["report_share"]
    figures.add("worker time in confirm + shrink (as report.md)", 100 * (share.get("confirm", 0) + share.get("shrink", 0)),
                "%", goal="<= 35")
    for kind, share in r["worker_share"].items():
        figures.add(f"worker time in {kind} (with the shrinks after the budget)", 100 * share, "%")
    share = r["worker_share"]
    figures.add("worker time in confirm + shrink (with the shrinks after the budget)",
                100 * (share.get("confirm", 0) + share.get("shrink", 0)), "%")
    figures.add("worker time", sum(r["worker_seconds"].values()), "s")
    figures.add("time re-hitting saturated buckets", r["rehit_seconds"], "s")
    figures.add("distinct causes", r["causes"])
    figures.add("compiler-bug causes", r["findings"])
    figures.add("compiler-bug causes shrunk", r["shrunk_findings"])
    figures.add("causes by verdict", ", ".join(f"{v} {n}" for v, n in sorted(r["verdict_counts"].items())))
    for kind, groups in sorted(r["tasks"].items()):  # where confirm and shrink seconds went (campaign/task_log.py)
        for group, values in sorted(groups.items()):
            if not group.startswith("tasks"):
                counts = groups.get("tasks " + group, {})
                figures.add(f"{kind} seconds {group}", ", ".join(
                    f"{k} {v:.0f}" + (f" ({counts[k]:.0f})" if k in counts else "")
                    for k, v in sorted(values.items(), key=lambda kv: -kv[1])))
    figures.add("causes set apart", apart)
    figures.add("buckets", r["buckets"])
    figures.add("lane-candidates unsupported (target limits)", r["unsupported_lanes"])
    return r


def overhead(args, figures: harness.Figures) -> dict:
    args.ops = args.ops or "topk,scatter,conv,conv_transpose,one_hot"
    args.backends = args.backends or "llvm-cpu,vmvx,rocm-gfx942"
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
    print(f"{n} candidates ({args.ops} on {args.backends}), seed {args.seed}")
    figures.add("jobs 1: wall", one["wall"], "s")
    figures.add("jobs 1: candidates/min/core", n / one["wall"] * 60, "/min")
    figures.add("jobs 1: buckets", one["buckets"])
    figures.add("time in compiler+runtime, of wall", 100 * one["tool"] / one["wall"], "%")
    figures.add("time in compiler+runtime, of worker time", 100 * one["tool"] / one["task"], "%")
    figures.add("shapefuzz itself, of wall", 100 * (1 - one["tool"] / one["wall"]), "%")
    figures.add("bare loop of the same calls", bare, "s")
    figures.add("shapefuzz throughput / bare loop", bare / one["wall"], "x")
    if "jobs2" in results:
        two = results["jobs2"]
        figures.add("jobs 2: wall", two["wall"], "s")
        figures.add("jobs 2: candidates/min/core", two["candidates"] / two["wall"] * 60 / 2, "/min")
        figures.add("jobs2 / jobs1 throughput", (two["candidates"] / two["wall"]) / (n / one["wall"]), "x")
    if "phases" in results:
        p = results["phases"]
        figures.add(f"phases (--compile-to={p['phase']} once, --compile-from per backend)", p["seconds"], "s")
        figures.add("bare / phases", bare / p["seconds"], "x")
        figures.add("phases: same outcomes", f"{p['same_outcomes']}/{p['of']}")
    return results


if __name__ == "__main__":
    sys.exit(main())
