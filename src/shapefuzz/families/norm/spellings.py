"""The norm family's frontend spellings, on the linalg form's boundary. f16 inputs (and their
scale / bias / mean / var) are cast to f32 first and the result back, as autocast exports do, so
both frontends compute in f32 as the linalg forms do. A channels-last (NHWC) case is permuted to
channels first around the op (torch and ONNX normalize dim 1).

- torch: `torch.aten.layer_norm` (`native_layer_norm` without scale and bias), `group_norm`,
  `instance_norm`, `batch_norm` (inference: running mean / var), `rms_norm`, `softmax.int` /
  `_softmax` (by the axis's parity), `log_softmax.int`.
- onnx (opset 18): LayerNormalization, a group norm as torch.onnx exports one (Reshape to
  [N, G, rest], InstanceNormalization, Reshape back, the per-channel scale / bias after),
  InstanceNormalization,
  BatchNormalization, Softmax, LogSoftmax. No RMS norm (opset 23), and no scale-less layer or
  instance norm over a `?` dim (ONNX requires a scale: a constant of ones needs its size)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.norm.params import Params, operand_shape, operands, param_dims
from shapefuzz.families.onnx_forms import imported
from shapefuzz.families.onnx_models import ModelSpelling
from shapefuzz.families.torch_forms import Spelling, boundary_args
from shapefuzz.families.torch_ir import Boundary, TorchBuilder


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="twopass")


def _to_first(p: Params) -> list[int]:
    """The permutation putting an NHWC input's channel dim at 1 (the identity otherwise)."""
    if p.layout != "nhwc":
        return list(range(p.rank))
    return [0, p.rank - 1] + list(range(1, p.rank - 1))


def _back(p: Params) -> list[int]:
    perm = _to_first(p)
    return [perm.index(i) for i in range(p.rank)]


def _torch_build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = TorchBuilder()
    names = operands(p)
    shapes = [list(p.shape)] + [operand_shape(p)] * len(names)
    args = boundary_args(b, bnd, shapes, ["%x"] + [f"%{n}" for n in names])
    vals = [b.to_dtype(a, "f32", f"{a.name[1:]}_f32") for a in args]
    x, named = vals[0], dict(zip(names, vals[1:]))
    x = b.permute(x, _to_first(p), "first")
    eps = (b.float(p.eps), "!torch.float")
    none = (b.none(), "!torch.none")

    def opt(name: str) -> tuple[str, str]:
        return (named[name].name, named[name].type) if name in named else none

    xin = (x.name, x.type)
    out = x.with_dims(b.fresh(p.kind), x.dims)
    if p.kind in ("layer", "rms"):
        shape = (b.int_list([b.size(x, i) for i in param_dims(p)]), "!torch.list<int>")
        if p.kind == "rms":
            y = b.op("torch.aten.rms_norm", [xin, shape, opt("scale"), eps], out)
        elif p.affine:
            y = b.op("torch.aten.layer_norm", [xin, shape, opt("scale"), opt("bias"), eps, (b.bool(False), "!torch.bool")], out)
        else:
            # three results: the normalized input, its mean and inverse root (unused)
            stat = x.with_dims("", x.dims[:p.axis] + ((1, False),) * (p.rank - p.axis))
            mean, rstd = stat.with_dims(b.fresh("mean"), stat.dims), stat.with_dims(b.fresh("rstd"), stat.dims)
            ins = [xin, shape, none, none, eps]
            b.body.append(f"{out.name}, {mean.name}, {rstd.name} = torch.aten.native_layer_norm "
                          f"{', '.join(n for n, _ in ins)} : {', '.join(t for _, t in ins)} -> "
                          f"{out.type}, {mean.type}, {rstd.type}")
            y = out
    elif p.kind == "group":
        y = b.op("torch.aten.group_norm", [xin, (b.int(p.groups), "!torch.int"), opt("scale"), opt("bias"), eps,
                                           (b.bool(False), "!torch.bool")], out)
    elif p.kind == "instance":
        y = b.op("torch.aten.instance_norm", [xin, opt("scale"), opt("bias"), none, none, (b.bool(True), "!torch.bool"),
                                              (b.float(0.1), "!torch.float"), eps, (b.bool(False), "!torch.bool")], out)
    elif p.kind == "batch":
        y = b.op("torch.aten.batch_norm", [xin, opt("scale"), opt("bias"), opt("mean"), opt("var"),
                                           (b.bool(False), "!torch.bool"), (b.float(0.1), "!torch.float"), eps,
                                           (b.bool(False), "!torch.bool")], out)
    else:
        dim = (b.int(p.axis), "!torch.int")
        if p.kind == "logsoftmax":
            y = b.op("torch.aten.log_softmax.int", [xin, dim, none], out)
        elif p.axis % 2:
            y = b.op("torch.aten._softmax", [xin, dim, (b.bool(False), "!torch.bool")], out)
        else:
            y = b.op("torch.aten.softmax.int", [xin, dim, none], out)
    y = b.permute(y, _back(p), "back")
    y = b.to_dtype(y, bnd.results[0][1], "res")
    return b.render("main", args, [b.cast_to(y, bnd.results[0][0])])


# ----------------------------------------------------------------------------- ONNX

_ONNX_OP = {"layer": "LayerNormalization", "group": "", "instance": "InstanceNormalization",
            "batch": "BatchNormalization", "softmax": "Softmax", "logsoftmax": "LogSoftmax"}


def onnx_refusal(p: Params) -> str:
    """Why ONNX cannot write the case ("" when it can)."""
    if p.kind == "rms":
        return "RMSNormalization is opset 23"
    if p.kind in ("layer", "instance") and not p.affine and any(p.dyn[i] for i in param_dims(p)):
        return f"a {p.kind} norm without a scale over a `?` dim (ONNX requires a scale)"
    return ""


def _onnx_expressible(p: FamilyParams) -> bool:
    assert isinstance(p, Params)
    return not onnx_refusal(p)


def _onnx_model(p: FamilyParams, bnd: Boundary):
    """The case as a real ONNX model (`onnx_models`), which iree-import-onnx imports."""
    assert isinstance(p, Params)
    from shapefuzz.families.onnx_models import Graph

    names = operands(p)
    g = Graph(bnd, ["x"] + names)
    vals = ["x"] + names
    if p.dtype != "f32":
        vals = [g.one("Cast", [v], to=1) for v in vals]
    x, named = g.transpose(vals[0], _to_first(p)), dict(zip(names, vals[1:]))
    op = _ONNX_OP[p.kind]
    if p.kind in ("softmax", "logsoftmax"):
        y = g.one(op, [x], axis=p.axis)
    elif p.kind == "batch":
        y = g.one(op, [x] + [named[n] for n in ("scale", "bias", "mean", "var")], epsilon=float(p.eps))
    elif p.kind == "group":
        # as torch.onnx exports it (GroupNormalization's opset-18 form is deprecated): the groups
        # as instances of an InstanceNormalization over [N, G, rest], reshaped back
        ones, zeros = g.const([1.0] * p.groups, "f32"), g.const([0.0] * p.groups, "f32")
        xg = g.one("Reshape", [x, g.const([0, p.groups, -1], "i64")])
        y = g.one("InstanceNormalization", [xg, ones, zeros], epsilon=float(p.eps))
        y = g.one("Reshape", [y, g.one("Shape", [x])])
        if p.affine:  # per channel, broadcast over the spatial dims
            axes = list(range(1, p.rank - 1))
            s, c = named["scale"], named["bias"]
            if axes:
                s, c = (g.one("Unsqueeze", [v, g.const(axes, "i64")]) for v in (s, c))
            y = g.one("Add", [g.one("Mul", [y, s]), c])
    else:
        size = operand_shape(p)
        n = 1
        for dim in size:
            n *= dim
        scale = named.get("scale") or g.const([1.0] * n, "f32", shape=size)
        bias = named.get("bias") or g.const([0.0] * n, "f32", shape=size)
        attrs = {"axis": p.axis} if p.kind == "layer" else {}
        y = g.one(op, [x, scale, bias], epsilon=float(p.eps), **attrs)
    y = g.transpose(y, _back(p))
    return g.model([(y, "f32")])


def _onnx_build(p: FamilyParams, bnd: Boundary) -> str:
    """No hand-written ONNX text: the torch spelling stands in for a model the importer rejects."""
    return f"// no hand-written ONNX text for the norm family\n{_torch_build(p, bnd)}"


SPELLINGS: tuple[Spelling, ...] = (
    Spelling("norm", "torch", lambda p: True, _normalize, _torch_build),
    Spelling("norm", "onnx", _onnx_expressible, _normalize, imported("norm", _onnx_build)),
)
ONNX_MODEL = ModelSpelling("norm", _onnx_model)
