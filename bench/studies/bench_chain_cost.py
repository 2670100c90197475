"""What a chain candidate costs (issue #33): a fixed set of drawn chain cases (every family in turn,
seeds from --seed, each draw offered a chain, swarm as a campaign draws), each checked as a
campaign's worker checks a candidate (`IreeTarget.check`: inputs and NumPy reference where a lane
runs it, verify, compile, run, judge) and its bare root (the same params without the chain) beside
it. Prints per case the family, chain, the worker's reference seconds, the check's wall and its
lanes' statuses; then the totals and the chain / root ratios. The same --seed and options with two
trees' src on the path give their before/after on the same draws.

    PYTHONPATH=src .venv/bin/python bench/studies/bench_chain_cost.py --n 60 --seed 0
    PYTHONPATH=src .venv/bin/python bench/studies/bench_chain_cost.py --n 40 --regime large --backends rocm-gfx942 --no-root
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path
from typing import Any

from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.families import DEFAULT_FAMILIES
from shapefuzz.families.context.wrap import bare
from shapefuzz.families.generate import draw_params
from shapefuzz.iree.toolchain import find_toolchain


def cost(target: Any, family: str, seed: int, params: Any, lanes: tuple[str, ...]) -> tuple[float, float, str]:
    """(reference seconds, check wall, lane statuses) of one case checked as a worker checks it, from cold."""
    from shapefuzz.judge.oracle import forget_expectations

    forget_expectations()
    candidate = target.from_payload(family, seed, Case.make(family, params).params_json)
    start = time.perf_counter()
    try:
        outcome = target.check(candidate, lanes)
    except ShapefuzzError as error:  # ours: the case cannot be judged (a reference out of memory)
        return 0.0, time.perf_counter() - start, f"ours: {str(error)[:50]}"
    wall = time.perf_counter() - start
    statuses = ",".join(status.value for status, _ in (outcome.lanes[lane] for lane in lanes if lane in outcome.lanes))
    return outcome.split.get("reference", 0.0), wall, statuses or outcome.verdict.value


def drawn(n: int, seed: int, regime: str) -> list[tuple[Case, Any]]:
    """`n` chain cases: the families in turn, each its next seed whose draw got a chain."""
    cases: list[tuple[Case, Any]] = []
    seeds = {f: seed for f in DEFAULT_FAMILIES}
    while len(cases) < n:
        family = DEFAULT_FAMILIES[len(cases) % len(DEFAULT_FAMILIES)]
        for _ in range(50):
            s = seeds[family]
            seeds[family] += 1
            p = draw_params(family, s, regime=regime, swarm=True, context_share=1.0)
            if p.context:
                cases.append((Case.make(family, p), p))
                break
        else:
            raise SystemExit(f"no chain in 50 draws of {family}")
    return cases


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=60, help="chain cases (default 60)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--regime", default="small", choices=("small", "large"))
    ap.add_argument("--backends", default="llvm-cpu", help="lanes each case is checked on (default llvm-cpu)")
    ap.add_argument("--no-root", action="store_true", help="do not check the bare roots")
    args = ap.parse_args()
    from shapefuzz.campaign.iree import IreeTarget

    lanes = tuple(args.backends.split(","))
    totals = {"chain": [0.0, 0.0], "root": [0.0, 0.0]}
    with tempfile.TemporaryDirectory(prefix="chain-cost-") as corpus:
        target = IreeTarget(find_toolchain(None), Path(corpus))
        for i, (case, params) in enumerate(drawn(args.n, args.seed, args.regime)):
            kinds = {"chain": params} if args.no_root else {"chain": params, "root": bare(params)}
            line = f"{i:3d} {case.family:14s} {','.join(op.op for op in params.context)[:44]:44s}"
            for kind, p in kinds.items():
                ref, wall, statuses = cost(target, case.family, args.seed + i, p, lanes)
                totals[kind] = [totals[kind][0] + ref, totals[kind][1] + wall]
                line += f" | {kind} ref {ref:6.3f}s check {wall:6.2f}s {statuses}"
            print(line, flush=True)
    for kind, (ref, wall) in totals.items():
        if wall:
            print(f"{kind + 's:':7s} {args.n} cases on {args.backends} ({args.regime}), reference {ref:.2f}s, "
                  f"check wall {wall:.1f}s (reference in it), {wall / args.n:.2f}s a case")
    if not args.no_root:
        (c_ref, c_wall), (r_ref, r_wall) = totals["chain"], totals["root"]
        print(f"chain / root: reference {c_ref / max(r_ref, 1e-9):.2f}x, check {c_wall / max(r_wall, 1e-9):.2f}x")


if __name__ == "__main__":
    main()
