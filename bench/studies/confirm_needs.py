"""What the confirming re-runs of a finished campaign's new buckets would need before and after issue
33's rule (`bucket_book.settled_by_check`: a compiler-bug compile error is not re-run on its own
lane), read from its store, no compiler run:

  - new buckets by stage/status (those a candidate's check made; not those met while shrinking or by
    a confirm's probe of a plain lane),
  - confirm tasks (one per candidate with a new bucket; after: only where a lane is left to run) and
    the lanes they run (the new buckets' lanes, sibling lanes, variants' plain lanes, driver twins),
    the siblings replayed from the buckets in the order they were first seen,
  - the check's seconds on the lanes no longer re-run (about what their re-run took: a compile
    error ends at its pass) beside the worker seconds the store spent on confirming re-runs, and the
    check's seconds on every new bucket's own lane by stage/status (where the re-runs' time goes; a
    blow-up's re-run runs at the full caps, twice the check's time limit).

    .venv/bin/python bench/studies/confirm_needs.py /work/runs/ctx2/{with,without}-{1,2,3}/campaign.sqlite
"""

from __future__ import annotations

import argparse
import collections
import json
import sqlite3
from pathlib import Path

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.campaign.bucket_book import BLOW_UPS, MAX_SIBLING_LANES, settled_by_check
from shapefuzz.campaign.causes.cause_ties import cause_key
from shapefuzz.campaign.outcomes import Failure, Triage
from shapefuzz.model import Status


def needs(path: Path) -> dict:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    lanes_now = set(json.loads(dict(db.execute("SELECT key, value FROM meta"))["config"])["backends"])
    lanes_now -= {b for (b,) in db.execute("SELECT backend FROM set_aside")}
    candidates = {key: (json.loads(backends), json.loads(outcome), finished) for key, backends, outcome, finished
                  in db.execute("SELECT key, backends, outcome, finished FROM candidates")}
    hit_by: dict[str, list[str]] = collections.defaultdict(list)
    for candidate, bucket in db.execute("SELECT candidate, bucket FROM hits"):
        hit_by[bucket].append(candidate)
    rows = db.execute("SELECT sig, sig_json, backend, stage, status, triage, evidence, detail, first_seen "
                      "FROM buckets ORDER BY first_seen, sig").fetchall()
    seen: list[tuple[str, str]] = []  # (cause key, backend) of the buckets so far
    new_by_candidate: dict[str, list[tuple]] = collections.defaultdict(list)
    kinds: collections.Counter[str] = collections.Counter()
    own_seconds: collections.Counter[str] = collections.Counter()
    for sig, sig_json, backend, stage, status, triage, evidence, detail, first_seen in rows:
        fields = json.loads(sig_json)
        maker = next((c for c in hit_by[sig] if c in candidates and candidates[c][2] == first_seen), None)
        if maker is not None and not evidence.startswith("found"):
            new_by_candidate[maker].append((fields, backend, stage, status, triage, detail, list(seen)))
            kinds[f"{stage}/{status}"] += 1
            own_seconds[f"{stage}/{status}"] += candidates[maker][1].get(backend, [None, 0.0])[1]
        seen.append((cause_key(fields), backend))
    out = {"new buckets": dict(kinds.most_common()), "own lane seconds": own_seconds,
           "tasks before": 0, "tasks after": 0, "lanes before": 0, "lanes after": 0, "seconds no longer re-run": 0.0,
           "confirm worker seconds": float(dict(db.execute("SELECT key, value FROM meta")).get(
               "worker_seconds_confirm", 0.0))}
    for key, new in new_by_candidate.items():
        checked, outcome, _ = candidates[key]
        own, settled, others = [], [], []
        for fields, backend, stage, status, triage, detail, before in new:
            failure = Failure.from_fields(fields, detail)
            own.append(backend)
            if settled_by_check(failure, Triage(triage) if triage else Triage.COMPILER_BUG):
                settled.append(backend)
            if Status(status) in BLOW_UPS:
                continue
            siblings = [b for k, b in before if k == cause_key(fields) and b not in checked and b in lanes_now]
            others += list(dict.fromkeys(siblings))[:MAX_SIBLING_LANES]
            base = BACKENDS[backend].variant_of if backend in BACKENDS else ""
            if base and base in lanes_now and base not in checked:
                others.append(base)
            twin = BACKENDS[backend].driver_twin if backend in BACKENDS else ""
            if twin and twin in lanes_now and twin not in checked and triage == Triage.SUSPECTED_DRIVER.value:
                others.append(twin)
        before_lanes = list(dict.fromkeys(own + others))
        after_lanes = list(dict.fromkeys([b for b in own if b not in settled] + others))
        out["tasks before"] += 1
        out["tasks after"] += bool(after_lanes)
        out["lanes before"] += len(before_lanes)
        out["lanes after"] += len(after_lanes)
        out["seconds no longer re-run"] += sum(outcome.get(b, [None, 0.0])[1] for b in settled)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="+", type=Path)
    args = parser.parse_args()
    arms: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    own: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for path in args.stores:
        arm = path.parent.name.rsplit("-", 1)[0]
        figures = needs(path)
        kinds[arm].update(figures.pop("new buckets"))
        own[arm].update(figures.pop("own lane seconds"))
        arms[arm].update(figures)
    for arm, figures in arms.items():
        print(f"{arm}: new buckets {dict(kinds[arm].most_common())}")
        print(f"  confirm tasks {figures['tasks before']} -> {figures['tasks after']}, lanes re-run "
              f"{figures['lanes before']} -> {figures['lanes after']}; the check's seconds on the lanes no longer "
              f"re-run {figures['seconds no longer re-run']:.0f} s of {figures['confirm worker seconds']:.0f} s "
              "confirm worker seconds")
        print("  the check's seconds on the new buckets' own lanes: "
              + ", ".join(f"{kind} {seconds:.0f} s" for kind, seconds in own[arm].most_common()))


if __name__ == "__main__":
    main()
