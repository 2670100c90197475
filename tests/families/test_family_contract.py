"""The contract every registered op family keeps, checked once for all of them: draws render
deterministically and verify with the real iree-opt, the strategy reaches the family's declared
features, the reference agrees with the rendered result types, params survive their JSON header,
shrink candidates are valid, simpler and verify, equivalent forms verify and compute the same.
Family-specific checks (hand-computed references, known compiler bugs) stay in test_family_<name>.py."""

from __future__ import annotations

import collections

import numpy as np
import pytest

from support.family_testing import draw_params, result_types
from shapefuzz.case import Case, case_from_mlir
from shapefuzz.invoke.execute import verify_many
from shapefuzz.families import FAMILY_MODULES, all_families, render_case

FAMILIES = all_families()
SAMPLE = 25  # drawn cases whose forms and shrink candidates are verified


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def family(request):
    return FAMILIES[request.param]


_DRAWN: dict[str, list] = {}


def drawn_of(family) -> list:
    if family.name not in _DRAWN:
        _DRAWN[family.name] = draw_params(family.strategy(), family.feature_draws)
    return _DRAWN[family.name]


def _small(family, params) -> bool:
    """Cases cheap enough to run the NumPy reference on in a unit test."""
    return not getattr(params, "big", False)


def test_every_module_is_registered_under_its_name():
    assert sorted(FAMILIES) == sorted(FAMILY_MODULES)
    for name, family in FAMILIES.items():
        assert family.name == name and family.reached_features and family.feature_draws >= 100, name


def test_define_holds_the_hooks_to_the_protocol():
    """`Family.define` refuses a package missing a hook, or with one that cannot take the
    arguments `FamilyHooks` gives it, at import."""
    import shapefuzz.families.pool as pool
    from shapefuzz.families.base import Family

    assert Family.define("pool", pool.Params, vars(pool)).hooks.render is pool.render
    with pytest.raises(AssertionError, match=r"lacks \['features'\]"):
        Family.define("pool", pool.Params, {k: v for k, v in vars(pool).items() if k != "features"})
    with pytest.raises(AssertionError, match="compare does not take 4"):
        Family.define("pool", pool.Params, dict(vars(pool), compare=lambda p, actual: None))


def test_the_example_is_a_valid_case_of_the_family(family):
    """`Family.example` (what the spelling tests run) loads as typed params the family calls valid,
    and survives the case header; `no_spelling` names only frontends that exist."""
    from shapefuzz.families.frontends import spellings_for

    import dataclasses

    p = family.load(family.example)
    own = next(f.default for f in dataclasses.fields(family.params_type) if f.name == "frontend")
    assert own in ("linalg", "onnx") and (own == "linalg" or set(family.no_spelling) == {"torch", "onnx"})
    assert family.is_valid(p) and p.frontend == own, family.name  # the family's own form (onnx_op's: ONNX)
    assert family.load(case_from_mlir(render_case(Case.make(family.name, p))).params) == p
    frontends = {"torch", "onnx"}
    assert set(family.no_spelling) <= frontends and all(family.no_spelling.values()), family.no_spelling
    for spelling in spellings_for(family.name):
        assert spelling.frontend not in family.no_spelling
        if spelling.example is not None:
            assert family.is_valid(spelling.example) and spelling.expressible(family.load(spelling.example))


def test_draws_are_typed_and_survive_the_case_header(family):
    for p in drawn_of(family)[:100]:
        assert isinstance(p, family.params_type) and family.is_valid(p)
        text = render_case(Case.make(family.name, p))
        case = case_from_mlir(text)
        assert case is not None and family.load(case.params) == p
        assert family.render(case.params) == family.render(p)  # deterministic, from JSON alike


def test_strategy_reaches_every_declared_feature(family):
    counts = collections.Counter(f for p in drawn_of(family) for f in family.features(p))
    missing = [f for f in family.reached_features if counts[f] == 0]
    assert not missing, f"{family.name}: never drawn {missing}; counts {dict(counts)}"


def _static_dims(tensor_type: str) -> list[str]:
    body = tensor_type[len("tensor<") : -1]
    if body.startswith("["):  # torch: !torch.vtensor<[2,?],f32>
        inner = body[1 : body.index("]")]
        return inner.split(",") if inner else []
    return body.split("x")[:-1]


def test_reference_matches_the_rendered_result_types(family):
    for p in [q for q in drawn_of(family) if _small(family, q)][:120]:
        inputs = family.make_inputs(p, 1)
        again = family.make_inputs(p, 1)
        assert all(np.array_equal(a, b) and a.dtype == b.dtype for a, b in zip(inputs, again))
        expected = family.reference(p, inputs)
        types = result_types(family.render(p))
        assert len(types) == len(expected), (p, types)
        for tensor_type, want in zip(types, expected):
            dims = _static_dims(tensor_type)
            assert len(dims) == want.ndim, (p, tensor_type, want.shape)
            assert all(d == "?" or int(d) == s for d, s in zip(dims, want.shape)), (p, tensor_type, want.shape)
        assert family.compare(p, inputs, expected, [e.copy() for e in expected]) is None


def test_compare_names_the_kind_of_mismatch(family):
    from shapefuzz.model import MismatchKind

    p = next(q for q in drawn_of(family) if _small(family, q))
    inputs = family.make_inputs(p, 1)
    expected = family.reference(p, inputs)
    assert family.compare(p, inputs, expected, expected[:-1]).kind == MismatchKind.COUNT
    assert family.compare(p, inputs, expected, [*expected, expected[0]]).kind == MismatchKind.COUNT
    wrong_shape = [np.zeros(e.shape + (2,), e.dtype) for e in expected]
    assert family.compare(p, inputs, expected, wrong_shape).kind == MismatchKind.SHAPE


def test_shrink_candidates_are_valid_distinct_and_typed(family):
    for p in drawn_of(family)[:150]:
        cands = family.shrink_candidates(p)
        assert len(cands) == len(set(cands))
        for q in cands:
            assert isinstance(q, family.params_type) and q != p and family.is_valid(q), (p, q)


def test_shrinking_terminates(family):
    """Always taking the first candidate reaches a case with none: the proposals are simpler."""
    for p in drawn_of(family)[:10]:
        for _ in range(400):
            cands = family.shrink_candidates(p)
            if not cands:
                break
            p = cands[0]
        else:
            pytest.fail(f"{family.name}: shrinking did not end; at {p}")


def test_equivalent_forms_compute_the_same_thing(family):
    for p in [q for q in drawn_of(family) if _small(family, q)][:60]:
        inputs = family.make_inputs(p, 3)
        want = family.reference(p, inputs)
        for q in family.equivalent_forms(p):
            assert q != p and family.is_valid(q)
            assert [a.shape for a in family.make_inputs(q, 3)] == [a.shape for a in inputs], (p, q)
            assert family.compare(p, inputs, want, family.reference(q, inputs)) is None, (p, q)


@pytest.mark.iree
def test_drawn_cases_verify(family):
    drawn = drawn_of(family)
    errors = verify_many([family.render(p) for p in drawn])
    bad = [(p, e) for p, e in zip(drawn, errors) if e is not None]
    assert not bad, f"{len(bad)} of {len(drawn)} do not verify; first: {bad[0][0]}\n{bad[0][1][:2000]}"


@pytest.mark.iree
def test_forms_and_shrink_candidates_verify(family):
    texts, owners = [], []
    for p in [q for q in drawn_of(family) if _small(family, q)][:SAMPLE]:
        for q in family.equivalent_forms(p) + family.shrink_candidates(p):
            texts.append(family.render(q))
            owners.append(q)
    errors = verify_many(texts)
    bad = [(q, e) for q, e in zip(owners, errors) if e is not None]
    assert not bad, f"{len(bad)} of {len(texts)} do not verify; first: {bad[0][0]}\n{bad[0][1][:2000]}"


# ----------------------------------------------------------------------------- swarm and size regimes


def test_swarm_knobs_remove_their_feature_soundly(family):
    """Each knob's projection keeps the case valid (or is skipped), and switching every knob
    off changes most draws: the swarm really narrows what a case uses."""
    assert family.swarm_knobs, family.name
    changed = 0
    for p in drawn_of(family)[:60]:
        for knob in family.swarm_knobs:
            q = family.apply_swarm(p, [knob])
            assert family.is_valid(q) and family.load(q.to_json()) == q
        changed += family.apply_swarm(p, list(family.swarm_knobs)) != p
    assert changed >= 30


def test_swarm_makes_rare_conjunctions_common(family):
    from shapefuzz.families.generate import draw_params

    want = set(family.rare_conjunction)  # rare when each feature is drawn alone, common once each draw picks its knobs
    assert len(want) >= 2, family.name
    plain = sum(want <= set(family.features(draw_params(family.name, s))) for s in range(150))
    swarm = sum(want <= set(family.features(draw_params(family.name, s, swarm=True))) for s in range(150))
    assert swarm >= 3 * max(plain, 5), (family.name, plain, swarm)


def test_large_regime_draws_large_valid_cases(family):
    from shapefuzz.families.generate import draw_params

    sizes = []
    for seed in range(20):
        p = draw_params(family.name, seed, regime="large")
        assert family.is_valid(p)
        sizes.append(p)
    # What "large" means per family: the biggest operand is over 64 KB for most draws.
    big = sum(_largest_operand_bytes(family, p) > 64 * 1024 for p in sizes)
    assert big >= len(sizes) // 2, (family.name, big)


def _largest_operand_bytes(family, p) -> int:
    from shapefuzz.families.common import np_dtype

    shape = family.largest_operand(p)
    return int(np.prod(shape)) * (2 if p.dtype == "bf16" else np_dtype(p.dtype).itemsize)


@pytest.mark.iree
def test_swarm_and_large_draws_verify(family):
    from shapefuzz.families.generate import draw_params

    params = [draw_params(family.name, seed, swarm=True) for seed in range(60)]
    params += [draw_params(family.name, seed, regime="large", swarm=seed % 2 == 0) for seed in range(20)]
    errors = verify_many([family.render(p) for p in params])
    bad = [(p, e) for p, e in zip(params, errors) if e is not None]
    assert not bad, f"{len(bad)} of {len(params)} do not verify; first: {bad[0][0]}\n{bad[0][1][:2000]}"
