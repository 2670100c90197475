"""Default campaigns against campaigns with one thing left out, at equal CPU (issues #44 and #45).

Arms, run alternating (the order rotates per seed), each on every seed, each with the same time
budget, jobs and seed; no regression-range phase, no localization step, no release fetch, shrinks on:
  default        `shapefuzz fuzz` as a user runs it;
  no-allocate    `--no-allocate`: least-tried families and lanes in rotation instead of by yield (#44);
  no-new-forms   `--without stablehlo,operands,quantized,lanes`: what issue #45 added left out (#45).
Prints per campaign and per arm (mean over seeds): distinct compiler-bug causes (after merging), the
compiler-bug causes first seen in the first and in the last quarter of the budget, the check /
confirm / shrink shares of worker time, candidates/min, causes set apart as `ours` (a reference in
doubt) and draws that did not verify (`invalid`: a generator slip, never judged); for the default arm, the compiler-bug causes
only the new forms reach (every candidate that hit the cause drew a withheld form or ran on a
withheld lane) by form, family and lane. Then default / each other arm.

    .venv/bin/python bench/bench_arms.py --time 20m --seeds 3                  # the issues' comparison
    .venv/bin/python bench/bench_arms.py --time 10m --seeds 1 --arms default,no-new-forms --keep /tmp/arms
    .venv/bin/python bench/bench_arms.py --read /tmp/arms                       # re-read kept campaigns

An hour of campaigns imports shapefuzz's modules as it goes (each campaign's workers start fresh): run it
from a frozen copy, never a checkout being edited (a first run crashed mid-arm on a half-changed module):
    git worktree add --detach /tmp/frozen HEAD && cd /tmp/frozen && \
        PYTHONPATH=/tmp/frozen/src <repo>/.venv/bin/python bench/bench_arms.py --time 20m --seeds 3
"""

from __future__ import annotations

import collections
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

import harness

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.report.progress import Progress
from shapefuzz.campaign.report.summary import Summary, summarize
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.campaign.withheld import GROUPS, REACH_LANES
from shapefuzz.durations import parse_duration
from shapefuzz.iree.toolchain import find_toolchain

ARMS: dict[str, dict[str, Any]] = {"default": {}, "no-allocate": {"allocate": False},
                                   "no-new-forms": {"without": ",".join(GROUPS)}}
_QUANTIZED = ("qdq", "zp:", "named:q", "context:dequantize", "context:quantize")


def new_form_of(family: str, features: list[str], lane: str) -> str:
    """Which of issue #45's forms a hit used ("" none): the group and what in it."""
    if lane in REACH_LANES:
        return f"lanes: {lane}"
    if "frontend:stablehlo" in features or family == "intloop":
        return f"stablehlo: {family}"
    operand = next((f for f in features if f.startswith("operand:") and family != "intloop"), "")
    if operand:
        return f"operands: {operand.split(':', 1)[1]}"
    quantized = next((f for f in features if f.startswith(_QUANTIZED)), "")
    return f"quantized: {quantized}" if quantized else ""


def only_new_forms(store: CampaignStore, summary: Summary) -> dict[str, str]:
    """Compiler-bug causes every hit of which used a new form: cause -> the form of its first hit."""
    candidates = {row.key: row for row in store.candidates()}
    hits: dict[str, list[tuple[str, str]]] = collections.defaultdict(list)
    for candidate, bucket, lane in store.hits():
        hits[bucket].append((candidate, lane))
    out = {}
    for cause in summary.findings:
        forms = []
        for sig in cause.buckets:
            for candidate, lane in hits.get(sig, []):
                row = candidates.get(candidate)
                forms.append(new_form_of(row.family, list(row.features), lane) if row else "")
        if forms and all(forms):
            out[cause.name] = forms[0]
    return out


def figures_of(folder: Path, budget: float) -> dict[str, Any]:
    store = CampaignStore(folder, create=False)
    try:
        summary = summarize(store)
        firsts = sorted(c.first_seen for c in summary.findings)
        worker = summary.worker_seconds
        total = sum(worker.values()) or 1.0
        only = only_new_forms(store, summary)
    finally:
        store.close()
    return {
        "candidates": summary.candidates, "per_minute": round(summary.candidates / (summary.active_seconds / 60), 2)
        if summary.active_seconds else 0.0,
        "causes": len(summary.findings), "all_causes": len(summary.causes),
        "first_quarter": sum(t < budget / 4 for t in firsts), "last_quarter": sum(t >= 3 * budget / 4 for t in firsts),
        "shares": {k: round(v / total, 3) for k, v in worker.items()},
        "ours": sum(c.triage.value == "ours" for c in summary.causes),
        "invalid": summary.verdicts.get("invalid", 0),
        "only_new_forms": only,
    }


def one_campaign(toolchain: Any, arm: str, seed: int, args: Any, folder: Path) -> dict[str, Any]:
    request = FuzzRequest(time=args.time, jobs=args.jobs, seed=seed, campaign=str(folder),
                          corpus=str(folder / "corpus"), bisect_time=0.0, localize_time=0.0, fetch_releases=0,
                          **ARMS[arm])
    run_campaign(request, toolchain, Progress(quiet=not args.verbose))
    (folder / "arm.json").write_text(json.dumps({"arm": arm, "seed": seed, "time": args.time}))
    return {"arm": arm, "seed": seed, **figures_of(folder, parse_duration(args.time))}


def line(r: dict[str, Any]) -> str:
    shares = ", ".join(f"{k} {v:.0%}" for k, v in r["shares"].items())
    only = collections.Counter(form.split(":")[0] for form in r["only_new_forms"].values())
    return (f"# {r['arm']} seed {r['seed']}: {r['candidates']} candidates ({r['per_minute']}/min), {r['causes']} "
            f"compiler-bug causes ({r['all_causes']} in all), first quarter {r['first_quarter']}, last quarter "
            f"{r['last_quarter']}; worker time {shares}; ours {r['ours']}, drawn but not verifying "
            f"{r['invalid']}; only new forms reach {len(r['only_new_forms'])} {dict(only)}")


def summarize_arms(results: list[dict[str, Any]], figures: harness.Figures) -> None:
    by_arm: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for r in results:
        by_arm[r["arm"]].append(r)
    mean = lambda arm, key: statistics.fmean(r[key] for r in by_arm[arm])  # noqa: E731
    for arm, rows in by_arm.items():
        figures.add(f"{arm}: compiler-bug causes (mean of {len(rows)})", round(mean(arm, "causes"), 1))
        figures.add(f"{arm}: candidates/min", round(mean(arm, "per_minute"), 1))
        quarters = sum(r["first_quarter"] for r in rows)
        figures.add(f"{arm}: last quarter / first", round(sum(r["last_quarter"] for r in rows) / quarters, 2)
                    if quarters else "-", "x", ">= 0.5" if arm == "default" else "")
        for part in ("confirm", "shrink"):
            figures.add(f"{arm}: {part} share", round(statistics.fmean(r["shares"].get(part, 0.0) for r in rows), 3))
    if "default" not in by_arm:
        return
    figures.add("default: causes only the new forms reach (mean)",
                round(statistics.fmean(len(r["only_new_forms"]) for r in by_arm["default"]), 1), "", ">= 10")
    for arm in by_arm:
        if arm != "default" and mean(arm, "causes"):
            figures.add(f"default / {arm}: compiler-bug causes", round(mean("default", "causes") / mean(arm, "causes"), 2),
                        "x", ">= 1.3")
            figures.add(f"default / {arm}: candidates/min", round(mean("default", "per_minute") / mean(arm, "per_minute"), 2),
                        "x", ">= 0.8" if arm == "no-new-forms" else "")


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--time", default="10m", help="active time of each campaign (equal budgets)")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=300)
    parser.add_argument("--arms", default=",".join(ARMS))
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--keep", default=None, help="keep the campaigns in this folder (ARM-SEED each)")
    parser.add_argument("--read", default=None, help="re-read campaigns kept with --keep instead of running any")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    arms = [a for a in args.arms.split(",") if a in ARMS]
    with harness.session(args) as report:
        results: list[dict[str, Any]] = []
        if args.read:
            for folder in sorted(Path(args.read).iterdir()):
                if (folder / "arm.json").is_file():
                    kept = json.loads((folder / "arm.json").read_text())
                    results.append({**kept, **figures_of(folder, parse_duration(kept["time"]))})
                    print(line(results[-1]), flush=True)
        else:
            toolchain = find_toolchain()
            with tempfile.TemporaryDirectory(prefix="bench-arms-") as scratch:
                root = Path(args.keep or scratch)
                for i in range(args.seeds):
                    for arm in harness.rotated(arms, i):
                        seed = args.first_seed + i
                        results.append(one_campaign(toolchain, arm, seed, args, root / f"{arm}-{seed}"))
                        print(line(results[-1]), flush=True)
        summarize_arms(results, report.figures)
        report.details = results


if __name__ == "__main__":
    main()
