"""After its budget a campaign checks each cause's shown reproducer on the lanes its issue text would
name (campaign.shown_runs), one lane at a time within a time bound, and re-derives the verdict from
those runs with its own triage: real compiles of a drawn attention case (the gap is in the compile, so
no device is needed), the record kept in meta.json `shown` and only for that reproducer."""

from __future__ import annotations

from shapefuzz.triage.severity import Severity
from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.campaign.shown_runs import recheck_shown
from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
from shapefuzz.judge.oracle import check_case

import pytest

from shapefuzz.triage.shown import SAME, reproducer_digest, shown_runs_of


def _attention_case():
    """A plain f32 attention (no chain) the generator draws."""
    from shapefuzz.families.generate import draw_case

    for seed in range(200):
        case = draw_case("attention", seed, context_share=0.0)
        params = case.params
        if params.get("dtype") == "f32" and params.get("form") == "attention" and not params.get("context"):
            return case, seed
    raise AssertionError("no plain f32 attention among 200 draws")


def _cause(entry: str) -> Cause:
    return Cause(name="cause-aaaaaaaaaa", triage=Triage.TARGET_LIMIT, evidence="", identity="i", failing_pass="",
                 component="c", scope="s", lanes=("vulkan-spirv",), severity=Severity.COMPILE_ERROR,
                 localized=None, reported="", known=False, regression=None, backends=("vulkan-spirv",),
                 stage="compile", status="error", message="m", buckets=(), count=1, first_seen=0.0, new=True,
                 rehits=0, rehit_seconds=0.0, corpus_entries=(entry,), symptoms=(), merged=(), shrunk=True)


@pytest.mark.iree
def test_the_shown_reproducer_is_rechecked_on_its_lanes_and_its_verdict_re_derived(tmp_path, toolchain):
    from shapefuzz.families import render_case

    case, seed = _attention_case()
    report = check_case(case, ("vulkan-spirv",), toolchain, seed, confirm=False)
    failure = report.results[0]
    assert failure.signature is not None and failure.signature.message == "target limit: spirv-attention"
    text = render_case(case)
    path, _ = save_finding(tmp_path / "corpus", make_finding(
        failure.signature, text, toolchain, seed=seed, detail=failure.detail, triage="target limit",
        evidence="the candidate's evidence"))
    update_meta(path, bug={**load_entry(path).meta["bug"], "lanes": ["vulkan-spirv"]})

    said: list[str] = []
    assert recheck_shown([_cause(str(path))], toolchain, 120.0, said.append, corpus_dir=tmp_path / "corpus") == 1
    entry = load_entry(path)
    shown = shown_runs_of(entry.meta, entry.mlir)
    assert shown is not None and not shown.left, said
    verdicts = {r.lane: r.verdict for r in shown.runs}
    # its own lane, and the other Vulkan target on the same driver, fail the same way: one gap
    assert verdicts == {"vulkan-spirv": SAME, "vulkan-llvmpipe": SAME}
    assert shown.triage == "target limit"
    assert shown.evidence.startswith("vulkan-spirv: target limit spirv-attention")
    assert "iree_linalg_ext.online_attention" in shown.evidence
    # a record is taken once per reproducer: nothing to do the second time
    assert recheck_shown([_cause(str(path))], toolchain, 120.0) == 0


@pytest.mark.iree
def test_lanes_the_time_does_not_reach_are_said_and_taken_again(tmp_path, toolchain):
    case, seed = _attention_case()
    from shapefuzz.families import render_case
    from shapefuzz.model import Signature, Stage, Status

    text = render_case(case)
    sig = Signature("vulkan-spirv", Stage.COMPILE, Status.ERROR, "target limit: spirv-attention")
    path, _ = save_finding(tmp_path / "corpus", make_finding(sig, text, toolchain, seed=seed, triage="target limit",
                                                              evidence="e"))
    assert recheck_shown([_cause(str(path))], toolchain, 0.0) == 1
    entry = load_entry(path)
    shown = shown_runs_of(entry.meta, entry.mlir)
    assert shown is not None and shown.runs == () and shown.left == ("vulkan-spirv", "vulkan-llvmpipe")
    assert "time is up" in shown.why_left and not shown.triage
    assert shown.digest == reproducer_digest(entry.mlir)
