"""Coverage-guided versus unguided campaigns of equal budget (issue "Compiler-coverage feedback").

Arms, run alternating (the order rotates per seed), each on every seed, each with the same time
budget, families, backends and jobs:
  guided    coverage feedback on: a share of candidates compiled with the action log, frontier
            neighbours, yield-weighted drawing, lanes by eligibility and thinnest coverage;
  unguided  the same share instrumented and recorded, but nothing steered by it: what the campaign
            reaches is measured the same way, so pass/pattern counts compare like with like;
  plain     no instrumentation at all: the baseline for candidates/min (the cost of coverage).
Prints per arm the mean and spread (sample standard deviation, min-max) of: distinct (pass,
pattern) pairs and passes reached (over all lanes, as the instrumented compiles saw them),
distinct causes (every triage verdict) and compiler-bug causes, and candidates/min; then the
guided/unguided ratios and the guided/plain rate ratio.

    .venv/bin/python bench/bench_coverage.py --time 2m --seeds 3          # a short look (12+ min)
    .venv/bin/python bench/bench_coverage.py --time 20m --seeds 5 --json   # the real comparison
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from shapefuzz.campaign.coverage import DEFAULT_COVERAGE, coverage_rows
from shapefuzz.campaign.progress import Progress
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.campaign.store import CampaignStore
from shapefuzz.toolchain import find_toolchain

ARMS = {"guided": (True, True), "unguided": (True, False), "plain": (False, False)}  # (instrument, steer)


def one_campaign(toolchain, arm: str, seed: int, args, folder: Path) -> dict:
    instrument, steer = ARMS[arm]
    request = FuzzRequest(ops=args.ops, backends=tuple(args.backends.split(",")) if args.backends else None,
                          time=args.time, jobs=args.jobs, seed=seed, campaign=str(folder),
                          corpus=str(folder / "corpus"), shrink=False,
                          coverage=args.share if instrument else 0.0, coverage_steer=steer)
    start = time.perf_counter()
    summary = run_campaign(request, toolchain, Progress(quiet=not args.verbose))
    store = CampaignStore(folder, create=False)
    try:
        rows = coverage_rows(store)
    finally:
        store.close()
    return {
        "arm": arm, "seed": seed, "wall": round(time.perf_counter() - start, 1),
        "candidates": summary.candidates, "per_minute": round(summary.rate_per_min, 2),
        "pairs": len({(r.pass_name, r.pattern) for r in rows if r.pattern}),
        "passes": len({r.pass_name for r in rows if not r.pattern}),
        "lane_items": len(rows),
        "instrumented": sum(summary.coverage.get("instrumented", {}).values()) if summary.coverage else 0,
        "causes": len(summary.causes), "findings": len(summary.findings),
    }


def spread(values: list[float]) -> str:
    mean = statistics.fmean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:8.1f} ±{sd:6.1f} [{min(values):.0f}-{max(values):.0f}]"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--time", default="2m", help="active time of each campaign (equal budgets)")
    parser.add_argument("--seeds", type=int, default=3, help="campaign seeds per arm (at least 3 for a spread)")
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--arms", default="guided,unguided,plain")
    parser.add_argument("--share", type=float, default=DEFAULT_COVERAGE, help="instrumented share (guided, unguided)")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--ops", default=None, help="default: every family")
    parser.add_argument("--backends", default=None, help="default: the campaign's default lanes")
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    arms = [a for a in args.arms.split(",") if a in ARMS]
    toolchain = find_toolchain()
    results: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="bench-coverage-") as tmp:
        for i in range(args.seeds):
            seed = args.first_seed + i
            order = arms[i % len(arms):] + arms[:i % len(arms)]  # alternate which arm runs first
            for arm in order:
                r = one_campaign(toolchain, arm, seed, args, Path(tmp) / f"{arm}-{seed}")
                results.append(r)
                print(f"# {arm} seed {seed}: {r['candidates']} candidates ({r['per_minute']}/min), "
                      f"{r['pairs']} pass/pattern pairs, {r['passes']} passes, {r['causes']} causes "
                      f"({r['findings']} compiler bugs), {r['instrumented']} instrumented compiles", flush=True)
    if args.json:
        print(json.dumps(results, indent=2))
        return
    by_arm = {arm: [r for r in results if r["arm"] == arm] for arm in arms}
    print(f"\n{args.seeds} seed(s) x {len(arms)} arm(s), {args.time} each, --jobs {args.jobs}, "
          f"ops {args.ops or 'all'}, backends {args.backends or 'default'}, share {args.share}")
    print(f"{'arm':9} {'(pass,pattern) pairs':>30} {'passes':>30} {'causes':>30} {'compiler bugs':>30} "
          f"{'candidates/min':>30}")
    for arm, rows in by_arm.items():
        print(f"{arm:9} " + " ".join(f"{spread([r[k] for r in rows]):>30}"
                                     for k in ("pairs", "passes", "causes", "findings", "per_minute")))
    mean = {arm: {k: statistics.fmean(r[k] for r in rows) for k in ("pairs", "causes", "per_minute")}
            for arm, rows in by_arm.items() if rows}
    if "guided" in mean and "unguided" in mean:
        g, u = mean["guided"], mean["unguided"]
        print(f"guided/unguided: pairs {g['pairs'] / max(u['pairs'], 1):.2f}x, "
              f"causes {g['causes'] / max(u['causes'], 1):.2f}x (goal: >= 1.15x and >= 1.2x)")
    if "guided" in mean and "plain" in mean:
        g, p = mean["guided"], mean["plain"]
        print(f"guided/plain candidates/min: {g['per_minute'] / max(p['per_minute'], 1e-9):.2f}x (goal: >= 0.90x)")


if __name__ == "__main__":
    main()
