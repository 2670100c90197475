"""Cluster campaigns (issue "Campaigns on a Ray cluster"): the local pool against a one-node Ray
cluster, and how many results per minute the head absorbs.

Prints, in one run:

1. candidates per minute with the local process pool and with a one-node local Ray cluster at the
   same --jobs, same seed and count, alternating --rounds times (the real compiler; goal: the
   local/Ray ratio at most 1.15);
2. the head's capacity: results per minute the campaign process absorbs (drawing candidates,
   store, buckets, causes, triage, corpus saves) from a fast fake target whose checks cost
   nothing, with no Ray at all. This bounds how many nodes one head serves (goal: at least
   5,000/min, 100 nodes at 50/min each). Two figures: with the real Hypothesis draws the head
   makes, and with draws that cost nothing (what the store and bookkeeping alone allow); each
   per minute of the head's own CPU time (what one free core gives; other load does not count)
   and per minute of wall time on the machine as it is.

    .venv/bin/python bench/bench_cluster.py                       # both, --count 40 --jobs 2
    .venv/bin/python bench/bench_cluster.py --skip-pools --capacity 5000
    .venv/bin/python bench/bench_cluster.py --count 100 --rounds 2 --json
"""

from __future__ import annotations

import hashlib
import json
import shutil
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import harness

from shapefuzz.iree.backends import BACKENDS, DEFAULT_BACKENDS, REFERENCE_BACKEND
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.campaign.worker_pool import Done, Task
from shapefuzz.campaign.report.progress import Progress
from shapefuzz.campaign.run import FuzzRequest, run_campaign
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict, perform
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.iree.toolchain import find_toolchain


# --- 1. local pool against a one-node Ray cluster ------------------------------------------------
def campaign_rate(folder: Path, toolchain, args, cluster: str | None) -> dict[str, Any]:
    request = FuzzRequest(ops=args.ops, count=args.count, jobs=args.jobs, seed=args.seed, campaign=str(folder),
                          corpus=str(folder / "corpus"), shrink=False, cluster=cluster)
    start = time.perf_counter()
    summary = run_campaign(request, toolchain, Progress(quiet=not args.verbose))
    return {"candidates": summary.candidates, "per_minute": round(summary.rate_per_min, 1),
            "active": round(summary.active_seconds, 1), "wall": round(time.perf_counter() - start, 1)}


def pools(toolchain, args, work: Path) -> dict[str, Any]:
    from shapefuzz.campaign.cluster.local import keep_on_this_machine, node_args

    keep_on_this_machine()  # before Ray is imported: the cluster stays on 127.0.0.1
    import ray
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args=node_args(num_cpus=args.jobs,  # on 127.0.0.1 only
                                                                     object_store_memory=100 << 20))
    ray.init(address=cluster.address, logging_level="ERROR", log_to_driver=False)
    rounds: list[dict[str, Any]] = [{} for _ in range(args.rounds)]
    rates = harness.Interleaved("one-node Ray cluster", "local pool")  # the order alternates from round to round

    def arm(r: int, address: str | None) -> float:
        name = "ray" if address else "local"
        rounds[r][name] = campaign_rate(work / f"{name}{r}", toolchain, args, address)
        return rounds[r][name]["per_minute"]

    try:
        for r in range(args.rounds):
            remote, local = rates.measure(lambda: arm(r, cluster.address), lambda: arm(r, None))
            rounds[r]["overhead"] = round(local / max(remote, 1e-9), 3)
            print(f"round {r + 1}: local pool {local}/min, one-node Ray cluster {remote}"
                  f"/min (--jobs {args.jobs}, {args.count} candidates each): overhead {rounds[r]['overhead']}x",
                  flush=True)
    finally:
        ray.shutdown()
        cluster.shutdown()
    return {"jobs": args.jobs, "count": args.count, "rounds": rounds,
            "overhead_median": round(statistics.median(r["overhead"] for r in rounds), 3)}


# --- 2. the head's capacity --------------------------------------------------------------------
@dataclass(frozen=True)
class FastTarget(IreeTarget):
    """The IREE target with checks that cost nothing: one candidate in `fail_every` fails on its
    second lane with one of `messages` errors (so buckets, causes and corpus entries grow as in
    a campaign); everything the head does is the real code. `free_draws`: candidates are made
    up instead of drawn (the head's bookkeeping alone)."""

    fail_every: int = 10
    messages: int = 200
    free_draws: bool = False

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        if not self.free_draws:
            return IreeTarget.generate(self, group, seed, large)
        key = hashlib.sha256(f"{group}:{seed}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"f{seed % 7}", f"g{seed % 11}"), json.dumps({"seed": seed}),
                         f"// candidate {seed}\n" + "x" * (seed % 200))

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        n = int(candidate.key, 16)
        statuses = {lane: (Status.OK, 0.01) for lane in lanes}
        if n % self.fail_every or len(lanes) < 2:
            return Outcome(Verdict.PASS, statuses)
        lane = lanes[1]
        word = "".join(chr(ord("a") + int(d)) for d in str(n // self.fail_every % self.messages))
        message = f"fake failure {word} in pass {'xyz'[n % 3]}"  # letters: numbers are folded in signatures
        signature = Signature(lane, Stage.COMPILE, Status.ERROR, message)
        statuses[lane] = (Status.ERROR, 0.01)
        failure = Failure(signature, message)
        return Outcome(Verdict.FAIL, statuses, (failure,))

    confirm = check

    def save(self, candidate, failure, flaky, cause="", triage="", evidence="") -> str:
        if self.free_draws:  # no case to rebuild: the entry from the shrinker's path (text only)
            from shapefuzz.corpus import make_finding, save_finding

            finding = make_finding(failure.signature, candidate.text, self.toolchain,
                                   detail=failure.detail, flaky=flaky, cause=cause, triage=triage, evidence=evidence)
            return str(save_finding(self.corpus_dir, finding)[0])
        return IreeTarget.save(self, candidate, failure, flaky, cause, triage, evidence)


class InlinePool:
    """WorkerPool's interface, each task run at once in the head: only the head's own work is timed."""

    def __init__(self, target, jobs: int) -> None:
        self.target, self.jobs, self.done = target, jobs, []

    idle = property(lambda self: self.jobs - len(self.done))
    busy = property(lambda self: [d.task for d in self.done])

    def submit(self, task: Task) -> None:
        value = perform(self.target, task.kind, task.candidate, task.argument)
        self.done.append(Done(task, value, 0.01))

    def wait(self, timeout: float) -> list[Done]:
        done, self.done = self.done, []
        return done

    def abandon(self) -> list[Task]:
        return []

    def close(self) -> None:
        pass


def capacity(toolchain, count: int, work: Path, free_draws: bool) -> dict[str, Any]:
    folder = work / ("capacity-free" if free_draws else "capacity")
    target = FastTarget(toolchain, (folder / "corpus").resolve(), free_draws=free_draws)
    lanes = tuple(b for b in DEFAULT_BACKENDS if BACKENDS[b].compiles(toolchain.probe))
    store = CampaignStore(folder)
    groups = ("conv", "conv_transpose", "scatter", "one_hot", "topk")
    engine = Engine(target, store,
                    EngineConfig(groups, lanes, 1, 64, Limits(count=count), reference=REFERENCE_BACKEND,
                                 lanes_per_candidate=2), pool_factory=InlinePool)
    start, cpu = time.perf_counter(), time.process_time()
    engine.run()
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    store.close()
    buckets = len(engine.buckets)
    entries = sum(1 for p in (folder / "corpus").iterdir() if p.is_dir()) if (folder / "corpus").exists() else 0
    per_min, per_cpu_min = engine.stats.session_done / seconds * 60, engine.stats.session_done / cpu * 60
    return {"results": engine.stats.session_done, "seconds": round(seconds, 1), "per_minute": round(per_min),
            "cpu_seconds": round(cpu, 1), "per_cpu_minute": round(per_cpu_min),
            "buckets": buckets, "causes": len(engine.causes.members()), "corpus_entries": entries,
            "nodes_at_50_per_min": int(per_cpu_min // 50)}


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("--count", type=int, default=40, help="candidates per pool campaign (default 40)")
    parser.add_argument("--jobs", type=int, default=2, help="tasks in flight for both pools (default 2)")
    parser.add_argument("--rounds", type=int, default=1, help="local/Ray pairs, alternating (default 1)")
    parser.add_argument("--ops", default=None, help="families (default: every one)")
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--capacity", type=int, default=3000, help="results the head absorbs (default 3000)")
    parser.add_argument("--skip-pools", action="store_true", help="only the head's capacity")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    toolchain = find_toolchain()
    work = Path(tempfile.mkdtemp(prefix="shapefuzz-bench-cluster-"))
    out: dict[str, Any] = {}
    with harness.session(args) as report:
        try:
            if not args.skip_pools:
                out["pools"] = pools(toolchain, args, work)
            for free in (False, True):
                figure = capacity(toolchain, args.capacity, work, free)
                out["capacity_free_draws" if free else "capacity"] = figure
                print(f"head capacity ({'draws that cost nothing' if free else 'real draws'}): "
                      f"{figure['results']} results in {figure['seconds']}s, {figure['cpu_seconds']}s CPU; "
                      f"{figure['buckets']} buckets, {figure['causes']} causes, "
                      f"{figure['corpus_entries']} corpus entries", flush=True)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        if "pools" in out:
            report.figures.add(f"local / one-node Ray candidates/min, median of {args.rounds}",
                               out["pools"]["overhead_median"], "x", "<= 1.15")
        for key, label in (("capacity", "real draws"), ("capacity_free_draws", "draws that cost nothing")):
            figure = out[key]
            # 100 nodes at 50 candidates/min each
            report.figures.add(f"head capacity ({label}), per minute of its CPU", figure["per_cpu_minute"], "/min",
                               ">= 5000" if key == "capacity" else "")
            report.figures.add(f"head capacity ({label}), per minute of wall", figure["per_minute"], "/min")
            report.figures.add(f"head capacity ({label}), nodes at 50/min", figure["nodes_at_50_per_min"])
        report.details = out


if __name__ == "__main__":
    main()
