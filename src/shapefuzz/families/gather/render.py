"""The gather family's MLIR."""

from __future__ import annotations

from shapefuzz.families.common import identity_map, tensor_type
from shapefuzz.families.gather.operands import iota_lines
from shapefuzz.families.gather.reference import constant_indices
from shapefuzz.families.operands import constant_lines, static_type
from shapefuzz.families.gather.params import (
    Params, arg_index_dyn, arg_index_shape, out_dyn, out_shape, used_index_shape)
from shapefuzz.templates import render_template


def render(p: Params) -> str:
    elt, ie = p.dtype, p.index_dtype
    nb = len(p.batch_shape)
    lines: list[str] = []
    consts: set[int] = set()

    def c(v: int) -> str:
        if v not in consts:
            consts.add(v)
            lines.append(f"%c{v} = arith.constant {v} : index")
        return f"%c{v}"

    src_type = tensor_type(p.src_shape, elt, p.src_dyn)
    arg_shape, arg_dyn = arg_index_shape(p), arg_index_dyn(p)
    # (a "scalar" case's argument is 0-d: the op takes it expanded to [1])
    arg_type = tensor_type(arg_shape, ie, arg_dyn) if p.operand != "scalar" else f"tensor<{ie}>"
    used = used_index_shape(p)
    used_dyn = list(p.batch_dyn) + ([] if p.implicit_depth else [False])
    idx_type = tensor_type(used, ie, used_dyn)
    # A root-operand form's indices, first (every size read from them is then defined): the
    # argument's values as a constant, or an iota-like generic (plain layout: the argument is used as it is).
    if p.operand == "const":
        lines += constant_lines("%indices_arg", constant_indices(p), ie, arg_type)
    elif p.operand == "folded":
        static = static_type(used, ie)
        lines += iota_lines(p, "%indices_arg" if static == idx_type else "%indices_iota", static, ie)
        if static != idx_type:
            lines.append(f"%indices_arg = tensor.cast %indices_iota : {static} to {idx_type}")
    # Sizes of the used indices' dynamic dims, from the argument.
    batch_size: dict[int, str] = {}
    for k in range(nb):
        if not p.batch_dyn[k]:
            continue
        pos = k + 1 if p.index_layout == "transposed" else k
        lines.append(f"%arg_d{pos} = tensor.dim %indices_arg, {c(pos)} : {arg_type}")
        name = f"%arg_d{pos}"
        if p.index_layout == "strided" and k == 0:
            lines.append(f"%rows = affine.apply affine_map<()[s0] -> ((s0 + 1) floordiv 2)>()[{name}]")
            name = "%rows"
        batch_size[k] = name
    window_size: dict[int, str] = {}
    for q in range(p.depth, len(p.src_shape)):
        if p.src_dyn[q]:
            lines.append(f"%src_d{q} = tensor.dim %source, {c(q)} : {src_type}")
            window_size[q] = f"%src_d{q}"
    out_sizes = [batch_size[k] for k in range(nb) if p.batch_dyn[k]] + [window_size[q] for q in sorted(window_size)]
    idx_sizes = [batch_size[k] for k in range(nb) if p.batch_dyn[k]]
    o_shape, o_dyn = out_shape(p), out_dyn(p)
    out_type = tensor_type(o_shape, elt, o_dyn)
    indices = "%indices" if p.index_layout != "plain" or p.operand == "scalar" else "%indices_arg"
    slice_sizes = [batch_size[k] if p.batch_dyn[k] else str(p.batch_shape[k]) for k in range(nb)]
    slice_sizes += [] if p.implicit_depth else [str(p.depth)]
    body: list[str] = []
    if p.form == "extract":
        out_rank = len(o_shape)
        for k in range(out_rank):
            body.append(f"%i{k} = linalg.index {k} : index")
        coords = {}
        for j, q in enumerate(p.dimension_map):
            where = [f"%i{k}" for k in range(nb)] + ([] if p.implicit_depth else [c(j)])
            if p.operand == "scalar":  # the 0-d argument read as it is
                body.append(f"%x{j} = tensor.extract %indices_arg[] : {arg_type}")
            else:
                body.append(f"%x{j} = tensor.extract {indices}[{', '.join(where)}] : {idx_type}")
            body.append(f"%y{j} = arith.index_cast %x{j} : {ie} to index")
            coords[q] = f"%y{j}"
        src_where = [coords[q] for q in range(p.depth)] + [f"%i{nb + w}" for w in range(len(p.src_shape) - p.depth)]
        body.append(f"%v = tensor.extract %source[{', '.join(src_where)}] : {src_type}")
    rank_used = len(used)
    return render_template(
        "gather.mlir.j2", src_type=src_type, arg_type=arg_type, out_type=out_type, idx_type=idx_type, elt=elt,
        index_lines=lines, index_layout=p.index_layout, idx_sizes=idx_sizes,
        idx_perm=list(range(1, rank_used)) + [0],
        slice_offsets=["0"] * rank_used, slice_sizes=slice_sizes, slice_strides=["2"] + ["1"] * (rank_used - 1),
        out_sizes=out_sizes, form=p.form, dimension_map=list(p.dimension_map), indices=indices,
        out_map=identity_map(len(o_shape)) if o_shape else "affine_map<() -> ()>",
        iterators=", ".join(['"parallel"'] * len(o_shape)), body_lines=body,
        indices_arg=p.operand not in ("const", "folded"), scalar=p.operand == "scalar",
    )
