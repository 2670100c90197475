"""Which linalg formulations write a matmul case, and its equivalent forms (the metamorphic
oracle compares them): the named op (`linalg.matmul` / `batch_matmul` with indexing maps for a
transposed or broadcast operand; `matvec` / `vecmat` and their batch ops for a vector operand, a
transposed matrix operand swapping the two), one `linalg.generic`, `linalg.contract`, the
transpose and broadcast materialized by `linalg.transpose` / `linalg.broadcast` before a plain
op, and `linalg.quantized_matmul` / `quantized_batch_matmul` for plain i8 cases."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shapefuzz.families.matmul.params import Params


def forms_for(p: Params) -> tuple[str, ...]:
    forms = ["generic", "contract"]
    plain = not p.trans_a and not p.trans_b and p.bcast == "none"
    # batch_matmul broadcasts only an operand in its plain layout; the vector ops take no maps
    bcast_transposed = (p.bcast == "a" and p.trans_a) or (p.bcast == "b" and p.trans_b)
    if len(p.batch) <= 1 and (not p.vec or p.bcast == "none") and not bcast_transposed:
        forms.insert(0, "named")
    if len(p.batch) <= 1 and not p.vec and not plain:
        forms.append("materialized")
    if p.quantized and len(p.batch) <= 1 and not p.vec and plain:
        forms.append("quantized")
    return tuple(forms)


def equivalent_forms(p: Params) -> list[Params]:
    return [p.replace(form=form) for form in forms_for(p)]
