"""Does the chain context pay? (issue #33, "Show it")

Alternating real campaigns with and without context: for each seed, one `shapefuzz fuzz` with
`--context-share 0` and one with the default share, the same active time each (their order
alternates from seed to seed, so the machine's load drifts onto both arms alike), each in its own
temporary folder. The figures come from `shapefuzz report --json`, never from log text:

  - compiler-bug causes (distinct over all seeds, by cause identity),
  - late causes: compiler-bug causes first seen in the last third of their campaign's active time
    (not after it: a cause the wrap-up's shrinks meet after the budget is counted apart),
  - distinct failing passes of compiler-bug causes (by `same_pass_key`: a pass's argument and class,
    its `-for-func` form and the wrapper that runs it are one pass),
  - candidates per minute (mean over seeds),

then the ratios (with / without) against the issue's goals (>= 1.3x, >= 2x, >= 1.3x, >= 0.8x),
and each compiler-bug cause the context arm found whose minimal reproducer still carries a
context op (its chain, failing pass, symptom).

    .venv/bin/python bench/studies/bench_context.py                         # 3 seeds x 20 minutes an arm
    nice -n 5 .venv/bin/python bench/studies/bench_context.py --seeds 2 --minutes 4 --keep /tmp/ctx-bench
    .venv/bin/python bench/studies/bench_context.py --concurrent --also 0.8   # arms side by side, plus a 0.8 share
    .venv/bin/python bench/studies/bench_context.py --localize                # wrong values placed at their pass

Campaigns run with --no-localize unless --localize: a wrong value's identity is then "wrong values in
<family>" (two bugs of one family are one cause) and it names no failing pass; --localize lets each
campaign place them after its budget, as a default campaign does (not counted in candidates/min).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from shapefuzz.case import CASE_HEADER
from shapefuzz.recheck.regression import same_pass_key

GOALS = {"causes": 1.3, "late": 2.0, "passes": 1.3, "per_minute": 0.8}
COMPILER_BUG = "compiler bug"


CLI = [sys.executable, "-m", "shapefuzz"]


def start_arm(folder: Path, seed: int, minutes: float, share: float | None, jobs: int,
              localize: bool = False) -> subprocess.Popen[bytes]:
    """Starts one real campaign in `folder`."""
    cli = CLI
    argv = cli + ["fuzz", "--time", f"{int(minutes * 60)}s", "--seed", str(seed), "--jobs", str(jobs),
                  "--campaign", str(folder), "--corpus", str(folder / "corpus"), "--no-bisect"]
    if not localize:
        argv.append("--no-localize")
    if share is not None:
        argv += ["--context-share", str(share)]
    return subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def report_of(folder: Path) -> dict[str, Any]:
    out = subprocess.run(CLI + ["report", "--json", str(folder)], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def bugs(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in report["causes"] if c.get("triage") == COMPILER_BUG]


def figures(reports: list[dict[str, Any]]) -> dict[str, float]:
    """One arm's figures over its seeds' reports."""
    identities, passes, late, after, in_budget = set(), set(), 0, 0, set()
    for report in reports:
        budget = float(report["active_seconds"])
        for cause in bugs(report):
            identities.add(cause["identity"])
            if cause.get("failing_pass"):
                passes.add(same_pass_key(cause["failing_pass"]))
            seen = float(cause.get("first_seen") or 0.0)
            # the clock stops with the budget: a cause first met by the wrap-up's shrinks carries the clock's
            # last value (the report rounds both alike); it is not one of the budget's last third
            late += 2 * budget / 3 <= seen < budget
            after += seen >= budget
            if seen < budget:
                in_budget.add(cause["identity"])
    rate = sum(float(r["per_minute"]) for r in reports) / max(1, len(reports))
    return {"causes": len(identities), "late": late, "passes": len(passes), "per_minute": round(rate, 1),
            "after_budget": after, "in_budget": len(in_budget)}


def chain_of(cause: dict[str, Any]) -> list[str] | None:
    """The context ops of the cause's (shrunk) reproducer, or None when it has none."""
    for entry in cause.get("corpus_entries") or []:
        path = Path(entry) / "reproducer.mlir"
        first = path.read_text().split("\n", 1)[0] if path.is_file() else ""
        header = json.loads(first[len(CASE_HEADER):]) if first.startswith(CASE_HEADER) else {}
        context = header.get("params", {}).get("context") or []
        if context:
            return [f"{header['family']}: " + ", ".join(
                f"{op['op']}@{'operand' if 'operand' in op else 'result'}{op.get('operand', op.get('result'))}"
                for op in context)]
    return None


def context_causes(reports: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    found: dict[str, tuple[str, str, str, str]] = {}
    for report in reports:
        for cause in bugs(report):
            chain = chain_of(cause)
            if chain and cause["identity"] not in found:
                found[cause["identity"]] = (chain[0], cause.get("failing_pass") or "?",
                                            ",".join(cause.get("lanes") or cause.get("backends") or []),
                                            cause["message"][:90])
    return sorted(found.values())


def ratio(with_: float, without: float) -> float:
    return round(with_ / without, 2) if without else float("inf") if with_ else 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=3, help="seeds: one campaign pair each (default 3)")
    parser.add_argument("--minutes", type=float, default=20.0, help="active minutes per campaign (default 20)")
    parser.add_argument("--share", type=float, default=None, help="the context arm's share (default: fuzz's own)")
    parser.add_argument("--also", type=float, action="append", default=[],
                        help="a further context arm at this share, compared with the same no-context arm")
    parser.add_argument("--jobs", type=int, default=2, help="jobs per campaign (with --concurrent: per seed, split)")
    parser.add_argument("--concurrent", action="store_true",
                        help="run a seed's arms at the same time, the jobs split between them (same load on each)")
    parser.add_argument("--keep", default=None, help="keep the campaigns in this folder (default: a temp folder)")
    parser.add_argument("--localize", action="store_true",
                        help="let each campaign localize wrong values after its budget (their pass and identity)")
    parser.add_argument("--summarize", default=None, metavar="DIR",
                        help="run nothing: the figures of the campaigns a former run kept in DIR "
                             "(<arm>-<seed> folders)")
    args = parser.parse_args()
    if args.summarize:
        arms = kept_arms(Path(args.summarize))
        if "without" not in arms:
            raise SystemExit(f"{args.summarize}: no without-<seed> campaign folder")
        print(f"campaigns kept in {args.summarize}: " + ", ".join(f"{a} x {len(r)}" for a, r in arms.items()))
        summarize(arms)
        return
    base = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="bench-context-"))
    base.mkdir(parents=True, exist_ok=True)
    shares: dict[str, float | None] = {"without": 0.0, "with": args.share}
    shares.update({f"share-{s:g}": s for s in args.also})
    arms = {name: [] for name in shares}
    jobs = max(1, args.jobs // len(shares)) if args.concurrent else args.jobs
    for seed in range(1, args.seeds + 1):
        order = list(shares) if seed % 2 else list(reversed(shares))
        groups = [order] if args.concurrent else [[arm] for arm in order]
        for group in groups:
            running = {arm: start_arm(base / f"{arm}-{seed}", seed, args.minutes, shares[arm], jobs, args.localize)
                       for arm in group}
            for arm, process in running.items():
                process.wait()
                report = report_of(base / f"{arm}-{seed}")
                arms[arm].append(report)
                print(f"seed {seed} {arm:>9}: {report['candidates']} candidates, "
                      f"{len(bugs(report))} compiler-bug causes", file=sys.stderr, flush=True)
    mode = f"concurrent arms, {jobs} job(s) each" if args.concurrent else f"alternating arms, {jobs} jobs each"
    print(f"{args.seeds} seeds x {args.minutes:g} min an arm ({mode}), campaigns in {base}")
    summarize(arms)


def kept_arms(base: Path) -> dict[str, list[dict[str, Any]]]:
    """The reports of the campaigns in `base`, by arm (a folder `<arm>-<seed>` holding a campaign store)."""
    arms: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted(base.iterdir()):
        arm, _, seed = folder.name.rpartition("-")
        if arm and seed.isdigit() and (folder / "campaign.sqlite").is_file():
            arms.setdefault(arm, []).append(report_of(folder))
    return arms


def summarize(arms: dict[str, list[dict[str, Any]]]) -> None:
    without = figures(arms["without"])
    labels = {"causes": "compiler-bug causes", "late": "causes in last third", "passes": "distinct failing passes",
              "per_minute": "candidates/min"}
    for arm in (a for a in arms if a != "without"):
        with_ = figures(arms[arm])
        print(f"{'figure':<26}{arm:>10}{'without':>9}{'ratio':>8}{'goal':>7}  met")
        for key, label in labels.items():
            r = ratio(with_[key], without[key])
            print(f"{label:<26}{with_[key]:>10}{without[key]:>9}{r:>8}{GOALS[key]:>6}x  "
                  f"{'yes' if r >= GOALS[key] else 'no'}")
        print(f"(causes first met after the budget, by the wrap-up's shrinks: {with_['after_budget']} with, "
              f"{without['after_budget']} without; counted in the causes, not in the last third; causes met "
              f"within the budget: {with_['in_budget']} with, {without['in_budget']} without, "
              f"{ratio(with_['in_budget'], without['in_budget'])}x)")
    found = context_causes(arms.get("with", []))
    print(f"compiler-bug causes of the context arm whose minimal reproducer keeps a context op: {len(found)}")
    for chain, failing_pass, lanes, symptom in found:
        print(f"  {chain} | pass {failing_pass} | {lanes} | {symptom}")


if __name__ == "__main__":
    main()
