"""The shared toolkit of the frontend spellings: a torch-dialect spelling is the computation a
PyTorch model exported through torch-mlir (fx importer) would hand to `iree-compile`, taking and
returning the same arrays as the case's linalg forms, so the family's NumPy reference judges both.

A family's `Spelling` (in its package's `spellings` module, found through `families.registry`)
says which cases a frontend can write (`expressible`), which parameters only choose among linalg
formulations and are set to one value (`normalize`, so two linalg forms of one case share one
frontend form), and builds the function from the linalg form's boundary types (`build`, over
`torch_ir.TorchBuilder`). ONNX spellings share the same value (`onnx_forms`, `onnx_models`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from shapefuzz.families.base import FamilyParams as Params
from shapefuzz.families.torch_ir import TV, Boundary, TorchBuilder, dims_of

FLOATS = ("f32", "f16")


@dataclass(frozen=True)
class Spelling:
    """One frontend's way to write a family's cases."""

    family: str
    frontend: str  # "torch" (aten ops) | "onnx" (torch.operator "onnx.*")
    expressible: Callable[[Params], bool]
    normalize: Callable[[Params], Params]  # linalg-only choices set to one value, dtypes as the frontend needs
    build: Callable[[Params, Boundary], str]  # the module text, given the linalg form's boundary types
    # A case of this spelling that passes on llvm-cpu, where the family's example is one it cannot write.
    example: Mapping[str, Any] | None = field(default=None, compare=False)


def boundary_args(b: TorchBuilder, bnd: Boundary, sizes: list[list[int]], names: list[str]) -> list[TV]:
    return [TV(n, dims_of(shape, sz), elt) for n, (shape, elt), sz in zip(names, bnd.args, sizes)]
