"""An issue text says only what is true of the reproducer it shows (triage.shown): a cause found on a
33 x i8 candidate and shrunk to 1 x i8 never reads "the module holds a 33xi8", names as reproducing only
the lanes that reproducer was run on, says which lanes of the cause were not re-checked with it, and
quotes the verdict re-derived from its own runs once they are recorded; a cause with an entry marked
reported says so with its link. The corpus records are made as the campaign makes them (save_finding,
then the shrink's smaller save, then its records); the verdict's evidence by the campaign's own
`vulkan_verdict` on each text; the text by the campaign's `IssueTexts` with the real toolchain."""

from __future__ import annotations

import pytest

from shapefuzz.triage.severity import Severity
from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.triage.verdict import vulkan_verdict
from shapefuzz.campaign.outcomes import Failure, Triage
from shapefuzz.campaign.report.issue_texts import IssueTexts
from shapefuzz.corpus import load_entry, make_finding, save_finding, update_meta
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.triage.shown import SAME, PASSES, LaneRun, ShownRuns, reproducer_digest

X_PLUS_X = """func.func @main(%x: tensor<{n}xi8>) -> tensor<{n}xi8> {{
  %r = arith.addi %x, %x : tensor<{n}xi8>
  return %r : tensor<{n}xi8>
}}
"""
SIG = Signature("vulkan-spirv", Stage.COMPARE, Status.MISMATCH, "wrong values")
URL = "https://github.com/iree-org/iree/issues/12345"


def _cause(entry: str, reported: str = "") -> Cause:
    return Cause(name="cause-1234567890", triage=Triage.COMPILER_BUG, evidence="", identity="i", failing_pass="",
                 component="codegen for SPIR-V (vulkan-spirv)", scope="default pipeline",
                 lanes=("vulkan-spirv", "vulkan-llvmpipe"), severity=Severity.WRONG_VALUES, localized=None,
                 reported=reported, known=bool(reported), regression=None, backends=("vulkan-spirv", "vulkan-llvmpipe"),
                 stage="compare", status="mismatch", message="wrong values", buckets=(), count=3, first_seen=0.0,
                 new=not reported, rehits=0, rehit_seconds=0.0, corpus_entries=(entry,), symptoms=(), merged=(),
                 shrunk=True)


def _verdict(n: int, lanes: dict[str, Status]) -> tuple[Triage, str]:
    return vulkan_verdict(X_PLUS_X.format(n=n), Failure(SIG, "values differ"), lanes, ["llvm-cpu"])


def _entry(tmp_path, toolchain):
    """The campaign's records of one cause: found on 33 x i8, shrunk to 1 x i8."""
    corpus = tmp_path / "corpus"
    # the candidate's check: wrong on vulkan-spirv only, its twin not run yet (the i8 words decide it)
    triage, evidence = _verdict(33, {"llvm-cpu": Status.OK, "vulkan-spirv": Status.MISMATCH})
    assert "33xi8" in evidence  # what the candidate's verdict says of that module
    found = make_finding(SIG, X_PLUS_X.format(n=33), toolchain, detail="values differ", triage=triage.value,
                         evidence=evidence, cause="cause-1234567890")
    path, _ = save_finding(corpus, found)
    # the shrink: a smaller reproducer of the same signature, saved as the campaign saves it (no evidence)
    save_finding(corpus, make_finding(SIG, X_PLUS_X.format(n=1), toolchain, detail="values differ"), sighting=False)
    update_meta(path, bug={**load_entry(path).meta["bug"], "lanes": ["vulkan-spirv", "vulkan-llvmpipe"]})
    return path


def _text(tmp_path, toolchain, path, reported: str = "") -> str:
    buckets = [{"backend": "vulkan-spirv", "signature": str(SIG), "count": 2, "state": "confirmed"},
               {"backend": "vulkan-llvmpipe", "signature": "vulkan-llvmpipe/compare/mismatch: wrong values",
                "count": 1, "state": "confirmed"}]
    out = IssueTexts(tmp_path / "camp", toolchain).write(_cause(str(path), reported), buckets)
    assert out is not None
    return out.read_text()


@pytest.mark.iree
def test_the_text_of_a_shrunk_cause_has_the_shrunk_reproducer_s_facts_only(tmp_path, toolchain):
    path = _entry(tmp_path, toolchain)
    entry = load_entry(path)
    assert "tensor<1xi8>" in entry.mlir and entry.meta["triage_evidence_of"] != reproducer_digest(entry.mlir)
    text = _text(tmp_path, toolchain, path)
    assert "33xi8" not in text and "33 bytes" not in text  # the candidate's numbers are not this reproducer's
    assert "tensor<1xi8>" in text
    assert "Triage: compiler bug, decided on the larger candidate the campaign found before shrinking" in text
    # only its own lane is known to reproduce it; the cause's other lane is said to be unchecked, not claimed
    assert "- Reproduces on: `vulkan-spirv` (default flags)." in text
    assert "- Not re-checked with this reproducer: vulkan-llvmpipe (where the cause's other candidates failed)." in text
    assert "In this campaign, on each backend (the cause's candidates, not only this reproducer):" in text
    assert "Already reported" not in text

    # the shown reproducer's own runs, recorded as campaign.shown_runs records them: its verdict re-derived
    triage, evidence = _verdict(1, {"llvm-cpu": Status.OK, "vulkan-spirv": Status.MISMATCH,
                                    "vulkan-llvmpipe": Status.OK})
    runs = (LaneRun("vulkan-spirv", SAME, "fails the same way"),
            LaneRun("vulkan-llvmpipe", PASSES, "passes (matches the reference)"),
            LaneRun("llvm-cpu", PASSES, "passes (matches the reference)"))
    update_meta(path, shown=ShownRuns(reproducer_digest(entry.mlir), runs, triage=triage.value,
                                      evidence=evidence).to_json())
    text = _text(tmp_path, toolchain, path)
    assert "33xi8" not in text
    assert "Triage: compiler bug, re-derived from this reproducer's own runs" in text and "1xi8 (1 byte)" in text
    assert "- Reproduces on: `vulkan-spirv` (default flags)." in text and "Not re-checked" not in text

    # a record of an earlier reproducer (the shrink moved on) is not this one's
    update_meta(path, shown={**ShownRuns("0" * 16, runs, triage="suspected driver").to_json()})
    assert "re-derived" not in _text(tmp_path, toolchain, path)


@pytest.mark.iree
def test_a_cause_matching_an_entry_marked_reported_says_so_with_its_link(tmp_path, toolchain):
    path = _entry(tmp_path, toolchain)
    text = _text(tmp_path, toolchain, path, reported=URL)
    assert f"<!-- Already reported: {URL} -->" in text
    assert f"**Already reported upstream**: <{URL}>" in text and f"- Already reported upstream: {URL}." in text
