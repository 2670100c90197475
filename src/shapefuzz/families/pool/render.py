"""The pool family's MLIR: `tensor.pad` (-inf / INT_MIN for max, zero for sums), then a named
`linalg.pooling_*` op or the equivalent `linalg.generic`; an average divides the window sum by a
sum-pool of ones padded as the divisor counts (ones over the padding with count_include_pad, zeros
over a ceil-mode window's overhang). Dynamic output sizes are `affine.apply` / `affine.min` of the
input's, the same rule as params.out_size for any input size."""

from __future__ import annotations

from shapefuzz.families.common import affine_expr, identity_map, is_float, loop_dims, tensor_type
from shapefuzz.families.pool.params import NAMED, Params, ceil_extra, eff_kernel, input_shape, output_shape, perm_to
from shapefuzz.templates import render_template

_NEG_INF = {"f32": "0xFF800000", "f16": "0xFC00", "i32": "-2147483648"}


def _zero(elt: str) -> str:
    return "0.0" if is_float(elt) else "0"


def _spatial_positions(layout: str, rank: int) -> list[int]:
    return list(range(2, rank + 2)) if layout == "nc" else list(range(1, rank + 1))


def _out_size_map(p: Params, i: int) -> str:
    """The affine map from an input spatial size to the output size (params.out_size)."""
    s, lo, hi = p.strides[i], p.pad_lo[i], p.pad_hi[i]
    const = lo + hi - eff_kernel(p, i)
    if not p.ceil_mode:
        body = f"({affine_expr([(1, 's0')], const)}) floordiv {s} + 1" if s > 1 else affine_expr([(1, "s0")], const + 1)
        return f"affine_map<()[s0] -> ({body})>"
    first = f"({affine_expr([(1, 's0')], const)}) ceildiv {s} + 1"
    last_start = f"({affine_expr([(1, 's0')], lo - 1)}) floordiv {s} + 1"
    return f"affine_map<()[s0] -> ({first}, {last_start})>"


def render(p: Params) -> str:
    rank, elt = p.rank, p.dtype
    work = p.work_layout
    perm_in = perm_to(p.layout, rank, work)
    perm_out = perm_to(work, rank, p.layout)
    in_shape = input_shape(p)
    in_dyn = list(p.in_dyn)
    lines: list[str] = []
    sizes: dict[int, str] = {}  # input dim (layout order) -> SSA size
    for i, dyn in enumerate(in_dyn):
        if dyn:
            lines.append(f"%c{i} = arith.constant {i} : index")
            sizes[i] = f"%in_d{i}"
            lines.append(f"%in_d{i} = tensor.dim %input, %c{i} : {tensor_type(in_shape, elt, in_dyn)}")
    # Output sizes in the function's layout: n, c as the input's, spatial from the rule.
    out_shape = output_shape(p)
    out_sizes: dict[int, str] = {}
    for j, pos in enumerate(_spatial_positions(p.layout, rank)):
        if in_dyn[pos]:
            name = f"%out_d{pos}"
            op = "affine.min" if p.ceil_mode else "affine.apply"
            lines.append(f"{name} = {op} {_out_size_map(p, j)}()[{sizes[pos]}]")
            out_sizes[pos] = name
    for pos in (0, 1 if p.layout == "nc" else rank + 1):
        if in_dyn[pos]:
            out_sizes[pos] = sizes[pos]
    out_dyn = list(in_dyn)
    # The compute layout.
    work_in_shape = [in_shape[i] for i in perm_in]
    work_in_dyn = [in_dyn[i] for i in perm_in]
    work_in_sizes = [sizes[i] for i in perm_in if in_dyn[i]]
    work_out_shape = [out_shape[i] for i in perm_in]
    work_out_dyn = [out_dyn[i] for i in perm_in]
    work_out_sizes = [out_sizes[i] for i in perm_in if out_dyn[i]]
    work_in_type = tensor_type(work_in_shape, elt, work_in_dyn)
    work_out_type = tensor_type(work_out_shape, elt, work_out_dyn)
    transposed = perm_in != list(range(rank + 2))
    src = "%work" if transposed else "%input"
    spatial = _spatial_positions(work, rank)

    def pads(dst: str, src: str, highs: list[list[int]], los: list[list[int]], values: list[str]) -> tuple[list[dict], str, str]:
        steps, cur, cur_shape, cur_type = [], src, list(work_in_shape), work_in_type
        for n, (lo_sp, hi_sp, value) in enumerate(zip(los, highs, values)):
            if not any(lo_sp) and not any(hi_sp):
                continue
            low, high = [0] * (rank + 2), [0] * (rank + 2)
            for j, pos in enumerate(spatial):
                low[pos], high[pos] = lo_sp[j], hi_sp[j]
            cur_shape = [s + a + b for s, a, b in zip(cur_shape, low, high)]
            name = f"{dst}{n}"
            dst_type = tensor_type(cur_shape, elt, work_in_dyn)
            steps.append({"dst": name, "src": cur, "low": low, "high": high, "value": value, "rank": rank + 2,
                          "src_type": cur_type, "dst_type": dst_type})
            cur, cur_type = name, dst_type
        return steps, cur, cur_type

    extra = [ceil_extra(p, i) for i in range(rank)]
    zero = _zero(elt)
    lines.append(f"%pad_val = arith.constant {_NEG_INF[elt] if p.kind == 'max' else zero} : {elt}")
    input_pads, padded, padded_type = pads(
        "%padded", src, [[h + e for h, e in zip(p.pad_hi, extra)]], [list(p.pad_lo)], ["%pad_val"])
    ones_pads: list[dict] = []
    ones_padded = "%ones"
    if p.kind == "avg" and p.divisor == "ones":
        lines += [f"%pad_one = arith.constant 1.0 : {elt}", f"%pad_zero = arith.constant {zero} : {elt}"]
        if p.count_include_pad:
            ones_pads, ones_padded, _ = pads("%ones_p", "%ones", [list(p.pad_hi), extra],
                                             [list(p.pad_lo), [0] * rank], ["%pad_one", "%pad_zero"])
        else:
            ones_pads, ones_padded, _ = pads("%ones_p", "%ones", [[h + e for h, e in zip(p.pad_hi, extra)]],
                                             [list(p.pad_lo)], ["%pad_zero"])
    n_loops = 2 + 2 * rank
    d = [f"d{i}" for i in range(n_loops)]
    batch, chan, outs, wins = d[0], d[1], d[2 : 2 + rank], d[2 + rank :]
    in_exprs = [affine_expr([(p.strides[j], outs[j]), (p.dilations[j], wins[j])]) for j in range(rank)]
    in_order = [batch, chan, *in_exprs] if work == "nc" else [batch, *in_exprs, chan]
    out_order = [batch, chan, *outs] if work == "nc" else [batch, *outs, chan]
    comb = {"max": "arith.maximumf" if is_float(elt) else "arith.maxsi", "sum": "arith.addf" if is_float(elt) else "arith.addi"}
    result = "%avg" if p.kind == "avg" else "%pooled"
    out_type = tensor_type(out_shape, elt, out_dyn)
    return render_template(
        "pool.mlir.j2",
        in_type=tensor_type(in_shape, elt, in_dyn),
        out_type=out_type,
        index_lines=lines,
        transposed=transposed,
        perm_in=perm_in,
        perm_out=perm_out,
        work_in_type=work_in_type,
        work_in_dyn=work_in_sizes,
        work_out_type=work_out_type,
        work_out_dyn=work_out_sizes,
        out_dyn=[out_sizes[i] for i in range(rank + 2) if out_dyn[i]],
        input_pads=input_pads,
        padded=padded,
        padded_type=padded_type,
        ones_pads=ones_pads,
        ones_padded=ones_padded,
        init_literal=_NEG_INF[elt] if p.kind == "max" else zero,
        window_type=tensor_type(list(p.kernel), elt),
        form=p.form,
        named=NAMED.get((work, rank), ""),
        rank=rank,
        dilations=list(p.dilations),
        strides=list(p.strides),
        in_map=f"affine_map<({loop_dims(n_loops)}) -> ({', '.join(in_order)})>",
        window_map=f"affine_map<({loop_dims(n_loops)}) -> ({', '.join(wins)})>",
        out_map=f"affine_map<({loop_dims(n_loops)}) -> ({', '.join(out_order)})>",
        iterators=", ".join(['"parallel"'] * (2 + rank) + ['"reduction"'] * rank),
        combine=comb,
        kind=p.kind,
        elt=elt,
        identity=identity_map(rank + 2),
        parallel=", ".join(['"parallel"'] * (rank + 2)),
        result_work="%avg" if p.kind == "avg" else "%pooled",
        result="%result" if transposed else result,
        divisor=p.divisor,
        divisor_lines=_divisor_lines(p, spatial, [sizes.get(pos) for pos in _spatial_positions(p.layout, rank)]),
    )


def _divisor_lines(p: Params, out_dims: list[int], in_sizes: list[str | None]) -> list[str]:
    """The window's element count at this output position, as params.py's docstring defines it:
    per spatial dim, the taps j in [0, k) with lo <= o*s - pad_lo + j*d < hi, counted as
    clamp(ceil((hi - start) / d), 0, k) - clamp(ceil((lo - start) / d), 0, k); `%n` is their product."""
    if p.kind != "avg":
        return []
    lines, consts = [], set()

    def c(v: int) -> str:
        name = f"%k{v}" if v >= 0 else f"%k_m{-v}"
        if v not in consts:
            consts.add(v)
            lines.append(f"{name} = arith.constant {v} : index")
        return name

    counts = []
    for j, dim in enumerate(out_dims):
        s, d, k, lo_pad, hi_pad = p.strides[j], p.dilations[j], p.kernel[j], p.pad_lo[j], p.pad_hi[j]
        size = in_sizes[j] or c(p.spatial[j])
        pre = f"%t{j}_"
        lines.append(f"{pre}o = linalg.index {dim} : index")
        lines.append(f"{pre}os = arith.muli {pre}o, {c(s)} : index")
        lines.append(f"{pre}start = arith.subi {pre}os, {c(lo_pad)} : index")
        if p.count_include_pad:
            lines.append(f"{pre}hi = arith.addi {size}, {c(hi_pad)} : index")
            lo = c(-lo_pad)
        else:
            lines.append(f"{pre}hi = arith.addi {size}, {c(0)} : index")
            lo = c(0)
        for name, bound in (("up", f"{pre}hi"), ("low", lo)):
            lines.append(f"{pre}{name}_d = arith.subi {bound}, {pre}start : index")
            lines.append(f"{pre}{name}_c = arith.ceildivsi {pre}{name}_d, {c(d)} : index")
            lines.append(f"{pre}{name}_a = arith.maxsi {pre}{name}_c, {c(0)} : index")
            lines.append(f"{pre}{name} = arith.minsi {pre}{name}_a, {c(k)} : index")
        lines.append(f"{pre}count = arith.subi {pre}up, {pre}low : index")
        counts.append(f"{pre}count")
    total = counts[0]
    for j, other in enumerate(counts[1:]):
        lines.append(f"%prod{j} = arith.muli {total}, {other} : index")
        total = f"%prod{j}"
    lines.append(f"%n_i = arith.index_cast {total} : index to i32")
    lines.append(f"%n = arith.sitofp %n_i : i32 to {p.dtype}")
    return lines
