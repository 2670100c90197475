"""Is more time worth it? Species-discovery estimates over a campaign's compiler-bug causes, after
STADS (Böhme, "Software Testing as Species Discovery", TOSEM 2018), computed from the store so they
survive a resume, and the `fuzz --until-saturated P` rule built on them. No IREE here.

What is counted:
- the sample is the campaign's checked candidates, n of them: every candidate with a result (a
  candidate lost with its worker, or one our own code failed on, was never observed);
- the species are the compiler-bug causes (`triage_rules.cause_triage`), as the store groups them now;
- a *sighting* of a cause (an incidence, in STADS' words) is a candidate of the sample that hit at
  least one of the cause's buckets, on its check or on its confirming re-run. Re-hits count: they are
  what tells a common cause from a rare one. A candidate that hits two buckets of one cause sights it
  once. A failure met only while shrinking is no sighting (the shrinker's candidates are not draws of
  the generator), so a cause found only that way is outside the counts. When two causes are tied
  later, their sightings are pooled from the start.
From those: S causes sighted, f1 sighted by exactly one candidate, f2 by exactly two.

The estimates:
- Good–Turing: U = f1 / n, the chance that the next candidate sights a cause no candidate has yet;
  its 95% interval from Esty's (1983) normal approximation, Var(U) = (f1 (1 - f1/n) + 2 f2) / n².
- The next hour at r candidates/min, m = 60 r more candidates: the chance of at least one new cause,
  1 - (1 - U)^m, and the new causes to expect, f0 (1 - (1 - f1 / (n f0 + f1))^m) (Chao et al. 2014),
  which never exceeds f0, the unseen causes Chao1 estimates.
- Chao1, the causes reachable with this generator and these lanes: S + f1² / (2 f2), or the
  bias-corrected S + f1 (f1 - 1) / 2 when f2 = 0, with Chao's (1987) variance and its log-normal 95%
  interval S + T/K .. S + T K, T = Chao1 - S, K = exp(1.96 sqrt(ln(1 + Var / T²))); with T = 0 the
  interval is S .. S. (For incidence data Chao2 multiplies the unseen part by (n - 1)/n; with the
  thousands of candidates a campaign has, that is less than one cause in a thousand apart.)"""

from __future__ import annotations

import collections
import math
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from shapefuzz.campaign.config import format_duration
from shapefuzz.campaign.database import BucketRow, CandidateRow
from shapefuzz.campaign.causes.verdicts import cause_triage
from shapefuzz.campaign.outcomes import Triage, Verdict

if TYPE_CHECKING:
    from shapefuzz.campaign.resume_state import TriedRow

Z95 = 1.959964
UNOBSERVED = (Verdict.LOST, Verdict.ERROR)  # no result: not part of the sample


@dataclass(frozen=True)
class Discovery:
    """The estimates at one moment; None where n is 0 (nothing to estimate from)."""

    candidates: int  # n
    seen: int  # S: compiler-bug causes sighted by at least one candidate
    singletons: int  # f1
    doubletons: int  # f2
    per_minute: float  # the candidate rate the next hour is taken at
    good_turing: float | None = None
    good_turing_95: tuple[float, float] | None = None
    next_hour: float | None = None  # chance of at least one new cause in the next hour
    next_hour_causes: float | None = None  # new causes to expect in the next hour
    chao1: float | None = None
    chao1_95: tuple[float, float] | None = None
    bias_corrected: bool = False  # Chao1 in its bias-corrected form (f2 = 0)

    def to_json(self) -> dict[str, Any]:
        r = lambda x, d=6: None if x is None else round(x, d)  # noqa: E731
        pair = lambda p, d=6: None if p is None else [round(p[0], d), round(p[1], d)]  # noqa: E731
        return {"candidates": self.candidates, "causes_seen": self.seen, "seen_once": self.singletons,
                "seen_twice": self.doubletons, "per_minute": round(self.per_minute, 2),
                "good_turing": r(self.good_turing), "good_turing_95": pair(self.good_turing_95),
                "next_hour": r(self.next_hour, 4), "next_hour_causes": r(self.next_hour_causes, 2),
                "chao1": r(self.chao1, 2), "chao1_95": pair(self.chao1_95, 2),
                "chao1_form": "bias-corrected" if self.bias_corrected else "classic"}


def good_turing(f1: int, f2: int, n: int) -> tuple[float, tuple[float, float]]:
    """U = f1/n and its 95% interval (Esty 1983), clipped to [0, 1]."""
    u = min(1.0, f1 / n)  # (one candidate can be the only sighting of several causes: f1 > n)
    half = Z95 * math.sqrt(max(0.0, f1 * (1 - f1 / n) + 2 * f2)) / n
    return u, (max(0.0, u - half), min(1.0, u + half))


def chao1(s: int, f1: int, f2: int) -> tuple[float, tuple[float, float], bool]:
    """Chao1, its log-normal 95% interval, and whether the bias-corrected form (f2 = 0) was used."""
    if f2 > 0:
        ratio = f1 / f2
        estimate = s + f1 * f1 / (2 * f2)
        var = f2 * (ratio ** 4 / 4 + ratio ** 3 + ratio ** 2 / 2)
        corrected = False
    else:
        estimate = s + f1 * (f1 - 1) / 2
        var = (f1 * (f1 - 1) / 2 + f1 * (2 * f1 - 1) ** 2 / 4 - f1 ** 4 / (4 * estimate)) if estimate > 0 else 0.0
        corrected = True
    unseen = estimate - s
    if unseen <= 0:
        return estimate, (float(s), float(s)), corrected
    k = math.exp(Z95 * math.sqrt(math.log(1 + max(0.0, var) / unseen ** 2)))
    return estimate, (s + unseen / k, s + unseen * k), corrected


def estimate(sightings: Iterable[int], candidates: int, per_minute: float) -> Discovery:
    """The estimates from each sighted cause's number of sightings, n and the candidate rate."""
    counts = [k for k in sightings if k > 0]
    s, f1, f2 = len(counts), sum(k == 1 for k in counts), sum(k == 2 for k in counts)
    if candidates <= 0:
        return Discovery(0, s, f1, f2, per_minute)
    u, u95 = good_turing(f1, f2, candidates)
    richness, r95, corrected = chao1(s, f1, f2)
    m = max(0.0, per_minute) * 60
    hour = 1 - (1 - u) ** m
    unseen = richness - s
    expected = unseen * (1 - (1 - f1 / (candidates * unseen + f1)) ** m) if unseen > 0 and f1 else 0.0
    return Discovery(candidates, s, f1, f2, per_minute, u, u95, hour, expected, richness, r95, corrected)


# --- from the store's rows -------------------------------------------------------------------------
def compiler_bug_causes(buckets: Iterable[BucketRow]) -> dict[str, set[str]]:
    """cause name -> its buckets, for the causes judged compiler bugs (grouped as report.py groups
    them: by each bucket's cause, a bucket from before causes existed being its own)."""
    groups: dict[str, list[BucketRow]] = collections.defaultdict(list)
    for b in buckets:
        groups[b.cause or b.sig].append(b)
    return {name: {b.sig for b in members} for name, members in groups.items()
            if cause_triage(members) == Triage.COMPILER_BUG}


def sightings(causes: Mapping[str, set[str]], seen_by: Mapping[str, set[str]]) -> list[int]:
    """Each cause's sightings: the candidates that hit any of its buckets (`seen_by`: bucket ->
    candidate keys of the sample), each counted once."""
    out = []
    for members in causes.values():
        sets = [seen_by[b] for b in members if b in seen_by]
        out.append(len(sets[0]) if len(sets) == 1 else len(set().union(*sets)) if sets else 0)
    return out


def seen_by(hits: Iterable[tuple[str, str]], sample: set[str] | frozenset[str]) -> dict[str, set[str]]:
    """bucket -> the candidates of the sample that hit it, from (candidate, bucket) pairs."""
    out: dict[str, set[str]] = collections.defaultdict(set)
    for candidate, bucket in hits:
        if candidate in sample:
            out[bucket].add(candidate)
    return out


class Sightings:
    """The engine's running counts, read from the store on start and kept with every result: n,
    and which candidates of the sample hit each bucket. n is always current; the sightings per cause
    (grouped anew, as ties and triage verdicts change) are counted again after a new sighting, or
    every `every` seconds, but never more often than keeps that counting under 2% of the head's time
    (a 100,000-candidate campaign's takes milliseconds)."""

    def __init__(self, rows: Iterable[CandidateRow | TriedRow], hits: Iterable[tuple[str, str]], every: float = 2.0) -> None:
        self.sample = {r.key for r in rows if r.verdict not in UNOBSERVED}
        self.seen_by = seen_by(hits, self.sample)
        self.every = every
        self._counts: list[int] = []
        self._at = -math.inf
        self._cost = 0.0  # seconds the last count took
        self._dirty = True

    def checked(self, key: str, verdict: Verdict, buckets: Iterable[str]) -> None:
        """A candidate's check finished (with the buckets it hit)."""
        if Verdict(verdict) not in UNOBSERVED:
            self.sample.add(key)
            self.hit(key, buckets)

    def hit(self, key: str, buckets: Iterable[str]) -> None:
        """Buckets a candidate hit (a confirming re-run's too); outside the sample: not a sighting."""
        if key in self.sample:
            for b in buckets:
                self.seen_by.setdefault(b, set()).add(key)
                self._dirty = True

    def estimate(self, buckets: Iterable[BucketRow], per_minute: float, fresh: bool = False) -> Discovery:
        """The estimates; `fresh`: count the sightings again now, whatever it costs."""
        now = time.monotonic()
        since, spacing = now - self._at, 50 * self._cost
        if fresh or since >= max(self.every, spacing) or (self._dirty and since >= spacing):
            self._counts = sightings(compiler_bug_causes(buckets), self.seen_by)
            self._at, self._dirty = now, False
            self._cost = time.monotonic() - now
        return estimate(self._counts, len(self.sample), per_minute)


def replay(rows: Iterable[CandidateRow | TriedRow], hits: Mapping[str, Iterable[str]], buckets: Iterable[BucketRow],
           p: float) -> tuple[int, float] | None:
    """`below_since` over a store's rows: its candidates, `hits` (candidate -> buckets) and buckets,
    judged with today's causes."""
    cause_of = {sig: name for name, members in compiler_bug_causes(buckets).items() for sig in members}
    sample = sorted((r for r in rows if r.verdict not in UNOBSERVED), key=lambda r: (r.finished, r.idx))
    return below_since(((r.finished, {cause_of[s] for s in hits.get(r.key, ()) if s in cause_of})
                        for r in sample), p)


# --- the saturation rule ---------------------------------------------------------------------------
SATURATION_TIME_SHARE = 0.1  # ... and the last tenth of the campaign's active time


def window_candidates(p: float) -> int:
    """The rule's window in candidates, 3/P: were the chance per candidate P, that many candidates
    would all miss a new cause only 5% of the time (e^-3)."""
    return math.ceil(3 / p)


def below_since(points: Iterable[tuple[float, Iterable[str]]], p: float) -> tuple[int, float] | None:
    """Replays a campaign: `points` are (active seconds, causes sighted) for each candidate of the
    sample in the order they finished. The (n, seconds) from which the Good–Turing estimate has
    stayed below `p`, or None when it is not below `p` at the end."""
    counts: collections.Counter[str] = collections.Counter()
    f1 = n = 0
    since = None
    for seconds, causes in points:
        n += 1
        for cause in causes:
            counts[cause] += 1
            f1 += 1 if counts[cause] == 1 else -1 if counts[cause] == 2 else 0
        if f1 / n >= p:
            since = None
        elif since is None:
            since = (n, seconds)
    return since


@dataclass
class SaturationWatch:
    """`--until-saturated P`: saturated once the Good–Turing chance per candidate has stayed below
    P over the last 3/P candidates and the last tenth of the active time (both)."""

    p: float
    since: tuple[int, float] | None = None  # (n, active seconds) when it last fell below p

    def observe(self, d: Discovery, active: float) -> None:
        if d.good_turing is None or d.good_turing >= self.p:
            self.since = None
        elif self.since is None:
            self.since = (d.candidates, active)

    def saturated(self, d: Discovery, active: float) -> str | None:
        """Why the campaign may stop now, or None."""
        if self.since is None or d.good_turing is None:
            return None
        n0, t0 = self.since
        if d.candidates - n0 < window_candidates(self.p) or active - t0 < SATURATION_TIME_SHARE * active:
            return None
        return (f"saturated: the chance that a candidate finds a new compiler-bug cause stayed below {self.p:g} "
                f"(now {d.good_turing:.2g}) for the last {d.candidates - n0} candidates and "
                f"{format_duration(active - t0)}")


# --- words ------------------------------------------------------------------------------------------
def _pct(x: float) -> str:
    return f"{x:.2%}" if x < 0.1 else f"{x:.0%}"


def short_text(d: Discovery | None) -> str:
    """For the progress line: "new cause 0.80%/cand 99%/h  Chao1 62 (50-90)"."""
    if d is None or d.good_turing is None:
        return ""
    assert d.next_hour is not None and d.chao1 is not None and d.chao1_95 is not None  # estimate() sets them together
    return (f"new cause {_pct(d.good_turing)}/cand {_pct(d.next_hour)}/h  "
            f"Chao1 {d.chao1:.0f} ({d.chao1_95[0]:.0f}-{d.chao1_95[1]:.0f})")


def lines(d: Discovery | None) -> list[str]:
    """The estimates in two sentences ([] before the first candidate)."""
    if d is None or d.good_turing is None:
        return []
    assert d.good_turing_95 is not None and d.next_hour is not None and d.next_hour_causes is not None \
        and d.chao1 is not None and d.chao1_95 is not None  # estimate() sets them together
    lo, hi = d.good_turing_95
    return [f"chance the next candidate finds a new compiler-bug cause (Good–Turing: {d.singletons} of {d.seen} "
            f"causes sighted by one candidate only, in {d.candidates}): {_pct(d.good_turing)} (95% {_pct(lo)}–{_pct(hi)}); "
            f"the next hour at {d.per_minute:.1f}/min: {_pct(d.next_hour)}, about {d.next_hour_causes:.1f} new",
            f"compiler-bug causes reachable with this generator and these lanes (Chao1"
            f"{', bias-corrected' if d.bias_corrected else ''}): {d.chao1:.1f} (95% {d.chao1_95[0]:.1f}–"
            f"{d.chao1_95[1]:.1f}); {d.seen} seen"]


__all__ = ["Discovery", "SaturationWatch", "below_since", "chao1", "compiler_bug_causes", "estimate",
           "good_turing", "lines", "replay", "seen_by", "Sightings", "short_text", "sightings", "window_candidates", "UNOBSERVED"]
