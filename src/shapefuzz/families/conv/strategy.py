"""Drawing conv cases: size tables, the multiply-accumulate budget, `params_from_seed` and the Hypothesis strategy."""

from __future__ import annotations

import random

from hypothesis import strategies as st
import numpy as np

from shapefuzz.families.common import is_float, np_dtype
from shapefuzz.families.conv.forms import quantization_problem
from shapefuzz.families.conv.params import (
    DTYPES, I8_MAX, I8_MIN, LAYOUTS, Layout, Params, boundary_labels, filter_labels, input_labels, layouts_for, output_labels,
    permuted)
from shapefuzz.families.conv.shapes import input_shape, loop_labels, out_dyn, output_shape


# --------------------------------------------------------------------------------------------
# Strategy

SPATIAL = [1, 1, 2, 3, 4, 5, 7, 8, 9, 11, 13, 16, 17]
CHANNELS = [1, 1, 2, 3, 4, 5, 7, 8, 9, 16, 17, 32]
BATCH = [1, 1, 1, 2, 3]
KERNEL = [1, 1, 2, 3, 3, 5]
STRIDE = [1, 1, 1, 2, 3]
DILATION = [1, 1, 1, 2, 3]
PAD = [0, 0, 0, 1, 1, 2, 3]
BIG_SPATIAL = [31, 33, 64, 65, 127, 129]
BIG_CHANNELS = [31, 33, 64, 65, 128, 129, 257]
# Multiply-accumulates allowed per case, so the NumPy reference (and a CPU run) stays quick;
# big cases are meant for compile-only GPU targets but still get a reference.
MAX_MACS = 2_000_000
MAX_MACS_BIG = 200_000_000
# The large regime (for compile-only lanes): spatial 32-64, channels 64-512, inputs over 64 KB.
LARGE_SPATIAL = [32, 33, 40, 48, 63, 64]
LARGE_CHANNELS = [64, 65, 96, 128, 255, 256, 512]
LARGE_MIN_INPUT_BYTES = 64 * 1024
LARGE_MAX_INPUT_BYTES = 16 << 20  # inputs are still made (and a reference computed) in memory


def macs(p: Params) -> int:
    per_out = int(np.prod(p.kernel)) * (p.c if p.kind in ("regular", "grouped") else 1)
    return int(np.prod(output_shape(p))) * per_out


def _fit_budget(d: dict, regime: str = "small") -> None:
    """Halve the largest spatial size (keeping the output >= 1), then channels, until the case
    (a params dict being drawn) is within its multiply-accumulate budget. The large regime
    halves channels first (down to 64), keeping its spatial sizes."""
    cap = MAX_MACS_BIG if d["big"] else MAX_MACS
    while macs(Params.from_json(d)) > cap:
        if regime == "large":
            key = max(("c", "f"), key=lambda k: d[k])
            if d[key] > 64:
                d[key] = max(64, d[key] // 2)
                continue
        sp = d["spatial"]
        i = max(range(d["rank"]), key=lambda j: sp[j])
        need = max(1, d["dilations"][i] * (d["kernel"][i] - 1) + 1 - d["pad_lo"][i] - d["pad_hi"][i])
        if sp[i] // 2 >= need and sp[i] > 1:
            sp[i] //= 2
            continue
        key = max(("c", "f", "g", "n", "m"), key=lambda k: d[k])
        if d[key] == 1:
            break
        d[key] = (d[key] + 1) // 2


def _default_dyn(layout: Layout, value: bool = False) -> tuple[dict, dict]:
    return ({lab: value for lab in input_labels(layout)},
            {lab: value for lab in filter_labels(layout)})


def pick(rng: random.Random, seq):
    seq = list(seq)
    return seq[rng.randrange(len(seq))]


_LAYOUT_DRAWS = sorted(LAYOUTS) + ["ncdhw_fcdhw", "ncdhw_fcdhw", "ncdhw_fcdhw", "nchw_fchw",
                                   "nhwc_hwcf", "ndhwc_dhwcf", "ngchw_gfchw", "ncdhw_cdhw"]


def _grow_input(d: dict, min_bytes: int) -> None:
    """Double the channels (then the batch) until the input is over `min_bytes`."""
    p = Params.from_json(d)
    while int(np.prod(input_shape(p))) * np_dtype(d["dtype"]).itemsize <= min_bytes:
        key = "c" if d["c"] < 512 else "n"
        d[key] *= 2
        p = Params.from_json(d)


def params_from_seed(seed: int, regime: str = "small") -> Params:
    """One valid case, drawn from a seeded generator.

    Hypothesis supplies only the seed: drawing each categorical choice through Hypothesis
    left whole layouts unreached in hundreds of derandomized draws (its mutations correlate the
    choices), while independent uniform choices reach every layout and feature. Structured
    shrinking is this family's `shrink_candidates`, not Hypothesis's."""
    rng = random.Random(seed)
    big = regime == "large" or pick(rng, [False] * 29 + [True])  # about 1 in 30
    # Every layout, plus extra weight on the common ones and on the class-1 bug's layout
    # (3-D channels-first with a size-1 kernel dim).
    layout = LAYOUTS[pick(rng, _LAYOUT_DRAWS)]
    rank, kind = layout.rank, layout.kind
    choices = layouts_for(rank, kind)
    compute = layout
    if pick(rng, (False, False, False, True)):
        compute = pick(rng, choices)
    form = "generic"
    if compute.named_op is not None and pick(rng, (False, True)):
        form = "named"
    par, red = loop_labels(kind, rank)
    nloops = len(par) + len(red)
    if form == "generic" and pick(rng, (False, True)):
        loop_perm = list(range(nloops))
        rng.shuffle(loop_perm)
    else:
        loop_perm = list(range(nloops))
    if form == "named":
        loop_perm = []
    dtype = pick(rng, ["f32", "f32", "f16", "i32", "i8"])
    acc = pick(rng, DTYPES[dtype])

    chans = LARGE_CHANNELS if regime == "large" else BIG_CHANNELS if big else CHANNELS
    spat_choices = LARGE_SPATIAL if regime == "large" else BIG_SPATIAL if big else SPATIAL
    n = pick(rng, BATCH)
    g = pick(rng, [2, 2, 3, 4, 5, 1] + ([8, 17] if big else [])) if kind == "grouped" else 1
    c = pick(rng, chans)
    f = pick(rng, chans) if kind in ("regular", "grouped") else 1
    m = pick(rng, [1, 2, 3, 4]) if kind == "depthwise_m" else 1
    if big and kind == "grouped" and regime != "large":  # keep the total channel count moderate
        c = min(c, 33)
        f = min(f, 33)

    kernel, strides, dils, lo, hi, spatial = [], [], [], [], [], []
    for _ in range(rank):
        k = pick(rng, KERNEL)
        s = pick(rng, STRIDE)
        d = pick(rng, DILATION)
        a = pick(rng, PAD)
        z = pick(rng, PAD + [a, a])  # symmetric padding is common
        need = max(1, d * (k - 1) + 1 - a - z)
        size = max(pick(rng, spat_choices), need)
        kernel.append(k)
        strides.append(s)
        dils.append(d)
        lo.append(a)
        hi.append(z)
        spatial.append(size)
    if rank >= 2 and pick(rng, (False, False, True)):  # force a size-1 kernel dim
        kernel[pick(rng, range(rank))] = 1
    any_pad = any(lo) or any(hi)
    if any_pad:
        pad_form = pick(rng, ["pad", "pad", "insert"])
    else:
        pad_form = pick(rng, ["none", "none", "pad", "insert"])
    pad_value = 0
    if pad_form != "none" and pick(rng, (False, False, False, True)):
        pad_value = pick(rng, [1, -2, 0.5] if is_float(dtype) else [1, -2, 3])

    in_dyn, filt_dyn = _default_dyn(layout)
    mode = pick(rng, ["none", "all", "mixed", "mixed"])
    if mode == "all":
        in_dyn, filt_dyn = _default_dyn(layout, True)
    elif mode == "mixed":
        for dmap in (in_dyn, filt_dyn):
            for lab in dmap:
                dmap[lab] = pick(rng, (False, True))
    bias = pick(rng, ["none", "none", "epilogue", "init"])
    epilogue = pick(rng, ["none", "none", "relu"])
    # Free operand dim orders (drawn last, so every earlier choice of a seed stays as it was):
    # about one generic case in three takes its input / filter / output in other dim orders,
    # half of those with the linalg.generic itself in that order.
    perms: dict[str, list[int]] = {"input_perm": [], "filter_perm": [], "output_perm": []}
    perm_compute = False
    if form == "generic" and pick(rng, (False, False, True)):
        for key, labels in (("input_perm", input_labels(layout)), ("filter_perm", filter_labels(layout)),
                            ("output_perm", output_labels(layout))):
            if pick(rng, (False, True, True)):
                perm = list(range(len(labels)))
                rng.shuffle(perm)
                perms[key] = [] if perm == sorted(perm) else perm
        perm_compute = compute.name == layout.name and any(perms.values()) and pick(rng, (False, True))
    # Result types not derived from the operands: about one case in five declares some output
    # dims static where the operands leave them `?`, or `?` where the operands fix them.
    flip_result = pick(rng, (False, False, False, False, True))
    flips = [pick(rng, (False, True)) for _ in output_labels(layout)]
    b_in = permuted(input_labels(layout), tuple(perms["input_perm"]))
    b_filt = permuted(filter_labels(layout), tuple(perms["filter_perm"]))
    params = {
        "rank": rank, "kind": kind, "layout": layout.name, "compute_layout": compute.name,
        "form": form, "loop_perm": loop_perm, "dtype": dtype, "acc": acc,
        "n": n, "g": g, "c": c, "f": f, "m": m,
        "spatial": spatial, "kernel": kernel, "strides": strides, "dilations": dils,
        "pad_lo": lo, "pad_hi": hi, "pad_form": pad_form, "pad_value": pad_value,
        "input_dyn": [in_dyn[lab] for lab in b_in],
        "filter_dyn": [filt_dyn[lab] for lab in b_filt],
        "bias": bias, "epilogue": epilogue, "big": big, **perms, "perm_compute": perm_compute,
    }
    if flip_result:
        typed = Params.from_json(params)
        derived = [out_dyn(typed, lab) for lab in boundary_labels(typed)[2]]
        declared = [d != f for d, f in zip(derived, flips)]
        params["result_dyn"] = declared if declared != derived else []
    _fit_budget(params, regime)
    if dtype == "i8":  # drawn last, so every earlier choice of a seed stays as it was
        _quantize(rng, params)
    if regime == "large":
        _grow_input(params, LARGE_MIN_INPUT_BYTES)
        while _input_bytes(params) > LARGE_MAX_INPUT_BYTES and max(params["c"], params["n"]) > 64:
            params["c"] = max(64, params["c"] // 2)
        while _input_bytes(params) > LARGE_MAX_INPUT_BYTES:
            sp = params["spatial"]
            sp[max(range(len(sp)), key=lambda j: sp[j])] //= 2
    return Params.from_json(params)


# Zero points of a quantized i8 case: the extremes often, against inputs that reach them.
ZERO_POINTS = [0, 1, -1, 5, -9, I8_MAX, I8_MIN, I8_MAX, I8_MIN]


def _quantize(rng: random.Random, d: dict) -> None:
    """Two i8 cases in three get zero points (the padding, where there is one, often the input's
    zero point: a real zero, what ONNX's ConvInteger pads with); one in three of those that
    reduce few enough terms, and a share of the rest, go through dequantize (the qdq form)."""
    if pick(rng, (False, True, True)):
        d["input_zp"], d["filter_zp"] = pick(rng, ZERO_POINTS), pick(rng, ZERO_POINTS)
        if d["pad_form"] != "none" and pick(rng, (False, True)):
            d["pad_value"] = d["input_zp"]
    d["qdq"] = pick(rng, (False, False, True))
    if d["qdq"] and quantization_problem(Params.from_json(d)):
        d["qdq"] = False


def _input_bytes(d: dict) -> int:
    return int(np.prod(input_shape(Params.from_json(d)))) * np_dtype(d["dtype"]).itemsize


def strategy(regime: str = "small") -> st.SearchStrategy[Params]:
    return st.integers(0, 2**63 - 1).map(lambda seed: params_from_seed(seed, regime))
