"""The onnx_op family's strategy, validity, features, swarm knobs and shrink proposals.

`op_strategy(op)` draws one op's raw case (its rule's, or the schema's generic draw), which ONNX
may still reject; `strategy` draws over `FAMILY_OPS` and keeps only cases ONNX accepts and IREE's
importer imports (a few tries per op, then the draw is rejected)."""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.families.common import dyn_features
from shapefuzz.families.onnx_op.generic import draw_generic, why_not
from shapefuzz.families.onnx_op.model import NotDrawable, build, check_params, drawable
from shapefuzz.families.onnx_op.params import NONE, NUMPY_TYPE, ONNX, Params, pin_broadcast_ones, runtime
from shapefuzz.families.onnx_op.rules import RULES
from shapefuzz.families.onnx_op.schema import UNDRAWABLE, default_ops

# Op classes (features, and the tests' "two ops per class").
CLASSES = {
    "elementwise": ("Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Sigmoid", "Tanh", "Relu", "Floor", "Ceil",
                    "Round", "Sign", "Erf", "Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh",
                    "Acosh", "Atanh", "Softplus", "Softsign", "Elu", "Selu", "Celu", "LeakyRelu", "HardSigmoid",
                    "HardSwish", "Mish", "ThresholdedRelu", "Shrink", "Not", "IsNaN", "IsInf", "BitwiseNot",
                    "Identity", "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal",
                    "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd",
                    "BitwiseOr", "BitwiseXor", "PRelu", "Where", "Clip", "Cast", "CastLike"),
    "movement": ("Slice", "Gather", "GatherElements", "GatherND", "Transpose", "Reshape", "Expand", "Concat", "Split",
                 "Squeeze", "Unsqueeze", "Tile", "Pad", "Resize", "DepthToSpace", "SpaceToDepth", "Trilu", "Flatten",
                 "Range", "OneHot", "Compress", "ScatterElements", "ScatterND", "Shape", "Size", "NonZero", "Unique"),
    "reduction": ("ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1", "ReduceL2",
                  "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare", "ArgMax", "ArgMin", "CumSum", "Softmax",
                  "LogSoftmax", "Hardmax", "TopK"),
    "contraction": ("MatMul", "MatMulInteger", "Gemm", "Einsum", "Conv", "ConvInteger", "ConvTranspose", "QLinearMatMul",
                    "Det"),
    "normalization": ("InstanceNormalization", "LayerNormalization", "LpNormalization", "BatchNormalization",
                      "MeanVarianceNormalization"),
    "pooling": ("MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool"),
    "quantization": ("QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear"),
}
OP_CLASS = {op: cls for cls, ops in CLASSES.items() for op in ops}

# What a campaign draws: every op with a rule, and the schema-drawn ops ONNX accepts most draws of
# (measured with onnx 1.23.2: `shapefuzz onnx-ops --ops all` counts the rest as not drawable).
GENERIC_OPS = ("Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "CastLike", "Ceil", "Celu", "Cos",
               "Cosh", "Elu", "Erf", "Exp", "Floor", "GlobalAveragePool", "GlobalMaxPool", "HardSigmoid", "HardSwish",
               "Identity", "IsInf", "IsNaN", "LeakyRelu", "Log", "LpNormalization", "Mish", "Neg", "Not", "Reciprocal",
               "Relu", "Round", "Selu", "Shrink", "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan",
               "Tanh", "ThresholdedRelu")
FAMILY_OPS = tuple(sorted(set(RULES) | set(GENERIC_OPS)))
TRIES = 6  # raw draws of one op before a campaign's draw moves on


def why_undrawable(op: str) -> str:
    """"" when the op can be drawn at all (a rule, or a schema the generic draw can use), else why not."""
    if op not in default_ops():
        return "not an operator of the default ONNX domain at our opset"
    if op in RULES:
        return ""
    return UNDRAWABLE.get(op) or why_not(op)


def op_strategy(op: str, regime: str = "small") -> st.SearchStrategy[Params]:
    """One op's raw draws (ONNX may reject some: `model.drawable`)."""
    large = regime == "large"
    if op in RULES:
        raw = st.composite(lambda draw: RULES[op](draw, large))()
    else:
        raw = st.composite(lambda draw: draw_generic(draw, op, regime))()
    return raw.map(_pinned)


def _pinned(p: Params) -> Params:
    return p.replace(operands=pin_broadcast_ones(p.operands))


def importable(p: Params) -> str:
    """"" when IREE's importer takes the case's model, else its message."""
    from shapefuzz.iree.onnx_import import ImportFailure, import_model

    try:
        import_model(build(p))
    except ImportFailure as error:
        return str(error)
    return ""


RULE_OPS = tuple(sorted(RULES))


@st.composite
def _valid(draw: Any, regime: str) -> Params:
    # two draws in three are of ops with a rule: the semantics real bugs need (attributes, constants)
    op = draw(st.sampled_from(GENERIC_OPS if draw(st.integers(0, 2)) == 0 else RULE_OPS))
    for _ in range(TRIES):
        p = draw(op_strategy(op, regime))
        if is_valid(p):
            return p
    from hypothesis import reject

    reject()


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _valid(regime)


@functools.lru_cache(maxsize=4096)
def is_valid(p: Params) -> bool:
    if p.frontend != ONNX or p.context:
        return False
    try:
        check_params(p)
    except NotDrawable:
        return False
    from shapefuzz.families.onnx_op.known import known_disagreement

    return not drawable(p) and not importable(p) and not known_disagreement(p)


def features(p: Params) -> list[str]:
    ins = runtime(p)
    flags = [d for o in ins for d in o[3]]
    out = [f"op:{p.op}", f"class:{OP_CLASS.get(p.op, 'other')}"] + dyn_features(flags)
    out += sorted({f"dtype:{o[1]}" for o in ins})
    out.append("attrs:none" if not p.attrs else "attrs:some")
    if not p.attrs and _has_attributes(p.op):
        out.append("attrs:defaults")  # an op that takes attributes, each at its schema's default
    if any(o == NONE for o in p.operands):
        out.append("optional:left_out")
    if any(s == 1 for o in ins for s in o[2]):
        out.append("dim:unit")
    ranks = {len(o[2]) for o in ins}
    if len(ranks) > 1:
        out.append("broadcast:rank")
    if any(isinstance(v, int) and not isinstance(v, bool) and v < 0 for _, v in p.attrs) or \
            any(o[0] == "const" and o[1] == "i64" and any(isinstance(v, int) and v < 0 for v in o[4]) for o in p.operands):
        out.append("negative")
    return out


def _has_attributes(op: str) -> bool:
    from shapefuzz.families.onnx_op.schema import schema

    return bool(schema(op).attributes)


FEATURES = ("class:elementwise", "class:movement", "class:reduction", "class:contraction", "class:normalization",
            "class:pooling", "class:quantization", "dyn:none", "dyn:all", "attrs:none", "attrs:some", "dim:unit",
            "negative", "dtype:f32", "dtype:f16", "dtype:i64")
FEATURE_DRAWS = 300


def _static(p: Params) -> Params:
    ops = tuple((k, t, s, tuple(False for _ in d), data) if k == "x" else (k, t, s, d, data)
                for k, t, s, d, data in p.operands)
    return p.replace(operands=ops)


def _defaults(p: Params) -> Params:
    return p.replace(attrs=())


def _single(p: Params) -> Params:
    ops = tuple((k, "f32" if t == "f16" else t, shape, d, data) for k, t, shape, d, data in p.operands)
    return p.replace(operands=ops)


SWARM = {"dynamic": _static, "attributes": _defaults, "half": _single}
RARE_CONJUNCTION = ("dyn:none", "attrs:defaults")


def equivalent_forms(p: Params) -> list[Params]:
    return []  # one op, one model: its forms are the other frontends' business


def _resized(p: Params, old: int, new: int) -> Params:
    """Every `x` operand's dims of size `old` at `new` (shapes that broadcast keep broadcasting)."""
    ops = tuple((k, t, tuple(new if s == old else s for s in shape), d, data) if k == "x" else (k, t, shape, d, data)
                for k, t, shape, d, data in p.operands)
    return p.replace(operands=ops)


def shrink_candidates(p: Params) -> list[Params]:
    out = [_static(p)]
    sizes = sorted({s for o in runtime(p) for s in o[2] if s > 1}, reverse=True)
    for s in sizes:
        out += [_resized(p, s, 1), _resized(p, s, s // 2), _resized(p, s, s - 1)]
    out += [p.without_attr(k) for k, _ in p.attrs]
    if p.operands and p.operands[-1][0] != "x":
        out.append(p.replace(operands=p.operands[:-1]))
    if p.outputs > 1:
        out.append(p.replace(outputs=p.outputs - 1))
    return [q for q in map(_pinned, out) if q != p]


def largest_operand(p: Params) -> list[int]:
    """The largest graph input's shape (by bytes; `Params.dtype` is its element type)."""
    ins = runtime(p)
    if not ins:
        return [1]
    return list(max(ins, key=lambda o: int(np.prod(o[2])) * np.dtype(NUMPY_TYPE[o[1]]).itemsize)[2])
