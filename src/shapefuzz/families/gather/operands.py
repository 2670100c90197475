"""The gather family's root-operand forms (families/operands.py): the indices as a dense non-splat
constant ("const": the indices argument the plain case gets at seed 0, transposed or strided as
its layout says), computed inside the graph ("folded": an iota-like linalg.generic of
linalg.index, idx[b.., j] = (5 * b + 3 * j + 1) mod the size of the dim column j addresses, b the
batch position's linear index), or the one index of a depth-1 gather without batch dims as a 0-d
tensor ("scalar"). A constant or folded case takes the source alone."""

from __future__ import annotations

from shapefuzz.families.gather.params import Params, arg_index_shape, used_index_shape
from shapefuzz.families.gather.reference import batch_strides
from shapefuzz.families.operands import fits_constant


def operand_forms(p: Params) -> tuple[str, ...]:
    if p.big:
        return ()
    forms = ["const"] if fits_constant(arg_index_shape(p)) else []
    if p.index_layout == "plain" and fits_constant(used_index_shape(p)):
        forms.append("folded")
    if not p.batch_shape and p.depth == 1 and not p.implicit_depth and p.index_layout == "plain":
        forms.append("scalar")
    return tuple(forms)


def iota_lines(p: Params, name: str, static: str, index_elt: str) -> list[str]:
    """`name` = iota_indices(p) computed by a linalg.generic over the static index shape."""
    nb, rank = len(p.batch_shape), len(used_index_shape(p))
    loops = ", ".join(f"d{i}" for i in range(rank))
    lines = [f"{name}_e = tensor.empty() : {static}",
             f"{name} = linalg.generic {{indexing_maps = [affine_map<({loops}) -> ({loops})>], iterator_types = ["
             + ", ".join(['"parallel"'] * rank) + f"]}} outs({name}_e : {static}) {{",
             f"^bb0(%o: {index_elt}):", "  %lin0 = arith.constant 0 : index"]
    for k, stride in enumerate(batch_strides(p)):
        lines += [f"  %b{k} = linalg.index {k} : index", f"  %s{k} = arith.constant {stride} : index",
                  f"  %t{k} = arith.muli %b{k}, %s{k} : index", f"  %lin{k + 1} = arith.addi %lin{k}, %t{k} : index"]
    column = f"linalg.index {nb} : index" if not p.implicit_depth else "arith.constant 0 : index"
    sizes = [p.src_shape[q] for q in p.dimension_map]
    lines += [f"  %j = {column}", "  %five = arith.constant 5 : index", "  %three = arith.constant 3 : index",
              "  %one = arith.constant 1 : index", f"  %v0 = arith.muli %lin{nb}, %five : index",
              "  %j3 = arith.muli %j, %three : index", "  %v1 = arith.addi %v0, %j3 : index",
              "  %v = arith.addi %v1, %one : index", f"  %n0 = arith.constant {sizes[0]} : index"]
    if len(sizes) == 2:  # the dim column 1 addresses, where j is 1
        lines += [f"  %n1c = arith.constant {sizes[1]} : index", "  %is1 = arith.cmpi eq, %j, %one : index",
                  "  %n1 = arith.select %is1, %n1c, %n0 : index"]
    n = "%n1" if len(sizes) == 2 else "%n0"
    lines += [f"  %r = arith.remui %v, {n} : index", f"  %ri = arith.index_cast %r : index to {index_elt}",
              f"  linalg.yield %ri : {index_elt}", f"}} -> {static}"]
    return lines
