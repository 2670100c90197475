"""The case's MLIR: its model as IREE's own importer (`iree-import-onnx`) makes it."""

from __future__ import annotations

from shapefuzz.families.onnx_op.model import build
from shapefuzz.families.onnx_op.params import Params


def render(p: Params) -> str:
    """The imported module; raises what the model builder or the importer raises (a case the
    strategy draws always imports: `strategy.is_valid`)."""
    from shapefuzz.iree.onnx_import import import_model

    return import_model(build(p))
