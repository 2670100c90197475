"""A compile failure of a frontend-spelled case is placed in the frontend's conversion where its output
is shown wrong (`judge.frontend_probe.conversion_made_failure`): an audit found torch-mlir's ONNX
MaxPool, with an asymmetric pad on a dynamic dim, typing the pad's size static 0 and then -1; ROCm
codegen failed on that in three ways, filed as three ROCm codegen bugs, while llvm-cpu silently
computed zeros. An IREE-side failure its own linalg spelling shares is never placed there."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from shapefuzz.case import Case
from shapefuzz.families import render_case
from shapefuzz.judge.frontend_probe import conversion_made_failure

sys.path.insert(0, str(Path(__file__).parents[1] / "shrink"))
from test_case_text_stage import PARAMS as CONV_STRIDE_3  # noqa: E402  (llvm-cpu 3.13 rejects it, every spelling)

# the audited ONNX MaxPool (cause-06bc95f218 of a fresh 20-minute campaign, its shrunk case)
MAXPOOL = {"big": False, "c": 1, "ceil_mode": False, "compute_layout": "", "count_include_pad": False,
           "context": [{"dim": 0, "op": "bias", "result": 0}, {"dim": 4, "kind": "sum", "op": "reduce", "result": 0}],
           "dilations": [1, 1, 1], "divisor": "index", "dtype": "f16", "form": "generic", "frontend": "onnx",
           "in_dyn": [False, False, False, True, True], "kernel": [1, 1, 2], "kind": "max", "layout": "nc", "n": 3,
           "pad_hi": [0, 0, 1], "pad_lo": [0, 0, 0], "spatial": [1, 1, 5], "strides": [1, 1, 1]}


@pytest.mark.iree
def test_a_rocm_failure_on_what_the_onnx_conversion_made_is_placed_in_that_conversion(toolchain):
    loc = conversion_made_failure(render_case(Case.make("pool", MAXPOOL)), "rocm-gfx942", toolchain)
    assert loc is not None and loc.certain and loc.frontend == "onnx" and loc.phase == "input", loc
    assert "compiles on rocm-gfx942 and computes right on llvm-cpu" in loc.evidence, loc.evidence
    assert "wrong values" in loc.evidence


@pytest.mark.iree
def test_a_failure_its_own_linalg_spelling_shares_is_not_the_conversions(toolchain):
    torch_conv = render_case(Case.make("conv", dict(CONV_STRIDE_3, frontend="torch")))
    assert conversion_made_failure(torch_conv, "llvm-cpu", toolchain) is None
    linalg_case = render_case(Case.make("pool", dict(MAXPOOL, frontend="linalg")))
    assert conversion_made_failure(linalg_case, "rocm-gfx942", toolchain) is None  # nothing to compare with


def _placed_meta() -> dict:
    from shapefuzz.triage.localize import Localization

    loc = Localization("input", certain=True, frontend="onnx", evidence="the ONNX import conversion's output is wrong")
    said = "'linalg.fill' op unexpected result less than 0 at expression #2 in (d0, d1, d2) -> (d0, d1, d2)"
    return {"status": "error", "bug": {"component": "frontend: ONNX import", "localized": loc.to_json(),
                                       "failing_pass": "iree-codegen-reconcile-translation-info",
                                       "first_lines": [f"<work>/module.mlir:3:1: error: {said}"]}}


def test_the_text_says_the_conversions_output_fails_and_goes_to_torch_mlir():
    """Not "ONNX import conversion (input) fails": the conversion did not fail, ROCm codegen failed on
    what it made; and the ONNX import is torch-mlir's, so the text goes there."""
    from shapefuzz.triage.issue import issue_title
    from shapefuzz.triage.tracker import TORCH_MLIR_URL, tracker_of

    meta = _placed_meta()
    title = issue_title(meta, "rocm-gfx942", "compile", "error", "'linalg.fill' op unexpected result less than N")
    assert title.startswith("[frontend: ONNX import] the ONNX import conversion's output fails on rocm-gfx942: "
                            "'linalg.fill' op unexpected result less than 0"), title
    assert tracker_of(meta).url == TORCH_MLIR_URL
    torch = {"bug": {**meta["bug"], "localized": {**meta["bug"]["localized"], "frontend": "torch"}}}
    assert "iree-codegen" not in tracker_of(torch).why and tracker_of(torch).url == TORCH_MLIR_URL
