"""The conv_transpose family's MLIR, in the decompositions frontends emit (zero insertion, padding, filter flip, group expand, a stride-1 forward convolution)."""

from __future__ import annotations

from typing import Any, Sequence
import itertools

from shapefuzz.families.common import IndexValues, loop_dims, tensor_type
from shapefuzz.families.conv_transpose.params import Params
from shapefuzz.families.conv_transpose.shapes import fwd_labels, out_shape, out_sizes, w_shape, x_shape
from shapefuzz.templates import render_template


# ----------------------------------------------------------------------------- rendering

_ZERO = {"f32": "0.000000e+00", "f16": "0.000000e+00", "i32": "0"}


def _ty(shape: Sequence[int | str], dtype: str) -> str:
    return tensor_type(shape, dtype)


def _dim_operands(shape: Sequence[int | str]) -> str:
    return ", ".join(d for d in shape if isinstance(d, str))


def _mixed(shape: Sequence[int | str]) -> str:
    return ", ".join(str(d) for d in shape)


class _Builder:
    """Computes every name, type and map of one case; the template only lays them out."""

    def __init__(self, p: Params) -> None:
        self.p = p
        self.dtype = p.dtype
        self.steps: list[dict[str, Any]] = []
        self.counter = itertools.count()
        self.index = IndexValues()  # tensor.dim / affine.apply of the dynamic sizes

    def fresh(self, stem: str) -> str:
        return f"%{stem}{next(self.counter)}"

    def step(self, kind: str, **fields: Any) -> str:
        name = self.fresh(fields.pop("stem", "v"))
        self.steps.append({"kind": kind, "name": name, **fields})
        return name

    def tensor_dim(self, src: str, src_type: str, idx: int) -> str:
        return self.index.dim(src, src_type, idx)

    def apply(self, operand: str, scale: int, const: int) -> str:
        return self.index.apply([(scale, operand)], const)

    def zeros(self, shape: Sequence[int | str], dest: bool = False) -> str:
        """A zero tensor of `shape`; `dest`: one x is inserted into, a splat constant when the
        params ask for one (and the shape is static)."""
        if dest and self.p.zero_dest == "constant" and all(isinstance(d, int) for d in shape):
            return self.step("zero_constant", stem="z", type=_ty(shape, self.dtype), zero=_ZERO[self.dtype])
        return self.step(
            "zeros",
            stem="z",
            empty=self.fresh("e"),
            dyn=_dim_operands(shape),
            type=_ty(shape, self.dtype),
            elt=self.dtype,
            zero=_ZERO[self.dtype],
        )

    # ------------------------------------------------------------------ x side

    def build(self) -> dict[str, Any]:
        p = self.p
        r, G = p.rank, p.groups
        grouped = G > 1
        xs = x_shape(p)
        x_dims: list[int | str] = []
        for i, size in enumerate(xs):
            x_dims.append(self.tensor_dim("%x", self._static_x_type(), i) if p.input_dyn[i] else size)
        x_type = _ty(x_dims, self.dtype)
        cur, cur_shape = "%x", list(x_dims)
        last = p.x_layout == "nhc"

        def expand_groups(value: str, shape: list[int | str]) -> tuple[str, list[int | str]]:
            if last:  # [N, S..., G*Ci] -> [N, S..., G, Ci]
                new_shape = [*shape[:-1], G, p.ci]
                reassoc = [*[[i] for i in range(len(shape) - 1)], [len(shape) - 1, len(shape)]]
            else:  # [N, G*Ci, S...] -> [N, G, Ci, S...]
                new_shape = [shape[0], G, p.ci, *shape[2:]]
                reassoc = [[0], [1, 2], *[[i + 1] for i in range(2, len(shape))]]
            name = self.step(
                "expand",
                stem="xg",
                src=value,
                reassoc=str(reassoc),
                output_shape=_mixed(new_shape),
                src_type=_ty(shape, self.dtype),
                type=_ty(new_shape, self.dtype),
            )
            return name, new_shape

        if grouped and p.x_expand == "early":
            cur, cur_shape = expand_groups(cur, cur_shape)
        sp0 = 1 if last else len(cur_shape) - r  # index of the first spatial dim
        tail = len(cur_shape) - sp0 - r  # dims after the spatial ones (channels last)
        k, s, d = p.kernel, p.strides, p.dilations
        lo = [d[t] * (k[t] - 1) - p.pad_lo[t] for t in range(r)]
        hi = [d[t] * (k[t] - 1) - p.pad_hi[t] + p.out_pad[t] for t in range(r)]
        h = [cur_shape[sp0 + t] for t in range(r)]

        def spatial(t: int, extra: int) -> int | str:
            """(H-1)*s + 1 + extra, static or computed in the IR."""
            ht = h[t]
            if isinstance(ht, str):
                return self.apply(ht, s[t], 1 - s[t] + extra)
            return (ht - 1) * s[t] + 1 + extra

        lead = cur_shape[:sp0]
        trail = cur_shape[sp0 + r :]

        def around(values: Sequence[Any], fill: Any) -> list[Any]:
            """Per-dim values: `values` at the spatial dims, `fill` elsewhere."""
            return [fill] * sp0 + list(values) + [fill] * tail

        if p.pad_mode == "insert":
            if any(s[t] > 1 for t in range(r)) or any(lo) or any(hi):
                padded = lead + [spatial(t, lo[t] + hi[t]) for t in range(r)] + trail
                z = self.zeros(padded, dest=True)
                cur = self._insert(cur, cur_shape, z, padded, around(lo, 0), around(s, 1))
                cur_shape = padded
        else:
            if any(s[t] > 1 for t in range(r)):
                inserted = lead + [spatial(t, 0) for t in range(r)] + trail
                z = self.zeros(inserted, dest=True)
                cur = self._insert(cur, cur_shape, z, inserted, [0] * len(cur_shape), around(s, 1))
                cur_shape = inserted
            if any(lo) or any(hi):
                padded = lead + [
                    spatial(t, lo[t] + hi[t]) if isinstance(c := cur_shape[sp0 + t], str) else c + lo[t] + hi[t]
                    for t in range(r)
                ] + trail
                # tensor.pad's result type carries `?` where the source is dynamic; the SSA
                # sizes computed above are only needed if a later op asks for them.
                cur = self.step(
                    "pad",
                    stem="p",
                    src=cur,
                    low=_mixed(around(lo, 0)),
                    high=_mixed(around(hi, 0)),
                    nargs=len(cur_shape),
                    src_type=_ty(cur_shape, self.dtype),
                    type=_ty(padded, self.dtype),
                    elt=self.dtype,
                    zero=_ZERO[self.dtype],
                )
                cur_shape = padded
        if grouped and p.x_expand == "late":
            cur, cur_shape = expand_groups(cur, cur_shape)
        conv_in, conv_in_shape = cur, cur_shape

        # ------------------------------------------------------------- filter side
        w_stored_labels = self._stored_labels(expanded=False)
        w_exp_labels = self._stored_labels(expanded=True)
        label_size = self._label_sizes()
        ws = w_shape(p)
        w_type = _ty(ws, self.dtype)
        w_cur = "%w"
        w_cur_shape: list[int | str] = list(ws)

        def expand_filter(value: str, shape: list[int | str]) -> tuple[str, list[int | str]]:
            pos = w_stored_labels.index("I")
            new_shape: list[int | str] = [label_size[lab] for lab in w_exp_labels]
            reassoc: list[list[int]] = []
            j = 0
            for i in range(len(shape)):
                if i == pos:
                    reassoc.append([j, j + 1])
                    j += 2
                else:
                    reassoc.append([j])
                    j += 1
            name = self.step(
                "expand",
                stem="wg",
                src=value,
                reassoc=str(reassoc),
                output_shape=_mixed(new_shape),
                src_type=_ty(shape, self.dtype),
                type=_ty(new_shape, self.dtype),
            )
            return name, new_shape

        fwd = fwd_labels(p)
        out_labels = [fwd[i] for i in p.fwd_layout]
        out_shape_w: list[int | str] = [label_size[lab] for lab in out_labels]
        if p.w_order == "fused":
            # split the group dim, then one generic flips and transposes
            if grouped:
                w_cur, w_cur_shape = expand_filter(w_cur, w_cur_shape)
            w_cur = self._flip(w_cur, w_cur_shape, w_exp_labels, out_labels, out_shape_w)
            w_cur_shape = out_shape_w
        else:
            # flip in the stored layout, then split the group dim, then transpose
            w_cur = self._flip(w_cur, w_cur_shape, w_stored_labels, w_stored_labels, w_cur_shape)
            if grouped:
                w_cur, w_cur_shape = expand_filter(w_cur, w_cur_shape)
            perm = [w_exp_labels.index(lab) for lab in out_labels]
            if perm != list(range(len(perm))):
                w_cur = self.step(
                    "transpose",
                    stem="wt",
                    empty=self.fresh("e"),
                    src=w_cur,
                    perm=str(perm),
                    src_type=_ty(w_cur_shape, self.dtype),
                    type=_ty(out_shape_w, self.dtype),
                )
                w_cur_shape = out_shape_w

        # ------------------------------------------------------------- conv
        o_sizes = out_sizes(p)
        o_dims: list[int | str] = [
            self.apply(ht, s[t], 1 - s[t] + lo[t] + hi[t] - d[t] * (k[t] - 1)) if isinstance(ht := h[t], str) else o_sizes[t]
            for t in range(r)
        ]
        groups_co = [*([G] if grouped else []), p.co]
        conv_out_shape = [conv_in_shape[0], *o_dims, *groups_co] if last else [conv_in_shape[0], *groups_co, *o_dims]
        init = self.zeros(conv_out_shape)
        common = dict(
            x=conv_in,
            w=w_cur,
            init=init,
            x_type=_ty(conv_in_shape, self.dtype),
            w_type=_ty(w_cur_shape, self.dtype),
            type=_ty(conv_out_shape, self.dtype),
        )
        if p.form == "named":
            if grouped:
                op = "conv_2d_ngchw_gfchw" if p.fwd_layout[0] == 0 else "conv_2d_ngchw_fgchw"
            else:
                op = {1: "conv_1d_ncw_fcw", 2: "conv_2d_nchw_fchw", 3: "conv_3d_ncdhw_fcdhw"}[r]
            conv = self.step(
                "conv_named",
                stem="conv",
                op=op,
                dilations=", ".join(map(str, d)),
                rank=r,
                **common,
            )
        else:
            conv = self.step("conv_generic", stem="conv", **common, **self._generic_conv(out_labels))

        result, result_shape = conv, conv_out_shape
        if grouped:
            if last:
                final = [conv_out_shape[0], *o_dims, G * p.co]
                reassoc = [*[[i] for i in range(r + 1)], [r + 1, r + 2]]
            else:
                final = [conv_out_shape[0], G * p.co, *o_dims]
                reassoc = [[0], [1, 2], *[[i + 1] for i in range(2, len(final))]]
            result = self.step(
                "collapse",
                stem="out",
                src=conv,
                reassoc=str(reassoc),
                src_type=_ty(conv_out_shape, self.dtype),
                type=_ty(final, self.dtype),
            )
            result_shape = final
        return {
            "x_type": x_type,
            "w_type": w_type,
            "result": result,
            "result_type": _ty(result_shape, self.dtype),
            "index": self.index.ops(),
            "steps": self.steps,
        }

    def _static_x_type(self) -> str:
        return _ty(["?" if dyn else size for size, dyn in zip(x_shape(self.p), self.p.input_dyn)], self.dtype)

    def _insert(self, src, src_shape, dest, dest_shape, offsets, strides) -> str:
        return self.step(
            "insert",
            stem="i",
            src=src,
            dest=dest,
            offsets=_mixed(offsets),
            sizes=_mixed(src_shape),
            strides=_mixed(strides),
            src_type=_ty(src_shape, self.dtype),
            type=_ty(dest_shape, self.dtype),
        )

    def _stored_labels(self, expanded: bool) -> list[str]:
        p = self.p
        logical = ["I", "O", *[f"K{t}" for t in range(p.rank)]]
        labels = [logical[i] for i in p.w_layout]
        if not expanded:
            return labels
        out: list[str] = []
        for lab in labels:
            if lab == "I":
                out.extend(["G", "C"] if p.groups > 1 else ["C"])
            elif lab == "O":
                out.append("F")
            else:
                out.append(lab)
        return out

    def _label_sizes(self) -> dict[str, int]:
        p = self.p
        sizes = {"I": p.groups * p.ci, "O": p.co, "G": p.groups, "C": p.ci, "F": p.co}
        sizes.update({f"K{t}": k for t, k in enumerate(p.kernel)})
        return sizes

    def _flip(self, src, src_shape, src_labels, out_labels, out_shape) -> str:
        """A generic producing out[...] = src[..., K-1-k, ...], permuting labels as it goes."""
        p = self.p
        n = len(out_labels)
        # src labels may be unexpanded ("I", "O") when out_labels are the same list
        kernel = {f"K{t}": k for t, k in enumerate(p.kernel)}
        loop_of = {lab: j for j, lab in enumerate(out_labels)}
        e = self.fresh("e")
        common = dict(
            stem="wf",
            empty=e,
            src=src,
            src_type=_ty(src_shape, self.dtype),
            type=_ty(out_shape, self.dtype),
            iterators=", ".join(['"parallel"'] * n),
            out_map=f"affine_map<({_dims(n)}) -> ({_dims(n)})>",
            elt=self.dtype,
        )
        if p.flip == "map":
            exprs = [
                f"{kernel[lab] - 1} - d{loop_of[lab]}" if lab in kernel else f"d{loop_of[lab]}" for lab in src_labels
            ]
            in_map = f"affine_map<({_dims(n)}) -> ({', '.join(exprs)})>"
            return self.step("flip_map", in_map=in_map, **common)
        # extract: one linalg.index per loop, K-1-i by arith.subi, tensor.extract in stored order
        indices = []
        for lab in src_labels:
            j = loop_of[lab]
            indices.append({"loop": j, "flip": kernel[lab] - 1 if lab in kernel else None})
        return self.step("flip_extract", nloops=n, indices=indices, **common)

    def _generic_conv(self, w_labels: list[str]) -> dict[str, Any]:
        p = self.p
        r, grouped = p.rank, p.groups > 1
        loops = ["N", *(["G"] if grouped else []), "F", *[f"O{t}" for t in range(r)], "C", *[f"K{t}" for t in range(r)]]
        idx = {lab: j for j, lab in enumerate(loops)}
        n = len(loops)
        x_chan = [*([f"d{idx['G']}"] if grouped else []), f"d{idx['C']}"]
        x_space = []
        for t in range(r):
            dil = p.dilations[t]
            x_space.append(f"d{idx[f'O{t}']} + d{idx[f'K{t}']}" + (f" * {dil}" if dil != 1 else ""))
        w_exprs = [f"d{idx[lab]}" for lab in w_labels]
        o_chan = [*([f"d{idx['G']}"] if grouped else []), f"d{idx['F']}"]
        o_space = [f"d{idx[f'O{t}']}" for t in range(r)]
        if p.x_layout == "nhc":
            x_exprs = [f"d{idx['N']}", *x_space, *x_chan]
            o_exprs = [f"d{idx['N']}", *o_space, *o_chan]
        else:
            x_exprs = [f"d{idx['N']}", *x_chan, *x_space]
            o_exprs = [f"d{idx['N']}", *o_chan, *o_space]
        dims = _dims(n)
        return {
            "x_map": f"affine_map<({dims}) -> ({', '.join(x_exprs)})>",
            "w_map": f"affine_map<({dims}) -> ({', '.join(w_exprs)})>",
            "o_map": f"affine_map<({dims}) -> ({', '.join(o_exprs)})>",
            "iterators": ", ".join(
                '"reduction"' if lab == "C" or lab.startswith("K") else '"parallel"' for lab in loops
            ),
            "elt": self.dtype,
            "mul": "arith.muli" if self.dtype == "i32" else "arith.mulf",
            "add": "arith.addi" if self.dtype == "i32" else "arith.addf",
        }


_dims = loop_dims


def render(p: Params) -> str:
    ctx = _Builder(p).build()
    return render_template("conv_transpose.mlir.j2", **ctx)
