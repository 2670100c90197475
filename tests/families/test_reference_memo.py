"""The per-process memos of case validation and of a case's inputs and NumPy outputs: what a
memoized call returns equals a fresh computation, bit for bit, and a caller writing into its
arrays cannot change what the next caller gets."""

from __future__ import annotations

import numpy as np
import pytest

import shapefuzz.families as families
import shapefuzz.judge.oracle as oracle
from shapefuzz.case import Case
from shapefuzz.errors import InvalidInputError
from shapefuzz.families import get_family
from shapefuzz.families.generate import draw_case


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(oracle, "_MEMO", type(oracle._MEMO)())
    monkeypatch.setattr(families, "_VALID", type(families._VALID)())


def _same(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    return len(a) == len(b) and all(x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()
                                    for x, y in zip(a, b))


@pytest.mark.parametrize("family", ["conv", "attention", "topk", "scatter"])
def test_memoized_expectation_is_bit_identical_to_a_fresh_one(family):
    case = draw_case(family, 7, swarm=True)
    fam = get_family(family)
    fresh_inputs = fam.make_inputs(case.params, 3)
    fresh_expected = fam.reference(case.params, fresh_inputs)
    first = oracle.case_expectation(case, 3)
    again = oracle.case_expectation(case, 3)  # from the memo
    assert (case.family, case.params_json, 3) in oracle._MEMO
    for got in (first, again):
        assert _same(got.inputs, fresh_inputs) and _same(got.expected, fresh_expected)
    assert all(a is not b for a, b in zip(first.inputs, again.inputs))
    other = oracle.case_expectation(case, 4)  # another seed is another entry, other inputs
    assert not _same(other.inputs, fresh_inputs)


def test_a_caller_writing_into_its_arrays_does_not_poison_the_memo():
    case = draw_case("matmul", 1)
    first = oracle.case_expectation(case, 0)
    keep_in, keep_out = [a.copy() for a in first.inputs], [a.copy() for a in first.expected]
    for a in first.inputs + first.expected:
        a[...] = 0
    second = oracle.case_expectation(case, 0)
    assert _same(second.inputs, keep_in) and _same(second.expected, keep_out)
    for a in second.inputs + second.expected:
        a[...] = 1
    assert _same(oracle.case_expectation(case, 0).inputs, keep_in)


def test_the_memo_is_bounded_in_entries_and_bytes(monkeypatch):
    monkeypatch.setattr(oracle, "MEMO_ENTRIES", 2)
    cases = [draw_case("reduce", seed) for seed in range(4)]
    for case in cases:
        oracle.case_expectation(case, 0)
    assert [key[1] for key in oracle._MEMO] == [c.params_json for c in cases[-2:]]
    monkeypatch.setattr(oracle, "MEMO_BYTES", 0)  # nothing fits: computed, not kept
    oracle._MEMO.clear()
    oracle.case_expectation(cases[0], 0)
    assert not oracle._MEMO


def test_validation_is_remembered_only_for_valid_cases(monkeypatch):
    calls = []
    real = families.validate_params
    monkeypatch.setattr(families, "validate_params", lambda *a: (calls.append(a[0]), real(*a))[1])
    case = draw_case("pool", 2)
    families.validate_case(case)
    families.validate_case(case)
    assert len(calls) == 1
    monkeypatch.setenv("SHAPEFUZZ_MAX_ARRAY_BYTES", "1")  # another cap: validated again, and refused
    with pytest.raises(InvalidInputError, match="array cap"):
        families.validate_case(case)
    monkeypatch.delenv("SHAPEFUZZ_MAX_ARRAY_BYTES")
    bad = Case("pool", case.params_json.replace('"c":', '"c":99999999999', 1))
    for _ in range(2):  # a refusal is not remembered: each call says it again
        with pytest.raises(InvalidInputError):
            families.validate_case(bad)
    assert len(calls) == 4


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int8])
@pytest.mark.parametrize("shape", [(), (5,), (3, 1, 4), (0, 2)])
@pytest.mark.parametrize("pool", [0, 1, 6, 300])
def test_a_producers_fill_draws_what_rng_choice_drew(dtype, shape, pool):
    from shapefuzz.families.context.producers import _fill

    like = np.arange(pool, dtype=dtype)
    want = np.random.default_rng(11).choice(like if pool else np.zeros(1, dtype), size=shape).astype(dtype)
    got = _fill(shape, like, np.random.default_rng(11))
    assert got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()
