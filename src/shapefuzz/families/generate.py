"""Draws cases from the families' Hypothesis strategies outside of a test run: one case per
(family, seed), deterministic, so a campaign can generate for hours and any case can be
re-drawn from its seed alone."""

from __future__ import annotations

import hashlib
import random
from collections import Counter
from dataclasses import dataclass

from hypothesis import strategies as st
from hypothesis.control import BuildContext
from hypothesis.errors import StopTest, UnsatisfiedAssumption
from hypothesis.internal.conjecture.choice import choice_permitted
from hypothesis.internal.conjecture.data import ConjectureData
from hypothesis.internal.conjecture.providers import GLOBAL_CONSTANTS, HypothesisProvider

from shapefuzz.process import interrupts
from shapefuzz.case import Case
from shapefuzz.errors import ShapefuzzError
from shapefuzz.families import get_family
from shapefuzz.families.base import Family, FamilyParams
from shapefuzz.families.gates import Gated

_ATTEMPTS = 50  # strategies may filter; a seed whose draw is rejected moves on to the next sub-seed


class SeedProvider(HypothesisProvider):
    """Hypothesis's own provider, except for the constants it now and then returns instead of a
    random choice: Hypothesis picks them from its global pool and from the "local" modules (not
    site-packages, not stdlib) in `sys.modules` at draw time (`providers._get_local_constants`).
    Our own modules are local in a checkout and not in a wheel install, and which of them a
    process has imported varies, so a seed would draw differently by install and by import
    history; this provider picks from the global pool only, which depends on Hypothesis alone.
    Overrides a private method: tests/families/test_generate.py fails if Hypothesis renames it."""

    def _maybe_draw_constant(self, choice_type, constraints, *, p: float = 0.05):
        # The same steps as Hypothesis's, without the local pool (and without its cache, which
        # is shared with the local pool; filtering the ~500 global constants is cheap).
        assert self._random is not None
        if self._random.random() > p:
            return None
        permitted = [c for c in GLOBAL_CONSTANTS.set_for_type(choice_type) if choice_permitted(c, constraints)]
        return self._random.choice(permitted) if permitted else None


def draw(strategy: st.SearchStrategy, seed: int):
    """One value of `strategy`, the same for the same seed."""
    interrupts.check()  # a signal taken inside Hypothesis's gc callback is swallowed there: honoured here
    for attempt in range(_ATTEMPTS):
        data = ConjectureData(random=random.Random(f"{seed}:{attempt}"), provider=SeedProvider)
        try:
            # A build context, as inside @given: strategies built with .map()/.flatmap() need one.
            with BuildContext(data, wrapped_test=draw):
                return data.draw(strategy)
        except (StopTest, UnsatisfiedAssumption):
            continue
    raise ShapefuzzError(f"the strategy rejected {_ATTEMPTS} draws in a row for seed {seed}")


def draw_params(family: str, seed: int, *, regime: str = "small", swarm: bool = False,
                context_share: float | None = None, left_out: tuple[str, ...] = ()):
    """One case's typed params for (family, seed). `regime` "large" draws sizes meant for lanes
    that only compile (GPU targets), "small" ones for lanes that execute; `swarm` first draws
    which of the family's features the case may use (swarm testing); `context_share` the share
    of cases drawn inside a producer/consumer chain (None: the default, families/context);
    `left_out`: chain ops never drawn (a campaign's swarm epoch)."""
    from shapefuzz.families.context.wrap import sharing

    fam = get_family(family)
    with sharing(context_share, left_out):
        return draw(fam.swarm_strategy(regime) if swarm else fam.strategy(regime), seed)


RELEASE_DRAWS = 8  # draws of a family before giving up on one a release parses


def redraw_seed(seed: int, attempt: int) -> int:
    """The seed of a case's `attempt`-th draw again, after forms its release cannot parse."""
    return int.from_bytes(hashlib.sha256(f"{seed}:release:{attempt}".encode()).digest()[:6], "big")


def draw_for_release(family: str, seed: int, gated: Gated, *, regime: str = "small", swarm: bool = False,
                     context_share: float | None = None, left_out: tuple[str, ...] = ()):
    """`draw_params`, with a form the release cannot parse (`gated`, families/gates.py) drawn as an
    equivalent form it can, or drawn again under another seed (`redraw_seed`) up to RELEASE_DRAWS
    times in all; ValueError when every one of them was such a form."""
    for attempt in range(RELEASE_DRAWS):
        drawn = draw_params(family, seed if attempt == 0 else redraw_seed(seed, attempt), regime=regime, swarm=swarm,
                            context_share=context_share, left_out=left_out)
        params = gated.params(family, drawn)
        if params is not None:
            return params
    raise ValueError(f"{RELEASE_DRAWS} draws of {family} were all forms this release cannot parse")


def neighbour_params(family: Family, name: str, params: FamilyParams, seed: int, gated: Gated) -> FamilyParams | None:
    """A small change of a case's typed `params` (coverage feedback draws these near cases that
    reached new passes or patterns): one of the family's shrink steps, swarm projections (a
    feature switched off) or equivalent forms, chosen by `seed`, in a form the release parses
    (`gated`); None when there is none."""
    rng = random.Random(seed)
    kind = rng.choice(("shrink", "swarm", "form"))
    if kind == "swarm" and family.swarm_knobs:
        options = [family.apply_swarm(params, [knob]) for knob in sorted(family.swarm_knobs)]
    elif kind == "form":
        options = family.equivalent_forms(params)
    else:
        options = family.shrink_candidates(params)
    options = [p for p in options if p != params] or family.shrink_candidates(params)
    options = [q for q in (gated.params(name, p) for p in options) if q is not None and q != params]
    return rng.choice(options) if options else None


def draw_case(family: str, seed: int, *, regime: str = "small", swarm: bool = False,
              context_share: float | None = None) -> Case:
    return Case.make(family, draw_params(family, seed, regime=regime, swarm=swarm, context_share=context_share))


@dataclass(frozen=True)
class Coverage:
    """How often each feature, and each pair of features, appeared in `draws` cases."""

    family: str
    draws: int
    features: dict[str, int]
    pairs: dict[str, int]

    def report(self, top: int = 15) -> str:
        lines = [f"{self.family}: {self.draws} draws, {len(self.features)} features, {len(self.pairs)} feature pairs"]
        for name, count in sorted(self.features.items(), key=lambda kv: (-kv[1], kv[0])):
            lines.append(f"  {count / self.draws:7.1%}  {name}")
        if self.pairs:
            ranked = sorted(self.pairs.items(), key=lambda kv: (kv[1], kv[0]))
            lines.append(f"  rarest {min(top, len(ranked))} pairs seen:")
            lines += [f"  {count / self.draws:7.1%}  {name}" for name, count in ranked[:top]]
        return "\n".join(lines)


def coverage(family: str, draws: int, *, seed: int = 0, regime: str = "small", swarm: bool = True,
             context_share: float | None = None) -> Coverage:
    """Per-feature and per-pair counts over `draws` consecutive seeds from `seed` (a chain's ops
    counted as `context:<op>` features)."""
    fam = get_family(family)
    features: Counter[str] = Counter()
    pairs: Counter[str] = Counter()
    for i in range(draws):
        params = draw_params(family, seed + i, regime=regime, swarm=swarm, context_share=context_share)
        features.update(set(fam.features(params)))
        pairs.update(fam.feature_pairs(params))
    return Coverage(family, draws, dict(features), dict(pairs))
