"""The matmul family's StableHLO spelling: one `stablehlo.dot_general` with its batching and
contracting dims (a transposed operand is a different contracting dim, never a transpose op; an
operand without the batch dims takes no batching dims, and the result's free dims are transposed
into place when A is that operand), as JAX exports `jnp.matmul` / `lax.dot_general`:

- f16 / bf16 operands with an f32 result: a mixed-precision `dot_general` (JAX's
  `preferred_element_type`); bf16 operands arrive as f32 (the boundary) and are converted first;
- i8 operands: `dot_general` i8 x i8 -> i32 without zero points; with them (or a u8 operand, read
  with `bitcast_convert` to ui8) widened to i32 and shifted by a splat or a per-row / per-column
  constant broadcast along its dim;
- a Gemm epilogue: `multiply` by alpha, the bias broadcast (`broadcast_in_dim`, or
  `dynamic_broadcast_in_dim` to the product's shape when M is `?`) times beta, `add`.
The qdq form is written as the integer arithmetic it stands for (same values)."""

from __future__ import annotations

from shapefuzz.families.base import FamilyParams
from shapefuzz.families.matmul.params import Params, a_shape, b_shape, bias_shape, zero_points
from shapefuzz.families.stablehlo_ir import HV, DimSource, HloBuilder, boundary_values
from shapefuzz.families.torch_forms import Spelling
from shapefuzz.families.torch_ir import Boundary


def _normalize(p: FamilyParams) -> FamilyParams:
    assert isinstance(p, Params)
    return p.replace(form="generic")


def _axes(p: Params, operand: str, rank: int) -> tuple[list[int], int, int | None]:
    """(batch axes, contracting axis, free axis or None for a vector) of a stored operand."""
    nb = len(p.batch)
    unbatched, vector, trans = ("a", p.vec == "vecmat", p.trans_a) if operand == "a" else ("b", p.vec == "matvec", p.trans_b)
    batch = [] if p.bcast == unbatched else list(range(nb))
    if vector:
        return batch, rank - 1, None
    # A is [.., M, K] ([.., K, M] transposed); B is [.., K, N] ([.., N, K] transposed)
    k_last = (operand == "a") != trans
    return batch, (rank - 1 if k_last else rank - 2), (rank - 2 if k_last else rank - 1)


def _widened(b: HloBuilder, p: Params, x: HV, name: str) -> HV:
    """A stored i8 operand as i32 minus its zero points (a u8 one read unsigned first)."""
    unsigned = p.a_unsigned if name == "a" else p.b_unsigned
    if unsigned:
        x = b.bitcast(x, "ui8", "u8")
    x = b.convert(x, "i32", "wide")
    zps = zero_points(p, name)
    per = p.a_zp_per if name == "a" else p.b_zp_per
    if per == "tensor":
        return b.binary("subtract", x, b.splat(zps[0], x), "shifted") if zps[0] else x
    trans = p.trans_a if name == "a" else p.trans_b
    axis = (1 if trans else 0) if name == "a" else (0 if trans else 1)
    vector = b.dense(zps, "i32", [len(zps)])
    spread = b.broadcast(vector, [(x, i) for i in range(x.rank)], [axis], "zps")
    return b.binary("subtract", x, spread, "shifted")


def _build(p: FamilyParams, bnd: Boundary) -> str:
    assert isinstance(p, Params)
    b = HloBuilder()
    shapes = [a_shape(p), b_shape(p)] + ([bias_shape(p)] if p.bias != "none" else [])
    args = boundary_values(bnd, shapes, ["%a", "%b", "%bias"][: len(shapes)])
    x, w = args[0], args[1]
    shifted = p.quantized and (p.a_unsigned or p.b_unsigned or zero_points(p, "a") != [0] or zero_points(p, "b") != [0])
    if p.dtype == "bf16":
        x, w = b.convert(x, "bf16", "bf"), b.convert(w, "bf16", "bf")
    elif shifted:
        x, w = _widened(b, p, x, "a"), _widened(b, p, w, "b")
    out_elt = "i32" if p.quantized else p.out
    a_batch, a_k, a_free = _axes(p, "a", x.rank)
    b_batch, b_k, b_free = _axes(p, "b", w.rank)
    dims: list[tuple[int, bool]] = []
    batched = bool(a_batch) and bool(b_batch)
    if batched:
        dims += [(s, da and db) for (s, da), (_, db) in zip([x.dims[i] for i in a_batch], [w.dims[i] for i in b_batch])]
    else:
        dims += [x.dims[i] for i in a_batch]
    if a_free is not None:
        dims.append(x.dims[a_free])
    if not batched:
        dims += [w.dims[i] for i in b_batch]
    if b_free is not None:
        dims.append(w.dims[b_free])
    y = b.value("dot", dims, out_elt)
    spec = (f"batching_dims = [{', '.join(map(str, a_batch))}] x [{', '.join(map(str, b_batch))}], " if batched else "")
    b.line(f"{y.name} = stablehlo.dot_general {x.name}, {w.name}, {spec}contracting_dims = [{a_k}] x [{b_k}], "
           f"precision = [DEFAULT, DEFAULT] : ({x.type}, {w.type}) -> {y.type}")
    if p.bcast == "a" and a_free is not None:  # [M, batch.., N] -> [batch.., M, N]
        nb = len(p.batch)
        y = b.transpose(y, list(range(1, nb + 1)) + [0] + ([nb + 1] if b_free is not None else []), "moved")
    if p.alpha != 1.0:
        y = b.binary("multiply", y, b.splat(p.alpha, y), "scaled")
    if p.bias != "none":
        # the bias rounded to the operands' type (a bf16 one arrives as f32), then to the product's
        c = b.convert(b.convert(args[2], "bf16", "bf") if p.dtype == "bf16" else args[2], y.elt, "wide")
        if p.bias == "row":  # [N] along the rows of the [M, N] product
            parts: list[DimSource] = [(y, i) for i in range(y.rank)]
            c = b.broadcast(c, parts, [1], "bias")
        if p.beta != 1.0:
            c = b.binary("multiply", c, b.splat(p.beta, c), "beta")
        y = b.binary("add", y, c, "gemm")
    shape, elt = bnd.results[0]
    return b.render(args, [b.bridge(b.convert(y, elt, "res"), shape)])


SPELLING = Spelling("matmul", "stablehlo", lambda p: True, _normalize, _build)
