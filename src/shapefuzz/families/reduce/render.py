"""The reduce family's MLIR."""

from __future__ import annotations

from typing import Any

from shapefuzz.families.common import Dim, expand_step, is_float, loop_dims, tensor_type
from shapefuzz.families.operands import constant_lines, doubled_lines
from shapefuzz.families.reduce.operands import init_values
from shapefuzz.families.reduce.params import ARG_KINDS, Params, kept
from shapefuzz.templates import render_template

_LOWEST = {"f32": "0xFF800000", "f16": "0xFC00", "i32": "-2147483648"}
_HIGHEST = {"f32": "0x7F800000", "f16": "0x7C00", "i32": "2147483647"}


def render(p: Params) -> str:
    elt, acc, rank = p.dtype, p.out_elt, p.rank
    arg = p.kind in ARG_KINDS
    flt = is_float(elt)
    lines: list[str] = []
    size: dict[int, str] = {}
    for i, dyn in enumerate(p.in_dyn):
        if dyn:
            lines.append(f"%c{i} = arith.constant {i} : index")
            lines.append(f"%d{i} = tensor.dim %input, %c{i} : {tensor_type(p.shape, elt, p.in_dyn)}")
            size[i] = f"%d{i}"
    in_type = tensor_type(p.shape, elt, p.in_dyn)
    keep = kept(p)
    red_shape, red_dyn = [p.shape[i] for i in keep], [p.in_dyn[i] for i in keep]
    # The steps: one reduction over all dims, or (chain) one per dim, highest first.
    steps: list[dict[str, Any]] = []
    if p.form == "chain":
        remaining = list(range(rank))
        in_elt: str
        src, src_type, in_elt = "%input", in_type, elt
        for n, d in enumerate(sorted(p.dims, reverse=True)):
            pos = remaining.index(d)
            remaining.remove(d)
            out_type = tensor_type([p.shape[i] for i in remaining], acc, [p.in_dyn[i] for i in remaining])
            steps.append({"out": f"%red{n}", "src": src, "src_type": src_type, "dims": [pos], "out_type": out_type,
                          "sizes": [size[i] for i in remaining if p.in_dyn[i]], "in_elt": in_elt,
                          "widen": in_elt != acc})
            src, src_type, in_elt = f"%red{n}", out_type, acc
    else:
        steps.append({"out": "%red", "src": "%input", "src_type": in_type, "dims": list(p.dims),
                      "out_type": tensor_type(red_shape, acc, red_dyn), "sizes": [size[i] for i in keep if p.in_dyn[i]],
                      "in_elt": elt, "widen": elt != acc})
    for each in steps:
        each.update(init=f"{each['out']}_init", init_lines=None)  # None: the identity's fill
    _operand_init(p, steps[0], acc)
    final = steps[-1]["out"]
    if arg:
        val, idx = "%red#0", "%red#1"
    else:
        val, idx = final, ""  # no index result
    idx_out_type = tensor_type(red_shape, p.index_dtype, red_dyn)
    expands = []
    results = []
    outs = ([(val, acc)] if not arg or p.use == "both" else []) + ([(idx, p.index_dtype)] if arg else [])
    for n, (name, e) in enumerate(outs):
        if p.keepdims:
            dims = [Dim(p.shape[i], p.in_dyn[i], size.get(i)) for i in keep]
            target: list = []
            j = 0
            for i in range(rank):
                if i in p.dims:
                    target.append(Dim(1, False))
                else:
                    target.append(j)
                    j += 1
            step, _ = expand_step(f"%kept{n}", name, dims, target, e)
            if step is not None:
                expands.append(step)
                name = step.res
        results.append({"name": name, "type": tensor_type(
            [1 if i in p.dims else s for i, s in enumerate(p.shape)] if p.keepdims else red_shape, e,
            [False if i in p.dims else d for i, d in enumerate(p.in_dyn)] if p.keepdims else red_dyn)})
    kind = p.kind
    if kind == "sum":
        combine = "arith.addf" if is_float(acc) else "arith.addi"
        init = "0.0" if is_float(acc) else "0"
    elif kind in ("max", "argmax"):
        combine = "arith.maximumf" if flt else "arith.maxsi"
        init = _LOWEST[elt]
    else:
        combine = "arith.minimumf" if flt else "arith.minsi"
        init = _HIGHEST[elt]
    out_exprs = [f"d{i}" for i in keep]
    return render_template(
        "reduce.mlir.j2", in_type=in_type, results=results, index_lines=lines, init_literal=init, steps=steps,
        arg=arg, idx_elt=p.index_dtype, idx_out_type=idx_out_type, form=p.form, dims=list(p.dims), elt=elt, acc=acc,
        widen=elt != acc, combine=combine,
        cmp="arith.cmpf" if flt else "arith.cmpi",
        pred=("ogt" if kind == "argmax" else "olt") if flt else ("sgt" if kind == "argmax" else "slt"),
        in_map=f"affine_map<({loop_dims(rank)}) -> ({loop_dims(rank)})>",
        out_map=f"affine_map<({loop_dims(rank)}) -> ({', '.join(out_exprs)})>",
        iterators=", ".join('"reduction"' if i in p.dims else '"parallel"' for i in range(rank)),
        parallel=", ".join(['"parallel"'] * rank), in_sizes=[size[i] for i in range(rank) if p.in_dyn[i]],
        iota_type=tensor_type(p.shape, p.index_dtype, p.in_dyn), expands=expands, scalar=p.operand == "scalar",
    )


def _operand_init(p: Params, step: dict[str, Any], acc: str) -> None:
    """A root-operand form's init for the (one) reduction step, in place of the identity's fill."""
    name, out_type = step["init"], step["out_type"]
    if p.operand == "const":
        step["init_lines"] = constant_lines(name, init_values(p), acc, out_type)
    elif p.operand == "folded":
        step["init_lines"] = doubled_lines(name, init_values(p), acc, out_type)
    elif p.operand == "scalar" and out_type == f"tensor<{acc}>":  # a 0-d result starts at the argument itself
        step.update(init="%init_arg", init_lines=[])
    elif p.operand == "scalar":
        rank = len(kept(p))
        step["init_lines"] = [
            f"{step['out']}_e = tensor.empty({', '.join(step['sizes'])}) : {out_type}",
            f"{name} = linalg.broadcast ins(%init_arg : tensor<{acc}>) outs({step['out']}_e : {out_type}) "
            f"dimensions = [{', '.join(map(str, range(rank)))}]"]


