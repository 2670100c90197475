"""What a chain candidate costs (issue #33): a fixed set of drawn chain cases (every family in turn,
seeds from --seed, each draw offered a chain, swarm as a campaign draws), each checked as a
campaign's worker checks it (`case_expectation`, then `check_module` without the confirming re-run)
and its bare root (the same params without the chain) beside it. Prints per case the family, chain,
the entry's and the root's argument elements, reference and check wall; then the totals and the
chain ÷ root ratios. The same --seed on two trees gives their before/after on the same draws.

    PYTHONPATH=src .venv/bin/python bench/bench_chain_cost.py --n 60 --seed 0
"""

from __future__ import annotations

import argparse
import time
from typing import Any

import numpy as np

from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.families import DEFAULT_FAMILIES, get_family
from shapefuzz.families.context.wrap import bare
from shapefuzz.generate import draw_params
from shapefuzz.oracle import _MEMO, case_expectation, check_module
from shapefuzz.toolchain import find_toolchain


def elements(arrays: list[np.ndarray]) -> int:
    return sum(int(np.asarray(a).size) for a in arrays)


def cost(case: Case, backends: list[str], toolchain) -> tuple[float, float, int, str]:
    """(reference seconds, check seconds, argument elements, verdict) of one case, from cold."""
    _MEMO.clear()
    start = time.perf_counter()
    try:
        expectation = case_expectation(case, 0)
    except ShapefuzzError as error:
        return time.perf_counter() - start, 0.0, 0, f"ours: {str(error)[:60]}"
    ref = time.perf_counter() - start
    text = case.header() + "\n" + get_family(case.family).render(case.params)
    start = time.perf_counter()
    report = check_module(text, backends, expectation, toolchain, confirm=False)
    statuses = ",".join(r.status.value if hasattr(r.status, "value") else str(r.status) for r in report.results)
    return ref, time.perf_counter() - start, elements(expectation.inputs), statuses or report.verdict.value


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
    toolchain = find_toolchain(None)
    backends = args.backends.split(",")
    totals = {"chain": [0.0, 0.0, 0], "root": [0.0, 0.0, 0]}
    for i, (case, params) in enumerate(drawn(args.n, args.seed, args.regime)):
        ref, check, elems, verdict = cost(case, backends, toolchain)
        totals["chain"] = [totals["chain"][0] + ref, totals["chain"][1] + check, totals["chain"][2] + elems]
        ops = ",".join(op.op for op in params.context)
        line = f"{i:3d} {case.family:14s} {ops[:44]:44s} elems {elems:8d} ref {ref:6.3f}s check {check:6.2f}s {verdict}"
        if not args.no_root:
            root = Case.make(case.family, bare(params))
            r_ref, r_check, r_elems, r_verdict = cost(root, backends, toolchain)
            totals["root"] = [totals["root"][0] + r_ref, totals["root"][1] + r_check, totals["root"][2] + r_elems]
            line += f" | root elems {r_elems:8d} ref {r_ref:6.3f}s check {r_check:6.2f}s {r_verdict}"
        print(line, flush=True)
    c, r = totals["chain"], totals["root"]
    print(f"chains: {args.n} cases, reference {c[0]:.2f}s, check {c[1]:.1f}s, "
          f"{(c[0] + c[1]) / args.n:.2f}s a case, {c[2]} argument elements")
    if not args.no_root:
        print(f"roots:  {args.n} cases, reference {r[0]:.2f}s, check {r[1]:.1f}s, "
              f"{(r[0] + r[1]) / args.n:.2f}s a case, {r[2]} argument elements")
        print(f"chain / root: reference {c[0] / max(r[0], 1e-9):.2f}x, check {c[1] / max(r[1], 1e-9):.2f}x, "
              f"all {(c[0] + c[1]) / max(r[0] + r[1], 1e-9):.2f}x")


if __name__ == "__main__":
    main()
