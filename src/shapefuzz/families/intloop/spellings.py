"""The intloop family has no torch or ONNX spelling (`NO_SPELLING` says why); its frontend
spelling is StableHLO's `stablehlo.while` (stablehlo.py)."""

from __future__ import annotations

from shapefuzz.families.torch_forms import Spelling

SPELLINGS: tuple[Spelling, ...] = ()
