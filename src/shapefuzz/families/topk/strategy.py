"""Drawing topk cases, and their equivalent forms, features, swarm knobs and shrink candidates."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
import numpy as np

from shapefuzz.families.topk.params import (
    DTYPES, FORMS, INDEX_DTYPES, INDEX_MODES, Params, USES, derived_output_dynamic)


# Sizes that matter: 1, small primes, just above powers of two.
_SMALL_SIZES = (1, 1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 33)
_SORTED_SIZES = (1, 2, 3, 5, 7, 8, 11, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129)
# Sorted dims around powers of two, where sort/topk kernels switch tiling or go multi-pass.
_POW2_SORTED_SIZES = (31, 32, 33, 255, 256, 257, 1023, 1024, 1025)
_LARGE_SORTED_SIZES = (257, 1025, 2049, 4099)
_LARGE_REGIME_SORTED_SIZES = (1023, 1024, 1025, 2047, 2049, 4096, 4099, 8191, 16385)
_MAX_ELEMENTS = 6000  # keeps CPU runs cheap; large sorted dims get tiny outer dims
_MAX_ELEMENTS_LARGE = 1 << 20  # the large regime (compile-only lanes): inputs of up to 4 MB


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
        derived = derived_output_dynamic(params)
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
