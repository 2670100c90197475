"""The scatter family's root-operand forms (families/operands.py): the original (the op's init) as
a dense non-splat constant ("const": the plain case's original at seed 0), the indices computed
inside the graph ("folded": an iota-like linalg.generic of linalg.index), or the one index of a
depth-1 scatter without batch dims as a 0-d tensor ("scalar").

The folded indices address flat coordinate (s * b + 1) mod N of the indexed dims (row-major, N of
them; b the batch position's linear index, halved where the case repeats coordinates, so
positions 2i and 2i+1 share one; s the smallest odd number from 3 up prime to N, so no other
coordinate repeats), column j holding the coordinate of dim dimension_map[j]."""

from __future__ import annotations

from shapefuzz.families.operands import fits_constant
from shapefuzz.families.scatter.params import Params, n_coords
from shapefuzz.families.scatter.reference import strides as _strides
from shapefuzz.families.scatter.reference import step


def operand_forms(p: Params) -> tuple[str, ...]:
    forms = ["const"] if fits_constant(p.orig_shape) else []
    forms.append("folded")
    if not p.batch_shape and p.depth == 1 and not p.implicit_depth:
        forms.append("scalar")
    return tuple(forms)


def iota_lines(p: Params, name: str, static: str, index_elt: str) -> list[str]:
    """`name` = iota_indices(p) computed by a linalg.generic over the static index shape."""
    k, d = len(p.batch_shape), p.depth
    rank = k + (0 if p.implicit_depth else 1)
    loops = ", ".join(f"d{i}" for i in range(rank))
    lines = [f"{name}_e = tensor.empty() : {static}",
             f"{name} = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>], iterator_types = ["
             + ", ".join(['"parallel"'] * rank) + f"]}} outs({name}_e : {static}) {{",
             f"^bb0(%o: {index_elt}):", "  %lin0 = arith.constant 0 : index"]
    for i, stride in enumerate(_strides(p.batch_shape)):
        lines += [f"  %b{i} = linalg.index {i} : index", f"  %bs{i} = arith.constant {stride} : index",
                  f"  %bt{i} = arith.muli %b{i}, %bs{i} : index", f"  %lin{i + 1} = arith.addi %lin{i}, %bt{i} : index"]
    lin = f"%lin{k}"
    if p.duplicates:
        lines += ["  %two = arith.constant 2 : index", f"  %pair = arith.divui {lin}, %two : index"]
        lin = "%pair"
    indexed = list(p.orig_shape[:d])
    strides = _strides(indexed)
    lines += [f"  %step = arith.constant {step(p)} : index", "  %one = arith.constant 1 : index",
              f"  %ncoords = arith.constant {n_coords(p)} : index", f"  %sl = arith.muli {lin}, %step : index",
              "  %sl1 = arith.addi %sl, %one : index", "  %flat = arith.remui %sl1, %ncoords : index",
              f"  %j = {f'linalg.index {k} : index' if not p.implicit_depth else 'arith.constant 0 : index'}",
              f"  %st0 = arith.constant {strides[p.dimension_map[0]]} : index",
              f"  %sz0 = arith.constant {indexed[p.dimension_map[0]]} : index"]
    for j in range(1, d):  # column j's stride and size, where the column is j
        q = p.dimension_map[j]
        lines += [f"  %cj{j} = arith.constant {j} : index", f"  %isj{j} = arith.cmpi eq, %j, %cj{j} : index",
                  f"  %stc{j} = arith.constant {strides[q]} : index", f"  %szc{j} = arith.constant {indexed[q]} : index",
                  f"  %st{j} = arith.select %isj{j}, %stc{j}, %st{j - 1} : index",
                  f"  %sz{j} = arith.select %isj{j}, %szc{j}, %sz{j - 1} : index"]
    lines += [f"  %q = arith.divui %flat, %st{d - 1} : index", f"  %c = arith.remui %q, %sz{d - 1} : index",
              f"  %ci = arith.index_cast %c : index to {index_elt}", f"  linalg.yield %ci : {index_elt}", f"}} -> {static}"]
    return lines
