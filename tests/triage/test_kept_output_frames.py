"""What is kept of a compiler's output keeps every frame down to the failing pass whatever the install
path, the temporary folder or the message's length (issue 43, item 7): paths are folded before any
length budget, and the budget keeps frames by structure. A clone in a deeper folder failed
test_crash_frames_in_issues: IREE 3.13's torch-mlir si8 `mul.Scalar` crash prints its temporary
folder three times and its install folder three times, and 600 more characters pushed the frame
naming ConvertTorchToLinalg out of the kept excerpt."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

from shapefuzz.judge.oracle import CRASH_DETAIL
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.triage.excerpt import excerpt
from shapefuzz.triage.failing_pass import clean_output, failing_pass
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.issue import backtrace_lines
from shapefuzz.triage.paths import own_folders

# IREE 3.13's whole stderr for the si8 mul.Scalar crash (tests/test_crash_frames_in_issues.py), with
# its compiler folder and its work folder as {compiler} and {work}
CRASH = (Path(__file__).resolve().parents[1] / "data" / "crash_torch_si8_mul.txt").read_text()
DEEP = "/" + "/".join(c * 60 for c in "def")  # 183 characters deep
PASS_FRAME = "ConvertTorchToLinalg::runOnOperation() TorchToLinalg.cpp:0:0"


def _output(compiler: str, work: str) -> tuple[str, list[str]]:
    argv = [f"{compiler}/iree-compile", f"{work}/module.mlir", "--iree-hal-target-device=local",
            "--mlir-print-ir-after-failure", "-o", f"{work}/llvm-cpu.vmfb"]
    return CRASH.replace("{compiler}", compiler).replace("{work}", work), argv


def _kept(text: str, argv: list[str]) -> str:
    """What the oracle keeps of a crashing compile's stderr (execute.compile_module, then oracle)."""
    return excerpt(clean_output(text, own_folders(argv)).strip(), CRASH_DETAIL)


def _says_where(kept: str) -> None:
    shown = backtrace_lines({"status": "crash", "detail": kept})
    assert shown[-1].endswith(PASS_FRAME) and not any("not kept" in line for line in shown), shown
    assert failing_pass(kept) == "ConvertTorchToLinalg"


def test_a_200_character_install_path_keeps_the_pass_frame_and_the_same_identity():
    short = _output("/usr/lib/python3/site-packages/iree/compiler/_mlir_libs", "/tmp/shapefuzz-check-1-ab")
    deep = _output(DEEP + "/sf/.venv/lib/python3.11/site-packages/iree/compiler/_mlir_libs",
                   DEEP + "/tmp/shapefuzz-check-1-ab")
    assert len(deep[0]) > CRASH_DETAIL > len(short[0])  # whole, the deep one is over the budget
    kept_short, kept_deep = _kept(*short), _kept(*deep)
    assert kept_deep == kept_short  # the same text wherever it was installed: no path in it
    assert DEEP not in kept_deep and "<iree>/libIREECompiler.so+0x5b94348" in kept_deep
    _says_where(kept_deep)
    ident = identity_of("compile", "crash", "x", kept_deep)
    assert ident.key == identity_of("compile", "crash", "x", short[0]).key
    assert ident.failing_pass == "ConvertTorchToLinalg"


def test_a_path_nobody_folds_or_a_long_message_cuts_noise_and_long_lines_never_frames():
    # a library under a folder no fold knows, and a diagnostic of 6000 characters
    odd = CRASH.replace("{compiler}", DEEP + "/opt/iree").replace("{work}", DEEP + "/w")
    long = odd.replace("unimplemented:", "unimplemented: " + "y" * 6000, 1)
    noisy = "warning: a thread's warning\n" * 400 + odd
    whole = identity_of("compile", "crash", "x", odd).key
    for text in (odd, long, noisy):
        kept = excerpt(text, CRASH_DETAIL)
        assert len(kept) <= CRASH_DETAIL
        _says_where(kept)
        assert identity_of("compile", "crash", "x", kept).key == whole
    # a tight budget: argument lists go first (the frames' names stay), never the pass's frame
    tight = excerpt(odd, 3000)
    assert len(tight) <= 3000 and PASS_FRAME in tight and "OperandStorage::OperandStorage(...)" in tight
    assert identity_of("compile", "crash", "x", tight).key == whole


def test_the_sandbox_keeps_the_frames_of_a_cut_middle():
    frames = "".join(f" #{n} 0x00007f{n:010x} mlir::f{n}(mlir::Operation*) F.cpp:0:0\\n" for n in range(2, 30))
    frames += " #30 0x00007f mlir::(anonymous namespace)::SomePass::runOnOperation() P.cpp:0:0\\n"
    code = ("import sys\nw = sys.stderr.write\n"
            "w('LLVM ERROR: boom\\n' + 'noise line\\n' * 3000)\n"
            f"w('{frames}')\n"
            "w('more noise\\n' * 5000 + 'TAIL')\n")
    err = run_sandboxed([sys.executable, "-c", code], Limits(timeout=20, output_bytes=4000)).stderr
    assert "bytes cut" in err and err.endswith("TAIL") and failing_pass(err) == "SomePass"
    assert " #2 0x" in err and " #17 0x" in err


@pytest.mark.iree
def test_a_deep_temporary_folder_keeps_the_real_crash_frames_down_to_its_pass(toolchain, monkeypatch, tmp_path):
    from shapefuzz.judge.oracle import check_module
    from support.crash_texts import SI8_MUL  # noqa: F401

    short = check_module(SI8_MUL, ["llvm-cpu"], None, toolchain, confirm=False).results[0]
    deep = tmp_path / DEEP.lstrip("/")
    deep.mkdir(parents=True)
    monkeypatch.setattr(tempfile, "tempdir", str(deep))
    result = check_module(SI8_MUL, ["llvm-cpu"], None, toolchain, confirm=False).results[0]
    assert result.status.value == "crash"
    _says_where(result.detail)
    key = identity_of("compile", "crash", result.signature.message, result.detail).key
    assert key == identity_of("compile", "crash", short.signature.message, short.detail).key
    assert result.signature == short.signature and str(deep) not in result.detail


def test_a_hangs_shown_stack_leaves_out_the_action_logging_shapefuzz_compiles_with():
    # hand audit: a ConvertConvToChannelsLast hang's stack was mostly mlir::tracing frames (shapefuzz's own
    # action log), none of which the reader's command prints
    detail = "\n".join([
        "Stack dump:",
        " #4 0x00007f435f52745d prctl ./misc/../sysdeps/unix/sysv/linux/prctl.c:38:10",
        " #5 0x00007f4365377e3d mlir::tracing::ExecutionContext::operator()(llvm::function_ref<void ()>, "
        "mlir::tracing::Action const&) ExecutionContext.cpp:0:0",
        " #6 0x00007f436a3c0dc2 mlir::PatternApplicator::matchAndRewrite(...) PatternApplicator.cpp:0:0",
        " #7 0x00007f4365440b17 mlir::MLIRContext::executeActionInternal(llvm::function_ref<void ()>, "
        "mlir::tracing::Action const&) MLIRContext.cpp:0:0",
        " #8 0x00007f43671d8e7d mlir::iree_compiler::Preprocessing::(anonymous namespace)::"
        "ConvertConvToChannelsLastPass::runOnOperation() ConvertConvToChannelsLast.cpp:0:0",
    ])
    lines = backtrace_lines({"status": "timeout", "detail": detail})
    assert [line.split()[0] for line in lines[:-1]] == ["#6", "#8"], lines
    assert lines[-1] == "(... 3 frames of the action logging shapefuzz compiles with, left out)"
    assert not any("were not kept" in line for line in lines)  # the frames left out are no gap in the excerpt
