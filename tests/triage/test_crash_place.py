"""A compiler crash whose stack names no pass is placed at the pass that was running
(`judge.crash_probe`): the audit's "[compiler (pass unknown)] crash: SIGSEGV" (a use-after-free whose
stack ends at a garbage address) was EliminateEmptyTensorsPass by hand, found as the last pass begun
and never finished under `--mlir-print-ir-before-all`. Checked here against crashes whose stacks do
name the pass (IREE 3.13's own): the probe must name the same pass."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, Triage
from shapefuzz.coverage.actionlog import crash_pass
from shapefuzz.judge.crash_probe import crashing_dump, place_crash
from shapefuzz.triage.culprit import dumps_in

DATA = Path(__file__).resolve().parents[1] / "data"
SINGLE_DISPATCH = (DATA / "coverage" / "crash_single_dispatch.mlir").read_text()


@pytest.mark.iree
def test_a_crash_is_placed_at_the_pass_its_stack_names(toolchain):
    from shapefuzz.judge.oracle import check_module

    result = check_module(SINGLE_DISPATCH, ["llvm-cpu-single-dispatch"], None, toolchain, confirm=False).results[0]
    assert result.status.value == "crash" and crash_pass(result.detail) == "MakeSingleDispatchForFunctionPass"
    loc = place_crash(SINGLE_DISPATCH, "llvm-cpu-single-dispatch", toolchain, 60.0)
    assert loc.certain and loc.phase == "preprocessing", loc
    assert (loc.pass_name, loc.pass_class) == ("iree-preprocessing-make-single-dispatch-for-function",
                                               "MakeSingleDispatchForFunctionPass")
    assert "last pass begun that never finished" in loc.evidence
    assert "util.func public @main" in loc.ir_before  # the crashing pass's own input, for iree-opt
    torch = (DATA / "crash_torch_to_linalg.mlir").read_text()
    assert place_crash(torch, "llvm-cpu", toolchain, 60.0).where == "ConvertTorchToLinalg (input)"


@pytest.mark.iree
def test_a_compile_that_does_not_crash_is_not_placed(toolchain):
    loc = place_crash(SINGLE_DISPATCH, "llvm-cpu", toolchain, 60.0)  # (only the single-dispatch lane crashes)
    assert not loc.localized and "did not crash (ok)" in loc.evidence, loc


def _tree(root: Path, when: str, names: list[str]) -> list:
    for name in names:
        path = root / when / "builtin_module_no-symbol-name" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"// -----// IR Dump {when.title()} X: x //----- //\n")
    return dumps_in(root / when)


def test_the_crashing_pass_is_the_last_one_begun_and_never_finished_at_its_place(tmp_path):
    # function a finished the nested pipeline; function b crashed in its second pass (3_2), inside the
    # pipeline pass 3 (which has no "after" either); a's 3_2 finished
    before = _tree(tmp_path, "before", ["1_inline.mlir", "3_pipeline.mlir", "util_func_a/3_1_cse.mlir",
                                        "util_func_a/3_2_bad.mlir", "util_func_b/3_1_cse.mlir",
                                        "util_func_b/3_2_bad.mlir"])
    after = _tree(tmp_path, "after", ["1_inline.mlir", "util_func_a/3_1_cse.mlir", "util_func_a/3_2_bad.mlir",
                                      "util_func_b/3_1_cse.mlir"])
    found = crashing_dump(before, after, tmp_path)
    assert found is not None and found.path.parent.name == "util_func_b" and found.order == (3, 2)
    whole = _tree(tmp_path / "whole", "after", ["1_inline.mlir"])
    assert crashing_dump(_tree(tmp_path / "whole", "before", ["1_inline.mlir"]), whole, tmp_path / "whole") is None


@pytest.mark.iree
def test_the_campaign_step_places_a_crash_whose_stack_names_no_pass(tmp_path, toolchain):
    """Its stack's pass frames taken out (as a use-after-free's garbage frames leave none), the crash is
    placed by the probe, and the cause's failing pass and component follow."""
    from shapefuzz.campaign.localizing import crash_without_pass, localization_of, localize_causes
    from shapefuzz.campaign.report.summary import summarize
    from shapefuzz.corpus.entry import make_finding
    from shapefuzz.corpus.store import save_finding
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.model import Signature

    result = check_module(SINGLE_DISPATCH, ["llvm-cpu-single-dispatch"], None, toolchain, confirm=False).results[0]
    no_pass = "\n".join(line for line in result.detail.splitlines() if "runOnOperation" not in line
                        and "Pass" not in line)
    sig = Signature.from_json({"backend": "llvm-cpu-single-dispatch", "stage": "compile", "status": "crash",
                               "message": "SIGSEGV"})
    folder, _ = save_finding(tmp_path / "corpus", make_finding(sig, SINGLE_DISPATCH, toolchain, detail=no_pass))
    row = BucketRow(sig=str(sig), sig_json=sig.to_json(), backend=sig.backend, stage="compile", status="crash",
                    family="one_hot", count=1, first_seen=1.0, last_seen=1.0, first_wall=0.0, last_wall=0.0,
                    state=BucketState.CONFIRMED, repro_key="k", repro_size=10, repro_text=SINGLE_DISPATCH,
                    detail=no_pass, corpus_entry=str(folder), shrunk_size=None, cause="cause-crash",
                    triage=Triage.COMPILER_BUG)
    assert crash_without_pass(row) and not crash_without_pass(dataclasses.replace(row, detail=result.detail))
    store = CampaignStore(tmp_path / "c")
    store.start_session([])
    store.put_bucket(row)
    before = summarize(store).causes
    assert before[0].component == "compiler (pass unknown)", before[0].component
    assert localize_causes(store, before, toolchain, 60.0) == 1
    assert localization_of(store, row.sig).where == "MakeSingleDispatchForFunctionPass (preprocessing)"
    cause = summarize(store).causes[0]
    assert cause.component == "IREE input / global optimization", cause.component
    assert "make-single-dispatch-for-function" in cause.failing_pass
    store.close()
