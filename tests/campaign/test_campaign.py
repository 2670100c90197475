"""Campaign engine, store, budget parsing and report, with an in-process fake target (no IREE):
bucketing, duplicates, confirmation and flaky marks, set-aside, lost workers, resume."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign.config import format_duration, parse_duration, resolve_names
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome, Steering
from shapefuzz.campaign.outcomes import Triage, Verdict
from shapefuzz.campaign.report.summary import sparkline, summarize, svg_plot, write_report
from shapefuzz.campaign.database import FORMAT_VERSION, CampaignStore
from shapefuzz.errors import CorpusError, UsageError
from shapefuzz.model import Signature, Stage, Status
from support.fake_campaign import FakeTarget, SEEN, campaign_engine  # noqa: F401


# --- budgets and names ---------------------------------------------------------------------------
@pytest.mark.parametrize("text,seconds", [("45s", 45), ("90m", 5400), ("8h", 28800), ("1h30m", 5400), ("2d", 172800),
                                          ("10", 10), ("1.5h", 5400)])
def test_parse_duration(text, seconds):
    assert parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "8x", "h", "-5m", "0s", "1h30", "soon"])
def test_parse_duration_rejects(text):
    with pytest.raises(UsageError, match="--time"):
        parse_duration(text)


def test_resolve_names_suggests():
    with pytest.raises(UsageError, match="did you mean 'topk'"):
        resolve_names("topkk", ("conv", "topk"), "op family", "--ops")
    assert resolve_names("topk,conv,topk", ("conv", "topk"), "op family", "--ops") == ("topk", "conv")
    assert format_duration(3725) == "1h02m"


# --- the engine ----------------------------------------------------------------------------------
def test_campaign_buckets_confirms_and_saves(tmp_path):
    target = FakeTarget(str(tmp_path / "corpus"), space=60)
    engine = campaign_engine(tmp_path, target, count=40)
    assert engine.run() == "budget spent"
    store = engine.store
    assert store.candidate_count() == 40
    keys = [c.key for c in store.candidates()]
    assert len(set(keys)) == 40  # nothing tried twice
    buckets = store.buckets()
    assert buckets and all(b.state == "confirmed" for b in buckets)
    for b in buckets:
        hits = [h for h in store.hits() if h[1] == b.sig]
        assert b.count == len(hits)
        assert Path(b.corpus_entry).read_text() == "1"  # saved once
        assert b.repro_size == min(store.candidate(h[0]).size for h in hits)  # smallest so far
    summary = summarize(store, "budget spent")
    assert summary.candidates == 40 and set(summary.families) <= {"g1", "g2"}
    assert set(summary.backends) == {"a", "b"}
    assert summary.nodes == [] and isinstance(summary.coverage, dict)  # (coverage once landed in `nodes`)
    report = write_report(summary, store.folder)
    assert "| count |" in report.read_text() and (store.folder / "buckets.svg").read_text().startswith("<svg")


def test_flaky_bucket_is_marked(tmp_path):
    SEEN.clear()
    target = FakeTarget(str(tmp_path / "corpus"), space=50, flaky_mod=7)
    engine = campaign_engine(tmp_path, target, count=30, jobs=1)
    engine.run()
    states = {b.sig.split(": ")[1]: b.state for b in engine.store.buckets()}
    assert states.get("flaky") == "flaky"
    assert all(s == "confirmed" for k, s in states.items() if k != "flaky")


def test_worker_death_and_deadline_cost_one_candidate(tmp_path):
    target = FakeTarget(str(tmp_path / "corpus"), space=1000, die_on=-1)
    probe = campaign_engine(tmp_path / "p", target, count=6)
    doomed = [target.generate(*g) for g in []]
    # pick two candidates the campaign will draw, and make them misbehave
    first = [probe.drawing.next_candidate(probe.coverage) for _ in range(2)]
    probe.store.close()
    n_die, n_sleep = (json.loads(c.payload)["n"] for c in first)
    target = FakeTarget(str(tmp_path / "corpus"), space=1000, die_on=n_die, sleep_on=n_sleep)
    engine = campaign_engine(tmp_path, target, count=6)
    assert engine.run() == "budget spent"
    verdicts = {json.loads(c.payload)["n"]: c.verdict for c in engine.store.candidates()}
    assert verdicts[n_die] == "lost" and verdicts[n_sleep] == "lost"
    assert sum(v == "lost" for v in verdicts.values()) == 2 and len(verdicts) == 6
    assert not doomed


def test_lane_that_keeps_timing_out_is_set_aside(tmp_path):
    messages = []
    target = FakeTarget(str(tmp_path / "corpus"), hang_lane="b")
    engine = campaign_engine(tmp_path, target, count=12, progress=lambda kind, v: messages.append(v) if kind == "message" else None)
    engine.run()
    assert engine.lanes == ("a",)
    assert "b" in engine.store.set_aside_backends()
    assert any("backend b set aside" in m for m in messages)
    late = [c for c in engine.store.candidates()][-3:]
    assert all(c.backends == ("a",) for c in late)


def test_resume_continues_without_repeating(tmp_path):
    target = FakeTarget(str(tmp_path / "corpus"), space=80)
    first = campaign_engine(tmp_path, target, count=15)
    first.run()
    before = {c.key for c in first.store.candidates()}
    first.store.close()
    second = campaign_engine(tmp_path, target, count=35)
    second.run()
    after = [c.key for c in second.store.candidates()]
    assert len(after) == len(set(after)) == 35 and before <= set(after)
    assert len(second.store.sessions()) == 2
    for b in second.store.buckets():
        assert Path(b.corpus_entry).read_text() == "1"


def test_pending_confirmation_is_redone_on_resume(tmp_path):
    target = FakeTarget(str(tmp_path / "corpus"), space=80)
    engine = campaign_engine(tmp_path, target, count=20)
    engine.run()
    store = engine.store
    # simulate a kill after the bucket row was written but before its re-run and save
    b = store.buckets()[0]
    from dataclasses import replace

    store.put_bucket(replace(b, state="pending", corpus_entry=""))
    Path(b.corpus_entry).unlink()
    store.close()
    again = campaign_engine(tmp_path, target, count=20)
    assert again.run() == "budget spent"
    redone = again.store.bucket(b.sig)
    assert redone.state == "confirmed" and Path(redone.corpus_entry).read_text() == "1"


def test_save_killed_before_its_row_is_not_counted_twice(tmp_path):
    target = FakeTarget(str(tmp_path / "corpus"), space=80)
    engine = campaign_engine(tmp_path, target, count=20)
    engine.run()
    store = engine.store
    b = store.buckets()[0]
    from dataclasses import replace

    store.put_bucket(replace(b, corpus_entry="?0"))  # saved (count now 1), row not updated
    store.close()
    again = campaign_engine(tmp_path, target, count=20)
    again.run()
    assert Path(again.store.bucket(b.sig).corpus_entry).read_text() == "1"


def test_steering_prefers_rare_features():
    s = Steering(("g",))
    for _ in range(10):
        s.add("g", ("common",))
    assert s.rarity("g", ("rare",)) > s.rarity("g", ("common",))
    s2 = Steering(("x", "y"))
    for _ in range(50):
        s2.add("x", ())
    import random

    picks = [s2.pick_group(random.Random(i)) for i in range(200)]
    assert picks.count("y") > picks.count("x")


# --- the store -----------------------------------------------------------------------------------
def test_newer_format_is_refused_and_left_alone(tmp_path):
    store = CampaignStore(tmp_path / "c")
    store.set_meta("format_version", str(FORMAT_VERSION + 1))
    store.close()
    data = (tmp_path / "c" / "campaign.sqlite").read_bytes()
    with pytest.raises(CorpusError, match="newer shapefuzz"):
        CampaignStore(tmp_path / "c")
    assert (tmp_path / "c" / "campaign.sqlite").read_bytes() == data


def test_corrupt_database_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "c"
    folder.mkdir()
    (folder / "campaign.sqlite").write_bytes(b"this is not a database" * 100)
    with pytest.raises(CorpusError, match="corrupt"):
        CampaignStore(folder)
    assert (folder / "campaign.sqlite").read_bytes() == b"this is not a database" * 100
    good = CampaignStore(tmp_path / "d")
    good.close()
    raw = bytearray((tmp_path / "d" / "campaign.sqlite").read_bytes())
    raw[100:4000] = b"\xff" * 3900  # from the b-tree header of page 1 (the schema) on: with more tables
    # than fit one page, page 1 is an interior node and bytes 200-4000 are its free space
    (tmp_path / "d" / "campaign.sqlite").write_bytes(bytes(raw))
    with pytest.raises(CorpusError):
        CampaignStore(tmp_path / "d")


def test_plots():
    assert sparkline([], 10) == ""
    line = sparkline([1, 2, 9], 10, width=10)
    assert len(line) == 10 and line[-1] == "█"
    svg = svg_plot([1.0, 5.0], 10.0)
    assert svg.startswith("<svg") and "polyline" in svg
