"""A cause's range is (re)taken on the reproducer its issue shows, once that exists, and the issue's
range comes from that run. An audit found two causes (16aa1bf198, 272c3b0359) whose issues said "no
range" because an old release "cannot parse torch.quantized_decomposed...", an op none of their
shown reproducers holds: the range had been taken once, on another entry's pre-shrink text, and a
cause with a range was never due again. And a range was copied into every entry of its cause, so an
entry of another lane read the first one's reason for a release it never tried. Fakes throughout."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from shapefuzz.campaign.causes.cause_facts import annotate_corpus, bisect_causes, ranged_entries, set_regression
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, Triage
from shapefuzz.campaign.ranging import due_causes
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.corpus import Finding, load_entry, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.recheck.regression import reproducer_digest
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult
from shapefuzz.triage.issue import regression_line

OLD = ["3.0.0", "3.6.0", "3.12.0", "3.13.0"]
BIG = "func.func @main(%a: tensor<64xf32>) -> tensor<64xf32> {\n  %b = arith.addf %a, %a : tensor<64xf32>\n" \
      "  return %b : tensor<64xf32>\n}\n"
SMALL = "func.func @main() {\n  return\n}\n"


def _entry(tmp_path: Path, lane: str, mlir: str) -> Path:
    path, _ = save_finding(tmp_path / "corpus", Finding(Signature(lane, Stage.COMPILE, Status.ERROR, "boom"), mlir,
                                                        (lane,), None, 0, None, None, "3.13.0", [], "error: boom"))
    return path


def _row(entry: Path, first: float, size: int, shrink: ShrinkState = ShrinkState.DONE) -> BucketRow:
    lane = entry.name.split("-compile-")[0]
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": "boom"})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage="compile", status="error",
                     family="conv", count=1, first_seen=first, last_seen=first, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"k-{entry.name}", repro_size=size, repro_text="x",
                     detail="error: boom\n", corpus_entry=str(entry), shrunk_size=size, cause="cause-a",
                     triage=Triage.COMPILER_BUG, shrink=shrink)


def _store(tmp_path: Path, rows: list[BucketRow]) -> CampaignStore:
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.set_meta("config", '{"corpus": "%s"}' % (tmp_path / "corpus"))
    for row in rows:
        store.put_bucket(row)
    return store


def _record(entry: Path, text: str = "no range: only 3.13.0 could tell (the other releases were stepped over)",
            **more) -> dict:
    return {"text": text, "entry": entry.name, "reproducer": reproducer_digest((entry / "reproducer.mlir").read_text()),
            **more}


def test_a_cause_ranged_on_one_entry_is_due_again_on_the_smaller_one_its_issue_shows(tmp_path):
    big = _entry(tmp_path, "llvm-cpu", BIG)
    rows = [_row(big, 1.0, 900)]
    store = _store(tmp_path, rows)
    set_regression(store, "cause-a", _record(big))
    corpus = tmp_path / "corpus"
    assert due_causes(rows, corpus, ranged_entries(store)) == []  # ranged on the entry it has
    small = _entry(tmp_path, "vmvx", SMALL)  # a smaller, shrunk example arrives
    rows.append(_row(small, 2.0, 40))
    assert [Path(d.entry).name for d in due_causes(rows, corpus, ranged_entries(store))] == [small.name]
    set_regression(store, "cause-a", _record(small, "present in every release tried (3.0.0–3.13.0)"))
    assert due_causes(rows, corpus, ranged_entries(store)) == []
    store.close()


def test_an_entry_whose_reproducer_a_shrink_rewrote_is_ranged_again(tmp_path):
    entry = _entry(tmp_path, "llvm-cpu", BIG)
    rows = [_row(entry, 1.0, 900)]
    store = _store(tmp_path, rows)
    set_regression(store, "cause-a", _record(entry))  # taken on the pre-shrink text
    (entry / "reproducer.mlir").write_text(SMALL)  # the shrink writes the smaller one in place
    assert [Path(d.entry).name for d in due_causes(rows, tmp_path / "corpus", ranged_entries(store))] == [entry.name]
    cause = summarize(store).causes[0]
    assert cause.regression is not None and not cause.regression.shown  # not this text's range
    store.close()


def test_the_range_is_retaken_on_the_shown_entry_and_only_that_entry_and_issue_show_it(tmp_path):
    big, small = _entry(tmp_path, "llvm-cpu-single-dispatch", BIG), _entry(tmp_path, "llvm-cpu", SMALL)
    store = _store(tmp_path, [_row(big, 1.0, 900), _row(small, 2.0, 40)])
    set_regression(store, "cause-a", _record(big, stepped_over="3.0.0: not runnable: llvm-cpu-single-dispatch is "
                                                               "not supported by this compiler"))
    cause = summarize(store).causes[0]
    assert Path(cause.corpus_entries[0]).name == small.name and not cause.regression.shown
    annotate_corpus(store, [cause])
    assert "regression" not in load_entry(small).meta["bug"]  # another entry's range is not shown as its own
    assert regression_line({"bug": {"regression": _record(big)}}, small.name) is None
    calls: list[str] = []

    def check(e, version):
        calls.append(version)
        return ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING, "failing", e.signature)

    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v) == 1  # retaken
    cause = summarize(store).causes[0]
    assert cause.regression.entry == small.name and cause.regression.shown and set(calls) == set(OLD) - {"3.13.0"}
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v) == 0  # once
    annotate_corpus(store, [cause])
    mine = load_entry(small).meta["bug"]["regression"]
    assert mine["text"] == "present in every release tried (3.0.0–3.13.0)"
    assert load_entry(big).meta["bug"]["regression"]["entry"] == big.name  # its own range, of its own lane
    line = regression_line(load_entry(small).meta, small.name)
    assert "Each release: 3.0.0 fails; 3.6.0 fails; 3.12.0 fails; 3.13.0 fails." in line
    assert "single-dispatch" not in line  # never a sibling lane's reason
    store.close()


def test_a_cause_left_without_a_range_on_its_shown_entry_says_so(tmp_path):
    from shapefuzz.campaign.causes.cause_facts import mark_unranged

    big, small = _entry(tmp_path, "llvm-cpu", BIG), _entry(tmp_path, "vmvx", SMALL)
    store = _store(tmp_path, [_row(big, 1.0, 900), _row(small, 2.0, 40)])
    set_regression(store, "cause-a", _record(big, "present in every release tried (3.0.0–3.13.0)"))
    assert mark_unranged(store, summarize(store).causes, "the bisect budget ran out") == 1
    cause = dataclasses.replace(summarize(store).causes[0])
    assert cause.regression_text == "no range: the bisect budget ran out" and cause.regression.entry == small.name
    store.close()


def test_triage_bisect_retakes_a_range_an_older_shapefuzz_took_and_the_campaign_keeps_it(tmp_path):
    """A range recorded without the reproducer's digest was judged the old way (cause-0f4e3e1518's
    "3.12.0–3.13.0", with 3.6.0 misread): `triage --bisect` takes it again, the campaign does not."""
    entry = _entry(tmp_path, "llvm-cpu", SMALL)
    store = _store(tmp_path, [_row(entry, 1.0, 40)])
    set_regression(store, "cause-a", {"text": "present in every release tried (3.12.0–3.13.0)", "entry": entry.name})
    cause = summarize(store).causes[0]
    check = lambda e, v: ReplayResult(e.id, e.path, ReplayOutcome.STILL_FAILING, "failing", e.signature)  # noqa: E731
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v) == 0
    assert bisect_causes(store, [cause], None, OLD, check=check, installer=lambda v: v, again_without_range=True) == 1
    assert summarize(store).causes[0].regression_text == "present in every release tried (3.0.0–3.13.0)"
    store.close()
