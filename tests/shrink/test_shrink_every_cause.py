"""Every compiler-bug cause the report shows gets a shrunk example of its own (fake targets): the
shrink plan keys causes as the report splits them (dispatch kind during the campaign; localized
place after it, when the wrap-up shrinks the split-off part), and a cause left unshrunk says why."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, replace
from pathlib import Path

from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign import engine as engine_module
from shapefuzz.campaign.database import BucketRow
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.shrinkorder import met_while_shrinking
from shapefuzz.campaign.localizing import LOCALIZE_META, localizations
from shapefuzz.campaign.outcomes import BucketState, Verdict
from shapefuzz.campaign.report.summary import markdown, summarize, text_lines
from shapefuzz.campaign.run import _shrink_phase
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.localize import CODEGEN, Localization

from support.economy import Target  # noqa: F401

DISTRIBUTE = "'func.func' op failed to distribute"


@dataclass(frozen=True)
class TwoLaneTarget(Target):
    """Every hot candidate fails on lanes a and b with one strong identity (one engine cause); on a
    with `stage/status/message_a` and detail `detail_a`, on b likewise. Each shrink appends its
    bucket's lane and its seconds to `log` (shrinks run in worker processes)."""

    log: str = ""
    stage: Stage = Stage.COMPILE
    status_: Status = Status.ERROR
    message: str = DISTRIBUTE
    detail_a: str = ""
    detail_b: str = ""

    def check(self, candidate: Candidate, lanes) -> Outcome:
        hot = json.loads(candidate.payload)["n"] % self.hot_mod == 0
        failures = tuple(Failure(Signature(lane, self.stage, self.status_, self.message),
                                 detail=self.detail_a if lane == "a" else self.detail_b,
                                 identity="pass P: one bug", strong=True) for lane in lanes if hot)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (self.status_ if hot else Status.OK, 0.01) for lane in lanes}, failures)

    confirm = check

    def shrink(self, candidate: Candidate, job):
        with open(self.log, "a") as out:
            out.write(f"{job.backend} {job.seconds}\n")
        return None


def _run(tmp_path: Path, target: TwoLaneTarget, share: float) -> Engine:
    engine = Engine(target, CampaignStore(tmp_path / "c"),
                    EngineConfig(("g",), ("a", "b"), 11, 1, Limits(count=8), start_method="fork", shrink=True,
                                 shrink_share=share, min_shrink_seconds=0.01, shrink_seconds=1.0))
    engine.run()
    return engine


def _shrunk_lanes(target: TwoLaneTarget) -> list[str]:
    log = Path(target.log)
    return sorted(line.split()[0] for line in log.read_text().splitlines()) if log.exists() else []


def test_the_campaign_shrinks_each_dispatch_kind_the_report_splits_a_cause_into(tmp_path):
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"),
                           detail_a="in main_dispatch_0_arg_compare_4xf32", detail_b="in main_dispatch_0_attention_4x8xf32")
    engine = _run(tmp_path, target, 1.0)
    assert len(engine.causes.members()) == 1  # one cause to the engine, by its strong identity
    summary = summarize(engine.store)
    assert len(summary.findings) == 2  # the report splits it: an argmax and an attention
    assert _shrunk_lanes(target) == ["a", "b"]  # each part shrunk during the campaign, no wrap-up needed
    assert all(c.shrunk and not c.not_shrunk for c in summary.findings)


def _localize_apart(store: CampaignStore) -> None:
    """The wrong values on lane a localized to the target's codegen, on lane b to a dispatch-creation
    pass: two bugs, as `localize_causes` would record them."""
    for b in store.buckets():
        loc = Localization(CODEGEN, certain=True) if b.backend == "a" else \
            Localization("dispatch-creation", "iree-dispatch-creation-x", "XPass", certain=True)
        store.set_meta(LOCALIZE_META + b.sig, json.dumps(loc.to_json()))


def test_a_cause_split_off_by_localization_is_shrunk_at_wrap_up(tmp_path):
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 1.0)
    assert len(_shrunk_lanes(target)) == 1  # one cause to the campaign: one shrink
    _localize_apart(engine.store)
    before = summarize(engine.store)
    assert len(before.findings) == 2
    unshrunk = [c for c in before.findings if not c.shrunk]
    assert len(unshrunk) == 1 and "another cause" in unshrunk[0].not_shrunk
    after = _shrink_phase(engine, engine.store, before, "budget spent", [])
    assert _shrunk_lanes(target) == ["a", "b"]
    assert all(c.shrunk and not c.not_shrunk for c in after.findings)
    assert "shrunk: 2 of 2 compiler-bug causes" in text_lines(after)
    shown = {b["signature"] for b in after.buckets}
    assert all(sig in shown for c in after.causes for sig in c.buckets)  # its buckets read again with its causes


def test_a_cause_left_unshrunk_says_why(tmp_path):
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 0.0)  # no shrink share: nothing is shrunk, during or after
    _localize_apart(engine.store)
    summary = _shrink_phase(engine, engine.store, summarize(engine.store), "budget spent", [])
    assert _shrunk_lanes(target) == []
    assert len(summary.findings) == 2 and not any(c.shrunk for c in summary.findings)
    assert all("shrink share" in c.not_shrunk for c in summary.findings)
    lines = text_lines(summary)
    assert sum(line.strip().startswith("not shrunk: its shrink was still waiting") for line in lines) == 2
    assert "not shrunk: its shrink was still waiting" in markdown(summary)
    assert all("shrink share" in c["not_shrunk"] for c in summary.to_json()["causes"])


def test_the_wrap_up_divides_what_is_left_of_the_share_among_the_causes_it_shrinks(tmp_path, monkeypatch):
    monkeypatch.setattr(engine_module, "UNSHRUNK_CAUSE_SECONDS", 0.0)  # the share alone
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 0.0)
    _localize_apart(engine.store)
    engine.config = replace(engine.config, shrink_share=1.0, shrink_seconds=100.0)
    engine.active = lambda: 10.0  # 10 s of share left
    causes = [list(c.buckets) for c in summarize(engine.store).findings]
    assert engine.shrink_causes(causes, localizations(engine.store, engine.store.buckets()), 60.0) == 2
    first, second = [float(line.split()[1]) for line in Path(target.log).read_text().splitlines()]
    assert first <= 5.0 + 1e-6 and second <= 10.0  # the first took half, not all of it


def test_a_cause_with_no_shrunk_example_is_shrunk_after_the_budget_even_once_the_share_is_spent(tmp_path):
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 0.0)
    _localize_apart(engine.store)
    engine.config, engine.active = replace(engine.config, shrink_share=0.01), lambda: 1.0  # a share, all of it spent long ago
    causes = [list(c.buckets) for c in summarize(engine.store).findings]
    assert engine.shrink_causes(causes, localizations(engine.store, engine.store.buckets()), 60.0) == 2
    seconds = [float(line.split()[1]) for line in Path(target.log).read_text().splitlines()]
    assert len(seconds) == 2 and all(s <= engine_module.UNSHRUNK_CAUSE_SECONDS for s in seconds)


def _met(tmp_path: Path, key: str, seed: object = 7, header: bool = True) -> BucketRow:
    entry = tmp_path / "corpus" / "e1"
    entry.mkdir(parents=True, exist_ok=True)
    (entry / "meta.json").write_text(json.dumps({"seed": seed}))
    text = ('// shapefuzz-case: {"family":"g","params":{"n":3},"version":1}\n' if header else "") + "func.func @main() {}\n"
    return BucketRow(sig="a/compare/mismatch: wrong values", sig_json={}, backend="a", stage="compare",
                     status="mismatch", family="g", count=1, first_seen=0.0, last_seen=0.0, first_wall=0.0,
                     last_wall=0.0, state=BucketState.CONFIRMED, repro_key=key, repro_size=len(text),
                     repro_text=text, detail="", corpus_entry=str(entry), shrunk_size=None)


def test_a_bucket_met_while_shrinking_another_can_be_shrunk_from_its_text_and_entry_seed(tmp_path):
    found = met_while_shrinking(_met(tmp_path, "shrunk-0123456789abcdef"))
    assert found is not None and (found.key, found.group, found.seed) == ("shrunk-0123456789abcdef", "g", 7)
    assert json.loads(found.payload) == {"n": 3} and found.text.startswith("// shapefuzz-case:")
    assert met_while_shrinking(_met(tmp_path, "0123456789abcdef")) is None  # a drawn one: the store has it
    assert met_while_shrinking(_met(tmp_path, "shrunk-0123456789abcdef", seed="x")) is None
    assert met_while_shrinking(_met(tmp_path, "shrunk-0123456789abcdef", header=False)) is None


def test_the_wrap_up_shrinks_do_not_count_as_active_fuzzing_time(tmp_path):
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 1.0)
    _localize_apart(engine.store)
    active = summarize(engine.store).active_seconds
    engine.active = lambda: active + 3600.0  # an hour of localizing and ranging since the budget ended
    _shrink_phase(engine, engine.store, summarize(engine.store), "budget spent", [])
    assert summarize(engine.store).active_seconds == active  # the per-minute rates stay the campaign's


def test_the_clock_stops_when_the_fuzzing_does(tmp_path):
    """A wrap-up phase long enough to tick (every 10 s) wrote its own time as fuzzing time: a default
    20-minute campaign reported 27m57s active and a lower rate. The clock stops with the fuzzing."""
    target = TwoLaneTarget(str(tmp_path / "corpus"), log=str(tmp_path / "log"), stage=Stage.COMPARE,
                           status_=Status.MISMATCH, message="wrong values")
    engine = _run(tmp_path, target, 1.0)
    active = summarize(engine.store).active_seconds
    engine.stats.session_start -= 3600.0  # an hour of localizing, shrinking and ranging since
    engine._last_store_tick = -1e9  # the next tick writes the session's time
    engine._tick()
    assert summarize(engine.store).active_seconds == active and engine.active() == active
