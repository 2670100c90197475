"""What the compiler needs to know about a module written in a frontend dialect, and how to tell
a frontend gap from a bug.

- `input_type_flags`: `--iree-input-type=torch` for torch-dialect modules (`!torch.vtensor`,
  `torch.aten.*`), `--iree-input-type=onnx` for ones holding `torch.operator "onnx.*"` (3.13's
  `torch` input type rejects ONNX operators; `auto`, the default, detects both),
  `--iree-input-type=stablehlo` for StableHLO modules (`stablehlo.*` ops). Nothing for linalg.
- `unlowered_op`: IREE's torch input pipeline marks every torch op illegal; an op this release has
  no lowering for (e.g. 3.13 keeps `torch.aten.scatter.reduce`, and 3-D depthwise
  `torch.aten.convolution`) ends the compile with "failed to legalize operation 'torch.…' that was
  explicitly marked illegal". That is a limit of the release, reported as unsupported, never as a
  compiler finding. The StableHLO input conversion says the same of a `stablehlo.*` op it has no
  lowering for (3.13: `stablehlo.convolution` with a dynamic spatial dim). (`iree-opt` 3.13 parses and verifies the torch dialect, so invalid torch input
  is still caught before any compile, as our own bug.)
"""

from __future__ import annotations

import re

_ONNX_OP = re.compile(r'torch\.operator\s+"onnx\.')
_UNLOWERED = re.compile(r"failed to legalize operation '((?:torch|stablehlo|chlo)\.[\w.]+)'")
_STABLEHLO_OP = re.compile(r'(?:^|[\s="(])stablehlo\.[a-z_]+', re.M)
_OPERATOR_NAME = re.compile(r'name = "(onnx\.\w+)"')


def is_torch(text: str) -> bool:
    return "!torch.vtensor" in text or "torch.operator" in text


def is_stablehlo(text: str) -> bool:
    return "!torch.vtensor" not in text and _STABLEHLO_OP.search(text) is not None


def is_frontend(text: str) -> bool:
    """Whether the module is in a frontend dialect (torch, ONNX or StableHLO), not linalg."""
    return is_torch(text) or is_stablehlo(text)


def input_type_flags(text: str) -> tuple[str, ...]:
    if _ONNX_OP.search(text):
        return ("--iree-input-type=onnx",)
    if is_torch(text):
        return ("--iree-input-type=torch",)
    if is_stablehlo(text):
        return ("--iree-input-type=stablehlo",)
    return ()


def unlowered_op(error_text: str, module_text: str | None = None) -> str | None:
    """The torch or StableHLO op this release could not lower, when that is what ended the
    compile. Given the module, a StableHLO op it does not hold is none: IREE's own preprocessing
    made it (3.13's DotGeneralToDot makes a `stablehlo.dynamic_reshape` it cannot lower), a bug."""
    m = _UNLOWERED.search(error_text)
    if m is None:
        return None
    if module_text is not None and not m.group(1).startswith("torch.") and not re.search(
            rf'(?:^|[\s="(]){re.escape(m.group(1))}\b', module_text, re.M):
        return None
    if m.group(1) == "torch.operator":  # an ONNX operator the release does not convert: name it
        named = _OPERATOR_NAME.search(error_text, m.end())
        return named.group(1) if named else m.group(1)
    return m.group(1)
