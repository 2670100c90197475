"""A norm never draws a case whose own reference is undefined (issue 43, item 8). A generator slip
drew a batch norm's variance through a `tensor.pad` of -1.0: `rsqrt` of a negative number is NaN,
which a quantize consumer then cast to i8 (undefined: the module and NumPy may give any value).
The chain strategy keeps an operand the family's reference takes a root of non-negative
(`context_nonnegative_operands`), such a chain is no valid case, and a reference that would cast
NaN to an integer raises `UndefinedReference`, which a campaign's check turns into a discarded
candidate (not judged, no bucket)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from shapefuzz.errors import UndefinedReference
from shapefuzz.families import get_family
from shapefuzz.families.context import compose
from shapefuzz.families.context.chain import ContextOp
from shapefuzz.families.context.consumers import CONSUMERS
from shapefuzz.families.context.types import is_float
from shapefuzz.families.context.wrap import bare, sharing, with_context
from shapefuzz.families.frontends import linalg_params, with_frontends
from shapefuzz.families.norm import FAMILY as NORM
from shapefuzz.families.norm.params import Params, operands
from shapefuzz.families.generate import draw

from support.context_testing import chain_cases

DRAWS = 300  # batch-norm chain cases, seeded as a campaign draws them; 3 of them put a pad of -1 on the variance


def _batch_norms_in_chains():
    """The norm family as campaigns draw it (its spellings, its chains), its roots batch norms
    only: the chain strategy is the one every campaign runs."""
    own = NORM.hooks["strategy"]
    only_batch = dataclasses.replace(NORM, hooks=dict(
        NORM.hooks, strategy=lambda regime="small": own(regime).filter(lambda p: p.kind == "batch")))
    return with_context(with_frontends(only_batch))


def _var_index(p: Params) -> int:
    return 1 + operands(p).index("var")  # the input, then the per-channel operands in argument order


def _cast_inputs_to_integers(fam, p: Params, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """What each consumer that makes an integer type (a quantize) receives from the reference."""
    q = linalg_params(bare(p))
    pl = compose.plan(fam.render(q), p.context)
    results = fam.reference(q, compose.root_inputs_of(pl, inputs))
    extras, x, seen = compose.extras_of(pl, inputs), 0, []
    for j, steps in enumerate(pl.consumers):
        value = results[j]
        for op, t, o, more in steps:
            if is_float(t.elt) and not is_float(o.elt):
                seen.append(np.asarray(value, dtype=np.float64))
            value = CONSUMERS[op.op].forward(op, value, extras[x:x + len(more)], o)
            x += len(more)
    return seen


def test_drawn_batch_norm_chains_keep_the_variance_non_negative_and_cast_no_nan():
    fam = _batch_norms_in_chains()
    with sharing(1.0):
        drawn = [p for p in (draw(fam.strategy("small"), seed) for seed in range(DRAWS)) if p.context]
    on_var = 0
    for k, p in enumerate(drawn):
        inputs = fam.make_inputs(p, k)
        root_in = fam.hooks["context_root_operands"](p, inputs) or inputs
        assert (root_in[_var_index(p)] >= 0).all(), (p.context, root_in[_var_index(p)])
        on_var += any(op.is_producer and op.operand == _var_index(p) for op in p.context)
        for seen in _cast_inputs_to_integers(fam, p, inputs):
            assert not np.isnan(seen).any(), p.context
        fam.reference(p, inputs)  # defined: the guard does not fire
    assert on_var >= 20  # producers still go on the variance, only never a negative pad


def test_drawn_norm_chains_of_every_kind_cast_no_nan_to_an_integer():
    """Every kind, as `context_testing` draws chain cases (share 1, swarm on odd seeds)."""
    fam = get_family("norm")
    cases = chain_cases("norm", 120)
    assert len({p.kind for p in cases}) == 7 and any(op.op == "quantize" for p in cases for op in p.context)
    for k, p in enumerate(cases):
        inputs = fam.make_inputs(p, k)
        if p.kind == "batch":
            root_in = fam.hooks["context_root_operands"](p, inputs) or inputs
            assert (root_in[_var_index(p)] >= 0).all(), p.context
        for seen in _cast_inputs_to_integers(fam, p, inputs):
            assert not np.isnan(seen).any(), p.context


def _batch() -> Params:
    return Params("batch", "f32", (2, 3), (False, False), layout="nhwc", eps=1e-5)


def test_a_negative_pad_on_the_variance_is_no_case():
    """A header may carry one (a file, an old draw): it is refused with a line that says why."""
    fam = get_family("norm")
    p = _batch()
    pad = dict(operand=_var_index(p), lo=[1], hi=[0])
    assert fam.is_valid(p.replace(context=(ContextOp.make("pad", value=0.5, **pad),)))
    bad = p.replace(context=(ContextOp.make("pad", value=-1.0, **pad),))
    assert not fam.is_valid(bad)
    with pytest.raises(ValueError, match="pad value -1.0 .* must stay >= 0"):
        fam.render(bad)
    # the mean may go negative: its values are free
    assert fam.is_valid(p.replace(context=(ContextOp.make("pad", value=-1.0, **dict(pad, operand=3)),)))


def test_a_reference_that_casts_nan_to_an_integer_raises_instead_of_answering():
    fam = get_family("norm")
    p = _batch().replace(context=(ContextOp.make("quantize", result=0, scale=0.5, zero_point=0),))
    assert fam.is_valid(p)
    inputs = fam.make_inputs(p, 0)
    assert fam.reference(p, inputs)[0].dtype == np.int8
    inputs[_var_index(p)][0] = -1.0  # what the slip fed it
    with pytest.raises(UndefinedReference, match="NaN"), np.errstate(invalid="ignore"):
        fam.reference(p, inputs)


@pytest.mark.iree
def test_a_campaign_check_discards_a_candidate_whose_reference_is_undefined(toolchain, tmp_path, monkeypatch):
    """Not judged: no lane compiles it, its outcome says why, and the bucket book files nothing."""
    from shapefuzz.campaign import iree as campaign_iree
    from shapefuzz.campaign.outcomes import UNDEFINED_REFERENCE, Verdict
    from shapefuzz.case import Case

    def undefined(*args, **kwargs):
        raise UndefinedReference("context: quantize would cast NaN to i8")

    compiled = []
    monkeypatch.setattr("shapefuzz.judge.campaign_check.expectation_on", undefined)
    monkeypatch.setattr("shapefuzz.judge.campaign_check.check_module", lambda *a, **k: compiled.append(a))
    target = campaign_iree.IreeTarget(toolchain, tmp_path / "corpus")
    case = Case.make("norm", _batch())
    candidate = campaign_iree.Candidate(case.case_id, "norm", 1, (), case.params_json, "// text\n")
    outcome = target.check(candidate, ("llvm-cpu",))
    assert outcome.verdict == Verdict.INVALID and outcome.failures == () and not compiled
    assert outcome.error.startswith(UNDEFINED_REFERENCE) and "NaN" in outcome.error
