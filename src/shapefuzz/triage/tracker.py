"""Which tracker a bug is filed with: IREE's, torch-mlir's (its conversions run inside
`iree-compile`, but the bug and its fix are torch-mlir's), LLVM's (a backend pass of LLVM itself,
e.g. `AMDGPULowerBufferFatPointers`, crashes or rejects what IREE hands it), or none (a target limit
or a suspected driver bug is evidence, not a compiler bug: Mesa llvmpipe's loop limiter is not
filed anywhere by us).

Read from a corpus entry's meta.json (its `triage` and `bug` record), so the campaign's issue texts,
`export --format issue` and `triage --json` route the same way."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from shapefuzz.triage.component import FRONTEND_ONNX, FRONTEND_TORCH
from shapefuzz.triage.issue import frame_function


@dataclass(frozen=True)
class Tracker:
    name: str  # "IREE", "torch-mlir", "LLVM"; "" when it is not filed
    url: str  # where a new issue is opened; "" when it is not filed
    why: str  # one sentence: what puts it there

    @property
    def filed(self) -> bool:
        return bool(self.name)


IREE_URL = "https://github.com/iree-org/iree/issues/new"
TORCH_MLIR_URL = "https://github.com/llvm/torch-mlir/issues/new"
LLVM_URL = "https://github.com/llvm/llvm-project/issues/new"

NOT_FILED_TRIAGE = ("target limit", "suspected driver")

# torch-mlir's own passes and patterns as IREE names them: its ONNX lowering (TorchOnnxToTorch), the
# decompositions, torch-to-linalg / tmtensor, and torch's namespaces in crash frames
_TORCH_MLIR = re.compile(r"torch-?onnx|TorchOnnxToTorch|^(?:convert-)?torch|TorchTo|ConvertTorch|torch::|"
                         r"Decompose(?:Aten|Complex)|decompose-complex-ops|tm-?tensor|mlir::torch", re.IGNORECASE)
# LLVM's target backends and code generator (not IREE's passes that call into LLVM)
_LLVM_BACKEND = re.compile(r"^(?:llvm::)?(?:AMDGPU|SI[A-Z][a-z]|R600|GCN|NVPTX|X86|AArch64|RISCV)\w*|"
                           r"SelectionDAG|DAGCombiner|RegAlloc|RegisterCoalescer|MachineFunctionPass|"
                           r"llvm::(?:AMDGPU|SI[A-Z]|X86|NVPTX|SelectionDAG|MachineFunction|RegAlloc)|"
                           r"LLVM ERROR: Cannot select")


def _frames(bug: Mapping[str, Any]) -> list[str]:
    frames = bug.get("frames")
    return [str(f) for f in frames[:8]] if isinstance(frames, list) else []


def tracker_of(meta: Mapping[str, Any]) -> Tracker:
    """Where the bug an entry holds is filed (see module doc)."""
    bug = meta.get("bug") if isinstance(meta.get("bug"), Mapping) else {}
    assert isinstance(bug, Mapping)
    triage = str(meta.get("triage") or "")
    if triage in NOT_FILED_TRIAGE:
        evidence = str(meta.get("triage_evidence") or "").strip()
        return Tracker("", "", f"a {triage}" + (f" ({evidence})" if evidence else ""))
    component = str(bug.get("component") or "")
    failing = str(bug.get("failing_pass") or "")
    localized = bug.get("localized") if isinstance(bug.get("localized"), Mapping) else {}
    assert isinstance(localized, Mapping)
    if localized.get("frontend") == "torch" or component.startswith(FRONTEND_TORCH):
        # (a pass of IREE's that fails on what the conversion made is not where torch-mlir breaks)
        where = f" in {failing}" if failing and (_TORCH_MLIR.search(failing) or localized.get("pass")) else ""
        return Tracker("torch-mlir", TORCH_MLIR_URL, f"it breaks in torch-mlir's conversion{where}, "
                                                     "which runs inside iree-compile")
    if component.startswith(FRONTEND_ONNX) and _TORCH_MLIR.search(failing):
        return Tracker("torch-mlir", TORCH_MLIR_URL, f"it breaks in torch-mlir's ONNX lowering ({failing})")
    if localized.get("frontend") == "onnx":  # placed in the ONNX conversion, which is torch-mlir's
        return Tracker("torch-mlir", TORCH_MLIR_URL, "its ONNX lowering, torch-mlir's, makes what fails")
    backend = next((s for s in (failing, *_frames(bug)) if s and _LLVM_BACKEND.search(s.split(" 0x")[-1].strip()
                                                                                      .split(" ", 1)[-1])), "")
    if backend:
        name = failing if failing and _LLVM_BACKEND.search(failing) else frame_function(backend)
        if str(meta.get("status") or "") == "timeout":
            # a compile that does not finish inside LLVM's backend is slow on what IREE hands it (an audit
            # found <31496 x float> vectors from a reduction IREE left untiled under a ROCm hang in
            # SelectionDAG): the IR, and so the bug, is IREE's
            return Tracker("IREE", IREE_URL, f"it does not finish inside LLVM's backend ({name}), on the code "
                                             "IREE's codegen hands it: the size or form of that code is IREE's")
        return Tracker("LLVM", LLVM_URL, f"it breaks inside LLVM's own backend ({name}), below IREE's passes")
    return Tracker("IREE", IREE_URL, "it breaks in IREE's compiler or runtime")


__all__ = ["IREE_URL", "LLVM_URL", "TORCH_MLIR_URL", "Tracker", "tracker_of"]
