"""Where a chain candidate's extra check time goes (issue #33): a fixed sample of stored chain
candidates (from campaign stores, read-only: the `--top` costliest that passed and the `--mid` around
the median), each rebuilt from its payload and checked on its stored lanes as a campaign's worker
checks it (`IreeTarget.check`), its bare root (the same params without the chain) beside it. Per
check: the wall, the verifier, each lane's compile and run seconds, the worker's own parts
(worktime: reference, judge, compare, inputs, files, processes) and the input and output elements.
Prints per case, then the sums by part, by lane and by chain op (chain - root seconds), and the
chain / root ratio; `--dispatches` also counts each one's dispatches (llvm-cpu's flow phase, not
timed) and sums the extra compile by extra dispatches; `--timeouts` re-checks instead the chain
candidates a compile timed out on, on those lanes. The same stores with two trees' src on the path
give their before/after.

    PYTHONPATH=src .venv/bin/python bench/studies/bench_chain_split.py COPY/with-{1,2,3}.sqlite --top 30 --mid 30 --dispatches
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from shapefuzz.judge import oracle
from shapefuzz.case import Case
from shapefuzz.families import get_family
from shapefuzz.families.context.wrap import bare
from shapefuzz.iree.toolchain import find_toolchain
from shapefuzz.process.worktime import take


def sample(stores: list[Path], top: int, mid: int, timeouts: bool = False) -> list[dict[str, Any]]:
    """The `top` costliest passing chain candidates of the stores and the `mid` around their median;
    with `timeouts`, every chain candidate a compile timed out on, on those lanes only."""
    rows = []
    for store in stores:
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
        for key, family, seed, payload, lanes, task, features, verdict, outcome in db.execute(
                "SELECT key, family, seed, payload, backends, task_seconds, features, verdict, outcome "
                "FROM candidates"):
            if not json.loads(payload).get("context"):
                continue
            hung = tuple(lane for lane, (status, _) in json.loads(outcome).items() if status == "timeout")
            if (verdict == "pass") if not timeouts else hung:
                rows.append({"key": key, "family": family, "seed": seed, "payload": payload, "task": task,
                             "lanes": hung or tuple(json.loads(lanes)), "large": "regime:large" in json.loads(features)})
    if timeouts:
        return rows
    rows.sort(key=lambda r: -r["task"])
    middle = len(rows) // 2
    picked = rows[:top] + rows[max(top, middle - mid // 2):][:mid]
    return picked


class Recorder:
    """What one check did, as the oracle's watcher sees it (`oracle.watch_checks`): the verifier's
    seconds, the report, and the input and output elements judged."""

    def __init__(self) -> None:
        self.verify = 0.0
        self.report: Any = None
        self.elements = (0, 0)

    def __call__(self, report: Any, verify_seconds: float, expectation: Any) -> None:
        self.verify += verify_seconds
        if expectation is not None:
            self.elements = (sum(int(np.asarray(a).size) for a in expectation.inputs),
                             sum(int(np.asarray(a).size) for a in expectation.expected))
        self.report = report

    def reset(self) -> None:
        self.verify, self.report, self.elements = 0.0, None, (0, 0)


def dispatches(toolchain: Any, text: str) -> int:
    """How many dispatches llvm-cpu's flow phase makes of `text` (-1: it does not get there)."""
    import re
    import subprocess

    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.iree.input_dialect import input_type_flags

    with tempfile.TemporaryDirectory(prefix="chain-split-") as folder:
        source, flow = Path(folder, "module.mlir"), Path(folder, "flow.mlir")
        source.write_text(text)
        done = subprocess.run([str(toolchain.compile_bin), str(source), *BACKENDS["llvm-cpu"].compile_flags(toolchain.probe),
                               *input_type_flags(text), "--compile-to=flow", "-o", str(flow)],
                              capture_output=True, timeout=120)
        return len(re.findall(r"flow\.executable private @", flow.read_text())) if done.returncode == 0 else -1


def split_of(target: Any, recorder: Recorder, family: str, seed: int, params: Any,
             lanes: tuple[str, ...]) -> dict[str, Any]:
    """One cold check as a worker does it, and where its wall went."""
    oracle.forget_expectations()
    recorder.reset()
    candidate = target.from_payload(family, seed, Case.make(family, params).params_json)
    start = time.perf_counter()
    with oracle.watch_checks(recorder):
        outcome = target.check(candidate, lanes)
    wall = time.perf_counter() - start
    parts: dict[str, float] = {"verify": recorder.verify}
    lane_status = {}
    for result in recorder.report.results if recorder.report is not None else ():
        lane_status[result.backend] = result.status.value
        parts[f"compile {result.backend}"] = result.compile_seconds
        parts["run"] = parts.get("run", 0.0) + result.run_seconds
    parts.update(outcome.split)
    parts["other"] = wall - sum(parts.values())
    return {"wall": wall, "parts": parts, "status": lane_status, "elements": recorder.elements,
            "verdict": outcome.verdict.value, "text": candidate.text}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("stores", type=Path, nargs="+", help="campaign.sqlite files (copies; opened read-only)")
    ap.add_argument("--top", type=int, default=30, help="costliest passing chain candidates (default 30)")
    ap.add_argument("--mid", type=int, default=30, help="passing chain candidates around the median (default 30)")
    ap.add_argument("--timeouts", action="store_true",
                    help="instead: the chain candidates whose compile timed out, on those lanes")
    ap.add_argument("--dispatches", action="store_true",
                    help="also count each check's dispatches (llvm-cpu's flow phase, outside the timed check)")
    ap.add_argument("--json", type=Path, help="write every case's split here")
    args = ap.parse_args()
    from shapefuzz.campaign.iree import IreeTarget

    recorder = Recorder()
    cases = sample(args.stores, args.top, args.mid, args.timeouts)
    sums: dict[str, collections.Counter] = {"chain": collections.Counter(), "root": collections.Counter()}
    by_op: dict[str, list[float]] = collections.defaultdict(list)
    by_group: dict[str, list[tuple[float, float]]] = collections.defaultdict(list)
    by_extra: dict[int, list[tuple[float, int]]] = collections.defaultdict(list)  # extra dispatches: (extra compile s, lanes)
    kept = []
    with tempfile.TemporaryDirectory(prefix="chain-split-") as corpus:
        target = IreeTarget(find_toolchain(None), Path(corpus))
        target.worker_init()
        take()  # the start-up is no case's
        for i, row in enumerate(cases):
            params = get_family(row["family"]).load(Case(row["family"], row["payload"]).params)
            ops = [op.op for op in params.context]
            got = {kind: split_of(target, recorder, row["family"], row["seed"], p, row["lanes"])
                   for kind, p in (("chain", params), ("root", bare(params)))}
            for kind, one in got.items():
                sums[kind].update(one["parts"])
                sums[kind]["wall"] += one["wall"]
                sums[kind]["in elements"] += one["elements"][0]
                sums[kind]["out elements"] += one["elements"][1]
            extra = got["chain"]["wall"] - got["root"]["wall"]
            for one in got.values():
                text = one.pop("text")
                one["dispatches"] = dispatches(target.toolchain, text) if args.dispatches else None
            if args.dispatches and min(got["chain"]["dispatches"], got["root"]["dispatches"]) >= 0:
                compiled = {kind: sum(v for k, v in one["parts"].items() if k.startswith("compile "))
                            for kind, one in got.items()}
                by_extra[got["chain"]["dispatches"] - got["root"]["dispatches"]].append(
                    (compiled["chain"] - compiled["root"], len(row["lanes"])))
            for op in set(ops):
                by_op[op].append(extra)
            group = "top" if i < args.top else "mid"
            by_group[group].append((got["chain"]["wall"], got["root"]["wall"]))
            by_group[f"{group} {'large' if row['large'] else 'small'}"].append(
                (got["chain"]["wall"], got["root"]["wall"]))
            frontend = json.loads(row["payload"]).get("frontend", "linalg")
            c, r = got["chain"], got["root"]
            top_parts = sorted(((k, c["parts"].get(k, 0.0) - r["parts"].get(k, 0.0)) for k in c["parts"]),
                               key=lambda kv: -kv[1])[:2]
            print(f"{i:3d} {group} {row['family']:14s} {frontend:6s} {','.join(ops)[:40]:40s} "
                  f"{'+'.join(row['lanes'])[:44]:44s} stored {row['task']:5.2f}s chain {c['wall']:5.2f}s "
                  f"root {r['wall']:5.2f}s in {c['elements'][0]}/{r['elements'][0]} "
                  f"most: {', '.join(f'{k} {v:+.2f}' for k, v in top_parts)} "
                  f"{'' if c['verdict'] == 'pass' else 'chain ' + c['verdict'] + str(c['status'])}", flush=True)
            kept.append({"row": {k: v for k, v in row.items() if k != "payload"}, "ops": ops, **got})
    if args.json:
        args.json.write_text(json.dumps(kept, indent=1))
    n = len(cases)
    print(f"\n{n} cases, seconds a case (chain | root | chain - root):")
    names = sorted(set(sums["chain"]) | set(sums["root"]), key=lambda k: -(sums["chain"][k] - sums["root"][k]))
    for name in names:
        c, r = sums["chain"][name] / n, sums["root"][name] / n
        if "elements" in name:
            print(f"  {name:36s} {c:10.0f} | {r:10.0f} | {c / max(r, 1):.2f}x")
        elif abs(c) > 0.0005 or abs(r) > 0.0005:
            print(f"  {name:36s} {c:7.3f} | {r:7.3f} | {c - r:+7.3f}")
    print("by group (chain / root wall):")
    for group, pairs in sorted(by_group.items()):
        cw, rw = sum(p[0] for p in pairs), sum(p[1] for p in pairs)
        print(f"  {group:10s} {len(pairs):3d} cases chain {cw / len(pairs):5.2f}s root {rw / len(pairs):5.2f}s "
              f"{cw / max(rw, 1e-9):.2f}x (median ratio {statistics.median(p[0] / p[1] for p in pairs):.2f}x)")
    if by_extra:
        print("by extra dispatches (llvm-cpu flow): cases, chain - root compile seconds a lane")
        for more, pairs in sorted(by_extra.items()):
            print(f"  {more:+3d} {len(pairs):3d} cases {statistics.mean(c / n for c, n in pairs):+6.2f}s")
    print("by chain op (cases holding it: mean chain - root seconds):")
    for op, extras in sorted(by_op.items(), key=lambda kv: -statistics.mean(kv[1])):
        print(f"  {op:14s} {len(extras):3d} {statistics.mean(extras):+6.2f}s")
    cw, rw = sums["chain"]["wall"], sums["root"]["wall"]
    print(f"chain / root: {cw / max(rw, 1e-9):.2f}x ({cw / n:.2f}s vs {rw / n:.2f}s a case)")


if __name__ == "__main__":
    main()
