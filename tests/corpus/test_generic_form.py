"""A release that cannot parse a reproducer's custom syntax is judged on the reproducer printed in
generic form by the pinned wheels and read back in that release's own syntax (campaign #31's
audit: 3 of 32 compiler-bug causes had "no range" only because 3.13's `iree_linalg_ext.attention`
spelling is "expected 'ins'" to 3.12). The entry in tests/data/generic_form is that audit's
cause-0df57cf924, as the 3.13 campaign saved it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from shapefuzz.corpus import load_entry
from shapefuzz.recheck.regression import GENERIC_FORM, regression_range, same_failure_check
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult
from shapefuzz.triage.issue import regression_line

ENTRY = Path(__file__).resolve().parents[1] / "data" / "generic_form" / "vulkan-llvmpipe-compile-error-6b9406cf0bd7"
OLD = "3.12.0"  # the newest release before 3.13 with the llvmpipe Vulkan target


def _old_release():
    from shapefuzz.iree.releases import cached_versions
    from shapefuzz.recheck.regression import local_installer

    if OLD not in cached_versions():
        pytest.skip(f"IREE {OLD} is not in the toolchain cache (`shapefuzz --iree-version {OLD} backends` fetches it)")
    return local_installer(OLD)


def test_a_range_says_which_releases_were_judged_on_the_generic_form(tmp_path):
    entry = load_entry(ENTRY)
    answers = {"3.6.0": (ReplayOutcome.NOT_RUNNABLE, "vulkan-llvmpipe is not supported by this compiler"),
               "3.12.0": (ReplayOutcome.STILL_FAILING,
                          f"the same failure (compile/error) {GENERIC_FORM} (printed by 3.13.0)"),
               "3.13.0": (ReplayOutcome.STILL_FAILING, "")}

    def check(e, version):
        outcome, detail = answers[version]
        return ReplayResult(e.id, e.path, outcome, "failing", e.signature, detail=detail)

    record = regression_range(entry, list(answers), check=check, installer=lambda v: v)
    assert record["text"] == ("present in every release tried (3.12.0–3.13.0); 3.12.0 judged on its generic form "
                              "(the reproducer's syntax is newer)")
    assert record["generic_form"] == "3.12.0"
    line = regression_line({"bug": {"regression": record}}, entry.id)
    assert "To reproduce it with 3.12.0, print it in generic form first (`iree-opt --mlir-print-op-generic`" in line
    answers["3.12.0"] = (ReplayOutcome.STILL_FAILING, "the same failure (compile/error)")  # read as written
    record = regression_range(entry, list(answers), check=check, installer=lambda v: v)
    assert record["text"] == "present in every release tried (3.12.0–3.13.0)" and record["generic_form"] == ""
    assert "generic" not in regression_line({"bug": {"regression": record}}, entry.id)


@pytest.mark.iree
def test_an_attention_only_the_pinned_release_can_parse_gets_its_range_on_the_generic_form(toolchain):
    """Real IREE: 3.12.0 cannot parse 3.13's attention spelling; on its generic form it fails in the
    same pass, so the range is 3.12.0–3.13.0, said to be taken on the generic form."""
    old = _old_release()
    entry = load_entry(ENTRY)
    failing = "iree-spirv-tile-and-distribute"
    as_written = same_failure_check(failing, printer=lambda: None)(entry, old)
    assert as_written.outcome == ReplayOutcome.UNREADABLE and "expected 'ins'" in as_written.detail
    on_generic = same_failure_check(failing)(entry, old)
    assert on_generic.outcome == ReplayOutcome.STILL_FAILING, on_generic.detail
    assert GENERIC_FORM in on_generic.detail and "tile-and-distribute" in on_generic.detail.lower()
    record = regression_range(entry, [OLD, toolchain.probe.version.split("rc")[0]], failing=failing, trust_seen=True)
    assert record["text"].startswith(f"present in every release tried ({OLD}–") and OLD in record["generic_form"]


@pytest.mark.iree
def test_a_generic_form_the_old_release_cannot_read_either_still_cannot_tell(toolchain, tmp_path, monkeypatch):
    from shapefuzz.invoke.reprint import Reprint

    old = _old_release()
    monkeypatch.setattr("shapefuzz.invoke.reprint.reprinted",
                        lambda text, printer, reader: Reprint(None, "its generic form does not parse either (x)"))
    result = same_failure_check()(load_entry(ENTRY), old)
    assert result.outcome == ReplayOutcome.UNREADABLE
    assert result.detail.startswith("cannot parse the reproducer (")
    assert "its generic form does not parse" in result.detail
    # the release that wrote the reproducer reads it as written: no generic form is tried
    shutil.copytree(ENTRY, tmp_path / ENTRY.name)
    (tmp_path / ENTRY.name / "reproducer.mlir").write_text("func.func @main( {\n")
    own = same_failure_check(printer=lambda: toolchain)(load_entry(tmp_path / ENTRY.name), toolchain)
    assert own.outcome == ReplayOutcome.UNREADABLE and "generic form" not in own.detail
