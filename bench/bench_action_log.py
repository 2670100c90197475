"""What the action log (compiler coverage, `--coverage SHARE`) costs a campaign in candidates/min.

Each candidate is checked twice on the same lanes, the way a campaign checks it (the reference lane
plus one rotating lane): plain, and instrumented as `campaign.coverage_steering` instruments it (the other
lane; both lanes one time in four). The two checks of a candidate run back to back in alternating
order, so the machine's load falls on both alike. Prints the seconds of each, their ratio, and
what instrumenting a share of candidates then costs in candidates/min (1 - 1 / (1 + share x extra)).

    .venv/bin/python bench/bench_action_log.py --n 36
"""

from __future__ import annotations

import statistics
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import harness

from shapefuzz.iree.backends import DEFAULT_BACKENDS, REFERENCE_BACKEND
from shapefuzz.campaign.coverage_map import MEASURED_COVERAGE
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.families import DEFAULT_FAMILIES
from shapefuzz.iree.toolchain import find_toolchain


def main(argv: list[str] | None = None) -> int:
    parser = harness.parser(__doc__)
    parser.add_argument("--n", type=int, default=36, help="candidates (the default families in turn)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shares", default="0.15,0.05,0.03,0.02,0.01")
    args = parser.parse_args(argv)
    target = IreeTarget(find_toolchain(), Path(tempfile.mkdtemp(prefix="bench-action-log-")))
    with harness.session(args) as report:
        target.worker_init()
        others = [b for b in DEFAULT_BACKENDS if b != REFERENCE_BACKEND]
        every = round(1 / CoverageSteering.REFERENCE_SHARE)
        pair = harness.Interleaved("plain", "with the log")
        for i in range(args.n):
            candidate = target.generate(DEFAULT_FAMILIES[i % len(DEFAULT_FAMILIES)], args.seed * 100_003 + i)
            lanes = (REFERENCE_BACKEND, others[i % len(others)])
            marked = replace(candidate, instrument=lanes if i % every == 0 else lanes[1:])
            plain, logged = pair.measure(lambda: harness.wall_seconds(lambda: target.check(candidate, lanes)),
                                         lambda: harness.wall_seconds(lambda: target.check(marked, lanes)))
            print(f"{i:3d} {candidate.group:15s} {lanes[1]:30s} plain {plain:6.2f}s  with the log {logged:6.2f}s",
                  file=sys.stderr)
        extra = pair.ratio() - 1
        report.figures.add(f"a plain check, mean of {args.n}", statistics.mean(pair.first), "s")
        report.figures.add(f"an instrumented check, mean of {args.n}", statistics.mean(pair.second), "s")
        report.figures.add("instrumented / plain - 1, over all", 100 * extra, "%")
        report.figures.add("instrumented / plain - 1, median of pairs", 100 * (pair.pair_median() - 1), "%")
        for share in (float(s) for s in args.shares.split(",")):
            # the default share without --steer costs at most 3% (campaign/coverage_map.py)
            goal = "<= 3" if share == MEASURED_COVERAGE else ""
            report.figures.add(f"--coverage {share}: candidates/min lost", 100 * (1 - 1 / (1 + share * extra)), "%",
                               goal)
        report.details = pair.to_json()
    return 0


if __name__ == "__main__":
    sys.exit(main())
