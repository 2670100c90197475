"""The attention family's MLIR."""

from __future__ import annotations

from shapefuzz.families.attention.params import Params, k_shape, mask_shape, out_shape, q_shape, v_shape
from shapefuzz.families.common import tensor_type
from shapefuzz.templates import render_template


def _map(n: int, dims: list[int]) -> str:
    loops = ", ".join(f"d{i}" for i in range(n))
    return f"affine_map<({loops}) -> ({', '.join(f'd{i}' for i in dims)})>"


def render(p: Params) -> str:
    elt, nb = p.dtype, len(p.batch)
    bdyn = list(p.batch_dyn)
    q_t = tensor_type(q_shape(p), elt, bdyn + [p.m_dyn, False])
    k_t = tensor_type(k_shape(p), elt, bdyn + [p.k2_dyn, False])
    v_t = tensor_type(v_shape(p), elt, bdyn + [p.k2_dyn, False])
    mask_t = tensor_type(mask_shape(p), elt, bdyn + [p.m_dyn, p.k2_dyn])
    out_t = tensor_type(out_shape(p), elt, bdyn + [p.m_dyn, False])
    lines, bsz = [], []
    for i, d in enumerate(bdyn):
        if d:
            lines += [f"%c{i} = arith.constant {i} : index", f"%b{i} = tensor.dim %q, %c{i} : {q_t}"]
            bsz.append(f"%b{i}")
    msz, k2sz = [], []
    if p.m_dyn:
        lines += [f"%c{nb} = arith.constant {nb} : index", f"%m_len = tensor.dim %q, %c{nb} : {q_t}"]
        msz = ["%m_len"]
    if p.k2_dyn:
        if not p.m_dyn:
            lines.append(f"%c{nb} = arith.constant {nb} : index")
        lines.append(f"%k2_len = tensor.dim %k, %c{nb} : {k_t}")
        k2sz = ["%k2_len"]
    args = [{"name": "%q", "type": q_t}, {"name": "%k", "type": k_t}, {"name": "%v", "type": v_t}]
    if p.mask != "none":
        args.append({"name": "%mask", "type": mask_t})
    b = list(range(nb))
    # iree_linalg_ext.attention loops: batch..., m, n, k1, k2.
    M, N, K1, K2 = nb, nb + 1, nb + 2, nb + 3
    L = nb + 4
    att_maps = [_map(L, b + [M, K1]), _map(L, b + [K2, K1]), _map(L, b + [K2, N]), f"affine_map<({', '.join(f'd{i}' for i in range(L))}) -> ()>"]
    if p.mask != "none":
        att_maps.append(_map(L, b + [M, K2]))
    att_maps.append(_map(L, b + [M, N]))
    ext = (lambda v: f"arith.extf {v} : {elt} to f32") if elt != "f32" else None
    qk_lines = ([f"%af = {ext('%a')}", f"%bf = {ext('%b')}"] if ext else []) + [
        f"%pr = arith.mulf {'%af' if ext else '%a'}, {'%bf' if ext else '%b'} : f32",
        "%t = arith.addf %acc, %pr : f32", "linalg.yield %t : f32"]
    l_lines = ["%y = arith.mulf %x, %scale_f : f32"]
    if p.mask != "none":
        l_lines += ([f"%mf = {ext('%mk')}"] if ext else []) + [f"%z = arith.addf %y, {'%mf' if ext else '%mk'} : f32",
                                                              "linalg.yield %z : f32"]
    else:
        l_lines.append("linalg.yield %y : f32")
    pv_lines = ([f"%xf = {ext('%x')}"] if ext else []) + [
        f"%pr = arith.mulf %w, {'%xf' if ext else '%x'} : f32", "%t = arith.addf %acc, %pr : f32", "linalg.yield %t : f32"]
    norm_lines = ["%q_ = arith.divf %x, %t : f32"] + (
        [f"%r = arith.truncf %q_ : f32 to {elt}", f"linalg.yield %r : {elt}"] if elt != "f32" else ["linalg.yield %q_ : f32"])
    # Decomposed loops: S over (batch, m, k2, k1); rows over (batch, m, k2); PV over (batch, m, n, k2).
    s3 = nb + 3
    par = lambda n: ", ".join(['"parallel"'] * n)  # noqa: E731
    return render_template(
        "attention.mlir.j2", args=args, index_lines=lines, scale=repr(float(p.scale)), elt=elt, form=p.form,
        mask=p.mask != "none", q_type=q_t, k_type=k_t, v_type=v_t, mask_type=mask_t, out_type=out_t,
        out_sizes=bsz + msz, att_maps=att_maps,
        s_type=tensor_type(mask_shape(p), "f32", bdyn + [p.m_dyn, p.k2_dyn]), s_sizes=bsz + msz + k2sz,
        r_type=tensor_type([*p.batch, p.m], "f32", bdyn + [p.m_dyn]), r_sizes=bsz + msz,
        o_type=tensor_type(out_shape(p), "f32", bdyn + [p.m_dyn, False]),
        qk_maps=[_map(s3, b + [nb, nb + 2]), _map(s3, b + [nb + 1, nb + 2]), _map(s3, b + [nb, nb + 1])],
        qk_iters=par(nb + 2) + ', "reduction"', qk_lines=qk_lines,
        l_maps=[_map(nb + 2, b + [nb, nb + 1])] * (3 if p.mask != "none" else 2), s_iters=par(nb + 2), l_lines=l_lines,
        row_maps=[_map(nb + 2, b + [nb, nb + 1]), _map(nb + 2, b + [nb])], row_iters=par(nb + 1) + ', "reduction"',
        bcast_maps=[_map(nb + 2, b + [nb, nb + 1]), _map(nb + 2, b + [nb]), _map(nb + 2, b + [nb, nb + 1])],
        pv_maps=[_map(s3, b + [nb, nb + 2]), _map(s3, b + [nb + 2, nb + 1]), _map(s3, b + [nb, nb + 1])],
        pv_iters=par(nb + 2) + ', "reduction"', pv_lines=pv_lines,
        norm_maps=[_map(nb + 2, b + [nb, nb + 1]), _map(nb + 2, b + [nb]), _map(nb + 2, b + [nb, nb + 1])],
        out_iters=par(nb + 2), norm_lines=norm_lines,
    )
