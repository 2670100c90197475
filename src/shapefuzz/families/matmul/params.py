"""The matmul family's parameters and shapes: C[batch.., M, N] = A[batch.., M, K] . B[batch.., K, N],
with A or B stored transposed, one operand without the batch dims (broadcast across the batch),
a vector operand (matvec: B is [.., K]; vecmat: A is [.., K]), any dim `?`, f32 / f16 / bf16
operands accumulated in f32, i8 x i8 -> i32 with zero points (MatMulInteger: (a - a_zp)(b - b_zp)),
and, for a plain 2-D case, a Gemm epilogue: alpha * A.B + beta * C."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from shapefuzz.families.base import FamilyParams

Dtype = Literal["f32", "f16", "bf16", "i8"]
DTYPES: tuple[Dtype, ...] = get_args(Dtype)
Out = Literal["f32", "f16", "bf16", "i32"]  # the accumulator, or the operand type rounded once
# The named op (`linalg.matmul` / `batch_matmul` with indexing maps for a transposed or broadcast
# operand; `matvec` / `vecmat` and their batch ops for a vector operand, a transposed matrix operand
# swapping the two), one `linalg.generic`, `linalg.contract`, the transpose and broadcast
# materialized by `linalg.transpose` / `linalg.broadcast` before a plain op,
# `linalg.quantized_matmul` / `quantized_batch_matmul` for i8 cases (transposes and broadcasts
# materialized before it), and "qdq": both i8
# operands through `iree_linalg_ext.dequantize_affine` into an f32 contraction whose result is
# scaled back and converted to i32 (the pattern 3.13's QDQ-to-integer-math rewrite matches).
Form = Literal["named", "generic", "contract", "materialized", "quantized", "qdq"]
FORMS: tuple[str, ...] = get_args(Form)
Vec = Literal["", "matvec", "vecmat"]
VECS: tuple[Vec, ...] = get_args(Vec)
Bcast = Literal["none", "a", "b"]  # which operand has no batch dims
BCASTS: tuple[Bcast, ...] = get_args(Bcast)
Bias = Literal["none", "row", "full"]  # the Gemm C operand: none, [N] (broadcast over rows), [M, N]
BIASES: tuple[Bias, ...] = get_args(Bias)
SCALES = (1.0, 0.5, 2.0, 0.25)  # alpha and beta: powers of two keep every sum exact
# Written without literals over 99 that no other module holds: Hypothesis draws integers from the
# constants of the loaded modules, and a new one would change what recorded seeds draw.
I8_MAX = (1 << 7) - 1
I8_MIN = -I8_MAX - 1
U8_MAX = (1 << 8) - 1
ZpPer = Literal["tensor", "row", "col"]  # one zero point, one per row of A (M), one per column of B (N)
# The qdq form's dequantize scales (powers of two) and the largest K whose f32 partial sums are
# all exact: |(a - a_zp)(b - b_zp)| <= 255 * 255, and K of them stay below 2^24.
QDQ_SCALES = (0.25, 0.5)
QDQ_MAX_K = (1 << 24) // (U8_MAX * U8_MAX)


@dataclass(frozen=True)
class Params(FamilyParams):
    dtype: Dtype
    out: Out  # the result type: "f32" (the accumulator) or the operand type (f16 / bf16); "i32" for i8
    batch: tuple[int, ...]  # 0, 1 or 2 batch dims
    batch_dyn: tuple[bool, ...]
    m: int
    n: int
    k: int
    m_dyn: bool
    n_dyn: bool
    k_dyn: bool
    trans_a: bool = False  # A stored [.., K, M]
    trans_b: bool = False  # B stored [.., N, K]
    bcast: Bcast = "none"
    vec: Vec = ""
    form: Form = "named"
    a_zp: int = 0  # the zero point (per tensor), or the first of A's per-row ones
    b_zp: int = 0
    a_zp_per: ZpPer = "tensor"  # "row": one zero point per row of A
    b_zp_per: ZpPer = "tensor"  # "col": one per column of B
    a_unsigned: bool = False  # A's i8 storage read as u8 (0..255; ONNX MatMulInteger's uint8)
    b_unsigned: bool = False
    alpha: float = 1.0
    beta: float = 1.0
    bias: Bias = "none"
    big: bool = False

    @property
    def acc(self) -> str:
        return "i32" if self.dtype == "i8" else "f32"

    @property
    def quantized(self) -> bool:
        return self.dtype == "i8"

    @property
    def epilogue(self) -> bool:
        return self.alpha != 1.0 or self.bias != "none"


def a_shape(p: Params) -> list[int]:
    """A as stored (the function's first argument)."""
    batch = [] if p.bcast == "a" else list(p.batch)
    if p.vec == "vecmat":
        return batch + [p.k]
    return batch + ([p.k, p.m] if p.trans_a else [p.m, p.k])


def b_shape(p: Params) -> list[int]:
    batch = [] if p.bcast == "b" else list(p.batch)
    if p.vec == "matvec":
        return batch + [p.k]
    return batch + ([p.n, p.k] if p.trans_b else [p.k, p.n])


def c_shape(p: Params) -> list[int]:
    """The result: [batch.., M, N] without the vector's dropped dim."""
    return list(p.batch) + ([] if p.vec == "vecmat" else [p.m]) + ([] if p.vec == "matvec" else [p.n])


def bias_shape(p: Params) -> list[int]:
    return {"none": [], "row": [p.n], "full": [p.m, p.n]}[p.bias]


def problem(p: Params) -> str:
    """Why the params describe no case this family builds ("" when they do): the one check behind
    `is_valid`, and the line a user gets for a case file holding such params."""
    if p.dtype not in DTYPES:
        return f"dtype {p.dtype!r} is not one of {', '.join(DTYPES)}"
    outs = ("i32",) if p.dtype == "i8" else ("f32",) + ((p.dtype,) if p.dtype != "f32" else ())
    if p.out not in outs:
        return f"out {p.out!r}: {p.dtype} operands give {' or '.join(outs)}"
    if not (0 <= len(p.batch) <= 2 and len(p.batch_dyn) == len(p.batch)):
        return "batch: 0, 1 or 2 dims, with as many batch_dyn flags"
    if min((*p.batch, p.m, p.n, p.k)) < 1:
        return "every size is at least 1"
    if p.bcast not in BCASTS or (p.bcast != "none" and not p.batch):
        return f"bcast {p.bcast!r}: one of {', '.join(BCASTS)}, and only with batch dims"
    if p.vec not in VECS:
        return f"vec {p.vec!r} is not one of {VECS}"
    if (p.vec == "matvec" and (p.trans_b or p.n != 1)) or (p.vec == "vecmat" and (p.trans_a or p.m != 1)):
        return "a vector operand: N = 1 (matvec) or M = 1 (vecmat), and it is not transposed"
    if (p.vec == "matvec" and p.n_dyn) or (p.vec == "vecmat" and p.m_dyn):
        return "the dim a vector operand drops is not dynamic"
    for name, zp, unsigned in (("a_zp", p.a_zp, p.a_unsigned), ("b_zp", p.b_zp, p.b_unsigned)):
        if (zp or unsigned) and not p.quantized:
            return f"{name}: zero points and unsigned operands only with i8 operands"
        lo, hi, kind = (0, U8_MAX, "a u8") if unsigned else (I8_MIN, I8_MAX, "an i8")
        if not lo <= zp <= hi:
            return (f"{name} {zp} is not {kind} value: a MatMulInteger zero point has its operand's type "
                    f"({'uint8' if unsigned else 'int8'}, {lo}..{hi})")
    if p.a_zp_per not in ("tensor", "row") or p.b_zp_per not in ("tensor", "col"):
        return "a_zp_per is tensor or row; b_zp_per is tensor or col"
    if (p.a_zp_per != "tensor" or p.b_zp_per != "tensor") and (p.batch or p.vec or not p.quantized):
        return "per-row / per-column zero points only on a plain 2-D i8 case"
    if p.alpha not in SCALES or p.beta not in SCALES or p.bias not in BIASES:
        return f"alpha and beta are one of {SCALES}; bias one of {BIASES}"
    if (p.epilogue or p.beta != 1.0) and (p.batch or p.vec or p.quantized):
        return "a Gemm epilogue (alpha, beta, bias) only on a plain 2-D float case"
    if p.bias == "none" and p.beta != 1.0:
        return "beta without a bias"
    if p.form not in forms_for(p):
        return f"form {p.form!r} does not write this case; it takes {', '.join(forms_for(p))}"
    return ""


def forms_for(p: Params) -> tuple[str, ...]:
    """The linalg formulations that write the case (the forms the metamorphic oracle compares)."""
    forms = ["generic", "contract"]
    plain = not p.trans_a and not p.trans_b and p.bcast == "none"
    # batch_matmul broadcasts only an operand in its plain layout; the vector ops take no maps
    bcast_transposed = (p.bcast == "a" and p.trans_a) or (p.bcast == "b" and p.trans_b)
    if len(p.batch) <= 1 and (not p.vec or p.bcast == "none") and not bcast_transposed:
        forms.insert(0, "named")
    if len(p.batch) <= 1 and not p.vec and not plain:
        forms.append("materialized")
    per_tensor = p.a_zp_per == "tensor" and p.b_zp_per == "tensor"
    signed = not p.a_unsigned and not p.b_unsigned
    if p.quantized and len(p.batch) <= 1 and not p.vec and per_tensor and signed:
        forms.append("quantized")  # scalar zero points, signed operands; a transpose / broadcast materialized
    if p.quantized and p.k <= QDQ_MAX_K:
        forms.append("qdq")
    return tuple(forms)


def zero_points(p: Params, operand: str) -> list[int]:
    """An operand's zero points ("a" or "b"): one, or one per row of A / column of B. The first is
    the params' own; the rest cycle through the type's extremes and its middle, so a per-row case
    meets every edge in its first rows."""
    base, per, unsigned = (p.a_zp, p.a_zp_per, p.a_unsigned) if operand == "a" else (p.b_zp, p.b_zp_per, p.b_unsigned)
    cycle = (base, 0, U8_MAX, 1 << 7, 1, U8_MAX - 1) if unsigned else (base, I8_MIN, I8_MAX, 0, -1, 1)
    count = {"tensor": 1, "row": p.m, "col": p.n}[per]
    return [cycle[i % len(cycle)] for i in range(count)]
