"""The compiler-coverage map the campaign learns from (no IREE): which (lane, pass, pattern) items the
instrumented compiles reached, which candidates reached something new (the frontier), and the
choices that follow from it:
- a share of draws are neighbours of frontier candidates (small changes of their parameters),
  checked on the lane where their parent reached something new (novelty is a lane's: a neighbour
  checked on another lane explores nothing new there);
- families are drawn by what a second of their candidates taught lately (new buckets, new
  coverage), and features and feature pairs that keep teaching are preferred among the drawn
  candidates, those that stopped are not (decayed yields); saturation steering stays and
  multiplies in;
- the non-reference lane slots go to lanes that can take the candidate (a known limit decided
  before compiling never takes a slot) and still have something to teach about its family: each
  (family, lane) keeps a decayed record of its checks and of those that taught something (a new
  bucket, or a compile reaching an item the lane had never reached, past the family's first
  instrumented compile there); a Thompson draw from that record, weighed by how thinly the lane
  has seen the candidate's feature pairs and by what a check of the family costs there, picks
  the lane. A lane that keeps re-hitting known buckets or repeating known coverage for a family
  gives its slots to lanes that do not; one not tried yet for the family is tried early.
The engine reaches it through `coverage_steering.CoverageSteering`; the report reads it back
through `coverage_summary`. The map lives in the campaign store (tables `coverage`, `covered`,
`failing_passes`), so a resumed campaign knows what was reached."""

from __future__ import annotations

import collections
import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from shapefuzz.campaign.lanecost import compiled
from shapefuzz.campaign.steering import Steering, pairs
from shapefuzz.campaign.database import CampaignStore, CandidateRow

Item = tuple[str, str]  # (pass, pattern); pattern "" for the pass itself
Kind = tuple[str, str]  # (group, lane)

# What a lane check taught, for the lane choice: a bucket it was the first to hit counts whole, a
# compile reaching new passes or patterns (without failing) less: measured, GPU lanes kept reaching
# new patterns while finding few new buckets, and their checks cost more.
BUCKET_LESSON = 1.0
COVERAGE_LESSON = 0.3
LANE_PRIOR = 4.0  # checks a lane's record over every family is worth in a (family, lane)'s draw
FAMILY_PRIOR = 4.0  # candidates every family's record is worth in one family's draw


DEFAULT_COVERAGE = 0.15  # with --steer: steering needs a dense map (bench/bench_coverage.py)
# Without --steer the map only shows what a campaign reached and names failing passes, so it
# costs at most 3% of candidates/min: bench/bench_action_log.py measured an instrumented check
# at +47% of a plain one (36 pairs, 3.13, all families), so 0.15 cost 6.6% and 0.05 costs 2.3%.
MEASURED_COVERAGE = 0.05


def default_share(steer: bool) -> float:
    """The share of candidates compiled with the action log when `--coverage` is not given."""
    return DEFAULT_COVERAGE if steer else MEASURED_COVERAGE


@dataclass(frozen=True)
class CoverageKnobs:
    share: float = DEFAULT_COVERAGE  # share of candidates checked with the action log (0: coverage feedback off)
    neighbours: float = 0.1  # share of draws spent near frontier candidates
    neighbours_each: int = 6  # most neighbour draws one frontier candidate gets
    decay: float = 0.9  # per update: how fast a feature's yield forgets its past
    lane_decay: float = 0.97  # per check: how fast a (family, lane)'s record of what it taught forgets
    lanes: bool = True  # lane slots by eligibility and what each lane still teaches (else rotation, known limits swapped out)
    steer: bool = True  # False: only measure (instrument and record), draw and rotate as without coverage

    def __post_init__(self) -> None:
        if not 0.0 <= self.share <= 1.0:
            raise ValueError("coverage share must be in [0, 1]")
        if not 0.0 <= self.neighbours < 1.0:
            raise ValueError("neighbour share must be in [0, 1)")

    @property
    def enabled(self) -> bool:
        return self.share > 0.0


@dataclass
class Frontier:
    candidate: Any  # the engine's Candidate
    new: int  # items it reached first
    lanes: tuple[str, ...] = ()  # where it reached them (a neighbour is checked there)
    drawn: int = 0  # neighbours drawn from it so far


class CoverageBook:
    """The in-memory map, rebuilt from the store on resume, and the steering it feeds."""

    def __init__(self, knobs: CoverageKnobs) -> None:
        self.knobs = knobs
        self.seen: dict[str, set[Item]] = collections.defaultdict(set)  # lane -> items reached
        self.frontier: list[Frontier] = []
        # decayed (trials, gains) per (group, feature or pair or "group:g"): does it still find new items?
        self.trials: dict[tuple[str, str], float] = collections.defaultdict(float)
        self.gains: dict[tuple[str, str], float] = collections.defaultdict(float)
        self.total_trials = 0.0
        self.total_gains = 0.0
        # checks per (group, feature pair, lane): how thinly a lane has seen a conjunction
        self.lane_checks: collections.Counter[tuple[str, str, str]] = collections.Counter()
        self.instrumented = 0
        # per (group, lane): decayed checks and those that taught something; seconds of its checks
        self.lane_trials: dict[Kind, float] = collections.defaultdict(float)
        self.lane_gains: dict[Kind, float] = collections.defaultdict(float)
        self.lane_seconds: collections.Counter[Kind] = collections.Counter()
        self.lane_timed: collections.Counter[Kind] = collections.Counter()
        self.kind_compiles: collections.Counter[Kind] = collections.Counter()  # instrumented ones

    # --- learning -------------------------------------------------------------------------
    def reached(self, lane: str, items: Iterable[Item]) -> list[Item]:
        """Adds what one compile on `lane` reached; returns the items never reached there before."""
        seen = self.seen[lane]
        new = [item for item in items if item not in seen]
        seen.update(new)
        return new

    def learn(self, group: str, features: tuple[str, ...], new_items: int, new_buckets: int,
              instrumented: bool = True) -> None:
        """A candidate of `group` with `features` was the first to reach `new_items` items (in its
        instrumented compiles; none when it was not instrumented) and the first to hit
        `new_buckets` buckets: what it taught (`lesson`) goes into the decayed yields."""
        self.instrumented += 1 if instrumented else 0
        gain = lesson(new_buckets > 0, new_items > 0)
        d = self.knobs.decay
        for key in _keys(group, features):
            self.trials[key] = self.trials[key] * d + 1.0
            self.gains[key] = self.gains[key] * d + gain
        self.total_trials += 1.0
        self.total_gains += gain

    def add_frontier(self, candidate: Any, new: int, lanes: tuple[str, ...] = ()) -> None:
        if new > 0:
            self.frontier.append(Frontier(candidate, new, lanes))
            if len(self.frontier) > 256:  # those with no neighbour draws left, then the least new, go
                self.frontier.sort(key=lambda f: (f.drawn >= self.knobs.neighbours_each, -f.new))
                del self.frontier[256:]

    def first_of_kind(self, group: str, lane: str) -> bool:
        """Is this the first instrumented compile of `group` on `lane`? (Counts it.) Such a compile
        reaches the family's own passes and patterns, new to the lane but nothing a neighbour of
        it would find again: its novelty counts 0, like a lane's very first compile."""
        self.kind_compiles[(group, lane)] += 1
        return self.kind_compiles[(group, lane)] == 1

    def taught(self, group: str, lane: str, gain: float, seconds: float | None = None) -> None:
        """A check of a `group` candidate on `lane` finished; `gain` (0 to 1): what it taught there."""
        key, d = (group, lane), self.knobs.lane_decay
        self.lane_trials[key] = self.lane_trials[key] * d + 1.0
        self.lane_gains[key] = self.lane_gains[key] * d + gain
        if seconds is not None and seconds > 0:
            self.lane_seconds[key] += seconds  # type: ignore[assignment]  # float in a Counter (typeshed: int)
            self.lane_timed[key] += 1

    def lane_value(self, group: str, lane: str, rng: random.Random, family_seconds: float) -> float:
        """A draw of how likely a check of `group` on `lane` teaches something, per second.

        The chance is a Beta draw around the (family, lane)'s own record, with the lane's record
        over every family as its prior (worth `LANE_PRIOR` checks): a campaign spreads its checks
        over families x lanes (ten by eleven), so in its first hour a (family, lane) has a handful
        of checks, too few to tell a lane that keeps finding bugs from one that does not; a lane
        not tried at all draws around 1/2 and is tried early. The cost is the (family, lane)'s
        mean check against the family's on any lane. What a budget buys is seconds, not checks:
        measured, slots chosen by chance alone went to the slow GPU lanes, where a check took
        1.25x as long."""
        trials, gains = self.lane_trials[(group, lane)], self.lane_gains[(group, lane)]
        pooled_trials = sum(t for (_, l), t in self.lane_trials.items() if l == lane)
        pooled_gains = sum(g for (_, l), g in self.lane_gains.items() if l == lane)
        prior = (pooled_gains + 1.0) / (pooled_trials + 2.0)
        chance = rng.betavariate(LANE_PRIOR * prior + gains, LANE_PRIOR * (1.0 - prior) + max(0.0, trials - gains))
        timed = self.lane_timed[(group, lane)]
        if not timed or family_seconds <= 0:
            return chance
        cost = (self.lane_seconds[(group, lane)] / timed) / family_seconds
        return chance / min(8.0, max(0.25, cost))  # a slow lane still gets turns (lanecost.py bars the extremes)

    def family_seconds(self, group: str) -> float:
        """Mean seconds of a check of `group` on one lane, over every lane (0 when unknown)."""
        timed = sum(n for (g, _), n in self.lane_timed.items() if g == group)
        return sum(s for (g, _), s in self.lane_seconds.items() if g == group) / timed if timed else 0.0

    def checked(self, group: str, features: tuple[str, ...], lanes: Iterable[str]) -> None:
        for lane in lanes:
            for pair in pairs(features) or [""]:
                self.lane_checks[(group, pair, lane)] += 1

    # --- drawing ----------------------------------------------------------------------------
    def yield_ratio(self, group: str, features: tuple[str, ...]) -> float:
        """How much better than average the candidate's group, features and pairs have been at
        finding new items lately (1.0: average or unknown; in [0.5, 2])."""
        base = (self.total_gains + 1.0) / (self.total_trials + 2.0)
        keys = _keys(group, features)
        ratios = [((self.gains[k] + base) / (self.trials[k] + 1.0)) / base for k in keys]
        ratio = math.exp(sum(math.log(max(r, 1e-6)) for r in ratios) / len(ratios)) if ratios else 1.0
        # narrow: coverage novelty says little about bugs, and a wide swing starved whole families
        # (a 10-minute campaign drew 19 scatter candidates guided against 33 unguided)
        return min(2.0, max(0.5, ratio))

    def pick_group(self, rng: random.Random, steering: Steering) -> str:
        """The family of the next draw, by what a second of its checks has taught lately.

        A family's weight is its decayed record (`learn`: a new bucket counts whole, new coverage
        `COVERAGE_LESSON`), with every family's record as the prior (worth `FAMILY_PRIOR`
        candidates), against that prior (clamped to [1/4, 4]: no family starves), divided by
        what a candidate of the family costs against the mean one (`Steering.group_cost`,
        clamped to [1/2, 4]); times saturation steering's own weight (families tried least,
        more). Measured: weights per candidate drew the attention family, 3-4x as dear as the
        others, for 12-18% of draws and a third of the worker seconds, and the campaign checked
        20% fewer candidates/min. (Not a Thompson draw: lessons are rare, and a Beta draw with a
        tiny first parameter swung over orders of magnitude, drowning the cost.)"""
        prior = (self.total_gains + 1.0) / (self.total_trials + 2.0)
        weights = []
        for group in steering.groups:
            key = (group, f"group:{group}")
            record = (FAMILY_PRIOR * prior + self.gains[key]) / (FAMILY_PRIOR + self.trials[key])
            weights.append(min(4.0, max(0.25, record / prior)) / family_cost(steering.group_cost(group))
                           / math.sqrt(1 + steering.per_group[group]))
        return rng.choices(steering.groups, weights)[0]

    def score(self, rarity: float, group: str, features: tuple[str, ...]) -> float:
        """The engine keeps the best-scored of several draws: rarity (swarm steering) times yield."""
        return rarity * self.yield_ratio(group, features)

    def pick_frontier(self, rng: random.Random, cost: Callable[[str], float]) -> Frontier | None:
        """A frontier candidate to draw a neighbour of (more new items, more draws; a dearer family,
        fewer: `cost`, as in `pick_group`), or None."""
        live = [f for f in self.frontier if f.drawn < self.knobs.neighbours_each]
        if not live:
            return None
        weights = [math.sqrt(f.new) / family_cost(cost(f.candidate.group)) for f in live]
        chosen = rng.choices(live, weights)[0]
        chosen.drawn += 1
        return chosen

    def wants_neighbour(self, rng: random.Random) -> bool:
        return self.knobs.enabled and rng.random() < self.knobs.neighbours

    def instrument(self, rng: random.Random) -> bool:
        return self.knobs.enabled and rng.random() < self.knobs.share

    # --- lanes ------------------------------------------------------------------------------
    def choose_lanes(self, group: str, features: tuple[str, ...], rotation: tuple[str, ...], lanes: tuple[str, ...],
                     reference: str | None, eligible: Callable[[str], bool], rng: random.Random) -> tuple[str, ...]:
        """The lanes a candidate is checked on: the reference (when rotation has it) plus as many
        others as rotation gave, each an eligible lane, those with the most left to teach about
        the candidate's family first (`lane_value`, times 1/2 to 3/2 by how thinly the lane has
        checked its feature pairs); ties go to rotation's own choice and then to its order."""
        keep = tuple(lane for lane in rotation if lane == reference)
        slots = len(rotation) - len(keep)
        if slots <= 0:
            return keep
        others = [lane for lane in lanes if lane != reference and lane not in keep and eligible(lane)]
        if not others:
            return keep or tuple(lane for lane in rotation if eligible(lane))
        feature_pairs = pairs(features) or [""]
        family_seconds = self.family_seconds(group)

        def value(lane: str) -> tuple[float, int, int]:
            thin = sum(1.0 / (1 + self.lane_checks[(group, p, lane)]) for p in feature_pairs) / len(feature_pairs)
            score = self.lane_value(group, lane, rng, family_seconds) * (0.5 + thin)
            return (-score, 0 if lane in rotation else 1, lanes.index(lane))

        picked = sorted(others, key=value)[:slots]
        return keep + tuple(lane for lane in lanes if lane in picked)

    # --- resume -----------------------------------------------------------------------------
    def load(self, store: CampaignStore, rows: dict[str, CandidateRow], counts: list[tuple[str, int]],
             where: dict[str, tuple[str, ...]]) -> None:
        """The map, the yields, the lane checks and what each (family, lane) taught, from a store.
        `rows`: every candidate tried so far; `counts` and `where`: the store's `frontier_counts`
        and `frontier_lanes` (read once by the caller, which revives the frontier from them too)."""
        candidates = {k: (r.family, r.features, r.backends) for k, r in rows.items()}
        for lane, pass_name, pattern, *_ in store.coverage_items():
            self.seen[lane].add((pass_name, pattern))
        for key, lane, _, _ in store.covered():
            if key in candidates:
                self.kind_compiles[(candidates[key][0], lane)] += 1
        for group, features, lanes in candidates.values():
            self.checked(group, features, lanes)
        firsts = first_hits(store, rows)
        for group, lane, gain, seconds in lane_lessons(rows, firsts, where):
            self.taught(group, lane, gain, seconds)
        covered = dict(counts)
        for row in sorted(rows.values(), key=lambda r: (r.finished, r.idx)):
            self.learn(row.family, row.features, covered.get(row.key, 0), len(firsts.get(row.key, ())),
                       instrumented=row.key in covered)


def family_cost(ratio: float) -> float:
    """A family's cost against the mean candidate's, as drawing weighs it: a dear family still
    gets draws, a cheap one does not swamp the rest."""
    return min(4.0, max(0.5, ratio))


def frontier_counts(store: CampaignStore) -> list[tuple[str, int]]:
    """(candidate, items it reached first) for every instrumented candidate, in the order they
    finished; a lane's first instrumented compile, and a family's first on a lane (both find
    everything of their own new), count 0."""
    return [(key, sum(new.values())) for key, new in _new_by_lane(store).items()]


def frontier_lanes(store: CampaignStore) -> dict[str, tuple[str, ...]]:
    """Candidate -> the lanes where it reached something first and did not fail there."""
    failed = {(key, lane) for key, _, lane in store.hits()}
    return {key: tuple(lane for lane, n in new.items() if n > 0 and (key, lane) not in failed)
            for key, new in _new_by_lane(store).items()}


def _new_by_lane(store: CampaignStore) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {}
    lanes: set[str] = set()
    kinds: set[tuple[str, str]] = set()
    for key, lane, new, family in store.covered():
        counts.setdefault(key, {})[lane] = new if lane in lanes and (family, lane) in kinds else 0
        lanes.add(lane)
        kinds.add((family, lane))
    return counts


def first_hits(store: CampaignStore, rows: dict[str, CandidateRow]) -> dict[str, list[str]]:
    """Candidate -> the lanes of the buckets it was the first to hit (one entry a bucket)."""
    order = {row.key: (row.finished, row.idx) for row in rows.values()}
    first: dict[str, tuple[tuple[float, int], str, str]] = {}  # bucket -> (order, candidate, lane) of its first hit
    for key, sig, lane in store.hits():
        if key in order and (sig not in first or order[key] < first[sig][0]):
            first[sig] = (order[key], key, lane)
    found: dict[str, list[str]] = {}
    for _, key, lane in first.values():
        found.setdefault(key, []).append(lane)
    return found


def lane_lessons(rows: dict[str, CandidateRow], firsts: dict[str, list[str]],
                 where: dict[str, tuple[str, ...]]) -> list[tuple[str, str, float, float | None]]:
    """(group, lane, what it taught (`lesson`), seconds) for every lane check of the campaign so
    far, in the order the candidates finished: what `CoverageBook.taught` learnt, again, on resume.
    A check taught something when its candidate was the first to hit a bucket there (`firsts`:
    `first_hits`), or reached an item the lane had not reached before (`where`: `frontier_lanes`)."""
    buckets = {(key, lane) for key, lanes in firsts.items() for lane in lanes}
    covered = {(key, lane) for key, lanes in where.items() for lane in lanes}
    lessons = []
    for row in sorted(rows.values(), key=lambda r: (r.finished, r.idx)):
        for lane in row.backends:
            status, seconds = (row.outcome.get(lane) or ["", None])[:2]
            if compiled(status):
                gain = lesson((row.key, lane) in buckets, (row.key, lane) in covered)
                lessons.append((row.family, lane, gain, float(seconds) if seconds else None))
    return lessons


def lesson(new_bucket: bool, new_coverage: bool) -> float:
    return BUCKET_LESSON if new_bucket else COVERAGE_LESSON if new_coverage else 0.0


def _keys(group: str, features: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(group, f"group:{group}")] + [(group, f) for f in (*features, *pairs(features))]


__all__ = ["BUCKET_LESSON", "COVERAGE_LESSON", "DEFAULT_COVERAGE", "MEASURED_COVERAGE", "CoverageBook", "CoverageKnobs",
           "Frontier", "default_share", "family_cost", "first_hits", "frontier_counts", "frontier_lanes", "lane_lessons",
           "lesson"]
