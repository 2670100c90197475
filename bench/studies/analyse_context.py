"""Where a context bench's time and causes went (issue #33): reads the campaigns `bench_context.py
--keep DIR` left (`<arm>-<seed>` folders; run it on a copy: `report --json` is asked of each) and
prints, per arm:

  - chain and lone candidates: how many, worker seconds a candidate (task, compiler and runtime),
    failing share, mean compile-and-run seconds per lane, and the candidates over 20 s;
  - where the active time went: candidate checks, confirmations, shrinks, the rest;
  - compiler-bug causes per seed, those whose minimal reproducer keeps a chain, and of those the
    ones whose identity a cause without a chain also has (in any arm), with the identity;
  - new causes per 1000 check-seconds by the candidate's chain length (a cause counts for one
    candidate: the reproducer its earliest bucket keeps, the smallest that hit it).

    PYTHONPATH=src .venv/bin/python bench/studies/analyse_context.py /tmp/ctx-bench-copy
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
from pathlib import Path
from typing import Any

from bench_context import bugs, report_of  # the study beside this one (run as a script from this folder)

SLOW = 20.0  # seconds: a candidate this long is listed


def campaigns(base: Path) -> dict[str, list[Path]]:
    arms: dict[str, list[Path]] = {}
    for folder in sorted(base.iterdir()):
        arm, _, seed = folder.name.rpartition("-")
        if arm and seed.isdigit() and (folder / "campaign.sqlite").is_file():
            arms.setdefault(arm, []).append(folder)
    return arms


def rows_of(folder: Path) -> tuple[list[dict[str, Any]], dict[str, str], float]:
    db = sqlite3.connect(f"file:{folder / 'campaign.sqlite'}?mode=ro", uri=True)
    rows = [{"family": f, "chain": bool(json.loads(p).get("context")), "verdict": v, "outcome": json.loads(o),
             "tool": t, "task": k} for f, p, v, o, t, k in
            db.execute("SELECT family, payload, verdict, outcome, tool_seconds, task_seconds FROM candidates")]
    meta = dict(db.execute("SELECT key, value FROM meta"))
    active = float(db.execute("SELECT COALESCE(SUM(active), 0) FROM sessions").fetchone()[0])
    return rows, meta, active


def candidate_lines(arm: str, folders: list[Path]) -> None:
    kinds: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    time = collections.Counter()
    slow = []
    for folder in folders:
        rows, meta, active = rows_of(folder)
        task = sum(r["task"] for r in rows)
        confirm, shrink = float(meta.get("worker_seconds_confirm", 0)), float(meta.get("worker_seconds_shrink", 0))
        time.update({"active": active, "checks": task, "confirm": confirm, "shrink": shrink,
                     "rest": active - task - confirm - shrink})
        for r in rows:
            kinds["chain" if r["chain"] else "lone"].append(r)
            if r["task"] > SLOW:
                slow.append(f"{folder.name}: {r['family']} {'chain' if r['chain'] else 'lone'} {r['task']:.0f}s "
                            f"{r['verdict']} {[s for s, _ in r['outcome'].values()]}")
    print(f"== {arm}: active {time['active']:.0f}s = checks {time['checks']:.0f}s + confirmations "
          f"{time['confirm']:.0f}s + shrinks {time['shrink']:.0f}s + rest {time['rest']:.0f}s")
    for kind in ("lone", "chain"):
        rows = kinds.get(kind, [])
        if not rows:
            continue
        n = len(rows)
        lanes: dict[str, list[float]] = collections.defaultdict(list)
        for r in rows:
            for lane, (_, seconds) in r["outcome"].items():
                if lane == "onnx-reference":  # the second judge, not a lane
                    continue
                lanes[lane].append(seconds)
        fails = sum(r["verdict"] == "fail" for r in rows)
        top = sorted(lanes, key=lambda lane: -len(lanes[lane]))[:4]
        print(f"  {kind:5s} {n:4d} candidates  {sum(r['task'] for r in rows) / n:5.2f}s a candidate "
              f"({sum(r['tool'] for r in rows) / n:5.2f}s in tools)  failing {fails / n:4.0%}  per lane: "
              + ", ".join(f"{lane} {sum(lanes[lane]) / len(lanes[lane]):.2f}s" for lane in top))
    for line in slow:
        print(f"  over {SLOW:.0f}s: {line}")


def cause_lines(arms: dict[str, list[dict[str, Any]]]) -> None:
    lone = collections.defaultdict(set)
    for arm, reports in arms.items():
        for report in reports:
            for cause in bugs(report):
                if not cause.get("chain"):
                    lone[cause["identity"]].add(arm)
    for arm, reports in arms.items():
        per_seed = [len(bugs(r)) for r in reports]
        chained = [c for r in reports for c in bugs(r) if c.get("chain")]
        shared = [c for c in chained if lone.get(c["identity"])]
        print(f"== {arm}: compiler-bug causes per seed {per_seed}; keeping a chain {len(chained)}; "
              f"of those, an identity a cause without a chain has too: {len(shared)}")
        for cause in shared:
            also = sorted(lone[cause["identity"]])
            print(f"  {cause['identity'][:100]} | {cause['chain'][:70]} | also lone in {also}")


def yield_lines(arm: str, folders: list[Path]) -> None:
    """New compiler-bug causes per 1000 check-seconds, by how many context ops a candidate carried."""
    tally: dict[int, list[float]] = collections.defaultdict(lambda: [0, 0.0, 0])  # candidates, seconds, causes
    for folder in folders:
        db = sqlite3.connect(f"file:{folder / 'campaign.sqlite'}?mode=ro", uri=True)
        first: dict[str, tuple[float, str]] = {}
        for cause, seen, key in db.execute(
                "SELECT cause, first_seen, repro_key FROM buckets WHERE triage = 'compiler bug'"):
            if cause not in first or seen < first[cause][0]:
                first[cause] = (seen, key)
        opened = collections.Counter(key for _, key in first.values())
        for key, payload, seconds in db.execute("SELECT key, payload, task_seconds FROM candidates"):
            ops = min(len(json.loads(payload).get("context") or []), 6)
            row = tally[ops]
            row[0] += 1
            row[1] += seconds
            row[2] += opened.get(key, 0)
    cells = [f"{n}{'+' if n == 6 else ''} ops: {int(c)} cand, {k} new, {1000 * k / s:.0f}"
             for n, (c, s, k) in sorted(tally.items()) if s]
    print(f"== {arm}: new causes per 1000 check-seconds by chain length: " + "; ".join(cells))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base", type=Path, help="the folder of the bench's kept campaigns (a copy)")
    args = ap.parse_args()
    found = campaigns(args.base)
    for arm, folders in found.items():
        candidate_lines(arm, folders)
        yield_lines(arm, folders)
    cause_lines({arm: [report_of(f) for f in folders] for arm, folders in found.items()})


if __name__ == "__main__":
    main()
