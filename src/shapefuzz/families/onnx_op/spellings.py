"""The onnx_op family's ONNX model, as the ONNX tools (the second judge, the corpus's
model.onnx, `export --format issue`) ask a family for it. The case is its own ONNX spelling:
no other spellings."""

from __future__ import annotations

from typing import Any

from shapefuzz.families.onnx_models import ModelSpelling

SPELLINGS: tuple = ()


def _build(p: Any, bnd: Any) -> Any:
    from shapefuzz.families.onnx_op.model import build

    return build(p.replace(frontend="onnx"))


ONNX_MODEL = ModelSpelling("onnx_op", _build)
