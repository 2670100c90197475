"""What the HTML dashboard costs a campaign.

Default: renders report.html of an existing campaign folder several times and prints its size,
the seconds per render (wall and CPU of the rendering thread), and the share of the machine's
CPU that refreshing it every SHAPEFUZZ_HTML_EVERY seconds (default 120) takes from the workers,
which is the most candidates/min it can cost:

    .venv/bin/python bench/bench_dashboard.py --campaign shapefuzz-campaign

--ab TIME: the same campaign (same seed, so the same candidates) run in alternation with the
refresh off and with a refresh every --stress seconds (default 10: 12 times the default rate),
--rounds times each; prints candidates/min of each arm and their ratio. On a shared machine the
spread between rounds is printed too: a ratio inside it says "no measurable cost".

    .venv/bin/python bench/bench_dashboard.py --ab 2m --rounds 2 --ops topk,one_hot --backends cpu
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

from shapefuzz.campaign.report.dashboard import REFRESH_SECONDS, write_dashboard
from shapefuzz.campaign.report.issue_texts import IssueTexts
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.iree.toolchain import find_toolchain


def render_cost(folder: Path, repeat: int) -> dict:
    store = CampaignStore(folder, create=False)
    issues = IssueTexts(folder, find_toolchain(None))
    try:
        out = folder / "report.html"
        write_dashboard(store, issues=issues)  # the first: imports, font cache, bug reports written
        walls, cpus = [], []
        for _ in range(repeat):
            wall, cpu = time.perf_counter(), time.thread_time()
            write_dashboard(store, issues=issues, running=True)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.thread_time() - cpu)
        return {"candidates": store.candidate_count(), "bytes": out.stat().st_size,
                "wall": statistics.median(walls), "cpu": statistics.median(cpus)}
    finally:
        store.close()


def campaign_rate(args, every: float, folder: Path) -> float:
    env = {**os.environ, "SHAPEFUZZ_HTML_EVERY": str(every)}
    argv = [str(Path(sys.executable).parent / "shapefuzz"), "fuzz", "--time", args.ab, "--jobs", str(args.jobs),
            "--seed", str(args.seed), "--campaign", str(folder), "--corpus", str(folder / "corpus"), "--json",
            "--plain", "--no-shrink"]
    argv += ["--ops", args.ops] if args.ops else []
    argv += ["--backends", args.backends] if args.backends else []
    done = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
    if done.returncode != 0:
        sys.exit(f"campaign failed: {done.stderr.strip().splitlines()[-1:]}")
    return float(json.loads(done.stdout)["per_minute"])


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--campaign", type=Path, help="a campaign folder to render")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--ab", help="campaign length for the A/B run, e.g. 2m")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--stress", type=float, default=10.0, help="refresh seconds in the B arm")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--ops")
    parser.add_argument("--backends")
    args = parser.parse_args(argv)
    if not (args.campaign or args.ab):
        parser.error("give --campaign DIR (the render's cost) or --ab TIME (campaigns with and without a refresh)")
    cores = os.cpu_count() or 1
    with harness.session(args) as report:
        figures, details = report.figures, {}
        if args.campaign:
            r = render_cost(args.campaign, args.repeat)
            every = float(os.environ.get("SHAPEFUZZ_HTML_EVERY") or REFRESH_SECONDS)
            share = r["cpu"] / every / cores if every > 0 else 0.0
            figures.add(f"report.html of {r['candidates']} candidates", r["bytes"] / 1024, "KiB")
            figures.add(f"one render, wall (median of {args.repeat})", r["wall"], "s")
            figures.add(f"one render, CPU (median of {args.repeat})", r["cpu"], "s")
            figures.add(f"share of the machine's CPU refreshing every {every:.0f}s (most candidates/min lost)",
                        100 * share, "%")
            details["render"] = r
        if args.ab:
            stressed = f"every {args.stress:g}s"
            rates = harness.Interleaved("off", stressed)  # the order of the arms alternates from round to round

            def arm(every: float, label: str, round_: int) -> float:
                with tempfile.TemporaryDirectory(prefix="bench-dash-") as tmp:
                    rate = campaign_rate(args, every, Path(tmp))
                print(f"round {round_ + 1}, refresh {label}: {rate:.1f} candidates/min", flush=True)
                return rate

            for round_ in range(args.rounds):
                rates.measure(lambda: arm(0.0, "off", round_), lambda: arm(args.stress, stressed, round_))
            ra, rb = rates.first, rates.second
            spread = max(ra) - min(ra) if len(ra) > 1 else float("nan")
            figures.add("candidates/min, refresh off", statistics.mean(ra), "/min")
            figures.add(f"candidates/min, refresh {stressed}", statistics.mean(rb), "/min")
            figures.add(f"refresh {stressed} / off", rates.ratio(), "x")
            figures.add("spread between rounds without refresh", spread, "/min")
            details["ab"] = rates.to_json()
        report.details = details


if __name__ == "__main__":
    main()
