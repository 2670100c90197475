"""The conv family: strategy coverage, verification, the NumPy reference, comparison, real compiler."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from support.family_testing import check_params, draw_params
from shapefuzz.invoke.execute import verify_many
from shapefuzz.families import conv as C
from shapefuzz.families.common import np_dtype
from shapefuzz.families.conv.reference import _exact_result
from shapefuzz.model import MismatchKind

FAMILY = C.FAMILY
N_DRAWN = 300


def _draw(n: int) -> list[dict]:
    return draw_params(FAMILY.strategy(), n)


@pytest.fixture(scope="module")
def drawn() -> list[dict]:
    return _draw(N_DRAWN)


def _base(**changes) -> dict:
    """A small static 1-D NWC/WCF convolution; tests change what they need."""
    p = {
        "rank": 1, "kind": "regular", "layout": "nwc_wcf", "compute_layout": "nwc_wcf",
        "form": "named", "loop_perm": [], "dtype": "f32", "acc": "f32",
        "n": 1, "g": 1, "c": 1, "f": 1, "m": 1,
        "spatial": [3], "kernel": [2], "strides": [1], "dilations": [1],
        "pad_lo": [0], "pad_hi": [0], "pad_form": "none", "pad_value": 0,
        "in_dyn": {"n": False, "s0": False, "c": False},
        "filt_dyn": {"k0": False, "c": False, "f": False},
        "bias": "none", "epilogue": "none", "big": False,
    }
    p.update(changes)
    layout = C.LAYOUTS[p["layout"]]
    if set(p["in_dyn"]) != set(C.input_labels(layout)):
        p["in_dyn"] = {lab: False for lab in C.input_labels(layout)}
    if set(p["filt_dyn"]) != set(C.filter_labels(layout)):
        p["filt_dyn"] = {lab: False for lab in C.filter_labels(layout)}
    if p["form"] == "generic" and not p["loop_perm"]:
        par, red = C.loop_labels(p["kind"], p["rank"])
        p["loop_perm"] = list(range(len(par) + len(red)))
    return p  # JSON as an old header spelled it (`in_dyn` dicts): every FAMILY method loads it


# ------------------------------------------------------------------------------------------
# Property tests: everything drawn renders, verifies, and has the reference's shape


def test_strategy_reaches_every_layout_and_named_op(drawn):
    # Every layout with a named op is drawn, and every named op is used.
    layouts = {p["layout"] for p in drawn}
    assert layouts == set(C.LAYOUTS), set(C.LAYOUTS) - layouts
    named = {p["compute_layout"] for p in drawn if p["form"] == "named"}
    assert named == {name for name, lay in C.LAYOUTS.items() if lay.named_op}


def test_shrink_candidates_are_simpler():
    p = _base(rank=3, layout="ncdhw_fcdhw", compute_layout="ndhwc_dhwcf", spatial=[5, 6, 3],
              kernel=[1, 3, 2], strides=[2, 1, 1], dilations=[1, 2, 1], pad_lo=[1, 0, 2],
              pad_hi=[0, 0, 2], pad_form="pad", pad_value=1, n=2, c=3, f=5, dtype="i8", acc="i32",
              bias="epilogue", epilogue="relu")
    assert FAMILY.is_valid(p)
    cands = FAMILY.shrink_candidates(p)
    assert cands[0]["rank"] == 2  # lower rank first
    size = lambda q: (q["rank"], sum(q["spatial"]) + sum(q["kernel"]) + q["n"] + q["c"] + q["f"])
    for q in cands:
        assert size(q) <= size(p)
    assert any(q["dtype"] == "f32" for q in cands)
    assert any(q["compute_layout"] == q["layout"] for q in cands)
    assert all(FAMILY.is_valid(q) for q in cands)


# ------------------------------------------------------------------------------------------
# The NumPy reference on hand-computed examples


def _ref(p, x, w, b=None):
    inputs = [np.asarray(x, dtype=np_dtype(p["dtype"])), np.asarray(w, dtype=np_dtype(p["dtype"]))]
    if b is not None:
        inputs.append(np.asarray(b, dtype=np_dtype(p["acc"])))
    return FAMILY.reference(p, inputs)[0]


def test_reference_1d_valid_and_padded():
    p = _base()
    x = np.array([1, 2, 3]).reshape(1, 3, 1)
    w = np.array([1, 1]).reshape(2, 1, 1)
    assert _ref(p, x, w).ravel().tolist() == [3, 5]
    p = _base(pad_lo=[1], pad_form="pad")
    assert _ref(p, x, w).ravel().tolist() == [1, 3, 5]
    p = _base(pad_lo=[1], pad_hi=[2], pad_form="insert", pad_value=-2)
    assert _ref(p, x, w).ravel().tolist() == [-1, 3, 5, 1, -4]


def test_reference_stride_dilation():
    p = _base(spatial=[5], strides=[2], dilations=[2])
    x = np.array([1, 2, 3, 4, 5]).reshape(1, 5, 1)
    w = np.array([1, 10]).reshape(2, 1, 1)
    # out[o] = x[2o] + 10 x[2o + 2], o in {0, 1}
    assert _ref(p, x, w).ravel().tolist() == [31, 53]


def test_reference_channels_and_filters():
    # NCW/FCW: 2 input channels, 2 filters, kernel 1.
    p = _base(layout="ncw_fcw", compute_layout="ncw_fcw", c=2, f=2, spatial=[2], kernel=[1])
    x = np.array([[1, 2], [3, 4]]).reshape(1, 2, 2)
    w = np.array([[1, 1], [1, -1]]).reshape(2, 2, 1)
    assert _ref(p, x, w).tolist() == [[[4, 6], [-2, -2]]]


def test_reference_grouped():
    p = _base(kind="grouped", layout="ngcw_gfcw", compute_layout="ngcw_gfcw", form="generic",
              g=2, spatial=[2], kernel=[1])
    x = np.array([[1, 2], [3, 4]]).reshape(1, 2, 1, 2)
    w = np.array([1, 2]).reshape(2, 1, 1, 1)
    # Group 0 sees channel 0 with weight 1; group 1 sees channel 1 with weight 2.
    assert _ref(p, x, w).reshape(2, 2).tolist() == [[1, 2], [6, 8]]


def test_reference_depthwise_2d_nchw_and_multiplier():
    p = _base(rank=2, kind="depthwise", layout="nchw_chw", compute_layout="nchw_chw", c=2,
              spatial=[2, 2], kernel=[2, 1], strides=[1, 1], dilations=[1, 1], pad_lo=[0, 0],
              pad_hi=[0, 0])
    x = np.array([[[1, 2], [3, 4]], [[5, 6], [7, 8]]]).reshape(1, 2, 2, 2)
    w = np.array([[[1], [1]], [[1], [-1]]]).reshape(2, 2, 1)
    # channel 0: rows summed [4, 6]; channel 1: row0 - row1 = [-2, -2]
    assert _ref(p, x, w).tolist() == [[[[4, 6]], [[-2, -2]]]]
    p = _base(kind="depthwise_m", layout="nwc_wcm", compute_layout="nwc_wcm", c=2, m=2,
              spatial=[1], kernel=[1])
    x = np.array([3, 5]).reshape(1, 1, 2)
    w = np.array([[1, 2], [10, 20]]).reshape(1, 2, 2)
    assert _ref(p, x, w).tolist() == [[[[3, 6], [50, 100]]]]


def test_reference_bias_relu_and_integer_types():
    p = _base(c=1, f=2, dtype="i8", acc="i32", bias="epilogue", epilogue="relu")
    x = np.array([1, -2, 3]).reshape(1, 3, 1)
    w = np.array([[1, -1], [1, -1]]).reshape(2, 1, 2)
    out = _ref(p, x, w, b=[1, 0])
    # filter 0: x[i]+x[i+1] = [-1, 1] + 1 -> [0, 2]; filter 1: [1, -1] -> relu [1, 0]
    assert out.dtype == np.int32 and out.tolist() == [[[0, 1], [2, 0]]]


def _naive(p, inputs):
    """An independent scalar-loop convolution over the boundary layout's labels."""
    io = C.LAYOUTS[p["layout"]]
    x, w = inputs[0], inputs[1]
    il, fl, ol = C.boundary_labels(p)
    oshape = C.output_shape(p)
    out = np.zeros(oshape, dtype=np.float64)
    depthwise = p["kind"].startswith("depthwise")
    for oidx in itertools.product(*[range(s) for s in oshape]):
        at = dict(zip(ol, oidx))
        chans = range(1) if depthwise else range(p["c"])
        total = 0.0
        for cc in chans:
            for kpos in itertools.product(*[range(k) for k in p["kernel"]]):
                ix = dict(at)
                if not depthwise:
                    ix["c"] = cc
                inside = True
                for i in range(p["rank"]):
                    pos = at[f"o{i}"] * p["strides"][i] + kpos[i] * p["dilations"][i] - p["pad_lo"][i]
                    ix[f"s{i}"] = pos
                    ix[f"k{i}"] = kpos[i]
                    inside &= 0 <= pos < p["spatial"][i]
                xv = x[tuple(ix[lab] for lab in il)] if inside else p["pad_value"]
                # zero points (quantized i8 cases) come off every input value, padding included
                total += (float(xv) - p["input_zp"]) * (float(w[tuple(ix[lab] for lab in fl)]) - p["filter_zp"])
        if p["bias"] != "none":
            total += float(inputs[2][tuple(at[lab] for lab in C.bias_labels(p["kind"]))])
        if p["epilogue"] == "relu":
            total = max(total, 0.0)
        out[oidx] = total
    return out


def test_reference_agrees_with_naive_loops(drawn):
    small = [p for p in drawn if not p["big"]
             and np.prod(C.output_shape(p)) * C.reduction_size(p) <= 4000][:60]
    assert len(small) >= 30
    for p in small:
        inputs = FAMILY.make_inputs(p, 7)
        (ref,) = FAMILY.reference(p, inputs)
        assert np.array_equal(ref.astype(np.float64), _naive(p, inputs)) or p["acc"] == "f16", p


def test_inputs_deterministic_and_exact():
    p = _base(rank=2, layout="nhwc_hwcf", compute_layout="nhwc_hwcf", spatial=[3, 4],
              kernel=[2, 2], strides=[1, 1], dilations=[1, 1], pad_lo=[0, 0], pad_hi=[0, 0],
              c=3, f=2, bias="init")
    a, b = FAMILY.make_inputs(p, 5), FAMILY.make_inputs(p, 5)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert all(np.array_equal(x * 4, np.round(x * 4)) for x in a)  # multiples of 1/4


# ------------------------------------------------------------------------------------------
# Comparison


def test_compare_exact_and_f16_tolerance():
    p = _base(c=3, f=2, spatial=[9], kernel=[3])
    inputs = FAMILY.make_inputs(p, 3)
    ref = FAMILY.reference(p, inputs)
    assert FAMILY.compare(p, inputs, ref, ref) is None
    off = [ref[0].copy()]
    off[0].flat[0] += 0.25
    assert FAMILY.compare(p, inputs, ref, off).kind == MismatchKind.VALUES
    assert FAMILY.compare(p, inputs, ref, [ref[0][:, :1]]).kind == MismatchKind.SHAPE
    q = _base(c=9, f=2, spatial=[9], kernel=[5], dtype="f16", acc="f16", bias="epilogue")
    inputs = FAMILY.make_inputs(q, 3)
    ref = FAMILY.reference(q, inputs)
    assert FAMILY.compare(q, inputs, ref, ref) is None
    # A result computed with f32 accumulation then rounded to f16 is also right.
    wide = _exact_result(FAMILY.load(q), inputs).astype(np.float32).astype(np.float16)
    assert FAMILY.compare(q, inputs, ref, [wide]) is None
    bad = [ref[0].copy()]
    bad[0].flat[1] = np.float16(100)
    assert FAMILY.compare(q, inputs, ref, bad).kind == MismatchKind.VALUES
    nan = [ref[0].copy()]
    nan[0].flat[0] = np.nan
    assert FAMILY.compare(q, inputs, ref, nan) is not None


# ------------------------------------------------------------------------------------------
# Against the real compiler on llvm-cpu

INTEGRATION = {
    # Class 1 from the brief: 3-D NCDHW with a size-1 kernel dim.
    "ncdhw-kernel1": _base(rank=3, layout="ncdhw_fcdhw", compute_layout="ncdhw_fcdhw", n=1, c=4,
                           f=3, spatial=[3, 5, 4], kernel=[1, 3, 2], strides=[1, 1, 1],
                           dilations=[1, 1, 1], pad_lo=[0, 1, 0], pad_hi=[0, 1, 1], pad_form="pad"),
    "nchw-transposed-generic-dyn": dict(
        _base(rank=2, layout="nchw_fchw", compute_layout="nhwc_hwcf", form="generic", n=2, c=3,
              f=5, spatial=[7, 5], kernel=[3, 1], strides=[2, 1], dilations=[1, 2],
              pad_lo=[1, 0], pad_hi=[2, 0], pad_form="insert", pad_value=-2, bias="epilogue",
              epilogue="relu"),
        in_dyn={"n": True, "c": False, "s0": True, "s1": False},
        filt_dyn={"f": False, "c": True, "k0": True, "k1": False},
        loop_perm=[6, 0, 3, 5, 1, 2, 4]),
    "grouped-nhwgc-i8": _base(rank=2, kind="grouped", layout="nhwgc_gfhwc",
                              compute_layout="nhwgc_gfhwc", g=3, c=2, f=2, spatial=[5, 4],
                              kernel=[2, 2], strides=[1, 2], dilations=[1, 1], pad_lo=[0, 0],
                              pad_hi=[0, 0], dtype="i8", acc="i32", bias="init"),
    "depthwise-m-3d-f16": _base(rank=3, kind="depthwise_m", layout="ncdhw_cmdhw",
                                compute_layout="ndhwc_dhwcm", form="named", c=3, m=2,
                                spatial=[4, 3, 5], kernel=[2, 1, 3], strides=[1, 1, 2],
                                dilations=[1, 1, 1], pad_lo=[1, 0, 0], pad_hi=[1, 0, 0],
                                pad_form="pad", dtype="f16", acc="f16"),
    "depthwise-1d-all-dynamic": dict(
        _base(kind="depthwise", layout="ncw_cw", compute_layout="ncw_cw", c=5, spatial=[17],
              kernel=[3], strides=[3], dilations=[2], dtype="i32", acc="i32"),
        in_dyn={"n": True, "c": True, "s0": True}, filt_dyn={"c": True, "k0": True}),
}


def _check(p):
    return check_params("conv", p, seed=0)


@pytest.mark.iree
@pytest.mark.parametrize("name", sorted(INTEGRATION))
def test_llvm_cpu_matches_reference(name):
    report = _check(INTEGRATION[name])
    assert report.verdict.value == "pass", report.to_json()


@pytest.mark.iree
def test_llvm_cpu_equivalent_forms_agree():
    p = INTEGRATION["ncdhw-kernel1"]
    forms = [q for q in FAMILY.equivalent_forms(p) if q["form"] == "generic" or q["pad_form"] == "insert"][:2]
    for q in forms:
        report = _check(q)
        assert report.verdict.value == "pass", (q, report.to_json())


# ------------------------------------------------------------------------------------------
# Real compiler bugs this family found (IREE 3.13 wheels). Recorded, never silenced: when a
# release fixes one, its test fails and the entry moves to the passing cases above.

KNOWN_FAILURES = {
    # A linalg.generic 1-D NCW convolution with a dynamic spatial dim whose accumulator is the
    # bias broadcast (a generic, not a fill): llvm-cpu fails to compile valid input. Passes with
    # a static spatial dim, with the named op, with the bias added after, or with c=1 or f=1.
    "llvm-cpu-generic-conv-bias-init-dynamic": (
        "llvm-cpu",
        dict(_base(layout="ncw_fcw", compute_layout="ncw_fcw", form="generic", c=2, f=3,
                   spatial=[4], kernel=[3], bias="init"),
             in_dyn={"n": False, "c": False, "s0": True}),
        "write affecting operations on global resources are restricted to workgroup "
        "distributed contexts",
    ),
    # A 2-D NHWC conv whose filter height is dynamic (1 at run time) over an input of height 1:
    # the output height is computed as 2 - KH in the IR. ROCm (gfx942) fails to compile it.
    "rocm-gfx942-dynamic-kernel-dim-out-of-range": (
        "rocm-gfx942",
        dict(_base(rank=2, layout="nhwc_hwcf", compute_layout="nhwc_hwcf", spatial=[1, 6],
                   kernel=[1, 5], strides=[1, 1], dilations=[1, 1], pad_lo=[0, 0], pad_hi=[0, 0]),
             filt_dyn={"k0": True, "k1": False, "c": True, "f": False}),
        "value evaluated as",
    ),
    # The smallest 1-D NWC conv (1x1x1 input) with a dynamic kernel width and channel count:
    # ROCm (gfx942) fails in its reduction tiling.
    "rocm-gfx942-dynamic-filter-partial-reduction": (
        "rocm-gfx942",
        dict(_base(spatial=[1], kernel=[1]), filt_dyn={"k0": True, "c": True, "f": False}),
        "failed to pack reduction dimensions for partial reduction",
    ),
}


@pytest.mark.iree
@pytest.mark.parametrize("name", sorted(KNOWN_FAILURES))
def test_known_compiler_failures_still_fail(name):
    backend, p, message = KNOWN_FAILURES[name]
    from shapefuzz.judge.oracle import check_module

    assert verify_many([FAMILY.render(p)]) == [None]  # valid input: the failure is the compiler's
    report = check_module(FAMILY.render(p), [backend], None, confirm=False)
    (result,) = report.results
    assert result.failed and message in str(result.signature), result.to_json()


# ------------------------------------------------------------------------------------------
# Free operand dim orders and result types not derived from the operands, on llvm-cpu

FREE_ORDERS = dict(
    _base(rank=2, layout="nhwc_hwcf", compute_layout="nhwc_hwcf", form="generic", n=2, c=3, f=4,
          spatial=[6, 5], kernel=[3, 2], strides=[2, 1], dilations=[1, 2], pad_lo=[1, 0],
          pad_hi=[0, 1], pad_form="pad", bias="init"),
    in_dyn={"n": True, "s0": False, "s1": True, "c": False},
    input_perm=[3, 0, 2, 1], filter_perm=[0, 3, 2, 1], output_perm=[1, 3, 0, 2], perm_compute=True,
    result_dyn=[False, True, False, True],  # n static (the input gives `?`), f `?` (the filter fixes it)
)


def test_free_orders_put_the_permuted_dims_in_the_signature_and_the_op():
    p = FAMILY.load(FREE_ORDERS)
    assert C.boundary_labels(p) == (["c", "n", "s1", "s0"], ["k0", "f", "c", "k1"], ["o0", "f", "n", "o1"])
    text = FAMILY.render(p)
    assert "linalg.transpose" not in text  # perm_compute: the generic takes the free orders itself
    assert "func.func @main(%input: tensor<3x?x?x6xf32>, %filter: tensor<3x4x3x2xf32>" in text
    feats = FAMILY.features(p)
    assert {"perm:input", "perm:filter", "perm:output", "perm:compute", "red-order:differs"} <= set(feats)
    assert {"result:static-of-dyn", "result:dyn-of-static"} <= set(feats)
    forms = FAMILY.equivalent_forms(p)
    assert any(not q.perm_compute and "linalg.transpose" in FAMILY.render(q) for q in forms)


@pytest.mark.iree
def test_free_orders_and_declared_result_types_match_on_llvm_cpu():
    for p in (FREE_ORDERS, dict(FREE_ORDERS, perm_compute=False), dict(FREE_ORDERS, result_dyn=[])):
        report = _check(p)
        assert report.verdict.value == "pass", (p, report.to_json())
