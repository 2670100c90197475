"""The attention family's torch spelling: `torch.aten.scaled_dot_product_attention` (q, k, v, the
additive mask or none, dropout 0, not causal, the scale, no GQA), as torch-mlir imports it. No
ONNX spelling: the opset-18 importer IREE 3.13 ships has no Attention op."""

from __future__ import annotations

from shapefuzz.families.attention.params import Params, k_shape, mask_shape, out_shape, q_shape, v_shape
from shapefuzz.families.base import FamilyParams
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import Boundary, TorchBuilder


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    names, shapes = ["%q", "%k", "%v"], [q_shape(p), k_shape(p), v_shape(p)]
    if p.mask != "none":
        names.append("%mask")
        shapes.append(mask_shape(p))
    args = boundary_args(b, bnd, shapes, names)
    q, k, v = args[:3]
    mask = (args[3].name, args[3].type) if p.mask != "none" else (b.none(), "!torch.none")
    dims = list(q.dims[:-1]) + [v.dims[-1]]
    assert [s for s, _ in dims] == out_shape(p)
    out = q.with_dims(b.fresh("attn"), dims)
    y = b.op("torch.aten.scaled_dot_product_attention", [
        (q.name, q.type), (k.name, k.type), (v.name, v.type), mask, (b.float(0.0), "!torch.float"),
        (b.bool(False), "!torch.bool"), (b.float(p.scale), "!torch.float"), (b.bool(False), "!torch.bool")], out)
    y = b.cast_to(y, bnd.results[0][0])
    return b.render("main", args, [y])


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("attention", "torch", lambda p: True, lambda p: p.replace(form="attention"), _build),
)
