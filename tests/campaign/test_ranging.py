"""Regression ranges taken during the campaign (campaign/ranging.py) and the release order that
answers in few compiles (bisect.py). Fake rangers and checkers: the scheduling, not IREE."""

from __future__ import annotations

import dataclasses
import threading
import time
from pathlib import Path

import pytest

from shapefuzz.recheck.bisect import bisect_entry
from shapefuzz.campaign.causes.cause_facts import bisect_causes, mark_unranged, ranged_entries, set_regression
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, Triage
from shapefuzz.campaign.ranging import RangeWorker, Stopped, due_causes
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult
from shapefuzz.triage.issue import regression_line
from shapefuzz.campaign.causes.cause import Regression

OLD = ["3.0.0", "3.6.0", "3.12.0", "3.13.0"]


def _row(tmp_path: Path, name: str, cause: str, first: float, *, shrink=ShrinkState.NONE, size: int = 100,
         state=BucketState.CONFIRMED, triage=Triage.COMPILER_BUG, lane: str = "llvm-cpu") -> BucketRow:
    entry = tmp_path / "corpus" / name
    entry.mkdir(parents=True, exist_ok=True)
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": name})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage="compile", status="error",
                     family="conv", count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=state, repro_key=f"k-{name}", repro_size=size, repro_text="x",
                     detail="// -----// IR Dump After FoldUnitExtentDimsPass Failed: iree-dispatch-creation-fold-unit-extent-dims //----- //\n",
                     corpus_entry=str(entry), shrunk_size=size if shrink == ShrinkState.DONE else None, cause=cause,
                     triage=triage, shrink=shrink)


def _store(tmp_path: Path, rows: list[BucketRow]) -> CampaignStore:
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.set_meta("config", '{"corpus": "%s"}' % (tmp_path / "corpus"))
    for row in rows:
        store.put_bucket(row)
    return store


def test_a_cause_is_due_once_confirmed_saved_and_shrunk_and_its_smallest_entry_is_bisected(tmp_path):
    rows = [_row(tmp_path, "a-big", "cause-a", 1.0, size=900, shrink=ShrinkState.SKIPPED),
            _row(tmp_path, "a-small", "cause-a", 2.0, size=200, shrink=ShrinkState.DONE, lane="vmvx"),
            _row(tmp_path, "b", "cause-b", 3.0, shrink=ShrinkState.PENDING),  # its shrunk example is coming
            _row(tmp_path, "c", "cause-c", 4.0, state=BucketState.PENDING),  # not confirmed yet
            _row(tmp_path, "d", "cause-d", 5.0, triage=Triage.SUSPECTED_DRIVER),  # not a compiler bug
            _row(tmp_path, "e", "cause-e", 6.0)]  # no shrink asked for
    corpus = tmp_path / "corpus"
    due = due_causes(rows, corpus, {})
    assert [(d.cause, Path(d.entry).name) for d in due] == [("cause-a", "a-small"), ("cause-e", "e")]
    assert "fold-unit-extent-dims" in due[0].failing_pass
    assert [d.cause for d in due_causes(rows, corpus, {}, final=True)] == ["cause-a", "cause-b", "cause-e"]
    assert [d.cause for d in due_causes(rows, corpus, {"a-small": {""}, "e": {""}})] == []  # ranged on them


def test_the_worker_waits_for_the_fetch_then_ranges_each_cause_once_and_the_summary_shows_it(tmp_path):
    rows = [_row(tmp_path, "a", "cause-a", 1.0), _row(tmp_path, "b", "cause-b", 2.0, shrink=ShrinkState.PENDING)]
    store = _store(tmp_path, rows)
    fetched = threading.Event()
    taken: list[tuple[str, tuple[str, ...]]] = []

    def ranger(entry, versions, failing, check_stop):
        taken.append((Path(entry).name, tuple(versions)))
        return {"text": "present in every release tried (3.0.0–3.13.0)", "entry": Path(entry).name}

    worker = RangeWorker(store.folder, tmp_path / "corpus", fetched.is_set, lambda: OLD, ranger=ranger,
                         poll=0.05).start()
    time.sleep(0.3)
    assert taken == []  # the releases are still being fetched
    fetched.set()
    deadline = time.monotonic() + 10
    while not taken and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)  # a few more polls: nothing is taken twice, and b waits for its shrink
    assert taken == [("a", tuple(OLD))]
    causes = {c.name: c for c in summarize(store).causes}
    assert causes["cause-a"].regression_text.startswith("present in every release")
    assert causes["cause-b"].regression is None
    worker.budget_spent()  # no shrink comes any more: b is ranged from the example it has
    deadline = time.monotonic() + 10
    while len(taken) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker.stop(wait=5)
    assert [name for name, _ in taken] == ["a", "b"] and worker.taken == 2
    assert ranged_entries(store) == {"a": {""}, "b": {""}}
    store.close()


def test_a_range_taken_under_an_earlier_cause_name_follows_its_entry(tmp_path):
    """A cause renamed after its range was taken (merged into another) still shows it, from the
    entry it was taken from."""
    store = _store(tmp_path, [_row(tmp_path, "a", "cause-new", 1.0)])
    set_regression(store, "cause-old", {"text": "fails since 3.13.0, passes in 3.12.0", "entry": "a"})
    set_regression(store, "cause-gone", {"text": "present in every release tried", "entry": "elsewhere"})
    assert summarize(store).causes[0].regression_text == "fails since 3.13.0, passes in 3.12.0"
    store.close()


def test_stop_ends_a_range_between_two_releases(tmp_path):
    store = _store(tmp_path, [_row(tmp_path, "a", "cause-a", 1.0)])
    started, compiles = threading.Event(), []

    def ranger(entry, versions, failing, check_stop):
        for version in versions:
            check_stop()  # before each release's compile
            compiles.append(version)
            started.set()
            time.sleep(0.2)
        return {"text": "x", "entry": "a"}

    worker = RangeWorker(store.folder, tmp_path / "corpus", lambda: True, lambda: OLD, ranger=ranger, poll=0.05).start()
    assert started.wait(10)
    assert worker.stop(wait=5)
    assert len(compiles) < len(OLD) and worker.taken == 0 and ranged_entries(store) == {}
    store.close()


def test_a_cause_left_without_a_range_says_why_and_triage_bisect_still_takes_it(tmp_path):
    store = _store(tmp_path, [_row(tmp_path, "a", "cause-a", 1.0)])
    cause = summarize(store).causes[0]
    assert mark_unranged(store, [cause], "the bisect budget ran out") == 1
    cause = summarize(store).causes[0]
    assert cause.regression_text == "no range: the bisect budget ran out"
    assert ranged_entries(store) == {}  # not a range: taken again later
    path, _ = save_finding(tmp_path / "corpus2", Finding(
        Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom"), "func.func @main() {\n  return\n}\n",
        ("llvm-cpu",), None, 0, None, None, "3.13.0", [], "error: boom"))
    cause = dataclasses.replace(cause, corpus_entries=(str(path),))
    fails = {"3.12.0", "3.13.0"}
    check = lambda e, v: ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING if v in fails else ReplayOutcome.FIXED,  # noqa: E731
                                      "failing", e.signature)
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v) == 1
    assert summarize(store).causes[0].regression is None  # taken from another entry than the cause holds
    assert "fails since 3.12.0, passes in 3.6.0" in str(store.meta_object("regression:cause-a"))
    store.close()


def test_triage_bisect_takes_again_a_range_that_said_no_range_and_the_campaign_does_not(tmp_path):
    """A "no range: only 3.13.0 could tell" is a finished range (the campaign moves on), but
    `triage --bisect` takes it again: the cache may hold more releases, the checks read more."""
    store = _store(tmp_path, [_row(tmp_path, "a", "cause-a", 1.0)])
    path, _ = save_finding(tmp_path / "corpus2", Finding(
        Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom"), "func.func @main() {\n  return\n}\n",
        ("llvm-cpu",), None, 0, None, None, "3.13.0", [], "error: boom"))
    no_range = {"text": "no range: only 3.13.0 could tell (the other releases were stepped over)", "entry": path.name}
    cause = dataclasses.replace(summarize(store).causes[0], corpus_entries=(str(path),),
                                regression=Regression.of(no_range))
    check = lambda e, v: ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING, "failing", e.signature)  # noqa: E731
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v, only_new=False) == 0
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v, only_new=False,
                         again_without_range=True) == 1
    assert store.meta_object("regression:cause-a")["text"].startswith("present in every release tried")
    store.close()


@pytest.fixture
def entry(tmp_path):
    path, _ = save_finding(tmp_path, Finding(Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom"),
                                             "func.func @main() {\n  return\n}\n", ("llvm-cpu",), None, 0,
                                             None, None, "3.13.0", [], "error: boom"))
    return load_entry(path)


@pytest.mark.parametrize("bad, compiles, first", [
    ({"3.13.0"}, ["3.12.0"], "3.13.0"),  # new in the pinned release: one compile
    (set(OLD), ["3.12.0", "3.0.0"], "3.0.0"),  # present in every release: two
    ({"3.6.0", "3.12.0", "3.13.0"}, ["3.12.0", "3.0.0", "3.6.0"], "3.6.0"),
])
def test_the_newest_older_release_then_the_oldest_answer_first_and_the_seen_release_is_not_compiled(
        entry, bad, compiles, first):
    calls: list[str] = []

    def check(e, version):
        calls.append(version)
        return ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING if version in bad else ReplayOutcome.FIXED,
                            "failing", e.signature)

    result = bisect_entry(entry, OLD, check=check, installer=lambda v: v, trusted={"3.13.0"})
    assert calls == compiles and result.first_failing == first
    assert any(p.version == "3.13.0" and p.verdict for p in result.probes)  # listed as tried


def test_a_stopped_range_raises_through_the_bisect(entry):
    def check(e, version):
        raise Stopped()

    with pytest.raises(Stopped):
        bisect_entry(entry, OLD, check=check, installer=lambda v: v, trusted={"3.13.0"})


def test_the_phase_after_the_budget_scales_with_a_long_campaign():
    from shapefuzz.campaign.run import FuzzRequest, bisect_seconds

    assert bisect_seconds(FuzzRequest(time="5m")) == 120.0
    assert bisect_seconds(FuzzRequest(time="60m")) == 360.0
    assert bisect_seconds(FuzzRequest(time="60m", bisect_time="30s")) == 30.0


def test_a_causes_first_entry_is_its_smallest_shrunk_one_of_the_leads_kind(tmp_path):
    # the un-shrunk sibling merged first (campaign #31: an 8 KB attention chain shown over a 2.3 KB
    # shrunk conv_transpose); its issue text and its range take the first entry
    rows = [_row(tmp_path, "a-first", "cause-a", 1.0, size=8000, shrink=ShrinkState.SKIPPED),
            _row(tmp_path, "a-shrunk", "cause-a", 2.0, size=2300, shrink=ShrinkState.DONE, lane="vmvx"),
            _row(tmp_path, "a-smaller", "cause-a", 3.0, size=900, shrink=ShrinkState.DONE, lane="vulkan-spirv")]
    cause = summarize(_store(tmp_path, rows)).causes[0]
    assert [Path(e).name for e in cause.corpus_entries] == ["a-smaller", "a-shrunk", "a-first"]


def test_the_issue_shows_the_smallest_entry_the_bisect_ranges_it_and_a_range_from_another_entry_says_so(tmp_path):
    """A cause's first entry (its issue text, its chain) is its smallest, the one the bisect takes:
    an audit found an issue showing an unshrunk scatter (failing since 3.6.0) under the range of its
    shrunk gather sibling ("passes in 3.6.0")."""
    def saved(lane: str, mlir: str) -> Path:
        path, _ = save_finding(tmp_path / "corpus", Finding(
            Signature(lane, Stage.COMPILE, Status.ERROR, "boom"), mlir, (lane,), None, 0, None, None,
            "3.13.0", [], "error: boom"))
        return path

    big = saved("llvm-cpu", "func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {\n"
                            "  %b = arith.addf %a, %a : tensor<64xf32>\n  return %b : tensor<64xf32>\n}\n")
    small = saved("vmvx", "func.func @main() {\n  return\n}\n")
    rows = [dataclasses.replace(_row(tmp_path, "x", "cause-a", 1.0, size=90), corpus_entry=str(big)),  # row says 90 B
            dataclasses.replace(_row(tmp_path, "y", "cause-a", 2.0, size=200, shrink=ShrinkState.DONE,
                                     lane="vmvx"), corpus_entry=str(small))]
    store = _store(tmp_path, rows)
    cause = summarize(store).causes[0]
    assert [Path(e).name for e in cause.corpus_entries] == [small.name, big.name]  # not the bucket order
    assert [d.entry for d in due_causes(rows, tmp_path / "corpus", {})] == [str(small)]  # in-campaign range
    check = lambda e, v: ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING, "failing", e.signature)  # noqa: E731
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v) == 1
    regression = summarize(store).causes[0].regression
    assert regression is not None and regression.entry == small.name
    record = regression.to_json()  # as meta.json's bug record keeps it
    meta = {"bug": {"regression": record}}
    assert "present in every release tried" in regression_line(meta, small.name)
    # another entry's range is not this reproducer's: none is shown (export says it is not bisected)
    assert regression_line({"bug": {"regression": {**record, "entry": big.name}}}, small.name) is None
    store.close()


def test_the_shown_entry_is_the_one_with_the_fewest_ops(tmp_path):
    """Audit D of the fresh campaign (cause-704499686a): a 62-line unshrunk sibling over 24 elements was
    shown before the 13-line shrunk reproducer over 206, since elements came first in the order."""
    from shapefuzz.campaign.causes.cause_facts import smallest_first

    def saved(lane: str, mlir: str) -> str:
        path, _ = save_finding(tmp_path / "corpus", Finding(
            Signature(lane, Stage.COMPILE, Status.ERROR, "boom"), mlir, (lane,), None, 0, None, None,
            "3.13.0", [], "error: boom"))
        return str(path)

    chain = "func.func @main(%a: tensor<2xf32>) -> tensor<2xf32> {\n" + "".join(
        f"  %v{i} = arith.addf %a, %a : tensor<2xf32>\n" for i in range(6)) + "  return %v5 : tensor<2xf32>\n}\n"
    bare = "func.func @main(%a: tensor<256xf32>) -> tensor<256xf32> {\n  return %a : tensor<256xf32>\n}\n"
    many, few = saved("rocm-gfx942", chain), saved("llvm-cpu", bare)
    assert smallest_first([many, few]) == (few, many)
    # an entry a pipeline variant needs comes after a default-pipeline one, however small
    variant = saved("llvm-cpu-aggressive-fusion", bare.replace("256", "8"))
    assert smallest_first([variant, many, few]) == (few, many, variant)


def test_the_range_thread_leaves_the_commands_signals_to_the_main_thread_and_its_compilers_get_them():
    """A Ctrl-C the kernel handed the range thread went unseen until the campaign ended (Python
    runs signal handlers in the main thread only): the thread blocks them, and a child it starts
    does not inherit the block."""
    import signal
    import threading

    from shapefuzz.process import interrupts
    from shapefuzz.campaign.ranging import RangeWorker
    from shapefuzz.process.sandbox import run_sandboxed

    seen: dict[str, object] = {}

    def releases() -> list[str]:
        seen["mask"] = signal.pthread_sigmask(signal.SIG_BLOCK, [])
        seen["child"] = run_sandboxed(["grep", "SigBlk", "/proc/self/status"]).stdout
        return []  # fewer than two: the thread ends

    worker = RangeWorker(Path("."), Path("."), lambda: True, releases).start()
    assert worker.stop(wait=10)
    assert set(interrupts.SIGNALS) <= set(seen["mask"])
    assert int(str(seen["child"]).split()[1], 16) == 0
    assert signal.SIGINT not in signal.pthread_sigmask(signal.SIG_BLOCK, [])  # the main thread's mask is its own
    assert threading.current_thread() is threading.main_thread()
