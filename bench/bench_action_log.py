"""What the action log (compiler coverage, `--coverage SHARE`) costs a campaign in candidates/min.

Each candidate is checked twice on the same lanes, the way a campaign checks it (the reference lane
plus one rotating lane): plain, and instrumented as `campaign.coverage_steering` instruments it (the other
lane; both lanes one time in four). The two checks of a candidate run back to back in alternating
order, so the machine's load falls on both alike. Prints the seconds of each, their ratio, and
what instrumenting a share of candidates then costs in candidates/min (1 - 1 / (1 + share x extra)).

    .venv/bin/python bench/bench_action_log.py --n 36
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from shapefuzz.iree.backends import DEFAULT_BACKENDS, REFERENCE_BACKEND
from shapefuzz.campaign.coverage_steering import CoverageSteering
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.families import DEFAULT_FAMILIES
from shapefuzz.iree.toolchain import find_toolchain


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=36, help="candidates (the default families in turn)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--shares", default="0.15,0.05,0.03,0.02,0.01")
    args = parser.parse_args()
    target = IreeTarget(find_toolchain(), Path(tempfile.mkdtemp(prefix="bench-action-log-")))
    target.worker_init()
    others = [b for b in DEFAULT_BACKENDS if b != REFERENCE_BACKEND]
    every = round(1 / CoverageSteering.REFERENCE_SHARE)
    plain, logged = [], []
    for i in range(args.n):
        candidate = target.generate(DEFAULT_FAMILIES[i % len(DEFAULT_FAMILIES)], args.seed * 100_003 + i)
        lanes = (REFERENCE_BACKEND, others[i % len(others)])
        marked = replace(candidate, instrument=lanes if i % every == 0 else lanes[1:])
        pair = {}
        for which in ((candidate, marked) if i % 2 else (marked, candidate)):
            start = time.perf_counter()
            target.check(which, lanes)
            pair[bool(which.instrument)] = time.perf_counter() - start
        plain.append(pair[False])
        logged.append(pair[True])
        print(f"{i:3d} {candidate.group:15s} {lanes[1]:30s} plain {pair[False]:6.2f}s  with the log {pair[True]:6.2f}s",
              file=sys.stderr)
    extra = sum(logged) / sum(plain) - 1
    print(f"{args.n} candidates: a plain check {statistics.mean(plain):.2f}s, instrumented {statistics.mean(logged):.2f}s "
          f"(+{extra:.0%}; median of pairs +{statistics.median(b / a - 1 for a, b in zip(plain, logged)):.0%})")
    for share in (float(s) for s in args.shares.split(",")):
        print(f"  --coverage {share:<5}: costs {1 - 1 / (1 + share * extra):.1%} of candidates/min")
    return 0


if __name__ == "__main__":
    sys.exit(main())
