"""What a worker's "reference" part costs (`oracle.case_expectation`: validation, inputs, the NumPy
reference), two ways:

- `--draw N` (no campaign): N candidates drawn as a default campaign draws them (the campaign's
  `IreeTarget.generate`: every default family picked as the engine's steering picks, the default
  context share, one large round in `--large-every`), each timed once per step (validate, inputs,
  reference) outside the per-process memo; prints the seconds per family, chain or not, and
  regime, the top costs first, and the total per step. A large round's lanes only compile here, so
  its check pays for the validation alone (`judge.campaign_check.expectation_on`); `--all-large` times its
  inputs and reference too (what it cost before that).

      PYTHONPATH=src .venv/bin/python bench/bench_reference.py --draw 400 --seed 1

- CAMPAIGN: the candidates of a campaign store, in their order, as a worker meets them: each once
  at its check, a failing one again at its confirming re-run (through `case_expectation`, memo
  and all). Prints the seconds per family and spelling (first checks and re-runs apart).

      PYTHONPATH=src .venv/bin/python bench/bench_reference.py CAMPAIGN [--limit N]

Run it with each tree's src on the path to compare two versions on the same cases.
"""

from __future__ import annotations

import argparse
import collections
import random
import sqlite3
import time
from pathlib import Path

import harness

from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.judge.oracle import case_expectation

STEPS = ("validate", "inputs", "reference")


def drawn(n: int, seed: int, large_every: int):
    """(index, candidate, large) for the first `n` candidates a default campaign would draw (no
    duplicates dropped, no steering by buckets: the family mix and the generator's draws)."""
    from shapefuzz.campaign.drawing import derive_seed
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.campaign.steering import Steering
    from shapefuzz.families import DEFAULT_FAMILIES
    from shapefuzz.iree.toolchain import find_toolchain
    import tempfile

    target = IreeTarget(find_toolchain(), Path(tempfile.mkdtemp(prefix="bench-ref-")))
    steering = Steering(tuple(DEFAULT_FAMILIES))
    for index in range(n):
        group = steering.pick_group(random.Random(derive_seed(seed, "group", index)))
        large = large_every > 0 and index % large_every == large_every - 1
        try:
            candidate = target.generate(group, derive_seed(seed, index, 0), large=large)
        except Exception as error:  # noqa: BLE001 - a family's draw failure: the campaign skips it too
            print(f"  {group} seed {index}: {error}")
            continue
        steering.add(group, candidate.features)
        yield index, candidate, large


def timed_steps(case: Case, seed: int, values: bool = True) -> tuple[float, float, float]:
    """Seconds of validation, inputs and reference for one case, none of them memoized (the
    validation alone without `values`)."""
    from shapefuzz.families import forget_validated, get_family, validate_case

    forget_validated()
    family = get_family(case.family)
    t0 = time.perf_counter()
    validate_case(case)
    t1 = time.perf_counter()
    if not values:
        return t1 - t0, 0.0, 0.0
    inputs = family.make_inputs(case.params, seed)
    t2 = time.perf_counter()
    family.reference(case.params, inputs)
    return t1 - t0, t2 - t1, time.perf_counter() - t2


def draw_main(args: argparse.Namespace, figures: harness.Figures) -> dict:
    spent: dict[tuple[str, str, str], list[float]] = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    slowest: list[tuple[float, str, str]] = []
    for index, candidate, large in drawn(args.draw, args.seed, args.large_every):
        case = Case(candidate.group, candidate.payload)
        chain = "chain" if case.params.get("context") else "bare"
        try:
            steps = timed_steps(case, candidate.input_seed, values=args.all_large or not large)
        except ShapefuzzError as error:
            print(f"  {candidate.group} #{index}: {error}")
            continue
        row = spent[(candidate.group, chain, "large" if large else "small")]
        row[0] += 1
        for i, seconds in enumerate(steps):
            row[1 + i] += seconds
        slowest.append((sum(steps), f"{candidate.group} {chain} #{index}", " ".join(f"{s:.3f}" for s in steps)))
    total = [0, 0.0, 0.0, 0.0]
    print(f"{'family':>14} {'chain':>5} {'regime':>6} {'cases':>5}  " + "  ".join(f"{s:>9}" for s in STEPS) + "   all (s)")
    for key, row in sorted(spent.items(), key=lambda kv: -sum(kv[1][1:])):
        print(f"{key[0]:>14} {key[1]:>5} {key[2]:>6} {row[0]:5d}  " + "  ".join(f"{s:9.3f}" for s in row[1:])
              + f"  {sum(row[1:]):8.3f}")
        total = [a + b for a, b in zip(total, row)]
    print(f"{'total':>28} {total[0]:5d}  " + "  ".join(f"{s:9.3f}" for s in total[1:]) + f"  {sum(total[1:]):8.3f}")
    print("slowest cases (validate inputs reference, s):")
    for seconds, what, steps in sorted(slowest, reverse=True)[:args.top]:
        print(f"  {seconds:7.3f}  {what:32} {steps}")
    figures.add("cases", total[0])
    for step, seconds in zip(STEPS, total[1:]):
        figures.add(f"{step}, all cases", seconds, "s")
    figures.add("reference part, all cases", sum(total[1:]), "s")
    return {" ".join(key): row for key, row in spent.items()}


def store_main(args: argparse.Namespace, figures: harness.Figures) -> dict:
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
    figures.add("cases", total[0])
    figures.add("first checks", total[1], "s")
    figures.add("re-runs", total[2], "s")
    figures.add("all", total[1] + total[2], "s")
    return {" ".join(key): row for key, row in spent.items()}


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("campaign", type=Path, nargs="?")
    parser.add_argument("--limit", type=int, default=100000)
    parser.add_argument("--draw", type=int, default=0, help="draw this many candidates instead of reading a store")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--large-every", type=int, default=8)
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--all-large", action="store_true", help="time a large round's inputs and reference too")
    args = parser.parse_args(argv)
    if args.campaign is None and not args.draw:
        parser.error("give a campaign folder or --draw N")
    with harness.session(args) as report:
        report.details = (draw_main if args.draw else store_main)(args, report.figures)


if __name__ == "__main__":
    main()
