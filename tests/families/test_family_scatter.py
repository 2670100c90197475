"""The scatter family: strategy coverage, verification, reference, comparison, real compiler."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from support.family_testing import case_text, check_params, draw_params
from shapefuzz.families import scatter as S
from shapefuzz.model import MismatchKind

FAMILY = S.FAMILY
N_DRAWN = 300


def _base(**changes):
    params = {
        "form": "linalg_ext",
        "dtype": "f32",
        "index_dtype": "i32",
        "orig_shape": [5, 3],
        "orig_dyn": [False, False],
        "depth": 1,
        "dimension_map": [0],
        "batch_shape": [2],
        "batch_dyn": [False],
        "window_dyn": [False],
        "implicit_depth": False,
        "combiner": "overwrite",
        "unique": True,
        "duplicates": False,
    }
    params.update(changes)
    assert FAMILY.is_valid(params), params
    return params


def _draw(n: int) -> list[dict]:
    return draw_params(FAMILY.strategy(), n)


@pytest.fixture(scope="module")
def drawn() -> list[dict]:
    return _draw(N_DRAWN)


def _case_text(params: dict) -> str:
    return case_text("scatter", params)


def _check(params: dict, seed: int = 1, confirm: bool = False, budget=None):
    return check_params("scatter", params, seed, confirm, budget)


# ----------------------------------------------------------------------------- registry / determinism


def test_render_and_inputs_are_deterministic(drawn):
    for params in drawn[:20]:
        assert FAMILY.render(params) == FAMILY.render(params.to_json())
        a, b = FAMILY.make_inputs(params, 7), FAMILY.make_inputs(params, 7)
        assert all(np.array_equal(x, y) and x.dtype == y.dtype for x, y in zip(a, b))
        # Inputs do not depend on the form, so equivalent forms see the same numbers.
        for other in FAMILY.equivalent_forms(params):
            assert all(np.array_equal(x, y) for x, y in zip(a, FAMILY.make_inputs(other, 7)))


# ----------------------------------------------------------------------------- property tests


def test_class2_mix_is_drawn_often(drawn):
    counts = collections.Counter(f for p in drawn for f in FAMILY.features(p))
    # Class 2 is all dynamic but one: reached often, not by luck.
    assert counts["dyn:all-but-one"] >= N_DRAWN // 10


def test_drawn_cases_respect_the_uniqueness_rules(drawn):
    for params in drawn:
        assert FAMILY.is_valid(params)
        original, indices, updates = FAMILY.make_inputs(params, 3)
        d = params["depth"]
        coords = indices.reshape(S.n_batch(params), d)
        assert (coords >= 0).all()
        # Column j addresses dim dimension_map[j]: every coordinate in range.
        for j in range(d):
            assert (coords[:, j] < params["orig_shape"][params["dimension_map"][j]]).all()
        distinct = len({tuple(c) for c in coords.tolist()})
        if params["duplicates"]:
            assert params["combiner"] != "overwrite" and not params["unique"] and distinct < len(coords)
        else:
            assert distinct == len(coords)


def test_equivalent_forms_give_the_same_reference(drawn):
    for params in drawn[:40]:
        inputs = FAMILY.make_inputs(params, 5)
        (want,) = FAMILY.reference(params, inputs)
        for other in FAMILY.equivalent_forms(params):
            (got,) = FAMILY.reference(other, FAMILY.make_inputs(other, 5))
            assert np.array_equal(want, got)


def test_shrink_candidates_are_simpler_and_end():
    params = _base(orig_shape=[4, 3], orig_dyn=[True, True], batch_shape=[2, 2], batch_dyn=[True, False],
                   window_dyn=[True], dtype="f16", form="reshape", combiner="max", unique=False, duplicates=True)
    cands = FAMILY.shrink_candidates(params)
    assert cands and all(FAMILY.is_valid(c) for c in cands)
    simplest = _base(orig_shape=[1], orig_dyn=[False], batch_shape=[], batch_dyn=[], window_dyn=[], combiner="add")
    assert FAMILY.shrink_candidates(simplest) == []


# ----------------------------------------------------------------------------- reference on hand examples


def test_reference_overwrite_rows():
    p = _base()
    original = np.zeros((5, 3), np.float32)
    indices = np.array([[3], [0]], np.int32)
    updates = np.array([[1, 2, 3], [4, 5, 6]], np.float32)
    (out,) = FAMILY.reference(p, [original, indices, updates])
    want = np.zeros((5, 3), np.float32)
    want[3] = [1, 2, 3]
    want[0] = [4, 5, 6]
    assert np.array_equal(out, want)


def test_reference_add_with_duplicates_and_permuted_map():
    # depth 2, dimension_map [1, 0]: column 0 addresses dim 1, column 1 addresses dim 0.
    p = _base(orig_shape=[2, 3], orig_dyn=[False, False], depth=2, dimension_map=[1, 0], batch_shape=[3],
              batch_dyn=[False], window_dyn=[], combiner="add", unique=False, duplicates=True, dtype="i32")
    original = np.arange(6, dtype=np.int32).reshape(2, 3)
    indices = np.array([[2, 1], [2, 1], [0, 0]], np.int32)  # (row 1, col 2) twice, (row 0, col 0)
    updates = np.array([10, 20, 100], np.int32)
    (out,) = FAMILY.reference(p, [original, indices, updates])
    assert out.tolist() == [[100, 1, 2], [3, 4, 5 + 30]]


def test_reference_sub_is_original_minus_update_and_max():
    p = _base(orig_shape=[4], orig_dyn=[False], batch_shape=[2], window_dyn=[], combiner="sub", unique=False)
    original = np.array([1, 1, 1, 1], np.float32)
    indices = np.array([[1], [3]], np.int32)
    updates = np.array([0.25, 2], np.float32)
    assert FAMILY.reference(p, [original, indices, updates])[0].tolist() == [1, 0.75, 1, -1]
    p = dict(p, combiner="max")
    assert FAMILY.reference(p, [original, indices, updates])[0].tolist() == [1, 1, 1, 2]


def test_reference_implicit_depth_batch_rank_2_and_batch_rank_0():
    p = _base(orig_shape=[4, 2], orig_dyn=[False, True], batch_shape=[2, 1], batch_dyn=[True, False],
              window_dyn=[False], implicit_depth=True, dtype="i8")
    original = np.zeros((4, 2), np.int8)
    indices = np.array([[2], [1]], np.int32)  # shape [2, 1] = the batch dims, no depth column
    updates = np.array([[[7, 8]], [[9, 10]]], np.int8)
    assert FAMILY.reference(p, [original, indices, updates])[0].tolist() == [[0, 0], [9, 10], [7, 8], [0, 0]]
    p = _base(orig_shape=[3, 2], orig_dyn=[False, False], depth=2, dimension_map=[0, 1], batch_shape=[],
              batch_dyn=[], window_dyn=[])
    original = np.zeros((3, 2), np.float32)
    assert FAMILY.reference(p, [original, np.array([2, 1], np.int32), np.array(5, np.float32)])[0][2, 1] == 5


def test_compare_is_exact_and_names_the_element():
    p = _base()
    want = [np.zeros((5, 3), np.float32)]
    assert FAMILY.compare(p, [], want, [want[0].copy()]) is None
    got = want[0].copy()
    got[4, 2] = 0.25
    message = FAMILY.compare(p, [], want, [got])
    assert message.kind == MismatchKind.VALUES and "[4, 2]" in message.detail
    assert FAMILY.compare(p, [], want, [np.zeros((5, 3), np.float16)]).kind == MismatchKind.DTYPE
    assert FAMILY.compare(p, [], want, [np.zeros((5, 4), np.float32)]).kind == MismatchKind.SHAPE


def test_all_but_one_dynamic_render_keeps_one_static_dim():
    p = _base(orig_shape=[6, 4], orig_dyn=[True, False], batch_shape=[3], batch_dyn=[True], window_dyn=[True],
              form="reshape")
    text = FAMILY.render(p)
    assert "tensor<?x4xf32>" in text and "tensor<?x?xf32>" in text
    assert "dyn:all-but-one" in FAMILY.features(p)


# ----------------------------------------------------------------------------- real compiler

INTEGRATION = [
    _base(),
    _base(form="reshape", orig_shape=[6, 4, 3], orig_dyn=[True, False, True], batch_shape=[2, 3],
          batch_dyn=[True, True], window_dyn=[True, True], combiner="add", unique=False, duplicates=True),
    _base(form="generic", orig_shape=[3, 5, 2], orig_dyn=[True, True, False], depth=2, dimension_map=[1, 0],
          batch_shape=[4], batch_dyn=[True], window_dyn=[True], combiner="sub", unique=False, duplicates=True,
          dtype="f16", index_dtype="i64"),
    _base(form="linalg_ext", orig_shape=[17, 9], orig_dyn=[True, True], batch_shape=[8], batch_dyn=[False],
          window_dyn=[True], combiner="max", unique=False, duplicates=True, dtype="i8"),
    _base(form="reshape", orig_shape=[4, 3], orig_dyn=[False, True], depth=2, dimension_map=[1, 0],
          batch_shape=[2, 2], batch_dyn=[True, True], window_dyn=[], combiner="mul", dtype="i32"),
    _base(form="generic", orig_shape=[7, 2], orig_dyn=[True, True], batch_shape=[5], batch_dyn=[True],
          window_dyn=[False], implicit_depth=True, combiner="min", unique=False, duplicates=True, index_dtype="i64"),
]  # fmt: skip


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p['form']}-{p['combiner']}-{p['dtype']}")
def test_llvm_cpu_matches_reference(params):
    from shapefuzz.model import Verdict

    report = _check(params)
    assert report.verdict == Verdict.PASS, report.to_json()


# A real IREE 3.13 bug: a scatter with batch rank 0 and index depth 1 (indices tensor<1xi32>,
# updates = one window) makes iree-compile allocate without bound ("LLVM ERROR: out of memory")
# in DispatchCreation's FoldUnitExtentDims, pattern DropScatterUnitIndexDepth. Backend-independent
# (it dies at --compile-to=flow). Batch rank 1 with a unit batch, or depth 2 with batch rank 0, is fine.
SCATTER_BATCH0_DEPTH1 = _base(batch_shape=[], batch_dyn=[])


@pytest.mark.iree
def test_known_bug_batch_rank_0_depth_1_runs_out_of_memory():
    from shapefuzz.invoke.execute import Budget
    from shapefuzz.model import Stage, Status, Verdict
    from shapefuzz.process.sandbox import GIB, Limits

    # A 2 GiB address-space cap makes the runaway allocation fail in seconds, not a minute.
    small = Budget(compile=Limits(timeout=60.0, memory_bytes=2 * GIB))
    report = _check(SCATTER_BATCH0_DEPTH1, budget=small)
    assert report.verdict == Verdict.FAIL, report.to_json()
    (failure,) = report.failures
    assert failure.stage == Stage.COMPILE and failure.status in (Status.OOM, Status.CRASH)
    assert "out of memory" in failure.detail
    for neighbour in (dict(SCATTER_BATCH0_DEPTH1, batch_shape=[1], batch_dyn=[False]),
                      _base(orig_shape=[5, 3, 2], orig_dyn=[False] * 3, depth=2, dimension_map=[0, 1], batch_shape=[],
                            batch_dyn=[], window_dyn=[False])):
        assert _check(neighbour, budget=small).verdict == Verdict.PASS, neighbour


# A real IREE 3.13 miscompile on the Vulkan default profile (vulkan-spirv; the llvmpipe target and
# llvm-cpu are right): a scatter with an add combiner, unique_indices(true) (and indices that are
# unique), and a trailing window dim of size 1 applies each update 8 times: original [-85, -97]
# at rows 3, 4 plus updates [-65, 63] gives [-605, 407] = orig + 8 * update. Overwrite (idempotent),
# unique_indices(false), or a window dim > 1 are right. Minimal: 5x1 original, 2x1 indices/updates.
SCATTER_ADD_UNIT_WINDOW_UNIQUE = _base(orig_shape=[5, 1], combiner="add", dtype="i32")


@pytest.mark.iree
@pytest.mark.vulkan
def test_known_bug_vulkan_add_unique_unit_window_applies_update_8_times(has_vulkan):
    from shapefuzz.model import Stage, Status, Verdict
    from shapefuzz.judge.oracle import Expectation, check_module

    if not has_vulkan:
        pytest.skip("no Vulkan device")
    p = SCATTER_ADD_UNIT_WINDOW_UNIQUE
    inputs = FAMILY.make_inputs(p, 0)
    (want,) = FAMILY.reference(p, inputs)
    seen = {}

    def compare(expected, got):
        seen["got"] = got
        return FAMILY.compare(p, inputs, expected, got)

    report = check_module(_case_text(p), ["vulkan-spirv"], Expectation(inputs, [want], compare))  # re-run: not flaky
    (bad,) = report.results
    assert report.verdict == Verdict.FAIL and bad.stage == Stage.COMPARE and bad.status == Status.MISMATCH
    original, indices, updates = inputs
    rows = indices.ravel()
    assert np.array_equal(seen["got"][0][rows, 0], original[rows, 0] + 8 * updates[:, 0])
    other = check_module(_case_text(p), ["vulkan-llvmpipe"], Expectation(inputs, [want], compare), confirm=False)
    assert other.verdict == Verdict.PASS
    for neighbour in (dict(p, unique=False), dict(p, combiner="overwrite"), dict(p, orig_shape=[5, 2])):
        i2 = FAMILY.make_inputs(neighbour, 0)
        e2 = Expectation(i2, FAMILY.reference(neighbour, i2), lambda w, g, n=neighbour, i=i2: FAMILY.compare(n, i, w, g))
        assert check_module(_case_text(neighbour), ["vulkan-spirv"], e2, confirm=False).verdict == Verdict.PASS, neighbour
