"""Allocation by yield (campaign/allocation.py): a cell that finds new causes gets more draws than one
that does not, with the floor held; a slow cell is paid for by what it finds, not by its cost; the
records survive a resume (the same weights read back); `--ops` and `--backends` still pin the
campaign exactly; a fixed seed draws the same sequence twice; chains are asked for and a family that
takes none stops being asked; swarm epochs leave chain ops out."""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from shapefuzz.campaign.allocation import (EPOCH, FLOOR, KEEP_PER_SIDE, UNREACHED_AFTER, Allocation, new_causes,
                                           rows_of)
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.engine import Candidate, Engine, Failure, Limits, Outcome
from shapefuzz.campaign.outcomes import Verdict
from shapefuzz.model import Signature, Stage, Status
from support.engine_fakes import InertTargetParts
from support.engines import build_engine


@dataclass(frozen=True)
class YieldTarget(InertTargetParts):
    """Family `rich` finds a new bug with every third candidate (each its own message), `poor`
    never does; each lane check takes `seconds[family]` (reported, so the records do not depend on
    the machine)."""

    corpus: str
    seconds: dict = field(default_factory=lambda: {"rich": 1.0, "poor": 1.0})
    rich: tuple[str, ...] = ("rich",)

    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        n = seed % 100000
        key = hashlib.sha256(f"{group}:{n}:{large}".encode()).hexdigest()[:16]
        return Candidate(key, group, seed, (f"m:{n % 3}",), json.dumps({"n": n}), f"{group} {n}")

    def check(self, candidate: Candidate, lanes) -> Outcome:
        n = json.loads(candidate.payload)["n"]
        each = self.seconds.get(candidate.group, 1.0)
        results, failures = {}, []
        for lane in lanes:
            if candidate.group in self.rich and n % 3 == 0 and lane == lanes[-1]:
                failures.append(Failure(Signature(lane, Stage.COMPILE, Status.ERROR, f"bug {candidate.group} {n}")))
                results[lane] = (Status.ERROR, each)
            else:
                results[lane] = (Status.OK, each)
        return Outcome(Verdict.FAIL if failures else Verdict.PASS, results, tuple(failures), 0.0)

    confirm = check


def _engine(folder: Path, target, groups, count, lanes=("a", "b"), **kw) -> Engine:
    kw.setdefault("allocate", True)
    return build_engine(target, CampaignStore(folder), groups, lanes, 7, 1, Limits(count=count), start_method="fork",
                        confirm=False, **kw)


def _families(engine: Engine) -> list[str]:
    return [r.family for r in sorted(engine.store.candidates(), key=lambda r: r.idx)]


# --- the estimates, on records alone --------------------------------------------------------------
def _fed(found: dict[str, int], seconds: dict[str, float], n: int = 40) -> Allocation:
    a = Allocation(tuple(found), 0)
    for g in found:
        for i in range(n):
            causes = {f"{g}-{i}": ["a"]} if i < found[g] else {}
            a.record(f"{g}{i}", g, (), {"a": (Status.OK, seconds[g])}, 0.0, causes)
    return a


def test_a_cell_that_finds_gets_more_draws_and_one_that_does_not_keeps_the_floor():
    a = _fed({"rich": 20, "poor": 0, "other": 0}, {"rich": 1.0, "poor": 1.0, "other": 1.0})
    cells = a.cells(a.groups)
    time, draws = a.time_shares(cells), a.draw_shares(cells)
    assert draws[("rich", "small")] > 3 * draws[("poor", "small")]
    for cell in cells:  # the floor: a quarter of a uniform share of check time, whatever it found
        assert time[cell] >= FLOOR / len(cells) - 1e-12
    assert time[("poor", "small")] < time[("rich", "small")] / 3


def test_a_slow_cell_that_finds_nothing_is_not_given_time_for_its_cost():
    a = _fed({"fast": 0, "slow": 0}, {"fast": 1.0, "slow": 10.0})
    cells = a.cells(a.groups)
    time, draws = a.time_shares(cells), a.draw_shares(cells)
    # neither found anything: the dear one spent ten times the seconds finding nothing, so it gets
    # no more time than the cheap one (not ten times its time) and far fewer draws
    assert FLOOR / len(cells) <= time[("slow", "small")] <= time[("fast", "small")]
    assert draws[("slow", "small")] < 0.1 * draws[("fast", "small")]
    # and a slow cell that finds is paid for by what it finds
    b = _fed({"fast": 0, "slow": 10}, {"fast": 1.0, "slow": 10.0})
    assert b.time_shares(cells)[("slow", "small")] > 2 * b.time_shares(cells)[("fast", "small")]


def test_old_finds_count_less_as_a_cell_keeps_spending_without_finding():
    a = _fed({"g": 10, "h": 10}, {"g": 1.0, "h": 1.0}, n=20)
    before = a.rate("g", "small")
    for i in range(600):  # ten more minutes of check time, nothing new
        a.record(f"late{i}", "g", (), {"a": (Status.OK, 1.0)}, 0.0, {})
    assert a.rate("g", "small") < before / 4
    assert a.draws["g/bare"].causes == 10  # the totals stay whole for the report


def test_new_causes_are_causes_made_of_new_buckets_judged_compiler_bugs():
    members = {"c1": ["s1", "s2"], "c2": ["s3", "old"], "c3": ["s4"]}
    name_of = {"s1": "c1", "s2": "c1", "s3": "c2", "old": "c2", "s4": "c3"}
    created = [("s1", "a", True), ("s2", "b", False), ("s3", "a", True), ("s4", "b", False)]
    # c1: both buckets new (one lane each); c2 holds an older bucket; c3 is no compiler bug
    assert new_causes(created, members, name_of) == {"c1": ["a", "b"]}


def test_lanes_that_find_get_more_slots():
    a = Allocation(("g",), 0)
    for i in range(60):
        a.record(f"k{i}", "g", (), {"ref": (Status.OK, 1.0), "good" if i % 2 else "dull": (Status.OK, 1.0)},
                 0.0, {f"c{i}": ["good"]} if i % 2 and i < 30 else {})
    shares = a.lane_shares("g", ["good", "dull", "new"])
    assert shares["good"] > 2 * shares["dull"]
    assert shares["new"] > shares["dull"]  # an untried lane draws at the lane's prior, not at zero
    picked = [a.pick_lanes(random.Random(i), "g", ["good", "dull", "new"], 1)[0] for i in range(300)]
    assert picked.count("good") > picked.count("dull") and picked.count("dull") > 0


# --- the engine ---------------------------------------------------------------------------------
def test_a_family_that_finds_gets_more_draws_in_a_campaign(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    on = _engine(tmp_path / "on", target, ("rich", "poor"), 120)
    on.run()
    drawn = _families(on)
    later = drawn[40:]
    assert later.count("rich") > 1.5 * later.count("poor")
    assert later.count("poor") >= 5  # the floor
    off = _engine(tmp_path / "off", target, ("rich", "poor"), 120, allocate=False)
    off.run()
    assert abs(_families(off).count("rich") - 60) <= 6  # least-tried steering: about even


def test_a_slow_family_finding_nothing_gets_its_share_of_time_not_of_draws(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"), seconds={"fast": 0.5, "slow": 5.0}, rich=())
    engine = _engine(tmp_path / "c", target, ("fast", "slow"), 100)
    engine.run()
    rows = {r["family"]: r for r in engine.allocation.table()}
    assert rows["slow"]["checks"] < 0.3 * rows["fast"]["checks"]
    assert 0.3 < rows["slow"]["time_share"] < 0.7  # time about even, not ten to one


def test_the_allocation_survives_a_resume(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    first = _engine(tmp_path / "c", target, ("rich", "poor"), 60)
    first.run()
    weights = first.allocation.draw_shares(first.allocation.cells(("rich", "poor")))
    stored = rows_of(first.allocation)
    first.store.close()
    again = _engine(tmp_path / "c", target, ("rich", "poor"), 90)
    assert again.allocation.draw_shares(again.allocation.cells(("rich", "poor"))) == weights
    assert {(r.kind, r.name): r.record for r in rows_of(again.allocation)} == {(r.kind, r.name): r.record for r in stored}
    again.run()
    assert again.allocation.checked() == again.store.candidate_count() == 90


def test_an_older_store_is_replayed_into_the_table_once(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    first = _engine(tmp_path / "c", target, ("rich", "poor"), 60)
    first.run()
    found = first.allocation.draws["rich/bare"].causes
    with first.store.transaction() as db:  # as a store from before the table
        db.execute("DELETE FROM allocation")
    first.store.close()
    again = _engine(tmp_path / "c", target, ("rich", "poor"), 60)
    assert again.allocation.checked() == 60 and again.allocation.draws["rich/bare"].causes == found
    assert len(again.store.cells()) == len(rows_of(again.allocation))  # written back


def test_a_fixed_seed_draws_the_same_sequence_twice(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    runs = []
    for name in ("one", "two"):
        engine = _engine(tmp_path / name, target, ("rich", "poor", "third"), 80, lanes=("a", "b", "c", "d"),
                         reference="a", lanes_per_candidate=2)
        engine.run()
        runs.append([(r.idx, r.family, r.seed, r.backends) for r in sorted(engine.store.candidates(), key=lambda r: r.idx)])
    assert runs[0] == runs[1]


def test_ops_and_backends_pin_the_campaign_exactly(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    # --ops: only the families named; --backends: every candidate on every named lane
    forced = _engine(tmp_path / "f", target, ("poor",), 40, lanes=("a", "b", "c"), reference="a",
                     lanes_per_candidate=None)
    forced.run()
    rows = list(forced.store.candidates())
    assert {r.family for r in rows} == {"poor"} and all(r.backends == ("a", "b", "c") for r in rows)
    # rotating lanes: the allocation picks the other lane, never one outside the campaign's
    rotating = _engine(tmp_path / "r", target, ("rich", "poor"), 60, lanes=("a", "b", "c"), reference="a",
                       lanes_per_candidate=2)
    rotating.run()
    rows = list(rotating.store.candidates())
    assert {r.family for r in rows} <= {"rich", "poor"}
    assert all(len(r.backends) == 2 and r.backends[0] == "a" and r.backends[1] in ("b", "c") for r in rows)
    assert {r.backends[1] for r in rows} == {"b", "c"}  # the floor: both lanes keep slots


# --- shapes and swarm epochs --------------------------------------------------------------------
@dataclass(frozen=True)
class ShapedFake(YieldTarget):
    """Draws chains as asked (family `flat` takes none); records what it was asked for."""

    asked: list = field(default_factory=list, hash=False, compare=False)

    def chain_ops(self):
        return (("p1", "p2", "p3", "p4", "p5", "p6"), ("c1", "c2", "c3", "c4"))

    def generate_shaped(self, group, seed, large, chain, left_out):
        self.asked.append((group, chain, left_out))
        c = self.generate(group, seed, large)
        if chain and group != "flat":
            ops = [op for op in ("p1", "p2", "c1") if op not in left_out] or ["p3"]
            c = Candidate(hashlib.sha256(f"{c.key}:chain:{ops}".encode()).hexdigest()[:16], group, seed,
                          (*c.features, *(f"context:{op}" for op in ops)), c.payload, c.text + " chained")
        return c


def test_chains_are_asked_for_and_a_family_that_takes_none_is_no_longer_asked(tmp_path):
    target = ShapedFake(str(tmp_path / "corpus"))
    engine = _engine(tmp_path / "c", target, ("rich", "flat"), 80)
    engine.run()
    asked = target.asked
    assert any(chain for g, chain, _ in asked if g == "rich") and any(not chain for g, chain, _ in asked if g == "rich")
    flat_chains = [i for i, (g, chain, _) in enumerate(asked) if g == "flat" and chain]
    # asked for a few candidates (two draws each), then dropped: it came back bare each time
    assert UNREACHED_AFTER <= len(flat_chains) <= 2 * UNREACHED_AFTER
    assert not engine.allocation.reached("flat", "chain")
    shapes = {r["cell"] for r in engine.allocation.table()}
    assert {"rich/bare", "rich/chain", "flat/bare"} <= shapes


def test_swarm_epochs_leave_chain_ops_out_for_a_while():
    a = Allocation(("g",), 3, chain_ops=(("p1", "p2", "p3", "p4", "p5", "p6"), ("c1", "c2", "c3", "c4")))
    epochs = [a.left_out(i * EPOCH) for i in range(40)]
    assert all(a.left_out(i * EPOCH + 5) == epochs[i] for i in range(40))  # one set for the whole epoch
    assert len(set(epochs)) > 10 and any(epochs)
    for out in epochs:  # at least KEEP_PER_SIDE kept on each side
        assert len({"p1", "p2", "p3", "p4", "p5", "p6"} - set(out)) >= KEEP_PER_SIDE
        assert len({"c1", "c2", "c3", "c4"} - set(out)) >= KEEP_PER_SIDE


def test_large_rounds_are_allocated_and_go_to_the_compile_only_lanes(tmp_path):
    target = YieldTarget(str(tmp_path / "corpus"))
    engine = _engine(tmp_path / "c", target, ("rich", "poor"), 80, lanes=("a", "b", "gpu1", "gpu2"), reference="a",
                     lanes_per_candidate=2, compile_only=("gpu1", "gpu2"), large_every=8)
    engine.run()
    rows = list(engine.store.candidates())
    large = [r for r in rows if "regime:large" in r.features]
    assert 3 <= len(large) <= 30
    assert all(set(r.backends) <= {"gpu1", "gpu2"} for r in large)
    assert all(r.backends[0] == "a" for r in rows if r not in large)
    assert any(r["shape"] == "large" for r in engine.allocation.table())


# --- shown ----------------------------------------------------------------------------------------
def test_the_report_json_and_dashboard_show_each_cell(tmp_path):
    from shapefuzz.campaign.report.dashboard import write_dashboard
    from shapefuzz.campaign.report.summary import markdown, summarize, text_lines

    target = YieldTarget(str(tmp_path / "corpus"))
    engine = _engine(tmp_path / "c", target, ("rich", "poor"), 40, lanes=("a", "b", "c"), reference="a",
                     lanes_per_candidate=2)
    engine.run()
    assert engine.snapshot().allocation.startswith("rich/bare ")  # the live view's line: the cell drawn most first
    summary = summarize(engine.store)
    cells = {r["cell"]: r for r in summary.to_json()["allocation"]["cells"]}
    assert set(cells) == {"rich/bare", "poor/bare"}
    assert cells["rich/bare"]["causes"] > 0 and cells["poor/bare"]["causes"] == 0
    assert sum(r["time_share"] for r in cells.values()) == pytest.approx(1.0, abs=1e-3)
    assert sum(r["weight"] for r in cells.values()) == pytest.approx(1.0, abs=1e-3)
    assert cells["rich/bare"]["weight"] > cells["poor/bare"]["weight"]
    assert {r["lane"] for r in summary.allocation["lanes"]} == {"a", "b", "c"}
    assert "## Allocation" in markdown(summary) and "| rich/bare |" in markdown(summary)
    assert any(line.startswith("allocation by yield") for line in text_lines(summary))
    page = write_dashboard(engine.store, summary=summary).read_text()
    assert 'id="allocation"' in page and "rich/bare" in page
