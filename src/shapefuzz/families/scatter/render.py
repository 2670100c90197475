"""The scatter family's MLIR: the linalg_ext scatter, its reshaped form or the equivalent linalg.generic."""

from __future__ import annotations

from typing import Any

from shapefuzz.families.common import FLOAT_DTYPES, Dim, Reshape, collapse_step, expand_step, split_step, tensor_type
from shapefuzz.families.operands import constant_lines, static_type
from shapefuzz.families.scatter.operands import iota_lines
from shapefuzz.families.scatter.reference import constant_original
from shapefuzz.families.scatter.params import Params, shape_table
from shapefuzz.templates import render_template


# ----------------------------------------------------------------------------- render


def render(p: Params) -> str:
    shapes = shape_table(p)
    elt, ielt = p.dtype, p.index_dtype
    r, d, k = len(p.orig_shape), p.depth, len(p.batch_shape)
    w = r - d
    dim_ops: list[tuple[str, str, int, str]] = []

    def dims_of(arg: str, prefix: str, shape: list[tuple[int, bool]], ty: str) -> list[Dim]:
        out = []
        for i, (size, dyn) in enumerate(shape):
            ssa = f"%{prefix}{i}" if dyn else None
            if ssa is not None:
                dim_ops.append((ssa, arg, i, ty))
            out.append(Dim(size, dyn, ssa))
        return out

    orig_ty = tensor_type(shapes["original"], elt)
    idx_ty = tensor_type(shapes["indices"], ielt)
    upd_ty = tensor_type(shapes["updates"], elt)
    ctx: dict[str, Any] = {
        "form": p.form,
        "orig_ty": orig_ty,
        "idx_ty": idx_ty,
        "upd_ty": upd_ty,
        "elt": elt,
        "idx_elt": ielt,
        "is_float": elt in FLOAT_DTYPES,
        "dim_map": p.dimension_map,
        "unique": p.unique,
        "combiner": p.combiner,
        "implicit_depth": p.implicit_depth,
        "nconsts": max(r, k + w, k + 1, d),
    }
    if p.form == "reshape":
        od = dims_of("%original", "od", shapes["original"], orig_ty)
        ud = dims_of("%updates", "ud", shapes["updates"], upd_ty)
        pre, post = [], []
        # Updates: [batch..., window...]. Expand first (unit dims only, so every dynamic size is an
        # argument's dim), then collapse: each a pure step. Batch rank 0/1 gains a unit batch dim,
        # 2 collapses to one; window rank 0/1 gains a unit dim, 2+ collapses to one.
        kb = k + 1 if k < 2 else k

        def two_steps(name: str, src: str, dims: list[Dim], with_window: bool, elem: str) -> tuple[str, list[Dim]]:
            target: list[Any] = list(range(k)) + ([Dim(1, False)] if k < 2 else [])
            if with_window:
                target += [k + i for i in range(w)] + ([Dim(1, False)] if w <= 1 else [])
            else:
                target += [k + i for i in range(len(dims) - k)]  # the depth column, if any
            step, dims2 = expand_step(f"%{name}_e", src, dims, target, elem)
            cur = src
            if step:
                pre.append(step)
                cur = f"%{name}_e"
            groups = [[0, 1]] if k == 2 else [[i] for i in range(kb)]
            rest = list(range(kb, len(dims2)))
            groups += [rest] if with_window and w >= 2 else [[i] for i in rest]
            step, dims3 = collapse_step(f"%{name}_c", cur, dims2, groups, elem)
            if step:
                pre.append(step)
                cur = f"%{name}_c"
            return cur, dims3

        r_upd, ud3 = two_steps("upd", "%updates", ud, True, elt)
        r_upd_ty = tensor_type(ud3, elt)
        idx_dims = dims_of("%indices", "id", shapes["indices"], idx_ty)
        r_idx, id3 = two_steps("idx", "%indices", idx_dims, False, ielt)
        r_idx_ty = tensor_type(id3, ielt)
        # Original: [indexed..., window...]: window collapsed to one dim, or a unit dim appended.
        if w >= 2:
            step, o2 = collapse_step("%orig_r", "%original", od, [[i] for i in range(d)] + [list(range(d, r))], elt)
            back: Reshape | None = split_step("%result", "%scattered", o2, [[x] for x in od[:d]] + [od[d:]], elt)
        else:
            step, o2 = expand_step("%orig_r", "%original", od, list(range(r)) + [Dim(1, False)], elt)
            back, _ = collapse_step("%result", "%scattered", o2, [[i] for i in range(r - 1)] + [[r - 1, r]], elt)
        assert step is not None and back is not None
        pre.append(step)
        post.append(back)
        ctx.update(pre_steps=pre, post_steps=post, r_upd=r_upd, r_upd_ty=r_upd_ty, r_idx=r_idx,
                   r_idx_ty=r_idx_ty, r_orig="%orig_r", r_orig_ty=tensor_type(o2, elt))
    elif p.form == "generic":
        loops = [f"o{i}" for i in range(r)] + [f"b{i}" for i in range(k)]
        head = "(" + ", ".join(loops) + ")"
        upd_res = [f"b{i}" for i in range(k)] + [f"o{d + i}" for i in range(w)]
        ctx.update(
            upd_map=f"affine_map<{head} -> ({', '.join(upd_res)})>",
            out_map=f"affine_map<{head} -> ({', '.join(loops[:r])})>",
            iterators=['"parallel"'] * r + ['"reduction"'] * k,
            batch_loops=[r + i for i in range(k)],
            columns=[(j, p.dimension_map[j]) for j in range(d)],
            extract_prefix=", ".join(f"%g_b{i}" for i in range(k)),
        )
    ctx["dim_ops"] = dim_ops
    ctx.update(_operand_form(p, orig_ty, idx_ty, upd_ty))
    return render_template("scatter.mlir.j2", **ctx)


def _operand_form(p: Params, orig_ty: str, idx_ty: str, upd_ty: str) -> dict[str, Any]:
    """The function's arguments, and the lines that make a root-operand form's operand first (every
    size read from it is then defined): the original as a constant, the indices as an iota-like
    generic, or the 0-d index argument expanded to the [1] the op takes."""
    args = [("%original", orig_ty), ("%indices", idx_ty), ("%updates", upd_ty)]
    pre: list[str] = []
    if p.operand == "const":
        pre = constant_lines("%original", constant_original(p), p.dtype, orig_ty)
        del args[0]
    elif p.operand == "folded":
        static = static_type([n for n, _ in shape_table(p)["indices"]], p.index_dtype)
        pre = iota_lines(p, "%indices" if static == idx_ty else "%indices_iota", static, p.index_dtype)
        if static != idx_ty:
            pre.append(f"%indices = tensor.cast %indices_iota : {static} to {idx_ty}")
        del args[1]
    elif p.operand == "scalar":
        args[1] = ("%indices_arg", f"tensor<{p.index_dtype}>")
        pre = [f"%indices = tensor.expand_shape %indices_arg [] output_shape [1] : tensor<{p.index_dtype}> into {idx_ty}"]
    return {"args": args, "pre": pre}
