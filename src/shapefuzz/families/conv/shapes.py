"""Shape arithmetic of a conv case: dim labels, output sizes, operand shapes, which dims are dynamic."""

from __future__ import annotations

import numpy as np

from shapefuzz.families.conv.params import LAYOUTS, Params, boundary_labels, filter_labels, input_labels, output_labels


def compute_labels(p: Params) -> tuple[list[str], list[str], list[str]]:
    """The (input, filter, output) dim labels the convolution op itself takes."""
    if p.perm_compute:
        return boundary_labels(p)
    cl = LAYOUTS[p.compute_layout]
    return input_labels(cl), filter_labels(cl), output_labels(cl)


# --------------------------------------------------------------------------------------------
# Sizes


def out_size(size: int, k: int, stride: int, dil: int, lo: int, hi: int) -> int:
    return (size + lo + hi - dil * (k - 1) - 1) // stride + 1


def out_spatial(p: Params) -> list[int]:
    return [
        out_size(s, k, st_, d, lo, hi)
        for s, k, st_, d, lo, hi in zip(
            p.spatial, p.kernel, p.strides, p.dilations, p.pad_lo, p.pad_hi
        )
    ]


def label_size(p: Params, label: str) -> int:
    if label in ("n", "g", "c", "f", "m"):
        return p[label]
    i = int(label[1:])
    if label[0] == "s":
        return p.spatial[i]
    if label[0] == "k":
        return p.kernel[i]
    if label[0] == "p":
        return p.spatial[i] + p.pad_lo[i] + p.pad_hi[i]
    if label[0] == "o":
        return out_spatial(p)[i]
    raise AssertionError(label)


def input_shape(p: Params) -> list[int]:
    return [label_size(p, lab) for lab in boundary_labels(p)[0]]


def filter_shape(p: Params) -> list[int]:
    return [label_size(p, lab) for lab in boundary_labels(p)[1]]


def output_shape(p: Params) -> list[int]:
    return [label_size(p, lab) for lab in boundary_labels(p)[2]]


def bias_labels(kind: str) -> list[str]:
    return {"regular": ["f"], "grouped": ["g", "f"], "depthwise": ["c"], "depthwise_m": ["c", "m"]}[kind]


def bias_shape(p: Params) -> list[int]:
    return [p[lab] for lab in bias_labels(p.kind)]


def declared_out_dyn(p: Params, label: str) -> bool:
    """Whether an output dim is `?` in the IR's types: `result_dyn` when given, else derived."""
    if p.result_dyn:
        return p.result_dyn[boundary_labels(p)[2].index(label)]
    return out_dyn(p, label)


def out_dyn(p: Params, label: str) -> bool:
    """Whether an output dim is `?`: only when no operand gives its size statically."""
    ind, fd = p.in_dyn, p.filt_dyn
    if label == "n":
        return ind["n"]
    if label == "g":
        return ind["g"] and fd["g"]
    if label == "c":  # depthwise: a parallel dim of input and filter
        return ind["c"] and fd["c"]
    if label in ("f", "m"):
        return fd[label]
    i = label[1:]
    return ind["s" + i] or fd["k" + i]


def reduction_size(p: Params) -> int:
    size = int(np.prod(p.kernel))
    if p.kind in ("regular", "grouped"):
        size *= p.c
    return size


def loop_labels(kind: str, rank: int) -> tuple[list[str], list[str]]:
    """(parallel loop labels, reduction loop labels) in canonical order."""
    outs = [f"o{i}" for i in range(rank)]
    ks = [f"k{i}" for i in range(rank)]
    if kind == "regular":
        return ["n", "f", *outs], ["c", *ks]
    if kind == "grouped":
        return ["n", "g", "f", *outs], ["c", *ks]
    if kind == "depthwise":
        return ["n", "c", *outs], ks
    return ["n", "c", "m", *outs], ks
