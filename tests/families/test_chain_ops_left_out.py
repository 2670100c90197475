"""A swarm epoch's chain ops left out (campaign/allocation.py, `draw_params(left_out=...)`): the ops
left out never appear in a chain drawn then; with nothing left out every draw is what it always
was; a chain is drawn or not as the allocation asks (share 1 or 0). And the resume of a campaign
whose first session named no --context-share still lets the allocation choose chains, while one
that named it keeps it pinned."""

from __future__ import annotations

from shapefuzz.campaign.run import FuzzRequest, build_config
from shapefuzz.families import get_family
from shapefuzz.families.context.strategy import CONSUMER_NAMES, PRODUCER_NAMES
from shapefuzz.families.frontends import frontend_of
from shapefuzz.families.generate import draw_params

SEEDS = range(40)


def _ops(params) -> set[str]:
    return {op.op for op in params.context}


def test_left_out_ops_are_never_drawn_and_nothing_left_out_changes_nothing():
    out = (*PRODUCER_NAMES[: len(PRODUCER_NAMES) - 3], *CONSUMER_NAMES[: len(CONSUMER_NAMES) - 3])
    seen: set[str] = set()
    for seed in SEEDS:
        plain = draw_params("matmul", seed, swarm=True, context_share=1.0)
        assert draw_params("matmul", seed, swarm=True, context_share=1.0, left_out=()) == plain
        epoch = draw_params("matmul", seed, swarm=True, context_share=1.0, left_out=out)
        assert not _ops(epoch) & set(out), (seed, _ops(epoch))
        seen |= _ops(epoch)
    assert seen  # chains were drawn, from the ops kept
    assert draw_params("matmul", 1, swarm=True, context_share=0.5) == draw_params("matmul", 1, swarm=True,
                                                                                  context_share=0.5)


def test_a_chain_is_drawn_or_not_as_asked():
    family = get_family("matmul")
    chained = [draw_params("matmul", seed, swarm=True, context_share=1.0) for seed in SEEDS]
    bare = [draw_params("matmul", seed, swarm=True, context_share=0.0) for seed in SEEDS]
    chainable = [p for p in chained if frontend_of(p) != "stablehlo"]  # a StableHLO spelling takes no chain
    assert sum(bool(p.context) for p in chainable) > 0.8 * len(chainable)
    assert not any(p.context for p in bare)
    assert all(not any(f.startswith("context:") for f in family.features(p)) for p in bare)


STORED = {"families": ["conv"], "backends": ["llvm-cpu"], "seed": 0, "count": 10, "seconds": None, "corpus": "c",
          "forced": False, "until_saturated": None, "context_share": 0.5, "lanes_per_candidate": 2}


def test_a_resume_allocates_chains_unless_the_campaign_pinned_the_share(tmp_path):
    request = FuzzRequest(campaign=str(tmp_path / "camp"), corpus="c")
    assert build_config(request, {**STORED, "context_share_pinned": False}).context_share is None
    assert build_config(request, {**STORED, "context_share_pinned": True}).context_share == 0.5
    assert build_config(request, STORED).context_share == 0.5  # a store from before the key: as it was
    assert build_config(request, STORED).allocate and not build_config(request, {**STORED, "allocate": False}).allocate
