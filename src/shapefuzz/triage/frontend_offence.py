"""What a torch-mlir conversion refuses that an earlier pass made: a broadcasting torch op whose
static shapes do not broadcast to its result. torch's verifier does not check broadcasting, so the
op passes every pass until `convert-torch-to-linalg` builds a `linalg.generic` from it that fails
its own verifier ("inferred input/output operand #1 has shape's dimension #0 to be 4, but found 3").
The conversion only notices: the bug is in the pass that built the op (measured on IREE 3.13: ONNX
MatMulInteger with a per-row `a_zero_point` of shape [M] is lowered by `convert-torch-onnx-to-torch`
to `torch.aten.sub.Tensor` of [M,K] and [M] typed [M,K]; the hand audit of the fresh campaign named
the conversion, twice, as two bugs).

Pure text; `judge.localize_probe.place_frontend_refusal` runs the compile whose dumps are searched
(`triage.culprit.first_maker`, with `ILL_TYPED_BROADCAST` as the offence)."""

from __future__ import annotations

import re

from shapefuzz.triage.culprit import Offence

# the torch-mlir passes that lower torch ops to linalg and the like, where such an op is refused
_CONVERSION = re.compile(r"^(?:convert-torch-to-(?:linalg|tmtensor|arith|scf|tensor)|ConvertTorchTo\w+)$")
# an op's own verifier, as the conversion's output fails it ("'linalg.generic' op ...")
_VERIFIER_MESSAGE = re.compile(r"^'[\w.]+' op ")
# torch's elementwise ops that broadcast their tensor operands (numpy rules)
_BROADCASTING = re.compile(
    r"=\s*torch\.aten\.(?:add|sub|mul|div|rsub|remainder|fmod|pow|atan2|maximum|minimum|floor_divide|"
    r"eq|ne|lt|le|gt|ge|logical_and|logical_or|logical_xor|bitwise_and|bitwise_or|bitwise_xor|where)"
    r"\.(?:Tensor(?:_mode|_Tensor)?|self)\b[^:\n]*:\s*(?P<operands>[^\n]*?)\s*->\s*(?P<result>!torch\.vtensor<[^>\n]*>)")
_VTENSOR = re.compile(r"!torch\.vtensor<\[([^\]]*)\],[^>]*>")


def refused_by_conversion(failing_pass: str, message: str) -> bool:
    """Whether a compile error is a torch-mlir conversion's output failing an op's verifier: what it
    refuses may be an op an earlier pass typed wrong."""
    return bool(_CONVERSION.match(failing_pass.split("{", 1)[0]) and _VERIFIER_MESSAGE.match(message.strip()))


def _dims(vtensor: str) -> list[int | None] | None:
    """A `!torch.vtensor<[3,?],si32>`'s dims (None for `?`); None for an unranked one."""
    m = _VTENSOR.fullmatch(vtensor.strip())
    if m is None:
        return None
    inner = m.group(1).strip()
    if not inner:
        return []
    dims = [d.strip() for d in inner.split(",")]
    if any(d != "?" and not re.fullmatch(r"-?\d+", d) for d in dims):
        return None
    return [None if d == "?" or int(d) < 0 else int(d) for d in dims]


def conflict(operands: list[list[int | None]], result: list[int | None]) -> str:
    """Why static operand shapes cannot broadcast to `result` ("" when they can, or `?` dims leave it
    open): two static sizes other than 1 that differ, a result rank other than the largest, or a
    result size other than the static one its operands make."""
    rank = max(len(s) for s in operands)
    if len(result) != rank:
        return f"the result has rank {len(result)}, its operands broadcast to rank {rank}"
    for axis in range(1, rank + 1):
        present = [s[-axis] for s in operands if len(s) >= axis]
        wide = sorted({d for d in present if d is not None and d != 1})
        if len(wide) > 1:
            return f"sizes {' and '.join(map(str, wide))} meet on one axis"
        got = result[-axis]
        # the size the operands make: the one static size other than 1, else 1 when every one is 1
        want = wide[0] if wide else (1 if all(d == 1 for d in present) else None)
        if got is not None and want is not None and got != want:
            return f"the result's size {got} where its operands make {want}"
    return ""


def ill_typed_broadcasts(text: str) -> list[str]:
    """The broadcasting torch ops in `text` whose static shapes contradict their result type, each as
    "`torch.aten.sub.Tensor` of [3,4] and [3] typed [3,4]: sizes 3 and 4 meet on one axis"."""
    found = []
    for m in _BROADCASTING.finditer(text):
        shapes = [d for t in _VTENSOR.finditer(m.group("operands")) if (d := _dims(t.group(0))) is not None]
        result = _dims(m.group("result"))
        if len(shapes) < 2 or result is None:
            continue
        why = conflict(shapes, result)
        if why:
            op = re.search(r"torch\.aten\.[\w.]+", m.group(0))
            shown = " and ".join(map(_shown, shapes))
            found.append(f"`{op.group(0) if op else 'torch.aten'}` of {shown} typed {_shown(result)}: {why}")
    return found


def _shown(dims: list[int | None]) -> str:
    """A torch shape as it prints: `[3,?]`."""
    return "[" + ",".join("?" if d is None else str(d) for d in dims) + "]"


ILL_TYPED_BROADCAST = Offence("a broadcasting torch op whose static shapes contradict its result type",
                              lambda text: bool(ill_typed_broadcasts(text)))


__all__ = ["ILL_TYPED_BROADCAST", "conflict", "ill_typed_broadcasts", "refused_by_conversion"]
