"""Where a cause lives and what it needs: the component (decided from the failing pass, or from
the crash frames' namespaces, or from the stage) and the scope (the default pipeline, or only a
pipeline variant's non-default flags), with the lanes where it reproduces."""

from __future__ import annotations

import re
from typing import Iterable

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.model import text_of
from shapefuzz.triage.localize import CODEGEN, Localization
from shapefuzz.triage.severity import miscompiled_shape

FRONTEND_TORCH = "frontend: torch-mlir conversion"
FRONTEND_ONNX = "frontend: ONNX import"
FRONTEND_STABLEHLO = "frontend: StableHLO input conversion"  # IREE's own plugin: filed with IREE
INPUT_GLOBAL_OPT = "IREE input / global optimization"
DISPATCH_CREATION = "IREE dispatch creation"
STREAM_HAL = "IREE stream / HAL lowering"
RUNTIME = "runtime / HAL"
UNKNOWN = "compiler (pass unknown)"

# (pattern on a pass argument, class name or frame, component); the first that matches wins
_RULES: tuple[tuple[re.Pattern[str], str], ...] = tuple((re.compile(p, re.IGNORECASE), c) for p, c in (
    (r"onnx", FRONTEND_ONNX),
    (r"^(?:convert-)?torch|torch-?to|^TorchTo|^ConvertTorch|torch::|^decompose-complex-ops|tm-?tensor", FRONTEND_TORCH),
    (r"stablehlo|GatherToTorchIndexSelect|DotGeneralToDot", FRONTEND_STABLEHLO),
    (r"^iree-(?:dispatch-creation|flow)|DispatchCreation|::Flow::|^(?:FoldUnitExtentDims|FormDispatchRegions|"
     r"CloneProducersIntoDispatchRegions|FuseMultiUseElementwiseProducer|ElementwiseOpFusion|BubbleUpExpandShapes|"
     r"CollapseDimensions|FormScalarDispatches|SetEncoding|FusionPreprocessing)Pass$", DISPATCH_CREATION),
    (r"^iree-(?:input|global-opt|preprocessing|abi|auto-input-conversion)|GlobalOptimization|Preprocessing|"
     r"InputConversion|::ABI::", INPUT_GLOBAL_OPT),
    (r"^iree-codegen|^iree-llvmcpu|^iree-llvmgpu|^iree-spirv|^iree-vmvx|^iree-rocdl|^iree-gpu|^iree-cpu|"
     r"^iree-hal-translate|^iree-hal-.*executable|^iree-linalg-ext|^iree-convert-to|Codegen|LLVMCPU|LLVMGPU|SPIRV|"
     r"VMVX|ROCDL|TranslateTargetExecutable|TranslateAllExecutables", "codegen"),
    (r"^iree-(?:stream|hal|util|vm)|::Stream::|::HAL::|::VM::", STREAM_HAL),
))

_IN_EXECUTABLE = "failed to run translation of source executable to target executable"
_TARGET_NAMES = {"llvm-cpu": "llvm-cpu", "vmvx": "vmvx", "vulkan": "SPIR-V", "rocm": "ROCm", "cuda": "CUDA"}


def _target_of(lane: str) -> str:
    backend = BACKENDS.get(lane)
    base = backend.variant_of if backend is not None and backend.variant_of else lane
    for prefix, name in _TARGET_NAMES.items():
        if base.startswith(prefix):
            return f"{name} ({base})" if name not in base else base
    return base


def target_independent(component: str) -> bool:
    """Whether a bug placed in `component` comes before codegen: its target (and CPU) is no part of it."""
    return component in (FRONTEND_TORCH, FRONTEND_ONNX, FRONTEND_STABLEHLO, INPUT_GLOBAL_OPT, DISPATCH_CREATION,
                         STREAM_HAL)


def target_list(lanes: Iterable[str]) -> str:
    """The targets of `lanes` as a component names them: "codegen for CUDA (cuda-sm80), llvm-cpu"."""
    return ", ".join(dict.fromkeys(_target_of(lane) for lane in sorted(lanes)))


def component_of(stage: str, status: str, failing_pass: str, frames: Iterable[str], lanes: Iterable[str],
                 output: str = "") -> str:
    """Where it fails: frontend conversion, IREE input/global optimization, dispatch creation,
    codegen for a named target, stream/HAL lowering, or the runtime; wrong values say only
    "wrong code" and the target (no pass fails). A run-time failure whose `output` (message and
    detail) says the compiled code computed a size or range wrong is wrong code, not the runtime's."""
    stage, status = text_of(stage), text_of(status)  # (the enums count as their text)
    target = target_list(lanes) or "?"
    if stage == "run" and miscompiled_shape(stage, output):
        return f"wrong code for {target} (a shape or size computed wrong fails at run time)"
    if stage == "run":
        return f"{RUNTIME} ({target})"
    if stage == "compare":
        return f"wrong code for {target}"
    # a host-side pass run inside a target's executable translation is that target's codegen (vmvx
    # lowers its dispatches with iree-vm-conversion: an audit read "stream / HAL lowering" over an
    # unlowered `math.ctpop` in a vmvx dispatch)
    in_executable = _IN_EXECUTABLE in output
    for source in (failing_pass, *frames):
        for pattern, component in _RULES:
            if source and pattern.search(source):
                if component == "codegen" or (component == STREAM_HAL and in_executable):
                    return f"codegen for {target}"
                return component
    if failing_pass:  # a pass no rule places (a class name from the action log, a generic pass)
        return f"IREE compiler, in {failing_pass} ({target})"
    if status in ("timeout", "oom"):
        return f"compiler, pass unknown ({status}) for {target}"
    return UNKNOWN


_PHASE_COMPONENT = {"input": INPUT_GLOBAL_OPT, "abi": INPUT_GLOBAL_OPT, "preprocessing": INPUT_GLOBAL_OPT,
                    "global-optimization": INPUT_GLOBAL_OPT, "dispatch-creation": DISPATCH_CREATION,
                    "flow": STREAM_HAL, "stream": STREAM_HAL}


def component_of_place(loc: Localization, lanes: Iterable[str]) -> str:
    """Where a localized wrong value breaks, never the lane: the frontend conversion, the target's
    codegen, or the part of the compiler that owns the localized pass (else the phase); "" when
    not localized."""
    lanes = sorted(lanes)
    if loc.frontend:
        return {"onnx": FRONTEND_ONNX, "stablehlo": FRONTEND_STABLEHLO}.get(loc.frontend, FRONTEND_TORCH)
    if loc.phase == CODEGEN:  # the target's, or the compile-time evaluator's (`target`) when it computed the value
        return component_of("compile", "error", "iree-codegen", (), [loc.target] if loc.target else lanes)
    found = _PHASE_COMPONENT.get(loc.phase, "")
    if loc.pass_name:
        named = component_of("compile", "error", loc.pass_name, (), lanes)
        if not named.startswith("IREE compiler, in") and not named.startswith("codegen"):
            found = named
    return found if loc.certain or not found else f"{found} (suspected)"


def variant_flags(lane: str) -> tuple[str, ...]:
    """The non-default pipeline flags a lane adds to its target's (empty for a plain target)."""
    backend = BACKENDS.get(lane)
    return backend.extra_flags if backend is not None and backend.variant_of else ()


def plain_lanes(lanes: Iterable[str]) -> list[str]:
    """The plain target lane of each variant lane in `lanes` (rocm-gfx942 of rocm-gfx942-o3), in order, once:
    where a claim that it needs the variant's flags is checked."""
    found = [BACKENDS[lane].variant_of or "" for lane in lanes if variant_flags(lane)]
    return [lane for lane in dict.fromkeys(found) if lane]


def scope_of(lanes: Iterable[str], component: str = "") -> str:
    """"default pipeline" when a plain target's lane reproduces it, else the variant flags it
    needs ("only with --iree-..."). A frontend failure needs no flag wherever it was seen: the
    torch-mlir and ONNX conversions run before any pass a variant's flags change (a case found
    while shrinking on a variant lane had been filed as needing its flags)."""
    lanes = sorted(set(lanes))
    if not lanes or any(not variant_flags(lane) for lane in lanes) or component.startswith("frontend:"):
        return "default pipeline"
    flags = sorted({" ".join(variant_flags(lane)) for lane in lanes})
    return "only with " + " or ".join(flags)


def needs_flag(lanes: Iterable[str], component: str = "") -> bool:
    return scope_of(lanes, component) != "default pipeline"


__all__ = ["DISPATCH_CREATION", "FRONTEND_ONNX", "FRONTEND_STABLEHLO", "FRONTEND_TORCH", "INPUT_GLOBAL_OPT", "RUNTIME", "STREAM_HAL",
           "UNKNOWN", "component_of", "component_of_place", "needs_flag", "plain_lanes", "scope_of", "target_independent", "target_list", "variant_flags"]
