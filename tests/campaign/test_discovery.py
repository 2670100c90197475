"""Is more time worth it (campaign/discovery.py): the Good–Turing and Chao1 estimators on hand-made
counts, the saturation rule, `--until-saturated` ending campaigns whose causes stop coming (a fake
target, and the fake toolchain through the command line), the estimate read back after a resume and
from a store an older shapefuzz grew, and bad values refused with one line."""

from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from shapefuzz.campaign import discovery
from shapefuzz.campaign.discovery import SaturationWatch, below_since, chao1, estimate, good_turing
from shapefuzz.campaign.engine import Candidate, Engine, EngineConfig, Failure, Limits, Outcome
from shapefuzz.campaign.report.summary import markdown, summarize, text_lines
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.model import Signature, Stage, Status

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.engine_fakes import InertTargetParts  # noqa: E402

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")


# --- the estimators on hand-made counts -----------------------------------------------------------
def test_good_turing_is_singletons_over_candidates_with_esty_interval():
    u, (lo, hi) = good_turing(f1=3, f2=2, n=100)
    assert u == pytest.approx(0.03)
    half = 1.959964 * math.sqrt(3 * (1 - 0.03) + 2 * 2) / 100  # Esty 1983: (f1 (1 - f1/n) + 2 f2) / n^2
    assert (lo, hi) == pytest.approx((0.0, 0.03 + half))  # the lower end clipped at 0
    assert hi == pytest.approx(0.08152, abs=1e-5)
    assert good_turing(0, 4, 50)[0] == 0.0


def test_chao1_classic_form_and_its_log_normal_interval():
    assert chao1(20, 10, 5)[0] == pytest.approx(30.0)  # the textbook case: S + f1^2 / (2 f2)
    value, (lo, hi), corrected = chao1(6, 3, 2)
    assert value == pytest.approx(8.25) and not corrected
    # Chao 1987: var = f2 (r^4/4 + r^3 + r^2/2), r = f1/f2 = 1.5 -> 11.53125; T = 2.25
    k = math.exp(1.959964 * math.sqrt(math.log(1 + 11.53125 / 2.25 ** 2)))
    assert (lo, hi) == pytest.approx((6 + 2.25 / k, 6 + 2.25 * k))
    assert (lo, hi) == pytest.approx((6.266, 25.04), abs=5e-3)


def test_chao1_bias_corrected_when_no_cause_was_seen_twice():
    value, (lo, hi), corrected = chao1(5, 4, 0)
    assert corrected and value == pytest.approx(11.0)  # S + f1 (f1 - 1) / 2
    var = 4 * 3 / 2 + 4 * 7 ** 2 / 4 - 4 ** 4 / (4 * 11)  # 49.18
    k = math.exp(1.959964 * math.sqrt(math.log(1 + var / 36)))
    assert (lo, hi) == pytest.approx((5 + 6 / k, 5 + 6 * k))
    assert (lo, hi) == pytest.approx((5.973, 41.99), abs=5e-3)
    assert chao1(5, 1, 0)[:2] == (5.0, (5.0, 5.0))  # one singleton, f2 = 0: nothing unseen to estimate
    assert chao1(7, 0, 3)[:2] == (7.0, (7.0, 7.0))


def test_estimate_from_sightings_and_the_next_hour():
    d = estimate([1, 1, 1, 2, 2, 5, 0], candidates=100, per_minute=1.0)  # 0: a cause no candidate sighted
    assert (d.seen, d.singletons, d.doubletons) == (6, 3, 2)
    assert d.good_turing == pytest.approx(0.03) and d.chao1 == pytest.approx(8.25)
    assert d.next_hour == pytest.approx(1 - 0.97 ** 60)  # 60 more candidates at 1/min
    assert d.next_hour_causes == pytest.approx(2.25 * (1 - (1 - 3 / (100 * 2.25 + 3)) ** 60))
    assert d.next_hour_causes == pytest.approx(1.2336, abs=1e-3)
    fast = estimate([1, 1, 1, 2, 2, 5], candidates=100, per_minute=1e6)
    assert fast.next_hour == pytest.approx(1.0) and fast.next_hour_causes <= fast.chao1 - fast.seen + 1e-9
    assert json.loads(json.dumps(d.to_json()))["chao1_95"][0] == pytest.approx(6.27, abs=0.01)


def test_an_empty_campaign_has_no_estimate_and_says_nothing(tmp_path):
    d = estimate([], candidates=0, per_minute=0.0)
    assert d.good_turing is None and d.chao1 is None and discovery.lines(d) == [] and discovery.short_text(d) == ""
    store = CampaignStore(tmp_path / "c")
    s = summarize(store)
    assert s.to_json()["discovery"]["good_turing"] is None and s.to_json()["discovery"]["candidates"] == 0
    assert "Is more time worth it" not in markdown(s)
    nothing = estimate([], candidates=40, per_minute=2.0)  # candidates, no cause: nothing seen once
    assert nothing.good_turing == 0.0 and nothing.chao1 == 0.0 and nothing.next_hour == 0.0


# --- the saturation rule -----------------------------------------------------------------------------
def test_below_since_replays_when_the_chance_last_fell_below_p():
    points = [(1.0, {"a"}), (2.0, set()), (3.0, {"a"}), (4.0, {"b"}), (5.0, set()), (6.0, {"b"})]
    # f1/n: 1/1, 1/2, 0/3, 1/4, 1/5, 0/6
    assert below_since(points, 0.3) == (3, 3.0)  # 0.25 and 0.2 stay below 0.3
    assert below_since(points, 0.22) == (5, 5.0)  # 0.25 was not below 0.22
    assert below_since(points[:4], 0.2) is None
    assert below_since([], 0.1) is None


def test_the_watch_wants_3_over_p_candidates_and_a_tenth_of_the_time():
    watch = SaturationWatch(0.1)
    low = estimate([2, 3], candidates=10, per_minute=1.0)  # no singleton: 0 < 0.1
    watch.observe(low, active=100.0)
    assert watch.since == (10, 100.0)
    assert watch.saturated(estimate([2, 3], 39, 1.0), active=200.0) is None  # 29 candidates < 3/0.1
    assert watch.saturated(estimate([2, 3], 40, 1.0), active=105.0) is None  # 5 s below: less than 10.5 s
    why = watch.saturated(estimate([2, 3], 40, 1.0), active=200.0)
    assert why.startswith("saturated:") and "below 0.1" in why and "30 candidates" in why
    watch.observe(estimate([1, 3], 5, 1.0), active=210.0)  # 1/5 >= 0.1: the window starts again
    assert watch.since is None and watch.saturated(estimate([1, 3], 5, 1.0), 210.0) is None


# --- --until-saturated on campaigns whose causes stop coming -----------------------------------------
@dataclass(frozen=True)
class FewCauses(InertTargetParts):
    """Candidates are numbers; every even one fails on lane "a" with one of `kinds` messages, so
    the causes (compiler bugs) stop coming once each kind has been met."""

    corpus: str
    kinds: int = 3

    def generate(self, group: str, seed: int) -> Candidate:
        n = seed % 100_000
        key = hashlib.sha256(f"{group}:{n}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"mod3:{n % 3}",), json.dumps({"n": n}), "x" * (10 + n % 7))

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        failures = tuple(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, f"kind {n // 2 % self.kinds}"))
                         for lane in lanes if lane == "a" and n % 2 == 0)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS,
                       {lane: (Status.ERROR if failures and lane == "a" else Status.OK, 0.001) for lane in lanes},
                       failures, 0.0)

    confirm = check


def _engine(folder: Path, count: int, until: float | None) -> Engine:
    return Engine(FewCauses(str(folder / "corpus")), CampaignStore(folder / "camp"),
                  EngineConfig(("g",), ("a", "b"), 5, 1, Limits(count=count), start_method="fork",
                               until_saturated=until))


def test_until_saturated_ends_a_campaign_whose_causes_stop_coming_and_survives_a_resume(tmp_path):
    engine = _engine(tmp_path, 2000, 0.1)
    reason = engine.run()
    done = engine.store.candidate_count()
    assert reason.startswith("saturated:") and "below 0.1" in reason, reason
    assert 30 <= done < 400, done  # the window (3/P = 30 candidates) and not much more
    live = engine.discovery()
    assert live.seen == 3 and live.good_turing < 0.1
    stored = summarize(engine.store).discovery  # the same numbers, read back from the store alone
    assert (stored.candidates, stored.seen, stored.singletons, stored.doubletons) == \
           (live.candidates, live.seen, live.singletons, live.doubletons)
    assert stored.chao1 == pytest.approx(live.chao1) and stored.good_turing == pytest.approx(live.good_turing)
    engine.store.close()

    again = _engine(tmp_path, 2000, 0.1)  # resumed: the window is replayed from the store
    assert again.discovery().singletons == live.singletons and again.discovery().candidates == done
    assert again.run().startswith("saturated:")
    assert again.store.candidate_count() == done  # nothing more was drawn
    again.store.close()

    third = _engine(tmp_path, done + 20, None)  # without the rule the budget decides, the estimate goes on
    assert third.run() == "budget spent" and third.store.candidate_count() == done + 20
    assert third.discovery().candidates == done + 20
    third.store.close()


def test_the_progress_line_and_the_reports_show_the_estimate(tmp_path):
    engine = _engine(tmp_path, 40, None)
    engine.run()
    from shapefuzz.campaign.report.progress import _status

    snap = engine.snapshot()
    assert snap.discovery is not None and snap.discovery.candidates == 40
    assert "new cause " in _status(snap) and "Chao1 " in _status(snap)
    s = summarize(engine.store)
    text = "\n".join(text_lines(s))
    assert "Good–Turing" in text and "Chao1" in text
    md = markdown(s)
    assert "## Is more time worth it?" in md and "Chao1" in md
    data = s.to_json()["discovery"]
    assert data["candidates"] == 40 and data["causes_seen"] == 3 and 0 <= data["good_turing"] < 1
    assert data["chao1"] >= 3 and data["chao1_95"][0] <= data["chao1"] <= data["chao1_95"][1]
    from shapefuzz.campaign.report.dashboard import write_dashboard

    page = write_dashboard(engine.store).read_text()
    causes_plot = page.index("Causes found over time")
    assert causes_plot < page.index('id="discovery"') < page.index("Candidates per minute")
    engine.store.close()

    import io

    from rich.console import Console

    from shapefuzz.campaign.report.live import CampaignView

    view = CampaignView("camp", stream=io.StringIO())
    view("tick", snap)
    screen = Console(file=io.StringIO(), width=160, record=True)
    screen.print(view.render())
    view.close()
    shown = screen.export_text()
    assert "more time?" in shown and "Good–Turing" in shown and "Chao1" in shown


# --- through the command line, with the fake toolchain -----------------------------------------------
def _fuzz(tmp_path, *args, mode="words"):
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz",
            "--campaign", str(tmp_path / "camp"), "--corpus", str(tmp_path / "corpus"), *args]
    return subprocess.run(argv, capture_output=True, text=True, timeout=240, env=fake_env(tmp_path, mode))


def test_fuzz_until_saturated_stops_when_the_fake_compilers_causes_stop_coming(tmp_path):
    # mode "words": every candidate fails with one of three messages: three causes, met again and again
    args = ("--ops", "topk", "--backends", "llvm-cpu", "--jobs", "1", "--no-shrink", "--no-bisect", "--no-localize", "--json")
    result = _fuzz(tmp_path, "--count", "300", "--until-saturated", "0.5", *args)
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["stopped"].startswith("saturated: "), summary["stopped"]
    assert 6 <= summary["candidates"] < 300  # the window is 3/0.5 = 6 candidates
    d = summary["discovery"]
    assert d["candidates"] == summary["candidates"] and d["good_turing"] < 0.5
    assert d["causes_seen"] == summary["findings"] >= 1
    assert "Is more time worth it?" in (tmp_path / "camp" / "report.md").read_text()
    assert 'id="discovery"' in (tmp_path / "camp" / "report.html").read_text()
    # the rule is part of the stored budget: a plain resume stops at once, from the store
    again = _fuzz(tmp_path, "--json")
    assert again.returncode == 0, again.stderr
    resumed = json.loads(again.stdout)
    assert resumed["stopped"].startswith("saturated: ") and resumed["candidates"] == summary["candidates"]
    assert resumed["discovery"]["good_turing"] == d["good_turing"]
    store = CampaignStore(tmp_path / "camp", create=False)  # what `report --json` reads
    assert summarize(store).to_json()["discovery"] == resumed["discovery"]
    store.close()


@pytest.mark.parametrize("value", ["0", "1", "abc", "nan"])
def test_until_saturated_outside_0_1_or_not_a_number_is_one_line_exit_2(tmp_path, value):
    result = _fuzz(tmp_path, "--count", "1", "--until-saturated", value, mode="ok")
    assert result.returncode == 2, result.stderr
    assert "--until-saturated" in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not (tmp_path / "camp").exists()


@pytest.mark.parametrize("value", ["-0.1", "1.5", "inf", "-inf", "", "1e-400", " "])
def test_every_other_bad_chance_is_refused_by_the_same_check(value):
    from shapefuzz.campaign.config import parse_chance
    from shapefuzz.errors import UsageError

    with pytest.raises(UsageError, match="--until-saturated .*between 0 and 1"):
        parse_chance(value, "--until-saturated")
    assert parse_chance("1e-3", "--until-saturated") == 0.001 and parse_chance(None, "--until-saturated") is None


# --- a store an older shapefuzz grew -----------------------------------------------------------------
_FORMAT_1 = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE candidates (key TEXT PRIMARY KEY, idx INTEGER NOT NULL, seed INTEGER NOT NULL, family TEXT NOT NULL,
    features TEXT NOT NULL, backends TEXT NOT NULL, verdict TEXT NOT NULL, outcome TEXT NOT NULL,
    payload TEXT NOT NULL, size INTEGER NOT NULL, tool_seconds REAL NOT NULL, task_seconds REAL NOT NULL,
    finished REAL NOT NULL, error TEXT NOT NULL DEFAULT '');
CREATE TABLE hits (candidate TEXT NOT NULL, bucket TEXT NOT NULL, backend TEXT NOT NULL,
    PRIMARY KEY (candidate, bucket));
CREATE TABLE buckets (sig TEXT PRIMARY KEY, sig_json TEXT NOT NULL, backend TEXT NOT NULL, stage TEXT NOT NULL,
    status TEXT NOT NULL, family TEXT NOT NULL, count INTEGER NOT NULL, first_seen REAL NOT NULL,
    last_seen REAL NOT NULL, first_wall REAL NOT NULL, last_wall REAL NOT NULL, state TEXT NOT NULL,
    repro_key TEXT NOT NULL, repro_size INTEGER NOT NULL, repro_text TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '',
    corpus_entry TEXT NOT NULL DEFAULT '', shrunk_size INTEGER);
CREATE TABLE sessions (id INTEGER PRIMARY KEY AUTOINCREMENT, started REAL NOT NULL, active REAL NOT NULL,
    candidates INTEGER NOT NULL, argv TEXT NOT NULL);
CREATE TABLE set_aside (backend TEXT PRIMARY KEY, reason TEXT NOT NULL, at REAL NOT NULL);
INSERT INTO meta VALUES ('format_version', '1');
"""


def test_a_store_grown_by_format_1_gives_its_estimate_and_resumes(tmp_path):
    """Format 1 had no causes and no triage column: each bucket is its own cause, a compiler bug.
    Ten candidates (one lost); bucket x hit by one of them, bucket y by three."""
    folder = tmp_path / "camp"
    folder.mkdir()
    db = sqlite3.connect(folder / "campaign.sqlite")
    db.executescript(_FORMAT_1)
    target = FewCauses(str(tmp_path / "corpus"))
    for i in range(10):
        c = target.generate("g", 1000 + 2 * i + 1)  # odd: passes on a resume too
        db.execute("INSERT INTO candidates VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,'')",
                   (c.key, i, c.seed, "g", "[]", '["a"]', "lost" if i == 9 else "fail" if i < 4 else "pass",
                    '{"a": ["ok", 0.1]}', c.payload, 10, 0.1, 0.1, float(i)))
        for sig in ("x",) * (i == 0) + ("y",) * (1 <= i <= 3):
            db.execute("INSERT INTO hits VALUES (?,?,?)", (c.key, sig, "a"))
    for sig in ("x", "y"):
        fields = {"backend": "a", "stage": "compile", "status": "error", "message": sig}
        db.execute("INSERT INTO buckets VALUES (?,?,'a','compile','error','g',1,0,0,0,0,'confirmed','k',1,'t','',?,NULL)",
                   (sig, json.dumps(fields), str(tmp_path / "entry")))
    db.execute("INSERT INTO sessions (started, active, candidates, argv) VALUES (0, 10, 10, '[]')")
    db.commit()
    db.close()

    store = CampaignStore(folder)  # upgraded in place
    d = summarize(store).discovery
    assert (d.candidates, d.seen, d.singletons, d.doubletons) == (9, 2, 1, 0)  # the lost one is no observation
    assert d.good_turing == pytest.approx(1 / 9) and d.chao1 == pytest.approx(2.0) and d.bias_corrected
    store.close()
    engine = _engine(tmp_path, 14, 0.01)
    assert engine.discovery().good_turing == pytest.approx(1 / 9)
    assert engine.run() == "budget spent" and engine.store.candidate_count() == 14
    engine.store.close()
