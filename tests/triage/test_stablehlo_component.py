"""A bug in IREE's StableHLO input conversion is placed there (by its failing pass, its crash
frames, or a localization in the StableHLO spelling's conversion) and filed with IREE, whose
plugin it is; never with torch-mlir, whose conversions the other frontends go through."""

from __future__ import annotations

from shapefuzz.triage.component import FRONTEND_STABLEHLO, FRONTEND_TORCH, component_of, component_of_place
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.tracker import tracker_of


def test_a_stablehlo_pass_or_frame_is_the_stablehlo_input_conversion():
    for failing in ("iree-stablehlo-to-stablehlo-preprocessing", "StableHLOToStableHLOPreprocessing",
                    "iree-stablehlo-to-iree-input", "ConvertStableHloToIreeInputDialects"):
        assert component_of("compile", "error", failing, (), ["llvm-cpu"]) == FRONTEND_STABLEHLO, failing
    frame = "#7 0x5 mlir::iree_compiler::stablehlo::(anonymous namespace)::SortOpConversion::matchAndRewrite"
    assert component_of("compile", "crash", "", (frame,), ["llvm-cpu"]) == FRONTEND_STABLEHLO
    assert component_of("compile", "error", "convert-torch-to-linalg", (), ["llvm-cpu"]) == FRONTEND_TORCH


def test_a_wrong_value_placed_in_the_stablehlo_conversion_is_filed_with_iree():
    loc = Localization(phase="input", certain=True, frontend="stablehlo")
    assert component_of_place(loc, ["llvm-cpu"]) == FRONTEND_STABLEHLO
    meta = {"triage": "compiler bug", "bug": {"component": FRONTEND_STABLEHLO, "localized": {"frontend": "stablehlo"}}}
    assert tracker_of(meta).name == "IREE"
    assert tracker_of({"triage": "compiler bug", "bug": {"component": FRONTEND_TORCH}}).name == "torch-mlir"
