"""A crash's issue text shows its backtrace whole, down to the failing pass's own frame, and says
where an excerpt cut frames out instead of closing the numbering up (issue 31, item 8). Real IREE
3.13: torch-mlir's si8 `mul.Scalar` crash, whose pass (ConvertTorchToLinalg, a class not named
"...Pass") sits 24 frames below the signal handler."""

from __future__ import annotations

import pytest

from shapefuzz.triage.failing_pass import failing_pass, pass_in_frame
from shapefuzz.triage.issue import TOP_FRAMES, backtrace_lines
from support.crash_texts import SI8_MUL  # noqa: F401


def _frames(numbers, deep_pass: int | None = None) -> str:
    lines = [" #0 0x00007f llvm::sys::PrintStackTrace(llvm::raw_ostream&, int) Signals.cpp:0:0",
             " #1 0x00007f SignalHandler(int, siginfo_t*, void*) Signals.cpp:0:0"]
    for n in numbers:
        name = ("mlir::torch::(anonymous namespace)::ConvertTorchToLinalg::runOnOperation() TorchToLinalg.cpp:0:0"
                if n == deep_pass else f"mlir::f{n}(mlir::Operation*) F.cpp:0:0")
        lines.append(f"{'#' + str(n):>3} 0x00007f{n:04x} {name}")
    lines.append(f"#{max(numbers) + 1} 0x00007f mlir::detail::OpToOpPassAdaptor::runOnOperation(bool) Pass.cpp:0:0")
    return "\n".join(lines)


def test_the_backtrace_goes_down_to_the_pass_and_says_what_an_excerpt_cut():
    meta = {"status": "crash", "detail": _frames(range(2, 30), deep_pass=27)}
    shown = backtrace_lines(meta)
    assert shown[0] == " #2 0x00007f0002 mlir::f2(mlir::Operation*) F.cpp:0:0"
    assert shown[-1].endswith("ConvertTorchToLinalg::runOnOperation() TorchToLinalg.cpp:0:0")
    assert len(shown) == 26 > TOP_FRAMES  # every frame from the top to the pass's own, none cut short
    cut = backtrace_lines({"status": "crash", "detail": _frames([*range(2, 13), 30, 31, 32])})
    assert "[... frames #13-#29 were not kept with this entry" in cut[11] and cut[10].startswith("#12")
    # the pass is the class whose runOnOperation it is, "...Pass" or not; the adaptor is none
    assert failing_pass(_frames(range(2, 30), deep_pass=27)) == "ConvertTorchToLinalg"
    assert pass_in_frame("mlir::detail::OpToOpPassAdaptor::runOnOperation(bool) Pass.cpp:0:0") is None


@pytest.mark.iree
def test_a_real_torch_mlir_crash_keeps_its_frames_down_to_its_pass(toolchain):
    from shapefuzz.model import Status
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.triage.component import FRONTEND_TORCH
    from shapefuzz.triage.record import bug_record

    result = check_module(SI8_MUL, ["llvm-cpu"], None, toolchain, confirm=False).results[0]
    if result.status != Status.CRASH:
        pytest.fail(f"IREE no longer crashes on a si8 mul.Scalar ({result.status.value}): update this test")
    meta = {"status": "crash", "detail": result.detail}
    shown = backtrace_lines(meta)
    assert "ConvertTorchToLinalg::runOnOperation" in shown[-1] and not any("not kept" in f for f in shown), shown
    bug = bug_record(result.signature.to_json(), result.detail, ["llvm-cpu"], SI8_MUL)
    assert bug["failing_pass"] == "ConvertTorchToLinalg" and bug["component"] == FRONTEND_TORCH, bug
