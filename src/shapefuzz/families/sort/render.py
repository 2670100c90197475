"""The sort family's MLIR. The topk form takes only i32 indices: i64 labels are truncated in and
the result extended out, as a frontend lowering does."""

from __future__ import annotations

from shapefuzz.families.common import is_float, tensor_type
from shapefuzz.families.sort.params import Params
from shapefuzz.templates import render_template

# topk merges into its outs: fill them with a value every input beats (descending) or loses to.
_FILL = {("f32", True): "0xFF800000", ("f32", False): "0x7F800000", ("f16", True): "0xFC00", ("f16", False): "0x7C00",
         ("i32", True): "-2147483648", ("i32", False): "2147483647", ("i8", True): "-128", ("i8", False): "127"}


def perm(p: Params) -> list[int]:
    if not p.transpose:
        return list(range(p.rank))
    return [i for i in range(p.rank) if i != p.dim] + [p.dim]


def render(p: Params) -> str:
    rank, elt, dim = p.rank, p.dtype, p.dim
    pm = perm(p)
    inv = [pm.index(i) for i in range(rank)]
    dyn = list(p.in_dyn)
    names = {i: f"%d{i}" for i in range(rank) if dyn[i]}
    idx_elt = "i32" if p.form == "topk" else p.index_dtype
    in_type = tensor_type(p.shape, elt, dyn)
    labels_type = tensor_type(p.shape, p.index_dtype, dyn)
    labels_op_type = tensor_type(p.shape, idx_elt, dyn)
    work_shape, work_dynf = [p.shape[i] for i in pm], [dyn[i] for i in pm]
    work_dyn = [names[i] for i in pm if dyn[i]]
    work_type = tensor_type(work_shape, elt, work_dynf)
    work_idx_type = tensor_type(work_shape, idx_elt, work_dynf)
    work_idx_res_type = tensor_type(work_shape, p.index_dtype, work_dynf)
    trunc = p.payload == "arg" and idx_elt != p.index_dtype
    labels = "%labels_op" if trunc else "%labels"
    work_val = "%work" if p.transpose else "%input"
    work_idx = labels if p.payload == "arg" and not p.transpose else "%work_idx"
    two = p.form == "topk" or p.payload != "none"
    sorted_val = "%sorted#0" if two else "%sorted"
    sorted_idx_op = "%sorted#1"
    extend = idx_elt != p.index_dtype and p.use != "values"
    sorted_idx = "%sorted_idx" if extend else sorted_idx_op
    res_val_type, res_idx_type = in_type, tensor_type(p.shape, p.index_dtype, dyn)
    results = []
    if p.use in ("values", "both"):
        results.append({"name": "%res_val" if p.transpose else sorted_val, "type": res_val_type})
    if p.use in ("indices", "both"):
        results.append({"name": "%res_idx" if p.transpose else sorted_idx, "type": res_idx_type})
    args = [{"name": "%input", "type": in_type}]
    if p.payload == "arg":
        args.append({"name": "%labels", "type": labels_type})
    flt = is_float(elt)
    return render_template(
        "sort.mlir.j2", args=args, results=results, in_type=in_type,
        in_dyn=[{"index": i, "name": names[i]} for i in range(rank) if dyn[i]],
        trunc_labels=trunc, labels=labels, labels_type=labels_type, labels_op_type=labels_op_type,
        transpose=p.transpose, perm=pm, inv_perm=inv, rank=rank, core_dim=pm.index(dim),
        work_type=work_type, work_idx_type=work_idx_type, work_idx_res_type=work_idx_res_type, work_dyn=work_dyn,
        work_val=work_val, work_idx=work_idx, payload=p.payload, form=p.form, use=p.use, stable=p.stable,
        elt=elt, idx_elt=idx_elt, fill_literal=_FILL[(elt, p.descending)],
        cmp_op="arith.cmpf" if flt else "arith.cmpi",
        pred=("ogt" if p.descending else "olt") if flt else ("sgt" if p.descending else "slt"),
        eq_pred="oeq" if flt else "eq",
        sorted_val=sorted_val, sorted_idx=sorted_idx, sorted_idx_op=sorted_idx_op, extend_idx=extend,
        res_val_type=res_val_type, res_idx_type=res_idx_type, res_dyn=[names[i] for i in range(rank) if dyn[i]],
    )
