"""The typed seams between parts: one "smaller" order for the shrinker, the corpus and the
campaign; one place that builds a Finding; tool seconds counted by `execute`; enums in the store."""

from __future__ import annotations


import json
import re
import sys
from pathlib import Path

import pytest

from shapefuzz.campaign.iree import IreeTarget
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Failure
from shapefuzz.corpus import REPRODUCER, load_entry, make_finding, save_finding
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.size import size_of, sort_key
from shapefuzz.iree.toolchain import find_toolchain

SIG = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "boom")


def _module(shape: str, ops: int = 1) -> str:
    body = "".join(f"  %r{i} = arith.addf %a, %a : tensor<{shape}>\n" for i in range(ops))
    return f"func.func @main(%a: tensor<{shape}>) -> tensor<{shape}> {{\n{body}  return %a : tensor<{shape}>\n}}\n"


@pytest.mark.iree  # probes the real iree-compile (its version)
def test_one_smaller_order_for_shrinker_corpus_and_campaign(tmp_path):
    # As long but fewer elements: smaller in the one order (the campaign used to compare text
    # length and would have kept the other). Longer with fewer elements is smaller in the order too,
    # but never replaces a reproducer: a file never grows (issue 31).
    big, small, longer = _module("8x8xf32"), _module("2x9xf32"), _module("2x2xf32", ops=3)
    assert len(small) == len(big) < len(longer)
    assert size_of(small) < size_of(big) and sort_key(small) < sort_key(big) and size_of(longer) < size_of(small)
    target = IreeTarget(find_toolchain(), tmp_path)
    assert target.size(small) < target.size(big)
    tc = find_toolchain()
    save_finding(tmp_path, make_finding(SIG, big, tc))
    folder, _ = save_finding(tmp_path, make_finding(SIG, small, tc))
    assert load_entry(folder).mlir == small  # the corpus keeps the smaller one in the same order
    for other in (big, longer):
        save_finding(tmp_path, make_finding(SIG, other, tc))
        assert load_entry(folder).mlir == small


@pytest.mark.iree  # probes the real iree-compile (its version)
def test_findings_name_the_entry_files_wherever_they_come_from(tmp_path):
    tc = find_toolchain()
    finding = make_finding(SIG, _module("4xf32"), tc, seed=3)
    assert finding.compile_command[1] == REPRODUCER and finding.compile_command[-1] == "module.vmfb"
    assert finding.toolchain_version == tc.probe.version and finding.backends == ("llvm-cpu",)
    src = Path(__file__).resolve().parents[2] / "src" / "shapefuzz"
    built = re.compile(r"(?<![\w.])Finding\(")  # the corpus's Finding, not CodegenFinding or make_finding
    hand_built = [p for p in src.rglob("*.py") if built.search(p.read_text())
                  and p.relative_to(src).as_posix() != "corpus/entry.py"]
    assert not hand_built, f"Finding built by hand in {hand_built}; use corpus.make_finding"


def test_execute_reports_tool_seconds():
    from shapefuzz.invoke import execute
    before = execute.tool_seconds()
    result = execute.run_sandboxed([sys.executable, "-c", "import time; time.sleep(0.2)"], execute.Limits(timeout=10))
    assert result.ok and execute.tool_seconds() - before >= 0.2


def test_bucket_state_and_save_marker_round_trip(tmp_path):
    store = CampaignStore(tmp_path / "c")
    row = BucketRow(sig="s", sig_json={"backend": "a", "stage": "compile", "status": "error", "message": "m"},
                    backend="a", stage="compile", status="error", family="g", count=1, first_seen=0.0, last_seen=0.0,
                    first_wall=0.0, last_wall=0.0, state=BucketState.PENDING, repro_key="k", repro_size=10,
                    repro_text="text", detail="", corpus_entry="", shrunk_size=None, saving=2)
    store.put_bucket(row)
    back = store.bucket("s")
    assert back == row and isinstance(back.state, BucketState)
    raw = store.db.execute("SELECT state, corpus_entry FROM buckets").fetchone()
    assert raw == ("pending", "?2")  # the stored text is unchanged from before the enums
    assert json.dumps({"state": back.state}) == '{"state": "pending"}'


def test_a_failure_round_trips_through_the_store_with_an_equal_signature(tmp_path):
    from shapefuzz.campaign.bucket_book import new_bucket
    from shapefuzz.campaign.iree import failure_of
    from shapefuzz.campaign.database import CandidateRow
    from shapefuzz.campaign.outcomes import Candidate, Triage, Verdict

    sig = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values in pool")
    failure = failure_of(sig, "expected 1.0 at [0], got 2.0")
    candidate = Candidate("k", "pool", 5, (), "{}", "text")
    store = CampaignStore(tmp_path / "c")
    store.put_bucket(new_bucket(failure, candidate, 1.0, 2.0, BucketState.PENDING, Triage.COMPILER_BUG, "why"))
    store.record(CandidateRow(key="k", idx=0, seed=5, family="pool", features=(), backends=("llvm-cpu",),
                              verdict=Verdict.FAIL, outcome={"llvm-cpu": [Status.MISMATCH, 0.5]}, payload="{}", size=4,
                              tool_seconds=0.1, task_seconds=0.2, finished=1.0), [(failure.key, "llvm-cpu")],
                 store.start_session([]), 1.0)
    store.close()
    store = CampaignStore(tmp_path / "c", create=False)
    back = store.bucket(str(sig))
    assert back is not None and back.sig == failure.key == str(sig)  # the bucket key text is str(Signature)
    assert back.failure == failure and back.failure.signature == sig
    raw_sig, raw_outcome = store.db.execute("SELECT sig_json, outcome FROM buckets, candidates").fetchone()
    assert list(json.loads(raw_sig)) == ["backend", "stage", "status", "message", "identity", "strong", "failing_pass"]
    assert json.loads(raw_sig)["status"] == "mismatch" and raw_outcome == '{"llvm-cpu": ["mismatch", 0.5]}'
    # a bucket written before identities (the signature's fields alone) reads as its signature, no identity
    assert Failure.from_fields(sig.to_json(), "d") == Failure(sig, "d")
