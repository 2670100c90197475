"""The attention family: the reference from the definition (masked keys get no weight), the
tolerance derived from dtype and reduction lengths, and each form and spelling on llvm-cpu."""

from __future__ import annotations

import numpy as np
import pytest

from support.family_testing import check_params
from shapefuzz.families import get_family
from shapefuzz.model import MismatchKind, Verdict

FAMILY = get_family("attention")


def _base(**changes):
    p = {"dtype": "f32", "batch": [2], "batch_dyn": [False], "m": 3, "k2": 5, "k1": 4, "n": 2, "m_dyn": False,
         "k2_dyn": False, "scale": 0.5}
    p.update(changes)
    return FAMILY.load(p)


def test_masked_keys_get_no_weight_and_every_row_keeps_one():
    p = _base(mask="causal", m=4, k2=4)
    q, k, v, mask = FAMILY.make_inputs(p, 1)
    assert np.isneginf(mask).any() and (np.isfinite(mask).any(axis=-1)).all()
    (out,) = FAMILY.reference(p, [q, k, v, mask])
    np.testing.assert_allclose(out[:, 0, :], v[:, 0, :], rtol=1e-6)  # query 0 sees only key 0
    random = _base(mask="random", k2=9)
    assert (np.isfinite(FAMILY.make_inputs(random, 3)[3]).any(axis=-1)).all()


def test_tolerance_grows_with_reduction_length_and_dtype_and_catches_a_lost_mask():
    from shapefuzz.families.attention.reference import tolerance

    small, long = _base(k2=4), _base(k2=64)
    assert tolerance(long, FAMILY.make_inputs(long, 2)) > tolerance(small, FAMILY.make_inputs(small, 2))
    half = small.replace(dtype="f16")
    assert tolerance(half, FAMILY.make_inputs(half, 2)) > 1000 * tolerance(small, FAMILY.make_inputs(small, 2))
    p = _base(mask="causal", m=4, k2=4, dtype="f16")
    inputs = FAMILY.make_inputs(p, 5)
    expected = FAMILY.reference(p, inputs)
    unmasked = FAMILY.reference(p.replace(mask="none"), inputs[:3])
    assert FAMILY.compare(p, inputs, expected, unmasked).kind == MismatchKind.VALUES


INTEGRATION = [
    _base(batch=[2, 3], batch_dyn=[True, False], m=5, k2=17, k1=8, n=4, m_dyn=True, k2_dyn=True, mask="random"),
    _base(dtype="f16", m=8, k2=8, mask="causal", scale=0.125, form="decomposed", k2_dyn=True),
    _base(batch=[1, 2], batch_dyn=[True, False], m=4, k2=7, m_dyn=True, mask="causal", frontend="torch"),
    _base(dtype="f16", m=1, k2=33, k1=16, n=8, frontend="torch"),
]


@pytest.mark.iree
@pytest.mark.parametrize("params", INTEGRATION, ids=lambda p: f"{p.frontend}-{p.form}-{p.dtype}-{p.mask}")
def test_forms_and_spellings_match_the_reference_on_cpu(params):
    report = check_params("attention", params)
    assert report.verdict == Verdict.PASS, report.to_json()


# IREE 3.13 bug found by this family: torch.aten.scaled_dot_product_attention over [B, H, L, E]
# with both B and H dynamic fails to compile ("'tensor.expand_shape' op expected number of static
# shape dims to be equal to the output rank (4) but found 0 inputs instead"): the lowering
# collapses the two dynamic batch dims and cannot expand them back. One dynamic batch dim, or the
# iree_linalg_ext.attention form of the same case, compiles and is right.
DYNAMIC_BATCH_AND_HEADS = INTEGRATION[2].replace(batch_dyn=[True, True])


@pytest.mark.iree
def test_known_bug_sdpa_with_dynamic_batch_and_heads():
    report = check_params("attention", DYNAMIC_BATCH_AND_HEADS)
    if report.verdict == Verdict.PASS:
        pytest.fail("IREE now compiles sdpa with dynamic batch and heads: the known bug is fixed, update this test")
    assert "expand_shape" in report.failures[0].detail
    assert check_params("attention", DYNAMIC_BATCH_AND_HEADS.replace(frontend="linalg")).verdict == Verdict.PASS
