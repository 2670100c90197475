"""Triage knows the chain (#33 item 5): a cause whose reproducer keeps context ops says which, in
the report's cause line, `report --json` and the bug report; one without reads as before."""

from __future__ import annotations

import dataclasses

import pytest

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.case import Case
from shapefuzz.families import render_case
from shapefuzz.families.generate import draw_params
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.issue import chain_text, reproducer_chain
from shapefuzz.triage.severity import Severity

# The keys `report --json` printed for a cause before chains existed, in their order.
CAUSE_KEYS = ["identity", "failing_pass", "component", "scope", "lanes", "severity", "severity_rank", "localized",
              "reported", "known", "regression", "cause", "triage", "evidence", "backends", "stage", "status",
              "message", "buckets", "count", "first_seen", "new", "rehits", "rehit_seconds", "corpus_entries",
              "symptoms", "merged", "shrunk"]


def _chain_case() -> Case:
    """A drawn conv case with a producer and a consumer around its root."""
    for seed in range(200):
        p = draw_params("conv", seed, context_share=1.0)
        if any(op.is_producer for op in p.context) and any(not op.is_producer for op in p.context):
            return Case.make("conv", p.to_json())
    raise AssertionError("no conv chain with a producer and a consumer in 200 draws")


def _cause(**changes) -> Cause:
    cause = Cause(name="cause-0123456789", triage=Triage.COMPILER_BUG, evidence="", identity="i",
                  failing_pass="FoldUnitExtentDimsPass", component="global-optimization", scope="default pipeline",
                  lanes=("llvm-cpu",), severity=Severity.COMPILE_ERROR, localized=None, reported="",
                  known=False, regression=None, backends=("llvm-cpu",), stage="compile", status="error",
                  message="m", buckets=(), count=1, first_seen=0.0, new=True, rehits=0, rehit_seconds=0.0,
                  corpus_entries=(), symptoms=(), merged=(), shrunk=True)
    return dataclasses.replace(cause, **changes)


def test_chain_text_names_the_ops_kept_in_data_flow_order():
    params = {"context": [{"op": "relu", "result": 0}, {"op": "transpose", "operand": 1, "perm": [1, 0]},
                          {"op": "pad", "operand": 0, "lo": [0], "hi": [1], "value": 0.0}]}
    assert chain_text("conv", params) == "pad(operand 0) → transpose(operand 1) → conv → relu(result 0)"
    assert chain_text("conv", {"dtype": "f32"}) == "" and chain_text("conv", {"context": "bad"}) == ""
    case = _chain_case()
    text = reproducer_chain(render_case(case))
    assert text and text == chain_text("conv", case.params) and " → conv → " in text
    bare = Case.make("conv", {k: v for k, v in case.params.items() if k != "context"})
    assert reproducer_chain(render_case(bare)) == "" and reproducer_chain("func.func @f() { return }") == ""
    assert reproducer_chain('// shapefuzz-case: {"family": 3}\n') == ""  # a broken header: no chain, no traceback


def test_report_cause_line_and_json_say_the_chain_only_when_there_is_one(tmp_path):
    from shapefuzz.campaign.database import CampaignStore
    from shapefuzz.campaign.report.summary import markdown, summarize, text_lines

    from shapefuzz.campaign.report.dashboard import cause_rows, render
    from shapefuzz.campaign.report.series import build

    store = CampaignStore(tmp_path / "camp")
    try:
        summary = summarize(store)
        series = build(store, summary)
    finally:
        store.close()
    plain, chained = _cause(), _cause(chain="pad(operand 0) → conv → relu(result 0)")
    assert list(plain.to_json()) == CAUSE_KEYS  # report --json unchanged for a context-free cause
    assert chained.to_json() == {**plain.to_json(), "chain": "pad(operand 0) → conv → relu(result 0)"}
    plain_lines = text_lines(dataclasses.replace(summary, causes=[plain]))
    chained_lines = text_lines(dataclasses.replace(summary, causes=[chained]))
    assert not any("chain" in line for line in plain_lines)
    at = chained_lines.index("    inside a chain: pad(operand 0) → conv → relu(result 0)")
    assert chained_lines[:at] + chained_lines[at + 1:] == plain_lines
    plain_md = markdown(dataclasses.replace(summary, causes=[plain]))
    chained_md = markdown(dataclasses.replace(summary, causes=[chained]))
    assert "inside a chain" not in plain_md  # report.md's cause row: the scope cell says it, only then
    assert chained_md == plain_md.replace("| default pipeline |",
                                          "| default pipeline; inside a chain: pad(operand 0) → conv → relu(result 0) |")

    def page(cause: Cause) -> str:
        one = dataclasses.replace(summary, causes=[cause])
        return render(one, series, cause_rows(one, tmp_path, None), False)

    assert "inside a chain" not in page(plain)
    assert "inside a chain: pad(operand 0) → conv → relu(result 0)" in page(chained)


@pytest.mark.iree
def test_issue_says_the_chain_and_a_plain_family_bug_reads_as_before(tmp_path, toolchain, monkeypatch):
    from shapefuzz.corpus import load_entry, make_finding, save_finding
    import shapefuzz.export.issue as issue
    from shapefuzz.export.issue import IssueContext, to_issue
    from shapefuzz.export.plan import plan

    case = _chain_case()
    bare = Case.make("conv", {k: v for k, v in case.params.items() if k != "context"})
    sig = Signature("llvm-cpu", Stage.COMPILE, Status.ERROR, "error: failed to legalize")
    context = IssueContext("IREE 3.13.0", ("llvm-cpu: fails the same way (this issue)",))
    texts, paths = {}, {}
    for name, c in (("chain", case), ("plain", bare)):
        paths[name], _ = save_finding(tmp_path / name, make_finding(sig, render_case(c), toolchain, case=c))
        texts[name] = to_issue(plan(load_entry(paths[name]), toolchain), context, "issue.files")
    chain = chain_text("conv", case.params)
    assert f"inside a chain of ops, as frontends emit them: `{chain}`" in texts["chain"]
    assert f"(op family: conv, inside the chain {chain});" in texts["chain"]
    assert "inside " not in texts["plain"] and "(op family: conv);" in texts["plain"]
    # byte-identical to the text written before chains were read: the same entry with no chain found
    monkeypatch.setattr(issue, "reproducer_chain", lambda mlir: "")
    assert to_issue(plan(load_entry(paths["plain"]), toolchain), context, "issue.files") == texts["plain"]


@pytest.mark.iree
def test_issue_says_what_a_device_ladder_found_the_failure_needs(tmp_path, toolchain):
    """`bundle-judge --save` of a ladder bundle writes meta.json bug.chain / bug.ladder: the issue
    names the ops the device run needs (not the whole chain), or the root alone when it fails too."""
    from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
    from shapefuzz.export.issue import IssueContext, to_issue
    from shapefuzz.export.plan import plan

    case = _chain_case()
    sig = Signature("llvm-cpu", Stage.COMPARE, Status.MISMATCH, "wrong values in conv")
    path, _ = save_finding(tmp_path / "c", make_finding(sig, render_case(case), toolchain, case=case))
    context = IssueContext("IREE 3.13.0", ("llvm-cpu: fails the same way (this issue)",))
    producer = next(op for op in case.params["context"] if "operand" in op)
    needed = chain_text("conv", {"context": [producer]})
    bug = load_entry(path).meta.get("bug") or {}
    update_meta(path, bug={**bug, "chain": needed, "ladder": {"verdict": f"needs the chain; kept: {needed}"}})
    said = to_issue(plan(load_entry(path), toolchain), context, "issue.files")
    assert f"the failure needs `{needed}`" in said and f"needs the chain; kept: {needed}" in said
    assert "The reproducer keeps these context ops" not in said
    update_meta(path, bug={**bug, "chain": "", "ladder": {"verdict": "root alone fails: a plain conv bug"}})
    said = to_issue(plan(load_entry(path), toolchain), context, "issue.files")
    assert "the root op alone fails too" in said and "the failure needs" not in said


def test_the_report_reads_a_cause_s_chain_as_export_does_a_device_ladder_first(tmp_path):
    """A cause's chain in the campaign report is `entry_chain`'s (what export --format issue says):
    the reproducer's chain, until `bundle-judge --save` writes a ladder's verdict; "root alone
    fails" (bug.chain "") is then reported as a plain family bug."""
    from shapefuzz.campaign.database import BucketRow, CampaignStore
    from shapefuzz.campaign.outcomes import BucketState
    from shapefuzz.campaign.report.summary import summarize, text_lines
    from shapefuzz.corpus import Finding, load_entry, save_finding, update_meta

    case = _chain_case()
    sig = Signature("cuda-sm80", Stage.COMPARE, Status.MISMATCH, "wrong values in conv")
    corpus = tmp_path / "corpus"
    path, _ = save_finding(corpus, Finding(sig, render_case(case), ("cuda-sm80",), case, 0, None, None, "3.13.0",
                                           ["iree-compile", "reproducer.mlir"], "max abs diff 3.0"))
    store = CampaignStore(tmp_path / "c")
    try:
        store.start_session([])
        store.set_meta("config", '{"corpus": "%s"}' % corpus)
        store.put_bucket(BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=sig.backend, stage="compare",
                                   status="mismatch", family="conv", count=1, first_seen=1.0, last_seen=1.0,
                                   first_wall=0.0, last_wall=0.0, state=BucketState.CONFIRMED, repro_key="k",
                                   repro_size=100, repro_text="x", detail="", corpus_entry=str(path),
                                   shrunk_size=None, cause="cause-0123456789", triage=Triage.COMPILER_BUG))

        def said() -> tuple[str, list[str]]:
            summary = summarize(store)
            [cause] = summary.causes
            return cause.chain, [line for line in text_lines(summary) if "inside a chain" in line]

        chain = chain_text("conv", case.params)
        assert said() == (chain, [f"    inside a chain: {chain}"])  # no ladder: the reproducer's chain
        bug = load_entry(path).meta["bug"]
        update_meta(path, bug={**bug, "chain": "", "ladder": {"verdict": "root alone fails: a plain conv bug"}})
        assert said() == ("", [])  # the device ran the root alone and it failed: a plain conv bug
        producer = next(op for op in case.params["context"] if "operand" in op)
        needed = chain_text("conv", {"context": [producer]})
        update_meta(path, bug={**bug, "chain": needed, "ladder": {"verdict": f"needs the chain; kept: {needed}"}})
        assert said() == (needed, [f"    inside a chain: {needed}"])
    finally:
        store.close()
