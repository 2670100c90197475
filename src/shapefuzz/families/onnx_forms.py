"""The shared toolkit of the ONNX spellings. Each family's ONNX spelling (its package's
`spellings` module) is a real ONNX model (`onnx_models`) imported by IREE's own
`iree-import-onnx` (`onnx_import`), through `imported` here; the family's hand-written text, in
the shape that importer leaves a model, is kept for a model the importer rejects (or a case ONNX
cannot hold as a model), and then says so in its first line (`HAND_WRITTEN`). The hand-written
form: `torch.operator "onnx.*"` ops on `!torch.vtensor` values, attributes `torch.onnx.*`, opset
metadata on the function (opset 18). IREE 3.13 turns them into torch ops (TorchOnnxToTorch) and
then lowers those, so this is a second frontend path in front of the same linalg. Same boundary
types, inputs and NumPy reference as the case's linalg forms.
"""

from __future__ import annotations

from typing import Callable

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_ir import TV, Boundary, TorchBuilder, si64s

ONNX_FLOAT_CODE = {"f32": 1, "f16": 10}  # TensorProto.DataType


def transpose(b: TorchBuilder, x: TV, perm: list[int], stem: str) -> TV:
    """`onnx.Transpose` of `x` by `perm` (`x` itself for the identity)."""
    if perm == list(range(x.rank)):
        return x
    out = x.with_dims(b.fresh(stem), [x.dims[i] for i in perm])
    return b.onnx("Transpose", [x], [out], {"perm": si64s(perm)})[0]


def unsqueeze(b: TorchBuilder, x: TV, axis: int, stem: str) -> TV:
    """`onnx.Unsqueeze` of `x` at `axis` (negative: from the end)."""
    axes = b.onnx_const([axis], "i64", stem="axes")
    pos = axis if axis >= 0 else x.rank + 1 + axis
    dims = list(x.dims)
    dims.insert(pos, (1, False))
    return b.onnx("Unsqueeze", [x, axes], [x.with_dims(b.fresh(stem), dims)])[0]


HAND_WRITTEN = "// hand-written ONNX spelling"


def imported(family: str, hand_written: Callable[[Params, Boundary], str]) -> Callable[[Params, Boundary], str]:
    """The spelling as `iree-import-onnx` makes it of a real model (`onnx_models`); the
    hand-written text only for a family without a model builder, or a model the importer
    rejects, and then it says so in its first line."""

    def build(p: Params, bnd: Boundary) -> str:
        from shapefuzz.families.onnx_models import model_spelling
        from shapefuzz.iree.onnx_import import ImportFailure, import_model

        spelling = model_spelling(family)
        if spelling is None:
            return f"{HAND_WRITTEN}: no ONNX model builder for {family}\n" + hand_written(p, bnd)
        if spelling.refuse(p):
            return f"{HAND_WRITTEN}: {spelling.refuse(p)}\n" + hand_written(p, bnd)
        try:
            return import_model(spelling.build(p, bnd))
        except ImportFailure as error:
            return f"{HAND_WRITTEN}: {str(error).splitlines()[0]}\n" + hand_written(p, bnd)

    return build
