"""The one_hot family's MLIR: a linalg.generic comparing an iota with the indices, or a scatter into a filled tensor."""

from __future__ import annotations

from shapefuzz.families.common import FLOAT_DTYPES, Dim, literal, tensor_type
from shapefuzz.families.one_hot.params import Params, arguments, out_axis
from shapefuzz.templates import render_template


def render(p: Params) -> str:
    elt, ielt = p.dtype, p.index_dtype
    r, a = len(p.index_shape), out_axis(p)
    is_float = elt in FLOAT_DTYPES
    idx_dims = [Dim(s, d, f"%id{i}" if d else None) for i, (s, d) in enumerate(zip(p.index_shape, p.index_dyn))]
    idx_ty = tensor_type(idx_dims, ielt)
    dim_ops = [(d.ssa, "%indices", i, idx_ty) for i, d in enumerate(idx_dims) if d.dyn]
    depth_dim = Dim(p.depth, p.depth_dyn, "%depth")
    out_dims = list(idx_dims)
    out_dims.insert(a, depth_dim)
    out_ty = tensor_type(out_dims, elt)
    big_dims = list(idx_dims)
    big_dims.insert(a, Dim(p.depth + 1, p.depth_dyn, "%depth_p1"))
    loops = [f"d{i}" for i in range(r + 1)]
    head = "(" + ", ".join(loops) + ")"
    idx_loops = loops[:a] + loops[a + 1 :]  # the output's loops other than the class axis
    results = []
    if p.consumer in ("none", "both"):
        results.append(("%onehot", out_ty))
    red_ty = tensor_type(idx_dims, elt)
    if p.consumer in ("reduce", "both"):
        results.append(("%reduced", red_ty))
    # Column j of the scatter's coordinates addresses output dim dimension_map[j]: the class for
    # the class axis (None), else the position along the matching index dim.
    columns = []
    for j, q in enumerate(p.dimension_map):
        columns.append((j, None if q == a else (q if q < a else q - 1)))
    ctx = {
        "form": p.form,
        "args": arguments(p),
        "results": results,
        "elt": elt,
        "ielt": ielt,
        "is_float": is_float,
        "nconsts": max(r + 1, 2),
        "depth": p.depth,
        "depth_dyn": p.depth_dyn,
        "values_input": p.values == "input",
        "on": literal(p.on, elt),
        "off": literal(p.off, elt),
        "zero": literal(0, elt),
        "dim_ops": dim_ops,
        "axis": a,
        "rank": r,
        "idx_ty": idx_ty,
        "out_ty": out_ty,
        "out_dyn_sizes": [d.ssa for d in out_dims if d.dyn],
        "idx_map": f"affine_map<{head} -> ({', '.join(idx_loops)})>",
        "out_map": f"affine_map<{head} -> ({', '.join(loops)})>",
        "out_iters": ['"parallel"'] * (r + 1),
        "big_ty": tensor_type(big_dims, elt),
        "big_dyn_sizes": [d.ssa for d in big_dims if d.dyn],
        "idx_dyn_sizes": [d.ssa for d in idx_dims if d.dyn],
        "coord_ty": tensor_type(idx_dims + [Dim(r + 1, False)], ielt),
        "coord_in_map": f"affine_map<{head} -> ({', '.join(loops[:r])})>",
        "coord_out_map": f"affine_map<{head} -> ({', '.join(loops)})>",
        "coord_iters": ['"parallel"'] * (r + 1),
        "columns": columns,
        "upd_ty": tensor_type(idx_dims, elt),
        "dim_map": p.dimension_map,
        "slice_offsets": ["0"] * (r + 1),
        "slice_sizes": [d.ssa if d.dyn else str(d.size) for d in out_dims],
        "slice_strides": ["1"] * (r + 1),
        "consumer": p.consumer,
        "red_ty": red_ty,
        "red_map": f"affine_map<{head} -> ({', '.join(idx_loops)})>",
        "red_iters": ['"reduction"' if i == a else '"parallel"' for i in range(r + 1)],
    }
    return render_template("one_hot.mlir.j2", **ctx)
