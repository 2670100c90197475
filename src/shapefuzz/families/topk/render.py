"""The topk family's MLIR: iree_linalg_ext.topk (its padded init, an iota or argument of indices) or a sort and slice."""

from __future__ import annotations

from collections.abc import Sequence

from shapefuzz.families.common import is_float, tensor_type
from shapefuzz.families.topk.params import Params, derived_output_dynamic, output_shape
from shapefuzz.templates import render_template


# The value the topk outs are filled with: below (largest) / above (smallest) every input.
_PAD_LITERAL = {
    ("f32", True): "0xFF800000",
    ("f32", False): "0x7F800000",
    ("f16", True): "0xFC00",
    ("f16", False): "0x7C00",
    ("i32", True): "-2147483648",
    ("i32", False): "2147483647",
    ("i8", True): "-128",
    ("i8", False): "127",
}


# ----------------------------------------------------------------------------- shapes / types


def _ttype(shape: Sequence[int], dynamic: Sequence[bool], elt: str) -> str:
    return tensor_type(shape, elt, dynamic)


def _output_dynamic(params: Params) -> list[bool]:
    """The results' dynamic dims as declared: `result_dyn` when given, else derived."""
    return list(params.result_dyn) if params.result_dyn else derived_output_dynamic(params)


def _perm(params: Params) -> list[int]:
    """Permutation taking the input to the work layout (sorted dim last when transposed)."""
    rank, dim = len(params.shape), params.dim
    if not params.transpose:
        return list(range(rank))
    return [i for i in range(rank) if i != dim] + [dim]


# ----------------------------------------------------------------------------- render


def render(params: Params) -> str:
    shape, dynamic, dim, k = params.shape, params.input_dyn, params.dim, params.k
    dtype, form, indices, use = params.dtype, params.form, params.indices, params.use
    rank = len(shape)
    transpose = bool(params.transpose)
    perm = _perm(params)
    inv_perm = [perm.index(i) for i in range(rank)]
    declared = _output_dynamic(params)
    # An SSA size for every dim some value declares `?` (a tensor.dim of a static input dim
    # too, where the result is declared `?` although the input fixes it).
    dyn_name = {i: f"%d{i}" for i in range(rank) if dynamic[i] or declared[i]}

    # iree_linalg_ext.topk takes only i32 indices: with i64 ones (torch, ONNX) the topk form
    # truncates the given labels and sign-extends the result, as a frontend lowering does.
    idx_elt = params.index_dtype
    op_idx_elt = "i32" if form == "topk" else idx_elt
    in_type = _ttype(shape, dynamic, dtype)
    in_idx_type = _ttype(shape, dynamic, idx_elt)
    work_shape = [shape[i] for i in perm]
    work_dynamic = [dynamic[i] for i in perm]
    work_dyn = [dyn_name[i] for i in perm if dynamic[i]]
    core_dim = perm.index(dim)
    out_shape_work = list(work_shape)
    out_shape_work[core_dim] = k
    out_dynamic_work = [declared[i] for i in perm]
    out_dyn = [dyn_name[i] for i in perm if declared[i]]
    out_sizes = [
        str(k) if i == dim else (dyn_name[i] if declared[i] else str(shape[i])) for i in perm
    ]
    res_dyn = [dyn_name[i] for i in range(rank) if declared[i]]
    res_shape, res_dynamic = output_shape(params), _output_dynamic(params)

    sort_payload = form == "sort" and (indices != "implicit" or use != "values")
    make_iota = indices == "iota" or (form == "sort" and indices == "implicit" and sort_payload)
    work_val = "%work" if transpose else "%input"
    arg_idx = "%input_idx_op" if op_idx_elt != idx_elt else "%input_idx"
    work_idx = arg_idx if indices == "arg" and not transpose else "%work_idx"
    if form == "topk":
        top_val, top_idx_op = "%top#0", "%top#1"
    else:
        top_val, top_idx_op = "%top_val", "%top_idx"
    extend_idx = op_idx_elt != idx_elt and use != "values"
    top_idx = "%top_idx_ext" if extend_idx else top_idx_op

    res_val_type = _ttype(res_shape, res_dynamic, dtype)
    res_idx_type = _ttype(res_shape, res_dynamic, params.index_dtype)
    results = []
    if use in ("values", "both"):
        results.append({"name": "%res_val" if transpose else top_val, "type": res_val_type})
    if use in ("indices", "both"):
        results.append({"name": "%res_idx" if transpose else top_idx, "type": res_idx_type})

    args = [{"name": "%input", "type": in_type}]
    if indices == "arg":
        args.append({"name": "%input_idx", "type": in_idx_type})

    largest = bool(params.largest)
    return render_template(
        "topk.mlir.j2",
        args=args,
        results=results,
        in_dyn=[{"index": i, "name": dyn_name[i]} for i in range(rank) if i in dyn_name],
        in_type=in_type,
        in_idx_type=in_idx_type,
        transpose=transpose,
        perm=perm,
        inv_perm=inv_perm,
        rank=rank,
        work_type=_ttype(work_shape, work_dynamic, dtype),
        work_idx_type=_ttype(work_shape, work_dynamic, op_idx_elt),
        work_dyn=work_dyn,
        work_val=work_val,
        work_idx=work_idx,
        core_dim=core_dim,
        out_val_type=_ttype(out_shape_work, out_dynamic_work, dtype),
        out_idx_type=_ttype(out_shape_work, out_dynamic_work, op_idx_elt),
        out_idx_res_type=_ttype(out_shape_work, out_dynamic_work, idx_elt),
        in_idx_op_type=_ttype(shape, dynamic, op_idx_elt),
        arg_idx=arg_idx,
        trunc_idx=indices == "arg" and op_idx_elt != idx_elt,
        extend_idx=extend_idx,
        top_idx_op=top_idx_op,
        out_dyn=out_dyn,
        out_sizes=out_sizes,
        res_val_type=res_val_type,
        res_idx_type=res_idx_type,
        res_dyn=res_dyn,
        top_val=top_val,
        top_idx=top_idx,
        form=form,
        indices=indices,
        use=use,
        sort_payload=sort_payload,
        make_iota=make_iota,
        elt=dtype,
        cmp_op="arith.cmpf" if is_float(dtype) else "arith.cmpi",
        pred=("ogt" if largest else "olt") if is_float(dtype) else ("sgt" if largest else "slt"),
        pad_literal=_PAD_LITERAL[(dtype, largest)],
        idx_elt=op_idx_elt,
    )
