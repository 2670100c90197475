"""Corners where ONNX Runtime 1.32.0, onnx.reference (onnx 1.23.2) and ONNX's shape inference are
known to disagree (found by `shapefuzz onnx-ops`, each checked by hand): a campaign does not draw
them (`strategy.is_valid`), since no case there can be judged; the sweep still draws them and
counts them as reference disagreements. `known_disagreement(p)` says which corner, or ""."""

from __future__ import annotations

import functools
import math

import numpy as np

from shapefuzz.families.onnx_op.params import Params, runtime

INTS = ("i32", "i64", "i8", "u8")


def _shapes(p: Params) -> list[tuple[int, ...]]:
    return [o[2] for o in runtime(p)]


def _pool(p: Params) -> str:
    x = _shapes(p)[0]
    kernel = list(p.attr("kernel_shape", ()))
    n = len(kernel)
    strides = list(p.attr("strides", (1,) * n))
    dil = list(p.attr("dilations", (1,) * n))
    pads = list(p.attr("pads", (0,) * 2 * n))
    if p.op == "MaxPool" and pads[:n] != pads[n:]:
        return "onnx.reference's MaxPool reads pads as per-axis pairs"
    for i in range(n):
        if (kernel[i] - 1) * dil[i] + 1 > x[2 + i] + pads[i] + pads[n + i]:
            return "a dilated window wider than the padded input: ONNX Runtime gives no output, onnx.reference one"
    if p.attr("ceil_mode", 0):
        for i in range(n):
            span = (kernel[i] - 1) * dil[i] + 1
            out = math.ceil((x[2 + i] + pads[i] + pads[n + i] - span) / strides[i]) + 1
            if (out - 1) * strides[i] - pads[i] >= x[2 + i]:  # the last ceil-mode window starts in the right pad
                return "ceil mode's last window starts in the padding: shape inference counts it, the references do not"
        if p.op == "AveragePool":
            return "AveragePool in ceil mode: the references divide a partial window differently"
    return ""


def _resize(p: Params) -> str:
    mode, ctm = p.attr("mode", "nearest"), p.attr("coordinate_transformation_mode", "half_pixel")
    if mode == "cubic":
        return "cubic Resize: ONNX Runtime takes only 2-D or NCHW inputs with unit outer scales, and differs at the edges"
    if p.attr("antialias", 0):
        return "antialiased Resize: the references' filters differ"
    if ctm == "tf_crop_and_resize":
        return "tf_crop_and_resize: the references place the crop box's samples differently"
    scales = p.operands[2] if len(p.operands) > 2 and p.operands[2][0] == "const" else None
    if scales is not None:
        x = _shapes(p)[0]
        for n, s in zip(x, scales[4]):
            length = n * float(np.float32(s))  # (in double, as onnx.reference computes it)
            if length != math.floor(length):
                return ("a scale whose output length is not whole in float32: onnx.reference takes the unfloored "
                        "length (align_corners, half_pixel_symmetric), ONNX Runtime the floored one")
    return ""


def _by_params(p: Params) -> str:
    ins = runtime(p)
    dtypes = {o[1] for o in ins}
    if p.op == "DequantizeLinear":
        return "onnx.reference has no DequantizeLinear of opset 18"
    if p.op in ("ReduceLogSum", "ReduceLogSumExp") and dtypes & set(INTS):
        return f"onnx.reference has no integer {p.op}"
    if p.op == "ReduceSumSquare" and "i32" in dtypes:
        return "onnx.reference's ReduceSumSquare of int32 returns int64"
    if p.op == "Mean" and len({o[2] for o in ins}) > 1:
        return "onnx.reference's Mean does not broadcast (it accumulates into its first operand)"
    if p.op == "Pad" and any(v < 0 for v in p.operands[1][4]):
        return "onnx.reference's Pad takes no negative pads"
    if p.op == "GatherElements":
        data, idx = ins[0][2], ins[1][2]
        axis = p.attr("axis", 0) % len(data)
        if any(a != b for i, (a, b) in enumerate(zip(data, idx)) if i != axis or p.attr("axis", 0) < 0):
            return ("onnx.reference's GatherElements wants the indices as large as the data off the axis "
                    "(and, for a negative axis, along it too)")
    if p.op in ("GlobalMaxPool", "GlobalAveragePool", "GlobalLpPool") and len(ins[0][2]) <= 3:
        return "ONNX Runtime's global pools want rank >= 3, and onnx.reference's GlobalMaxPool drops the channels at rank 3"
    if p.op == "LpNormalization" and not ins[0][2]:
        return "ONNX Runtime's LpNormalization takes no rank-0 input"
    if p.op == "Softsign" and not ins[0][2]:
        return "onnx.reference's Softsign takes no rank-0 input"
    if p.op == "MatMulInteger" and any(o[0] == "const" and len(o[4]) > 1 for o in p.operands[2:]):
        return "ONNX Runtime's MatMulInteger takes only scalar zero points"
    if p.op in ("MaxPool", "AveragePool"):
        return _pool(p)
    if p.op == "Resize":
        return _resize(p)
    if p.op == "Slice" and any(o[0] == "const" and any(abs(v) >= 1 << 62 for v in o[4]) for o in p.operands[1:3]):
        steps = p.operands[4][4] if len(p.operands) > 4 else ()
        if any(s < 0 for s in steps):
            return "Slice from or to an int64 extreme with a negative step: the references clamp differently"
    return ""


@functools.lru_cache(maxsize=1024)
def _kernel_missing(p: Params) -> str:
    """ONNX Runtime's own word that it has no kernel for these types (a session does not start)."""
    from shapefuzz.families.onnx_op.model import build
    from shapefuzz.families.onnx_op.reference import session

    try:
        session(build(p))
    except Exception as error:  # noqa: BLE001
        if "NOT_IMPLEMENTED" in str(error):
            return "ONNX Runtime has no kernel for these element types"
    return ""


def known_disagreement(p: Params) -> str:
    return _by_params(p) or _kernel_missing(p)
