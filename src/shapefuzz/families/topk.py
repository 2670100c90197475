"""The topk family: the k largest (or smallest) entries along one dimension, with their indices.

Formulations of the same computation (the metamorphic oracle compares them):
  - form "topk": `iree_linalg_ext.topk`, which merges into outs pre-filled with -inf/INT_MIN
    (+inf/INT_MAX for smallest) and index 0;
  - form "sort": `iree_linalg_ext.sort` over the values (and an index payload), then a
    `tensor.extract_slice` of the first k along the dim;
  - `transpose`: the input is transposed so the sorted dim comes last, the op runs along the
    last dim, and the results are transposed back (what frontends do for dim != -1).
Input indices ("indices"): "implicit" (topk without an indices operand; sort of the values
alone, or with an iota payload when indices are returned), "iota" (an explicit i32 iota built in
the IR and passed as the indices operand / sort payload), "arg" (a function argument holding
arbitrary distinct i32 labels; the op returns the labels of the chosen positions).
Results ("use"): "values", "indices" or "both" returned — bug class 5 (one result unused).

Ties are never judged by index equality: values must equal the reference's sorted top-k exactly;
indices must be distinct, valid, and select (through the input) exactly the expected values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from hypothesis import strategies as st

from shapefuzz.export_checks import check_topk_indices
from shapefuzz.families.base import Family, FamilyParams
from shapefuzz.families.common import count_mismatch, is_float, np_dtype, shape_mismatch, tensor_type, values_mismatch
from shapefuzz.model import Mismatch, MismatchKind
from shapefuzz.templates import render_template

FORMS = ("topk", "sort")
INDEX_MODES = ("implicit", "iota", "arg")
USES = ("values", "indices", "both")
DTYPES = ("f32", "f16", "i32", "i8")
INDEX_DTYPES = ("i32", "i64")

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
# Sizes that matter: 1, small primes, just above powers of two.
_SMALL_SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33)
_SORTED_SIZES = (1, 2, 3, 5, 7, 8, 11, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129)
# Sorted dims around powers of two, where sort/topk kernels switch tiling or go multi-pass.
_POW2_SORTED_SIZES = (31, 32, 33, 255, 256, 257, 1023, 1024, 1025)
_LARGE_SORTED_SIZES = (257, 1025, 2049, 4099)
_LARGE_REGIME_SORTED_SIZES = (1023, 1024, 1025, 2047, 2049, 4096, 4099, 8191, 16385)
_MAX_ELEMENTS = 6000  # keeps CPU runs cheap; large sorted dims get tiny outer dims
_MAX_ELEMENTS_LARGE = 1 << 20  # the large regime (compile-only lanes): inputs of up to 4 MB
# Labels for indices == "arg": distinct, not positions, so a kernel that returns positions
# instead of the labels it was given is caught.
_LABEL_OFFSET = 1000




@dataclass(frozen=True)
class Params(FamilyParams):
    RENAMED = {"dynamic": "input_dyn"}

    form: str  # FORMS
    indices: str  # INDEX_MODES
    use: str  # USES: which results are returned
    dtype: str
    shape: tuple[int, ...]
    input_dyn: tuple[bool, ...]
    dim: int
    k: int
    largest: bool
    transpose: bool  # run along the last dim of a transposed input
    values: str  # "wide" | "ties": how the inputs are drawn
    index_dtype: str = "i32"  # of the indices operand and result (torch and ONNX emit i64)
    # Result types not derived mechanically: the declared dynamic flag of each result dim (the
    # sorted dim stays static), overriding the input's (empty: derived).
    result_dyn: tuple[bool, ...] = ()


# ----------------------------------------------------------------------------- shapes / types


def _ttype(shape: list[int], dynamic: list[bool], elt: str) -> str:
    return tensor_type(shape, elt, dynamic)


def output_shape(params: Params) -> list[int]:
    shape = list(params.shape)
    shape[params.dim] = params.k
    return shape


def _derived_output_dynamic(params: Params) -> list[bool]:
    dyn = list(params.input_dyn)
    dyn[params.dim] = False  # k is static
    return dyn


def _output_dynamic(params: Params) -> list[bool]:
    """The results' dynamic dims as declared: `result_dyn` when given, else derived."""
    return list(params.result_dyn) if params.result_dyn else _derived_output_dynamic(params)


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


# ----------------------------------------------------------------------------- inputs


def make_inputs(params: Params, seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    shape = tuple(params.shape)
    dtype = params.dtype
    if params.values == "ties":
        # A handful of distinct values: many ties, including across the k boundary.
        pool = np.array([-2, -1, 0, 1, 3], dtype=np.int64)
        ints = rng.choice(pool[: int(rng.integers(1, len(pool) + 1))], size=shape)
        x = ints / 2.0 if is_float(dtype) else ints
    elif dtype == "f32":
        x = rng.integers(-4096, 4097, size=shape) / 4.0  # exact multiples of 1/4
    elif dtype == "f16":
        x = rng.integers(-1024, 1025, size=shape) / 4.0  # |x| <= 256, exact in f16
    elif dtype == "i32":
        x = rng.integers(-(10**6), 10**6 + 1, size=shape)
    else:
        x = rng.integers(-100, 101, size=shape)  # away from the pad values -128/127
    inputs = [np.ascontiguousarray(x.astype(np_dtype(dtype)))]
    if params.indices == "arg":
        # Per slice along the dim: a random permutation of distinct labels.
        n, dim = shape[params.dim], params.dim
        moved_shape = tuple(s for i, s in enumerate(shape) if i != dim) + (n,)
        labels = np.empty(moved_shape, dtype=np.int64)
        flat = labels.reshape(-1, n)
        for row in range(flat.shape[0]):
            flat[row] = rng.permutation(n) * 3 + _LABEL_OFFSET
        inputs.append(np.ascontiguousarray(np.moveaxis(labels, -1, dim).astype(np_dtype(params.index_dtype))))
    return inputs


# ----------------------------------------------------------------------------- reference


def _positions(params: Params, x: np.ndarray) -> np.ndarray:
    """Positions along the dim of one valid top-k selection, in output order (stable sort)."""
    dim, k = params.dim, params.k
    key = x.astype(np.int64) if x.dtype.kind == "i" else x.astype(np.float64)
    if params.largest:
        key = -key
    return np.take(np.argsort(key, axis=dim, kind="stable"), np.arange(k), axis=dim)


def topk_values(params: Params, x: np.ndarray) -> np.ndarray:
    """The sorted top-k values: unique even with ties."""
    return np.take_along_axis(x, _positions(params, x), axis=params.dim)


def reference(params: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    x = inputs[0]
    pos = _positions(params, x)
    values = np.take_along_axis(x, pos, axis=params.dim)
    if params.indices == "arg":
        indices = np.take_along_axis(inputs[1], pos, axis=params.dim).astype(np_dtype(params.index_dtype))
    else:
        indices = pos.astype(np_dtype(params.index_dtype))
    out = []
    if params.use in ("values", "both"):
        out.append(values)
    if params.use in ("indices", "both"):
        out.append(indices)
    return out


# ----------------------------------------------------------------------------- compare


def _check_indices(params: Params, inputs: list[np.ndarray], want: np.ndarray, got: np.ndarray) -> str | None:
    """Indices judged by what they select: distinct, valid, and picking exactly `want` (the rule
    exported tests copy, so the oracle and the exports judge ties alike)."""
    labels = inputs[1] if params.indices == "arg" else None
    return check_topk_indices(inputs[0], labels, params.dim, want, got)


def compare(
    params: Params,
    inputs: list[np.ndarray],
    expected: list[np.ndarray],
    actual: list[np.ndarray],
) -> Mismatch | None:
    problem = count_mismatch(expected, actual)
    if problem:
        return problem
    want_values = topk_values(params, inputs[0])
    names = [u for u in ("values", "indices") if params.use in (u, "both")]
    for i, (name, want, got) in enumerate(zip(names, expected, actual)):
        got = np.asarray(got)
        problem = shape_mismatch(i, want, got)
        if problem:
            return Mismatch(problem.kind, f"{name}: {problem.detail}")
        if name == "values":
            problem = values_mismatch(i, want, got)
            if problem:
                return Mismatch(problem.kind, f"values: {problem.detail}")
        else:
            if got.dtype.kind not in "iu":
                return Mismatch(MismatchKind.DTYPE, f"indices: dtype {got.dtype}, expected an integer type")
            detail = _check_indices(params, inputs, want_values, got)
            if detail:
                return Mismatch(MismatchKind.INDICES, f"indices: {detail}")
    return None


def export_rule(p: Params) -> dict:
    """`compare` for exported tests: values exactly, indices by what they select (ties allowed)."""
    return {"kind": "topk", "dim": int(p.dim), "k": int(p.k), "largest": bool(p.largest),
            "labels": p.indices == "arg", "results": [name for name in ("values", "indices") if p.use in (name, "both")]}


# ----------------------------------------------------------------------------- strategy


def is_valid(params: Params) -> bool:
    rank = len(params.shape)
    return (
        1 <= rank <= 3
        and len(params.input_dyn) == rank
        and 0 <= params.dim < rank
        and min(params.shape) >= 1
        and 1 <= params.k <= params.shape[params.dim]
        and not (params.transpose and params.dim == rank - 1)
        and params.form in FORMS
        and params.indices in INDEX_MODES
        and params.use in USES
        and params.dtype in DTYPES
        and params.values in ("wide", "ties")
        and params.index_dtype in INDEX_DTYPES
        and (not params.result_dyn or (len(params.result_dyn) == rank and not params.result_dyn[params.dim]))
    )


def _draw_k(draw: st.DrawFn, n: int) -> int:
    """k over its whole range 1..n: the ends, n-1, above 40, and anything between."""
    options = [st.just(1), st.just(n), st.integers(1, n), st.integers(1, min(n, 8))]
    if n > 1:
        options.append(st.just(n - 1))
    if n > 41:
        options.append(st.integers(41, n))
    return draw(st.one_of(options))


def _draw_result_dyn(draw: st.DrawFn, dynamic: list[bool], dim: int) -> list[bool]:
    """About one case in five declares some result dims static where the input is `?`, or `?`
    where it is static (the sorted dim is k, static)."""
    if len(dynamic) < 2 or draw(st.integers(0, 4)) != 0:
        return []
    declared = [False if i == dim else (d != draw(st.booleans())) for i, d in enumerate(dynamic)]
    derived = [False if i == dim else d for i, d in enumerate(dynamic)]
    return [] if declared == derived else declared


@st.composite
def _params(draw: st.DrawFn, regime: str = "small") -> Params:
    rank = draw(st.integers(1, 3))
    dim = draw(st.integers(0, rank - 1))
    pool = draw(st.sampled_from(("small",) * 6 + ("pow2",) * 3 + ("large",)))
    if regime == "large":
        pool = "regime_large"
    sorted_sizes = {"small": _SORTED_SIZES, "pow2": _POW2_SORTED_SIZES, "large": _LARGE_SORTED_SIZES,
                    "regime_large": _LARGE_REGIME_SORTED_SIZES}[pool]
    shape = []
    for i in range(rank):
        if i == dim:
            shape.append(draw(st.sampled_from(sorted_sizes)))
        else:
            shape.append(draw(st.sampled_from(_SMALL_SIZES if regime == "small" else (16, 31, 64, 129))))
    # Keep the element count modest: shrink outer dims to fit.
    cap = _MAX_ELEMENTS_LARGE if regime == "large" else _MAX_ELEMENTS
    while int(np.prod(shape)) > cap:
        i = max((j for j in range(rank) if j != dim), key=lambda j: shape[j])
        shape[i] = max(1, shape[i] // 2)
    k = _draw_k(draw, shape[dim])
    dyn_mode = draw(st.sampled_from(("none", "all", "mixed")))
    if dyn_mode == "none":
        dynamic = [False] * rank
    elif dyn_mode == "all":
        dynamic = [True] * rank
    else:
        dynamic = [draw(st.booleans()) for _ in range(rank)]
        if rank > 1 and len(set(dynamic)) == 1:  # make the mix truly partial
            flip = draw(st.integers(0, rank - 1))
            dynamic[flip] = not dynamic[flip]
    form = draw(st.sampled_from(FORMS))
    return Params.from_json({
        "form": form,
        "indices": draw(st.sampled_from(INDEX_MODES)),
        "use": draw(st.sampled_from(USES)),
        "dtype": draw(st.sampled_from(DTYPES)),
        "shape": shape,
        "dynamic": dynamic,
        "dim": dim,
        "k": k,
        "largest": draw(st.booleans()),
        "transpose": dim != rank - 1 and draw(st.booleans()),
        "values": draw(st.sampled_from(("wide", "ties"))),
        "index_dtype": draw(st.sampled_from(INDEX_DTYPES)),
        "result_dyn": _draw_result_dyn(draw, dynamic, dim),
    })


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return _params(regime)


# ----------------------------------------------------------------------------- forms, features, shrink


def equivalent_forms(params: Params) -> list[Params]:
    """Other formulations with the same function signature and the same answer."""
    modes = ("arg",) if params.indices == "arg" else ("implicit", "iota")
    transposes = (False, True) if params.dim != len(params.shape) - 1 else (False,)
    out = []
    for form in FORMS:
        for indices in modes:
            for transpose in transposes:
                other = params.replace(form=form, indices=indices, transpose=transpose)
                if other != params:
                    out.append(other)
    return out


# Features the strategy must reach (the family contract test draws and checks each).
FEATURES = (
    "dyn:none", "dyn:all", "dyn:mixed",
    "rank:1", "rank:2", "rank:3",
    "form:topk", "form:sort", "transpose",
    "indices:implicit", "indices:iota", "indices:arg",
    "use:values-only", "use:indices-only", "use:both",
    "dtype:f32", "dtype:f16", "dtype:i32", "dtype:i8",
    "order:largest", "order:smallest", "dim:last", "dim:not-last",
    "sorted-dim:dynamic", "values:ties", "k=1", "k=n", "size:large",
    "k=n-1", "k>40", "k:inner", "n:pow2", "n:pow2+-1", "index:i32", "index:i64",
    "result:static-of-dyn", "result:dyn-of-static",
)  # fmt: skip


def features(params: Params) -> list[str]:
    dynamic, rank, dim = params.input_dyn, len(params.shape), params.dim
    n, k = params.shape[dim], params.k
    dyn = "none" if not any(dynamic) else "all" if all(dynamic) else "mixed"
    use = {"values": "values-only", "indices": "indices-only", "both": "both"}[params.use]
    feats = [
        f"dyn:{dyn}",
        f"rank:{rank}",
        f"form:{params['form']}",
        f"indices:{params['indices']}",
        f"use:{use}",
        f"dtype:{params['dtype']}",
        "order:largest" if params.largest else "order:smallest",
        "dim:last" if dim == rank - 1 else "dim:not-last",
        f"values:{params['values']}",
    ]
    if params.transpose:
        feats.append("transpose")
    if dynamic[dim]:
        feats.append("sorted-dim:dynamic")
    if k == 1:
        feats.append("k=1")
    if k == n:
        feats.append("k=n")
    if n > 256:
        feats.append("size:large")
    if 1 < k == n - 1:
        feats.append("k=n-1")
    if k > 40:
        feats.append("k>40")
    if 1 < k < n - 1:
        feats.append("k:inner")
    if n in _POW2_SORTED_SIZES and n > 64:
        feats.append("n:pow2+-1" if n & (n - 1) else "n:pow2")
    feats.append(f"index:{params.index_dtype}")
    if params.result_dyn:
        derived = _derived_output_dynamic(params)
        if any(d and not r for d, r in zip(derived, params.result_dyn)):
            feats.append("result:static-of-dyn")
        if any(r and not d for d, r in zip(derived, params.result_dyn)):
            feats.append("result:dyn-of-static")
    return feats


# Swarm knobs: each removes one feature from a drawn case (Family.swarm_strategy).
SWARM = {
    "static": lambda p: p.replace(input_dyn=[False] * len(p.input_dyn)),
    "f32": lambda p: p.replace(dtype="f32"),
    "i32-indices": lambda p: p.replace(index_dtype="i32"),
    "no-transpose": lambda p: p.replace(transpose=False),
    "implicit-indices": lambda p: p.replace(indices="implicit"),
    "distinct-values": lambda p: p.replace(values="wide"),
    "derived-result-types": lambda p: p.replace(result_dyn=()),
}


def shrink_candidates(params: Params) -> list[Params]:
    """Strictly simpler valid params, most aggressive first."""
    out: list[Params] = []

    def add(**changes: Any) -> None:
        out.append(params.replace(**changes))

    shape, dynamic, dim, k = params.shape, params.input_dyn, params.dim, params.k
    rank = len(shape)
    # Lower rank: drop each non-sorted dim.
    for i in range(rank):
        if i != dim and rank > 1:
            new_dim = dim - (1 if i < dim else 0)
            new_rank = rank - 1
            add(
                shape=[s for j, s in enumerate(shape) if j != i],
                input_dyn=[d for j, d in enumerate(dynamic) if j != i],
                result_dyn=[r for j, r in enumerate(params.result_dyn) if j != i] if params.result_dyn else (),
                dim=new_dim,
                transpose=params.transpose and new_dim != new_rank - 1,
            )
    # Smaller sorted dim (down to k), smaller k, outer dims to 1.
    if shape[dim] > k:
        add(shape=[k if j == dim else s for j, s in enumerate(shape)])
        half = max(k, shape[dim] // 2)
        add(shape=[half if j == dim else s for j, s in enumerate(shape)])
    if k > 1:
        add(k=1)
        add(k=k // 2)
    for i in range(rank):
        if i != dim and shape[i] > 1:
            add(shape=[1 if j == i else s for j, s in enumerate(shape)])
            add(shape=[s // 2 if j == i else s for j, s in enumerate(shape)])
    # Fewer dynamic dims.
    if any(dynamic):
        add(input_dyn=[False] * rank)
        for i in range(rank):
            if dynamic[i]:
                add(input_dyn=[d and j != i for j, d in enumerate(dynamic)])
    # Simpler formulation and options.
    if params.transpose:
        add(transpose=False)
    if params.form != "topk":
        add(form="topk")
    if params.indices != "implicit":
        add(indices="implicit")
    if params.dtype != "f32":
        add(dtype="f32")
    if params.index_dtype != "i32":
        add(index_dtype="i32")
    if params.result_dyn:
        add(result_dyn=())
    if not params.largest:
        add(largest=True)
    return out


FAMILY = Family.define("topk", Params, globals())
