"""The engine's observer (`campaign.engine.Observer`, what bench/bench_soak.py times the head with):
it is told every finished task once it is taken in and the CPU seconds of the head's own steps,
and watching changes nothing the campaign does."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from support.engine_fakes import InertTargetParts

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.outcomes import TaskKind, Verdict
from shapefuzz.model import Signature, Stage, Status


@dataclass(frozen=True)
class EveryFifth(InertTargetParts):
    """Every fifth candidate fails on its second lane, with one of three messages."""

    corpus: str

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % 10_000
        return Candidate(hashlib.sha256(f"{n}".encode()).hexdigest()[:16], group, seed, (f"f{n % 3}",),
                         json.dumps({"n": n}), "x" * (n % 7 + 1))

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        if n % 5 or len(lanes) < 2:
            return Outcome(Verdict.PASS, {lane: (Status.OK, 0.001) for lane in lanes}, (), 0.0)
        message = f"bug {'abc'[n % 3]}"
        return Outcome(Verdict.FAIL, {lanes[0]: (Status.OK, 0.001), lanes[1]: (Status.ERROR, 0.001)},
                       (Failure(Signature(lanes[1], Stage.COMPILE, Status.ERROR, message)),), 0.0)

    def confirm(self, candidate: Candidate, lanes) -> Outcome:
        return self.check(candidate, lanes)


class Watch:
    def __init__(self) -> None:
        self.head: list[float] = []
        self.done: list = []

    def head_work(self, seconds: float) -> None:
        self.head.append(seconds)

    def finished(self, done) -> None:
        self.done.append(done)


def _campaign(folder, observer=None):
    engine = Engine(EveryFifth(str(folder / "corpus")), CampaignStore(folder / "camp"),
                    EngineConfig(("g",), ("a", "b", "c"), 3, 1, Limits(count=30), start_method="fork", reference="a",
                                 lanes_per_candidate=2), observer=observer)
    reason = engine.run()
    rows = [(r.key, r.verdict, r.backends) for r in engine.store.candidates()]
    buckets = sorted((b.sig, b.state, b.cause) for b in engine.store.buckets())
    engine.store.close()
    return reason, rows, buckets


def test_the_observer_sees_every_finished_task_and_the_heads_steps(tmp_path):
    watch = Watch()
    reason, rows, buckets = _campaign(tmp_path / "watched", watch)
    checks = [d for d in watch.done if d.task.kind == TaskKind.CHECK]
    assert len(checks) == len(rows) == 30 and buckets  # every candidate's check, once
    assert any(d.task.kind == TaskKind.CONFIRM for d in watch.done)  # confirmations too
    assert len(watch.head) > len(watch.done) and all(s >= 0.0 for s in watch.head)  # fill, finish, tick
    assert (reason, rows, buckets) == _campaign(tmp_path / "plain")  # watching changes nothing
