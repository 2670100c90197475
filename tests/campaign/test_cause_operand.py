"""A cause names the root-operand form (families/operands.py) its reproducer uses: the report's
text and Markdown, its JSON (the key only when there is a form) and the dashboard's row, so an
issue says whether the bug needs a constant init, a folded operand, a 0-d tensor or a torch
tensor without rank."""

from __future__ import annotations

import json
from pathlib import Path

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.campaign.report.summary import json_text, markdown, summarize, text_lines
from shapefuzz.case import Case
from shapefuzz.families import get_family, render_case
from shapefuzz.model import Signature


def _entry(folder: Path, params) -> str:
    folder.mkdir(parents=True)
    (folder / "reproducer.mlir").write_text(render_case(Case.make("reduce", params)))
    return str(folder)


def _bucket(lane: str, message: str, entry: str) -> BucketRow:
    sig = Signature.from_json({"backend": lane, "stage": "compile", "status": "error", "message": message})
    return BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=lane, stage="compile", status="error",
                     family="reduce", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0,
                     state=BucketState.CONFIRMED, repro_key=f"k-{lane}", repro_size=10, repro_text="x", detail="",
                     corpus_entry=entry, shrunk_size=None, cause=f"cause-{lane}", triage=Triage.COMPILER_BUG)


def test_a_cause_says_which_root_operand_form_its_reproducer_uses(tmp_path):
    reduce = get_family("reduce")
    p = reduce.load(reduce.operand_examples["const"])
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.put_bucket(_bucket("llvm-cpu", "write affecting operations on global resources",
                             _entry(tmp_path / "corpus" / "formed", p)))
    store.put_bucket(_bucket("vmvx", "another error", _entry(tmp_path / "corpus" / "plain", p.replace(operand=""))))
    summary = summarize(store)
    by_lane = {c.backends[0]: c for c in summary.causes}
    assert by_lane["llvm-cpu"].operand == "operand: const (a dense non-splat constant)" and by_lane["vmvx"].operand == ""
    printed = {c["backends"][0]: c for c in json.loads(json_text(summary))["causes"]}
    assert printed["llvm-cpu"]["operand"] == by_lane["llvm-cpu"].operand and "operand" not in printed["vmvx"]
    assert "    operand: const (a dense non-splat constant)" in text_lines(summary)
    row = next(line for line in markdown(summary).splitlines() if "cause-llvm-cpu" in line and "| compiler bug" in line)
    assert "; operand: const (a dense non-splat constant)" in row
    store.close()
