"""The IREE side of the frontend pass search (`triage.frontend_pass`): the failing lane's
`--compile-to=input` with the module written after each pass that changed it, and each
intermediate's static twin compiled from the start and run. Entry point: `place_frontend_pass`,
which adds the pass to a localization already placed in a frontend conversion."""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Sequence

import numpy as np

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.process.sandbox import Limits
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.judge.iree_probe import IreeProbe
from shapefuzz.triage.codegen_pass import trimmed
from shapefuzz.triage.frontend_pass import FrontendFinding, conversion_states, find_frontend_pass, onnx_lowering
from shapefuzz.triage.localize import FRONTEND_NAMES, Localization
from shapefuzz.triage.localize_types import Values

TORCH_INPUT = "--iree-input-type=torch"
PER_RELEASE_SECONDS = 15.0  # an older release's compile and run of the conversion's output (measured: under 1 s)
_ONNX_OP = 'torch.operator "onnx.'
_DUMP = Limits(timeout=60.0, output_bytes=64 * 1024 * 1024)
_FLAGS = ("--compile-to=input", "--mlir-print-ir-after-all", "--mlir-print-ir-after-change",
          "--mlir-print-ir-module-scope", "--mlir-disable-threading")


def frontend_finding(text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                     toolchain: Toolchain, compare=None, onnx: bool = False, seconds: float = 60.0) -> FrontendFinding:
    """The conversion pass of `text` (a torch or ONNX program) that makes `lane` compute wrong
    values; `onnx`: placed in the ONNX import (its torch spelling right), so the pass that lowered
    its ONNX ops is named when the static-twin search names none."""
    end = time.monotonic() + seconds
    with temp_dir("frontend") as tmp:
        probe = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare)
        # a module past the ONNX lowering is torch's: compiled as torch input, its static twin's
        # casts are folded before the decompositions (the ONNX pipeline decomposes first; measured)
        as_torch = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare, (TORCH_INPUT,))
        result, _ = probe._compile(probe._path(".mlir", text), lane, *_FLAGS, limits=_DUMP)
        if not result.ok:
            return FrontendFinding(evidence="its conversion could not be dumped pass by pass")
        states = conversion_states(text, result.stderr)

        def judge(module: str) -> Values:
            if time.monotonic() >= end:
                return Values.UNUSABLE
            return (probe if _ONNX_OP in module else as_torch).finish(module, "start", lane)

        found = find_frontend_pass(states, [np.shape(a) for a in inputs], judge, lane)
        if not found.pass_name and onnx:
            lowered = onnx_lowering(states)
            if lowered.pass_name:
                return replace(lowered, evidence=f"{found.evidence}; {lowered.evidence}, and the torch spelling "
                                                 "of the same computation, which does not go through it, is right")
        return found


def place_frontend_pass(loc: Localization, text: str, lane: str, inputs: Sequence[np.ndarray],
                        expected: Sequence[np.ndarray], toolchain: Toolchain, compare=None,
                        seconds: float = 60.0) -> Localization:
    """`loc`, placed in a frontend conversion, with the pass of it that makes the values wrong (its
    evidence extended either way)."""
    if not loc.frontend or seconds < 2.0:
        return loc
    start = time.monotonic()
    found = frontend_finding(text, lane, inputs, expected, toolchain, compare, loc.frontend == "onnx", seconds)
    took = time.monotonic() - start
    if not found.pass_name:
        return replace(loc, seconds=loc.seconds + took, evidence=f"{loc.evidence}; {found.evidence}")
    name = FRONTEND_NAMES.get(loc.frontend, loc.frontend)
    return replace(loc, pass_name=found.pass_name, pass_class=found.pass_class, pattern=found.pattern,
                   ir_before=trimmed(found.before), ir_after=trimmed(found.after), seconds=loc.seconds + took,
                   evidence=f"{loc.evidence}; in the {name} conversion: {found.evidence}")


def conversion_right_elsewhere(text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                               toolchain: Toolchain, compare=None, seconds: float = 60.0) -> str:
    """The cached older release that computes the right values from the IR this toolchain's frontend
    conversion makes of `text` (its `--compile-to=input`), newest first; "" when none does or none can tell.
    Right there, the conversion's output is right, and what breaks is what this release does with it
    after the frontend (hand audit: a torch max-pool with ceil_mode blamed on torch-mlir, whose output
    is the same in 3.6.0, which computes it right; the bug was FoldUnitExtentDims)."""
    from shapefuzz.errors import ShapefuzzError
    from shapefuzz.iree.releases import cached_versions, install, version_key

    end = time.monotonic() + seconds
    current = toolchain.probe.version.split("rc", 1)[0]
    with temp_dir("frontend-elsewhere") as tmp:
        converted = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare).phase_ir("input")
        if converted is None:
            return ""
        for version in sorted((v for v in cached_versions(lambda _: None) if v != current), key=version_key, reverse=True):
            if time.monotonic() >= end:
                return ""
            try:
                older = install(version)  # (a cached one: never a download)
            except (ShapefuzzError, OSError):
                continue
            # (each release within its share: one that still has the bug can take a whole compile limit)
            with time_bound(min(PER_RELEASE_SECONDS, end - time.monotonic())):
                if IreeProbe(converted, lane, inputs, expected, older, tmp, compare).finish(converted, "start", lane) \
                        == Values.RIGHT:
                    return version
    return ""


# lanes that execute here and judge a frontend spelling's values, first choice first
EVALUATORS = ("llvm-cpu", "vmvx")


def conversion_made_failure(case_text: str, lane: str, toolchain: Toolchain, seconds: float = 60.0) -> Localization | None:
    """A compile failure of a frontend-spelled case on `lane`, placed in the frontend's conversion
    where its output is shown wrong: the case's own linalg spelling compiles on `lane` and computes
    right on an evaluator lane that executes here (llvm-cpu), where the frontend spelling computes
    wrong values or fails at run time, and no cached older release computes the conversion's output
    right (`conversion_right_elsewhere`: then what breaks is this release's IREE side). None when any
    of it does not hold, or cannot be told in `seconds` (audit: torch-mlir's ONNX MaxPool with an
    asymmetric pad on a dynamic dim typed the pad's size static 0, then -1; ROCm codegen failed on it
    in three ways, filed as three ROCm codegen bugs, while llvm-cpu silently computed zeros)."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.families import linalg_spelling
    from shapefuzz.families.frontends import frontend_of
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.judge.modulecheck import check_file
    from shapefuzz.judge.oracle import case_expectation
    from shapefuzz.model import Stage, Status

    start = time.monotonic()
    own, case = linalg_spelling(case_text), case_from_mlir(case_text)
    if own is None or case is None:  # (nothing to compare with: no compile, no probe of the toolchain)
        return None
    evaluator = next((b for b in EVALUATORS if b != lane and b in BACKENDS and BACKENDS[b].executes(toolchain.probe)),
                     None)
    if evaluator is None:
        return None
    with time_bound(seconds) as bound:
        own_report, _ = check_file(own, [lane, evaluator], toolchain, confirm=False)
        ok = {r.backend: r for r in own_report.results}
        if lane not in ok or ok[lane].stage == Stage.COMPILE and ok[lane].status != Status.OK \
                or ok.get(evaluator) is None or ok[evaluator].status != Status.OK:
            return None
        spelled, _ = check_file(case_text, [evaluator], toolchain, confirm=False)
        wrong = next((r for r in spelled.results if r.backend == evaluator and r.status != Status.OK
                      and r.stage in (Stage.COMPARE, Stage.RUN)), None)
        if wrong is None:
            return None
        expected = case_expectation(case)
        if expected.expected is not None and conversion_right_elsewhere(
                case_text, evaluator, expected.inputs, expected.expected, toolchain, expected.compare,
                max(1.0, seconds - (time.monotonic() - start))):
            return None
    if bound.ran_out:
        return None
    frontend = frontend_of(case.params)
    what = "wrong values" if wrong.stage == Stage.COMPARE else f"a run-time {wrong.status.value}"
    name = FRONTEND_NAMES.get(frontend, frontend)
    return Localization("input", seconds=time.monotonic() - start, certain=True, frontend=frontend,
                        evidence=f"the {name} conversion's output is wrong: the case's own linalg spelling compiles "
                                 f"on {lane} and computes right on {evaluator}, where its {frontend} spelling gives "
                                 f"{what}; {lane} fails on what the conversion made")


__all__ = ["EVALUATORS", "conversion_made_failure", "conversion_right_elsewhere", "frontend_finding",
           "place_frontend_pass"]
