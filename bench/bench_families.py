"""What one candidate of each family costs a campaign, measured the way a campaign checks it.

For each family: `--n` small draws checked on the reference lane plus one other lane in turn (as a
campaign's rotation gives them), and `--large` large-regime draws checked on the compile-only lanes
(the campaign's large rounds, one candidate in 8). Candidates run two at a time, like `fuzz -j 2`,
interleaved across families so machine load falls on all of them alike. Prints per family the mean,
median and worst check seconds, the share of all check time, and how many failed.

    .venv/bin/python bench/bench_families.py --n 12 --large 3
    .venv/bin/python bench/bench_families.py --ops attention,reduce --n 20

--ab TIME: the issue's throughput figure instead: campaigns of equal active time, alternating the
five original families and all default families (`--pairs` of each, seeds 41, 42, ...), with
`--jobs` workers; prints candidates/min per campaign, the mean ratio, and causes per family.

    .venv/bin/python bench/bench_families.py --ab 6m --pairs 2 --jobs 2
"""

from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import harness

from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS, REFERENCE_BACKEND
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.campaign.report.progress import Progress
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.families import DEFAULT_FAMILIES
from shapefuzz.iree.toolchain import find_toolchain

_TARGET: IreeTarget | None = None


def _init(corpus: str) -> None:
    global _TARGET
    _TARGET = IreeTarget(find_toolchain(), Path(corpus))
    _TARGET.worker_init()


def _one(job: tuple[str, int, bool, tuple[str, ...]]) -> tuple[str, bool, float, str, str]:
    family, seed, large, lanes = job
    assert _TARGET is not None
    candidate = _TARGET.generate(family, seed, large=large)
    start = time.perf_counter()
    outcome = _TARGET.check(candidate, lanes)
    worst = max(outcome.lanes.items(), key=lambda item: item[1][1], default=("", ("", 0.0)))
    return family, large, time.perf_counter() - start, outcome.verdict.value, f"{worst[0]} {worst[1][1]:.1f}s"


FIVE = ("conv", "conv_transpose", "scatter", "one_hot", "topk")


def ab(args: argparse.Namespace, figures: harness.Figures) -> dict:
    """Alternating five-family and all-family campaigns of equal budget; candidates/min and causes."""
    toolchain = find_toolchain()
    root = Path(tempfile.mkdtemp(prefix="bench-families-ab-"))

    def arm(name: str, families: tuple[str, ...], pair: int) -> float:
        folder = root / f"{name}-{pair}"
        request = FuzzRequest(ops=",".join(families), time=args.ab, jobs=args.jobs, seed=41 + pair,
                              campaign=str(folder), corpus=str(folder / "corpus"), bisect_time=0.0)
        summary = run_campaign(request, toolchain, Progress(quiet=True))
        family_of = {b["signature"]: b["family"] for b in summary.buckets}
        per_family = collections.Counter(family_of[c.buckets[0]] for c in summary.findings)
        worker = summary.worker_seconds
        print(f"{name:4} seed {41 + pair}: {summary.candidates} candidates in {summary.active_seconds:.0f} s, "
              f"{summary.rate_per_min:.1f}/min; {len(summary.causes)} causes, {len(summary.findings)} compiler bugs "
              f"{dict(per_family)}; worker s check/confirm/shrink "
              f"{worker.get('check', 0):.0f}/{worker.get('confirm', 0):.0f}/{worker.get('shrink', 0):.0f}; "
              f"slow {[(r['family'], r['feature'], r['lane']) for r in summary.slow_lanes]}; {folder}", flush=True)
        print("     per family: " + ", ".join(
            f"{f} {row.cases} checked in {row.seconds:.0f}/{row.after_seconds.get('confirm', 0):.0f}/"
            f"{row.after_seconds.get('shrink', 0):.0f} s" for f, row in summary.families.items()), flush=True)
        return summary.rate_per_min

    rates = harness.Interleaved("five", "all")  # the order of the two arms alternates from pair to pair
    for pair in range(args.pairs):
        rates.measure(lambda: arm("five", FIVE, pair), lambda: arm("all", DEFAULT_FAMILIES, pair))
    ratios = rates.pair_ratios()
    for pair, ratio in enumerate(ratios):
        figures.add(f"all / five candidates/min, seed {41 + pair}", ratio, "x")
    figures.add(f"all / five candidates/min, mean of {len(ratios)} pairs",
                statistics.mean(ratios) if ratios else float("nan"), "x")
    return rates.to_json()


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--ops", default=",".join(DEFAULT_FAMILIES))
    parser.add_argument("--n", type=int, default=12, help="small draws per family")
    parser.add_argument("--large", type=int, default=3, help="large draws per family (compile-only lanes)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--corpus", default="/tmp/bench_families_corpus")
    parser.add_argument("--ab", default=None, help="campaign A/B instead: active time of each campaign")
    parser.add_argument("--pairs", type=int, default=2)
    args = parser.parse_args(argv)
    with harness.session(args) as report:
        report.details = (ab if args.ab else per_family)(args, report.figures)
    return 0


def per_family(args: argparse.Namespace, figures: harness.Figures) -> dict:
    """Each family's check cost, small and large draws, checked two at a time."""
    families = args.ops.split(",")
    probe = find_toolchain().probe
    lanes = [b for b in DEFAULT_BACKENDS if BACKENDS[b].compiles(probe)]
    others = [b for b in lanes if b != REFERENCE_BACKEND]
    compile_only = [b for b in lanes if not BACKENDS[b].executes(probe)]
    jobs: list[tuple[str, int, bool, tuple[str, ...]]] = []
    for i in range(max(args.n, args.large)):
        for family in families:
            seed = args.seed * 100_003 + i
            if i < args.n:
                jobs.append((family, seed, False, (REFERENCE_BACKEND, others[i % len(others)])))
            if i < args.large and compile_only:
                jobs.append((family, seed, True, tuple(compile_only[(2 * i + j) % len(compile_only)] for j in range(2))))
    results: dict[tuple[str, bool], list[tuple[float, str, str]]] = {}
    start = time.perf_counter()
    with ProcessPoolExecutor(args.jobs, initializer=_init, initargs=(args.corpus,)) as pool:
        for family, large, seconds, verdict, worst in pool.map(_one, jobs):
            results.setdefault((family, large), []).append((seconds, verdict, worst))
    wall = time.perf_counter() - start
    total = sum(s for rows in results.values() for s, _, _ in rows) or 1.0
    print(f"{len(jobs)} checks in {wall:.0f} s wall, {args.jobs} jobs; lanes {', '.join(lanes)}")
    print(f"{'family':16} {'regime':6} {'n':>3} {'mean s':>7} {'median':>7} {'worst':>7} {'share':>6} {'fail':>4}  worst lane")
    for family in families:
        for large in (False, True):
            rows = results.get((family, large))
            if not rows:
                continue
            seconds = [s for s, _, _ in rows]
            worst = max(rows)
            regime = "large" if large else "small"
            print(f"{family:16} {regime:6} {len(rows):3} {statistics.mean(seconds):7.2f} "
                  f"{statistics.median(seconds):7.2f} {max(seconds):7.1f} {sum(seconds) / total:6.1%} "
                  f"{sum(v == 'fail' for _, v, _ in rows):4}  {worst[2]}")
            figures.add(f"{family} {regime}: mean check", statistics.mean(seconds), "s")
            figures.add(f"{family} {regime}: share of check time", 100 * sum(seconds) / total, "%")
    figures.add("checks", len(jobs))
    figures.add("wall", wall, "s")
    return {f"{family} {'large' if large else 'small'}": rows for (family, large), rows in results.items()}


if __name__ == "__main__":
    sys.exit(main())
