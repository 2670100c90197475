#!/usr/bin/env python3
"""How the repository's corpus/ was seeded, so it can be regenerated with a future toolchain.

Each seed is a shapefuzz-generated case (family + parameters) and the backend it fails on with
IREE 3.13. For every seed this script

  1. renders the case (with its `// shapefuzz-case:` header) to WORK/NAME.mlir,
  2. shrinks it:      shapefuzz shrink WORK/NAME.mlir --backends BACKEND --time TIME
  3. saves it:        shapefuzz corpus add WORK/NAME.min.mlir --backends BACKEND --corpus CORPUS

and prints what each step said; the shrunk text is then checked against REVIEW (below), the
hand review each entry got. It is not part of the test suite (about 8 minutes on 2 cores, most
of it the scatter out-of-memory seed, whose compiles run until iree-compile hits the 8 GiB cap).
Two seeds share one signature ("value evaluated as N is out of range" on rocm-gfx942, topk and
conv) and so one entry: the conv one is merged into it (count 2), keeping the smaller reproducer.

    .venv/bin/python scripts/seed_corpus.py                      # all seeds into corpus/
    .venv/bin/python scripts/seed_corpus.py --only topk-cpu-sort-indices-dynamic --list
    .venv/bin/python scripts/seed_corpus.py --corpus /tmp/c --work /tmp/w --time 1m

Against a newer compiler some seeds may pass (fixed) or fail differently; `shapefuzz replay
corpus/` tells which. Run one shrink at a time on a small machine (this script does).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# The strided insert_slice + pad miscompile, at the parameters the shrinker reached from the family
# test's case (groups 3, rank 2, ...), with w_layout made a permutation again: the generic
# "ints toward 1" reduction turns [0, 1, 2] into [0, 1, 1], which renders to IR that still verifies
# but is outside the family (its reference is right only by accident); see REVIEW below.
_STRIDED_INSERT_PAD = {
    "rank": 1, "dtype": "f32", "n": 1, "groups": 1, "ci": 2, "co": 1, "in_size": [3], "kernel": [1], "stride": [2],
    "dilation": [1], "pad_lo": [0], "pad_hi": [0], "out_pad": [1], "dyn_x": [True, False, False],
    "w_layout": [0, 1, 2], "form": "named", "flip": "extract", "pad_mode": "pad", "x_expand": "late",
    "w_order": "fused", "fwd_layout": [0, 1, 2]}

# name -> (family, backend, params, what it is). Parameters as found (from the family tests);
# the shrinker reduces them further before the entry is saved.
SEEDS: dict[str, tuple[str, str, dict, str]] = {
    "convt-flip-map-cpu": (
        "conv_transpose", "llvm-cpu",
        {"rank": 1, "dtype": "f32", "n": 3, "groups": 1, "ci": 9, "co": 1, "in_size": [2], "kernel": [5],
         "stride": [1], "dilation": [1], "pad_lo": [1], "pad_hi": [2], "out_pad": [0],
         "dyn_x": [False, False, True], "w_layout": [2, 1, 0], "form": "generic", "flip": "map",
         "pad_mode": "pad", "x_expand": "late", "w_order": "split", "fwd_layout": [0, 1, 2]},
        "filter flip by a K-1-d indexing map fails to compile "
        "('... to be greater than or equal to N, but found N')",
    ),
    "convt-strided-insert-pad-cpu": (
        "conv_transpose", "llvm-cpu", _STRIDED_INSERT_PAD,
        "strided tensor.insert_slice into zeros then tensor.pad loses the stride: wrong numbers",
    ),
    "convt-strided-insert-pad-vmvx": (
        "conv_transpose", "vmvx", _STRIDED_INSERT_PAD,
        "the same strided insert_slice + pad miscompile on vmvx",
    ),
    "topk-cpu-sort-indices-dynamic": (
        "topk", "llvm-cpu",
        {"form": "sort", "indices": "implicit", "use": "indices", "dtype": "f32", "shape": [16],
         "dynamic": [True], "dim": 0, "k": 1, "largest": True, "transpose": False, "values": "wide"},
        "sort with only the indices result used, dynamic sorted dim: unbounded stack allocation",
    ),
    "topk-cuda-sort-indices-static": (
        "topk", "cuda-sm80",
        {"form": "sort", "indices": "implicit", "use": "indices", "dtype": "f32", "shape": [32],
         "dynamic": [False], "dim": 0, "k": 1, "largest": True, "transpose": False, "values": "wide"},
        "sort with only the indices result used, static n >= 32: failed to bufferize op",
    ),
    "topk-vulkan-sort-indices-dynamic": (
        "topk", "vulkan-spirv",
        {"form": "sort", "indices": "implicit", "use": "indices", "dtype": "f32", "shape": [5, 33],
         "dynamic": [True, True], "dim": 1, "k": 4, "largest": True, "transpose": False, "values": "wide"},
        "sort with only the indices result used, dynamic sorted dim: shared memory limit exceeded",
    ),
    "topk-rocm-sort-indices-dynamic": (
        "topk", "rocm-gfx942",
        {"form": "sort", "indices": "implicit", "use": "indices", "dtype": "f32", "shape": [5, 33],
         "dynamic": [True, True], "dim": 1, "k": 4, "largest": True, "transpose": False, "values": "wide"},
        "sort with only the indices result used, dynamic sorted dim: value evaluated as N is out of range",
    ),
    "scatter-batch0-depth1-oom-cpu": (
        "scatter", "llvm-cpu",
        {"form": "linalg_ext", "dtype": "f32", "index_dtype": "i32", "orig_shape": [5, 3],
         "orig_dyn": [False, False], "depth": 1, "dimension_map": [0], "batch_shape": [], "batch_dyn": [],
         "window_dyn": [False], "implicit_depth": False, "combiner": "overwrite", "unique": True,
         "duplicates": False},
        "scatter with batch rank 0 and index depth 1: iree-compile allocates without bound",
    ),
    "scatter-vulkan-add-unique-unit-window": (
        "scatter", "vulkan-spirv",
        {"form": "linalg_ext", "dtype": "i32", "index_dtype": "i32", "orig_shape": [5, 1],
         "orig_dyn": [False, False], "depth": 1, "dimension_map": [0], "batch_shape": [2], "batch_dyn": [False],
         "window_dyn": [False], "implicit_depth": False, "combiner": "add", "unique": True,
         "duplicates": False},
        "add scatter, unique indices, unit trailing window: each update applied 8 times",
    ),
    "onehot-scatter-dynamic-stack-cpu": (
        "one_hot", "llvm-cpu",
        # found by `shapefuzz gen --op one_hot --seed 20` (index_shape [3, 1, 1], depth 17 dynamic,
        # axis 0, range "oob", i64 indices), reduced by a parameter descent that keeps the family's
        # is_valid (see REVIEW)
        {"axis": -1, "consumer": "none", "depth": 1, "depth_dyn": False, "dimension_map": [0, 1, 2, 3],
         "dtype": "f32", "form": "scatter", "index_dtype": "i32", "index_dyn": [True, True, True],
         "index_shape": [1, 1, 1], "off": 0.0, "on": 1.0, "range": "valid", "values": "const"},
        "one_hot as a scatter with dynamic index dims: 'exceeded stack allocation limit' "
        "(static index dims, or the generic form, compile)",
    ),
    "conv-generic-bias-init-dynamic-cpu": (
        "conv", "llvm-cpu",
        {"rank": 1, "kind": "regular", "layout": "ncw_fcw", "compute_layout": "ncw_fcw", "form": "generic",
         "loop_perm": [0, 1, 2, 3, 4], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 2, "f": 3, "m": 1,
         "spatial": [4], "kernel": [3], "strides": [1], "dilations": [1], "pad_lo": [0], "pad_hi": [0],
         "pad_form": "none", "pad_value": 0, "in_dyn": {"n": False, "c": False, "s0": True},
         "filt_dyn": {"k0": False, "c": False, "f": False}, "bias": "init", "epilogue": "none", "big": False},
        "generic conv, bias as accumulator, dynamic spatial: 'write affecting operations on global "
        "resources are restricted to workgroup distributed contexts'",
    ),
    "conv-rocm-dynamic-kernel-out-of-range": (
        "conv", "rocm-gfx942",
        {"rank": 2, "kind": "regular", "layout": "nhwc_hwcf", "compute_layout": "nhwc_hwcf", "form": "named",
         "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 1, "f": 1, "m": 1,
         "spatial": [1, 6], "kernel": [1, 5], "strides": [1, 1], "dilations": [1, 1], "pad_lo": [0, 0],
         "pad_hi": [0, 0], "pad_form": "none", "pad_value": 0,
         "in_dyn": {"n": False, "s0": False, "s1": False, "c": False},
         "filt_dyn": {"k0": True, "k1": False, "c": True, "f": False}, "bias": "none", "epilogue": "none",
         "big": False},
        "dynamic filter height: 'value evaluated as N is out of range' (same signature as the topk "
        "rocm seed: merged into its entry)",
    ),
    "conv-rocm-dynamic-filter-partial-reduction": (
        "conv", "rocm-gfx942",
        {"rank": 1, "kind": "regular", "layout": "nwc_wcf", "compute_layout": "nwc_wcf", "form": "named",
         "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 1, "f": 1, "m": 1,
         "spatial": [1], "kernel": [1], "strides": [1], "dilations": [1], "pad_lo": [0], "pad_hi": [0],
         "pad_form": "none", "pad_value": 0, "in_dyn": {"n": False, "s0": False, "c": False},
         "filt_dyn": {"k0": True, "c": True, "f": False}, "bias": "none", "epilogue": "none", "big": False},
        "dynamic kernel width and channels: 'failed to pack reduction dimensions for partial reduction'",
    ),
    "conv-1d-stride3-cpu": (
        "conv", "llvm-cpu",
        {"rank": 1, "kind": "regular", "layout": "nwc_wcf", "compute_layout": "nwc_wcf", "form": "named",
         "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 1, "f": 1, "m": 1,
         "spatial": [3], "kernel": [2], "strides": [3], "dilations": [1], "pad_lo": [0], "pad_hi": [0],
         "pad_form": "none", "pad_value": 0, "in_dyn": {"n": False, "s0": False, "c": False},
         "filt_dyn": {"c": False, "f": False, "k0": False}, "bias": "none", "epilogue": "none", "big": False},
        "conv_1d_nwc_wcf whose one stride-3 window leaves input elements unread: compile error "
        "(tests/data/conv1d_stride3.mlir)",
    ),
    "conv-1d-dynbatch-slice-oob-cpu": (
        "conv", "llvm-cpu",
        {"rank": 1, "kind": "regular", "layout": "nwc_wcf", "compute_layout": "nwc_wcf", "form": "named",
         "loop_perm": [], "dtype": "f32", "acc": "f32", "n": 1, "g": 1, "c": 24, "f": 40, "m": 1,
         "spatial": [29], "kernel": [7], "strides": [23], "dilations": [1], "pad_lo": [0], "pad_hi": [0],
         "pad_form": "none", "pad_value": 0, "in_dyn": {"n": True, "s0": False, "c": False},
         "filt_dyn": {"c": False, "f": False, "k0": False}, "bias": "none", "epilogue": "none", "big": False},
        "dynamic-batch conv_1d_nwc_wcf, one window: 'slice along dimension N runs out-of-bounds' "
        "(tests/data/shrink_conv1d_dynbatch.mlir)",
    ),
}


# Reviewing the shrinker's output. For a compile-stage failure `shapefuzz shrink` goes on from the
# parameters to text passes, which can drift to input that still verifies but is not what the bug
# is about (a zero slice stride, an out-of-bounds window once a size folds, another accumulator).
# Each entry here was read by hand against 3.13; "tidy" edits the shrunk text back to sound input
# (kept only if the signature stays the same), "case" keeps the generated case instead.
_ZERO_STRIDES = (r"(tensor\.extract_slice [^\n]*\] \[[^\]]*\] )\[([0, ]+)\]",
                 lambda m: m.group(1) + "[" + m.group(2).replace("0", "1") + "]")
REVIEW: dict[str, dict] = {
    # shrink_ints turns the unit stride of the one-element result slice into 0
    "topk-cpu-sort-indices-dynamic": {"tidy": [_ZERO_STRIDES]},
    "topk-cuda-sort-indices-static": {"tidy": [_ZERO_STRIDES]},
    "topk-rocm-sort-indices-dynamic": {"tidy": [_ZERO_STRIDES]},
    # ... and here also reads both dims of the 2-D input with %c0 (an iota of the wrong shape
    # unless the input is square)
    "topk-vulkan-sort-indices-dynamic": {"tidy": [
        _ZERO_STRIDES,
        (r"(%c0 = arith.constant 0 : index)", r"\1\n    %c1 = arith.constant 1 : index"),
        (r"(%dim_0 = tensor.dim %arg0, )%c0", r"\1%c1"),
    ]},
    # the shrunk output width folds to 1 over an input of width 1 and a 2-wide filter: an
    # out-of-bounds window; an input of width 2 makes it sound and fails the same way
    "convt-flip-map-cpu": {"tidy": [(r"tensor<1x1x1xf32>", "tensor<1x1x2xf32>")]},
    # the output width 2 - K lost its K (tensor.dim of the filter became the constant 0)
    "conv-rocm-dynamic-filter-partial-reduction": {"tidy": [
        (r"    %0 = affine.apply #map\(\)\[%c0\]",
         "    %k = tensor.dim %arg1, %c0 : tensor<?x?x1xf32>\n    %0 = affine.apply #map()[%k]"),
    ]},
    # text shrinking made the input itself the accumulator (outs(%input)); with the bias-broadcast
    # accumulator replaced by a separate argument it compiles, so the shrunk text is a different
    # construct: keep the generated case (already parameter-minimal: c=1 or f=1 compile)
    "conv-generic-bias-init-dynamic-cpu": {"case": True},
    # text shrinking rewrote the scatter coordinates into an arbitrary generic (every coordinate
    # from linalg.index 0, so unique_indices(true) no longer holds) scattering uninitialized
    # updates: keep the generated case, whose parameters are already minimal
    "onehot-scatter-dynamic-stack-cpu": {"case": True},
}


def render(family: str, params: dict) -> str:
    from shapefuzz.case import Case
    from shapefuzz.families import render_case

    return render_case(Case.make(family, params))


def shapefuzz(*args: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "shapefuzz", *args], cwd=REPO, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    return proc.returncode, proc.stdout


def signature_of(path: Path, backend: str) -> str | None:
    code, out = shapefuzz("check", str(path), "--backends", backend, "--no-confirm", "--json")
    try:
        return json.loads(out)["backends"][backend].get("signature")
    except (ValueError, KeyError):
        return None


def valid_case(path: Path) -> bool:
    """A file whose header parameters are outside the family (the family's own validity check)."""
    from shapefuzz.case import case_from_mlir
    from importlib import import_module

    case = case_from_mlir(path.read_text())
    if case is None:
        return True
    check = getattr(import_module(f"shapefuzz.families.{case.family}"), "is_valid", None)
    return check is None or bool(check(case.params))


def tidy(name: str, minimized: Path, backend: str) -> Path:
    rules = REVIEW.get(name, {}).get("tidy", [])
    if not rules:
        return minimized
    text = minimized.read_text()
    for pattern, replacement in rules:
        text = re.sub(pattern, replacement, text)
    if text == minimized.read_text():
        print("   review: the tidy rules did not apply (a new shrink result?): read it by hand", flush=True)
        return minimized
    tidied = minimized.with_suffix(".tidy.mlir")
    tidied.write_text(text)
    want, got = signature_of(minimized, backend), signature_of(tidied, backend)
    if want is None or want != got:
        print(f"   review: tidied text fails differently ({got}); keeping the shrunk text: read it by hand", flush=True)
        return minimized
    print(f"   review: tidied {tidied.name}, same signature", flush=True)
    return tidied


def seed_one(name: str, work: Path, corpus: Path, shrink_time: str, shrink: bool) -> bool:
    family, backend, params, what = SEEDS[name]
    print(f"== {name}: {family} on {backend}: {what}", flush=True)
    source = work / f"{name}.mlir"
    source.write_text(render(family, params))
    target = source
    if shrink and not REVIEW.get(name, {}).get("case"):
        started = time.monotonic()
        code, out = shapefuzz("shrink", str(source), "--backends", backend, "--time", shrink_time)
        print(out.rstrip(), f"\n   (shrink: exit {code}, {time.monotonic() - started:.0f} s)", flush=True)
        minimized = source.with_suffix(".min.mlir")
        if code != 0 or not minimized.is_file():
            print("   shrink failed; saving the unshrunk case", flush=True)
        elif not valid_case(minimized):
            print("   review: the shrunk parameters are outside the family; saving the unshrunk case", flush=True)
        else:
            target = tidy(name, minimized, backend)
    elif shrink:
        print("   review: text shrinking changes what this bug is about; saving the generated case", flush=True)
    code, out = shapefuzz("corpus", "add", str(target), "--backends", backend, "--corpus", str(corpus))
    print(out.rstrip(), f"\n   (corpus add: exit {code})", flush=True)
    return code == 0  # 0: at least one failure saved; 1: nothing failed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, default=REPO / "corpus")
    parser.add_argument("--work", type=Path, default=Path("/tmp/shapefuzz-seed"))
    parser.add_argument("--time", default="3m", help="shrink time limit per seed")
    parser.add_argument("--no-shrink", action="store_true")
    parser.add_argument("--only", nargs="*", help="seed names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the seeds and exit")
    args = parser.parse_args()
    if args.list:
        for name, (family, backend, _, what) in SEEDS.items():
            print(f"{name:44} {family:15} {backend:13} {what}")
        return 0
    names = args.only or list(SEEDS)
    unknown = [n for n in names if n not in SEEDS]
    if unknown:
        parser.error(f"unknown seeds: {', '.join(unknown)}")
    args.work.mkdir(parents=True, exist_ok=True)
    missed = [n for n in names if not seed_one(n, args.work, args.corpus, args.time, not args.no_shrink)]
    print(f"seeded {len(names) - len(missed)} of {len(names)}" + (f"; no failure saved for: {', '.join(missed)}"
                                                                 if missed else ""))
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
