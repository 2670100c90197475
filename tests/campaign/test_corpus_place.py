"""A campaign folder moved, copied or read from another working directory still names its own
corpus (campaign.corpus_place): a fresh 3.13 campaign started as the README starts it
(`--campaign campaign-demo --corpus campaign-demo/corpus`) kept `campaign-demo/corpus`, relative to
where it started, and absolute entry paths into that folder; `triage`/`report` of a copy then
linked no entry (its issue texts stayed as they were) and read, or renamed causes in, the
original's entries."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from shapefuzz.campaign.corpus_place import corpus_record, stored_corpus
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import summarize
from shapefuzz.model import Signature


def test_a_corpus_inside_the_campaign_is_kept_relative_to_it_one_outside_by_its_whole_path(tmp_path):
    campaign = tmp_path / "runs" / "c"
    assert corpus_record(campaign, campaign / "corpus") == {"corpus": "corpus", "corpus_in_campaign": True}
    outside = corpus_record(campaign, tmp_path / "shared-corpus")
    assert outside == {"corpus": str((tmp_path / "shared-corpus").resolve()), "corpus_in_campaign": False}
    moved = tmp_path / "elsewhere"
    assert stored_corpus(moved, {"corpus": "corpus", "corpus_in_campaign": True}) == moved / "corpus"
    # a path kept inside the campaign never leads out of it
    assert stored_corpus(moved, {"corpus": "../x", "corpus_in_campaign": True}) is None
    assert stored_corpus(moved, {"corpus": "/x", "corpus_in_campaign": True}) is None


def test_an_older_stores_path_from_where_it_started_is_read_inside_the_folder(tmp_path, monkeypatch):
    copy = tmp_path / "copy-of-demo"
    (copy / "corpus").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)  # no campaign-demo/ here
    assert stored_corpus(copy, {"corpus": "campaign-demo/corpus"}) == copy / "corpus"
    assert stored_corpus(copy, {"corpus": "campaign-demo/other"}) == Path("campaign-demo/other")  # not there
    (tmp_path / "campaign-demo" / "corpus").mkdir(parents=True)  # from the directory it started in: as given
    assert stored_corpus(copy, {"corpus": "campaign-demo/corpus"}) == Path("campaign-demo/corpus")


def _bucket(entry: str) -> BucketRow:
    sig = Signature.from_json({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": "boom"})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend="llvm-cpu", stage="compile", status="error",
                     family="reduce", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key="k", repro_size=10, repro_text="x", detail="",
                     corpus_entry=entry, shrunk_size=None, cause="cause-x", triage=Triage.COMPILER_BUG)


def test_a_copied_campaign_reads_its_own_entries_not_the_originals(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    original = Path("campaign-demo")
    entry = original / "corpus" / "llvm-cpu-compile-error-0123456789ab"
    entry.mkdir(parents=True)
    (entry / "reproducer.mlir").write_text("func.func @main() { return }\n")
    (entry / "meta.json").write_text(json.dumps({"id": entry.name}))
    store = CampaignStore(original)
    store.start_session([])
    store.set_meta("config", json.dumps({"corpus": "campaign-demo/corpus"}))  # as stores before kept it
    store.put_bucket(_bucket(str(entry.resolve())))
    store.close()
    shutil.copytree(original, tmp_path / "copy")
    os.chdir(tmp_path / "copy")  # triaged from inside the copy: campaign-demo/ is not here
    copy = CampaignStore(tmp_path / "copy", create=False)
    try:
        (row,) = copy.buckets()
        assert row.corpus_entry == str(tmp_path / "copy" / "corpus" / entry.name)
        assert copy.bucket(row.sig).corpus_entry == row.corpus_entry  # type: ignore[union-attr]
        (cause,) = summarize(copy).causes
        assert cause.corpus_entries == (str(tmp_path / "copy" / "corpus" / entry.name),)
    finally:
        copy.close()
