"""Long-campaign soak: does the head stay fast and small as a campaign grows (issue 35, "Scale")?

Runs the real campaign engine, worker pool and store on a fake target that answers in a few
milliseconds with a realistic mix: most candidates pass; a failing one fails with a cause drawn from
a heavy-tailed distribution (a few causes are met again and again, new ones keep trickling in), on
every lane it is checked on or on the reference lane alone; a few causes do not come back on their
confirming re-run (flaky). Each new bucket is saved to a fake corpus (one small file per entry).
Prints, per tenth of the campaign: the head's CPU time per result (the engine's own work: drawing,
bucketing, the store, the progress), its resident memory, the store's bytes per candidate; then
`report` (summary + report.md) and `report --html` times, the time a resume takes to check every
row (as `fuzz --campaign` does first) and to read the store back, corpus entries against buckets
and causes, and the discovery estimate at the end.

    .venv/bin/python bench/bench_soak.py                      # 100,000 candidates, --jobs 2
    .venv/bin/python bench/bench_soak.py --count 20000 --keep /tmp/soak

Goals: the last tenth's head time per result within 1.1x the first tenth's, head RSS below 400 MB,
store bytes per candidate constant, report and report --html under 10 s, a resume under 5 s.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import summarize, write_report
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Triage, Verdict
from shapefuzz.model import Signature, Stage, Status

LANES = ("ref", "b", "c")


@dataclass(frozen=True)
class SoakTarget:
    """Candidate n carries five of 40 features; it passes with chance 1 - fail_share, otherwise
    it fails with cause int(Pareto(alpha)), on all its lanes (or the reference lane alone for every
    fourth cause), and carries that cause's three trigger features (of 60) too."""

    corpus: str
    fail_share: float = 0.3
    alpha: float = 0.6
    seconds: float = 0.002

    def worker_init(self) -> None:
        pass

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % (1 << 40)
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        rng = random.Random(n * 7919)
        cause = self._cause_of(n)
        trigger = set() if cause is None else {f"t{(cause * k) % 60}" for k in (1, 7, 13)}
        features = tuple(sorted({f"f{rng.randrange(40)}" for _ in range(5)} | trigger))
        return Candidate(key, group, seed, features, json.dumps({"n": n}), f"// case {n}\n" + "x" * (40 + n % 200))

    def deadline(self, lanes) -> float:
        return 30.0

    def size(self, text: str) -> tuple[int, ...]:
        return (len(text),)

    def _cause(self, candidate: Candidate) -> int | None:
        return self._cause_of(json.loads(candidate.payload)["n"])

    def _cause_of(self, n: int) -> int | None:
        rng = random.Random(n)
        if rng.random() >= self.fail_share:
            return None
        return min(int(rng.paretovariate(self.alpha)), 10 ** 9)

    def check(self, candidate: Candidate, lanes, again: bool = False) -> Outcome:
        time.sleep(self.seconds)
        cause = self._cause(candidate)
        if cause is not None and again and cause % 50 == 7:
            cause = None  # flaky: not on its re-run
        failing = () if cause is None else tuple(l for l in lanes if l == LANES[0] or cause % 4)
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, f"fake error {cause}"))
                         for lane in failing)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (Status.ERROR if lane in failing else Status.OK, self.seconds / len(lanes))
                        for lane in lanes}, failures, self.seconds * 0.9)

    def confirm(self, candidate: Candidate, lanes) -> Outcome:
        return self.check(candidate, lanes, again=True)

    def corpus_count(self, failure: Failure):
        path = Path(self.corpus) / hashlib.sha256(failure.key.encode()).hexdigest()[:12]
        return str(path), int(path.read_text()) if path.exists() else 0

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        where, count = self.corpus_count(failure)
        Path(where).write_text(str(count + 1))
        return where

    def triage(self, candidate, failure, outcome):
        return Triage.COMPILER_BUG, "fake"

    def rename_cause(self, entry, cause):
        pass

    def shrink(self, candidate, job):
        return None


def _rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _since(clock: tuple[float, float]) -> str:
    return f"{time.perf_counter() - clock[0]:.1f} ({time.process_time() - clock[1]:.1f})"


def _store_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.glob("campaign.sqlite*"))


class SoakEngine(Engine):
    """The engine, with its own work timed per tenth of the campaign's candidates."""

    def setup(self, total: int) -> None:
        self.total, self.tenth = total, 0
        self.head = [0.0] * 10
        self.results = [0] * 10
        self.rows: list[dict] = []
        self.started = time.perf_counter()
        self.mark = (0, 0, self._db_bytes())  # (candidates, draws dropped, logical database bytes) when the tenth began

    def _db_bytes(self) -> int:
        """The database's logical size (what the WAL holds included, its preallocation not)."""
        pages = self.store.db.execute("PRAGMA page_count").fetchone()[0]
        return pages * self.store.db.execute("PRAGMA page_size").fetchone()[0]

    def _timed(self, method, *args):
        start = time.thread_time()  # CPU time: on a shared machine, wall time mostly measures the neighbours
        try:
            return method(*args)
        finally:
            self.head[self.tenth] += time.thread_time() - start

    def _finish(self, done) -> None:
        self._timed(super()._finish, done)
        self.results[self.tenth] += 1
        tenth = min(9, len(self.tried) * 10 // self.total)
        if tenth != self.tenth:
            self._close_tenth()
            self.tenth = tenth

    def _close_tenth(self) -> None:
        n, dropped, size = len(self.tried), self.stats.steered_away + self.stats.duplicates, self._db_bytes()
        new = max(1, n - self.mark[0])
        self.rows.append({"tenth": self.tenth + 1, "candidates": n,
                          "head_ms": 1000 * self.head[self.tenth] / max(1, self.results[self.tenth]),
                          "draws": 1 + (dropped - self.mark[1]) / new,
                          "rss_mb": _rss_mb(), "store_bytes_per_candidate": (size - self.mark[2]) / new,
                          "buckets": len(self.buckets), "wall_s": time.perf_counter() - self.started})
        self.mark = (n, dropped, size)

    def _fill(self, pool, stopping) -> None:
        self._timed(super()._fill, pool, stopping)

    def _tick(self) -> None:
        self._timed(super()._tick)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--seconds", type=float, default=0.002, help="what the fake target takes per check")
    parser.add_argument("--keep", default=None, help="keep the campaign in this folder")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="soak-"))
    if folder.exists() and args.keep:
        shutil.rmtree(folder)
    (folder / "corpus").mkdir(parents=True)
    target = SoakTarget(str(folder / "corpus"), seconds=args.seconds)
    try:
        engine = SoakEngine(target, CampaignStore(folder), ("g",), LANES, 1, args.jobs, Limits(count=args.count),
                            start_method="fork", reference="ref", lanes_per_candidate=2, shrink=False)
        engine.setup(args.count)
        reason = engine.run()
        engine._close_tenth()
        wall = time.perf_counter() - engine.started
        engine.store.close()
        print(f"{args.count} candidates, --jobs {args.jobs}, fake check {args.seconds * 1000:.0f} ms: {reason} "
              f"in {wall:.0f} s ({args.count / wall * 60:.0f}/min)")
        print(f"{'tenth':>5} {'candidates':>10} {'head CPU ms/result':>18} {'draws/cand':>10} {'head RSS MB':>11} "
              f"{'store B/cand':>12} {'buckets':>7}")
        for r in engine.rows:
            print(f"{r['tenth']:>5} {r['candidates']:>10} {r['head_ms']:>18.3f} {r['draws']:>10.1f} {r['rss_mb']:>11.0f} "
                  f"{r['store_bytes_per_candidate']:>12.0f} {r['buckets']:>7}")
        first, last = engine.rows[0]["head_ms"], engine.rows[-1]["head_ms"]
        print(f"head time per result, last tenth / first: {last / first:.2f}x")

        store = CampaignStore(folder, create=False)
        clock = (time.perf_counter(), time.process_time())
        summary = summarize(store, reason)
        write_report(summary, folder)
        report_s, clock = _since(clock), (time.perf_counter(), time.process_time())
        from shapefuzz.campaign.report.dashboard import write_dashboard

        write_dashboard(store)
        html_s = _since(clock)
        store.close()
        clock = (time.perf_counter(), time.process_time())
        store = CampaignStore(folder)
        store.check_rows()  # what `fuzz --campaign` reads first
        check_s, clock = _since(clock), (time.perf_counter(), time.process_time())
        again = Engine(target, store, ("g",), LANES, 1, args.jobs, Limits(count=args.count),
                       start_method="fork", reference="ref", lanes_per_candidate=2, shrink=False)
        again_reason = again.run()
        resume_s = _since(clock)
        again.store.close()
        entries = sum(1 for _ in (folder / "corpus").iterdir())
        d = summary.discovery
        print(f"wall (CPU) seconds: report (summary + report.md) {report_s}; report --html {html_s}; "
              f"resume: every row checked {check_s}, read back ({again_reason}) {resume_s}")
        print(f"store {_store_bytes(folder) / 1e6:.1f} MB; report.md {(folder / 'report.md').stat().st_size / 1e3:.0f} KB; "
              f"report.html {(folder / 'report.html').stat().st_size / 1e3:.0f} KB")
        per_cause = max((len(c.corpus_entries) for c in summary.causes), default=0)
        print(f"buckets {len(summary.buckets)}, causes {len(summary.causes)}, corpus entries {entries} "
              f"(at most {per_cause} per cause; re-hits of known buckets write none)")
        print(f"discovery: Good–Turing {d.good_turing:.4f}, Chao1 {d.chao1:.0f} "
              f"({d.chao1_95[0]:.0f}-{d.chao1_95[1]:.0f}), {d.seen} seen")
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
