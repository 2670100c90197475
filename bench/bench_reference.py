"""What a worker's "reference" part costs (`oracle.case_expectation`: validation, inputs, the NumPy
reference) over the candidates of a campaign store, in their order, as a worker meets them: each
once at its check, a failing one again at its confirming re-run. Prints the seconds per family and
spelling (first checks and re-runs apart), and the total. Run it with each tree's src on the
path to compare two versions on the same cases.

    PYTHONPATH=src .venv/bin/python bench/bench_reference.py CAMPAIGN [--limit N]
"""

from __future__ import annotations

import argparse
import collections
import sqlite3
import time
from pathlib import Path

from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.oracle import case_expectation


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("campaign", type=Path)
    parser.add_argument("--limit", type=int, default=100000)
    args = parser.parse_args()
    uri = f"file:{args.campaign / 'campaign.sqlite'}?mode=ro"
    rows = sqlite3.connect(uri, uri=True).execute(
        "SELECT family, payload, seed, verdict FROM candidates ORDER BY idx LIMIT ?", (args.limit,)).fetchall()
    spent: dict[tuple[str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0])
    for family, payload, seed, verdict in rows:
        case = Case(family, payload)
        row = spent[(family, case.params.get("frontend", "linalg"))]
        for again in range(2 if verdict in ("fail", "flaky") else 1):
            start = time.perf_counter()
            try:
                case_expectation(case, seed)
            except ShapefuzzError:
                continue
            row[0] += 1 - again
            row[1 + again] += time.perf_counter() - start
    total = [0, 0.0, 0.0]
    for (family, spelling), (n, validate, rest) in sorted(spent.items(), key=lambda kv: -kv[1][1] - kv[1][2]):
        print(f"{family:>14} {spelling:>6} {n:4d} cases  first check {validate:6.2f}s  re-runs {rest:6.2f}s")
        total = [total[0] + n, total[1] + validate, total[2] + rest]
    print(f"{'total':>21} {total[0]:4d} cases  first check {total[1]:6.2f}s  re-runs {total[2]:6.2f}s  "
          f"all {total[1] + total[2]:.2f}s")


if __name__ == "__main__":
    main()
