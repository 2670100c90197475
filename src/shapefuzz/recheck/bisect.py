"""Which IREE release introduced a corpus entry's bug, and which fixed it.

Released toolchains come from `releases.py` (installed once into `~/.cache/shapefuzz/toolchains/`,
reused without the network). The search is a binary search over the releases `pip index versions`
lists in the range: first for a release where the entry fails, then the first failing release
before it and the first passing one after it.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from typing import Callable, Collection, Mapping, Sequence

from shapefuzz.corpus import CorpusEntry
from shapefuzz.errors import ToolchainError, UsageError
from shapefuzz.iree.releases import available_versions, cache_root, install, version_key
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult, replay_entry
from shapefuzz.iree.toolchain import Toolchain

__all__ = ["BisectResult", "Probe", "available_versions", "bisect_entry", "cache_root", "install",
           "history", "history_text", "not_monotone", "select_versions", "version_key"]


def select_versions(spec: str, available: Sequence[str]) -> list[str]:
    """`3.1.0..3.13.0` (inclusive, either end may be empty) or `3.11.0,3.13.0`, against what exists."""
    from shapefuzz.iree.releases import check_version_spec

    check_version_spec(spec)
    if ".." in spec:
        low, _, high = spec.partition("..")
        lo_key = version_key(low) if low.strip() else (0,)
        hi_key = version_key(high) if high.strip() else (10**9,)
        chosen = [v for v in available if lo_key <= version_key(v) <= hi_key]
    else:
        wanted = [v.strip() for v in spec.split(",") if v.strip()]
        missing = [v for v in wanted if v not in available]
        if missing:
            raise UsageError(f"--versions: {', '.join(missing)} not on the package index "
                             f"(available: {', '.join(available[-6:])}, ...)")
        chosen = sorted(wanted, key=version_key)
    if not chosen:
        raise UsageError(f"--versions {spec!r} matches no released version (available: {', '.join(available)})")
    return chosen


@dataclass(frozen=True)
class Probe:
    version: str
    result: ReplayResult | None  # None when the release could not be installed
    error: str = ""

    @property
    def verdict(self) -> bool | None:
        """True: fails (the same or another way); False: passes; None: cannot tell here."""
        if self.result is None:
            return None
        if self.result.outcome in (ReplayOutcome.STILL_FAILING, ReplayOutcome.CHANGED):
            return True
        if self.result.outcome == ReplayOutcome.FIXED:
            return False
        return None

    def describe(self) -> str:
        if self.result is None:
            return f"unavailable ({self.error})"
        r = self.result
        if r.outcome == ReplayOutcome.CHANGED:
            return f"fails differently: {r.now}" if r.now else f"fails differently ({r.detail})"
        if r.outcome == ReplayOutcome.STILL_FAILING:
            return f"fails: {r.detail}" if r.detail else "fails (same signature)"
        if r.outcome == ReplayOutcome.FIXED:
            return "passes"
        return f"{r.outcome.value}: {r.detail}"


@dataclass(frozen=True)
class BisectResult:
    entry_id: str
    versions: tuple[str, ...]
    probes: tuple[Probe, ...]  # in the order tested
    first_failing: str | None
    first_fixed: str | None  # first passing release after the failing ones
    note: str = ""

    def lines(self) -> list[str]:
        out = [f"entry: {self.entry_id}", f"releases in range: {', '.join(self.versions)}"]
        for probe in sorted(self.probes, key=lambda p: version_key(p.version)):
            out.append(f"  {probe.version:<9} {probe.describe()}")
        out.append(f"first failing release: {self.first_failing or 'none in range'}")
        out.append(f"first fixed release:   {self.first_fixed or ('none in range' if self.first_failing else '-')}")
        if self.note:
            out.append(f"note: {self.note}")
        return out

    @property
    def last_passing(self) -> str | None:
        """The release just before the first failing one, when it was tried and passes."""
        if self.first_failing is None:
            return None
        index = self.versions.index(self.first_failing)
        before = self.versions[index - 1] if index > 0 else None
        return before if any(p.version == before and p.verdict is False for p in self.probes) else None

    def to_meta(self, when: str) -> dict:
        """What `bisect` records in the entry's meta.json (an issue export quotes it)."""
        return {"date": when, "versions": [self.versions[0], self.versions[-1]], "first_failing": self.first_failing,
                "last_passing": self.last_passing, "first_fixed": self.first_fixed, "note": self.note}

    def to_json(self) -> dict:
        return {"id": self.entry_id, "last_passing": self.last_passing, "versions": list(self.versions), "first_failing": self.first_failing,
                "first_fixed": self.first_fixed, "note": self.note,
                "tested": {p.version: p.describe() for p in self.probes}}


FEW_RELEASES = 4  # below the failing one: newest-then-oldest costs at most one compile more than halving


def _first_failing(failing: int, probe: Callable[[int], bool | None],
                   first: Callable[[int, int, bool], int]) -> int:
    """The first failing index up to `failing` (which fails). Over a few releases (a campaign's
    spread) the release just before it is tried first, then the oldest: most bugs are new in the
    latest release or present in every release tried, so one or two compiles answer; otherwise,
    over a long list, or where one cannot tell, the binary search."""
    if failing == 0:
        return 0
    if failing > FEW_RELEASES:
        return first(0, failing, True)
    before = probe(failing - 1)
    if before is False:
        return failing
    if before is True:
        if failing - 1 == 0 or probe(0) is True:
            return 0
        return first(0, failing - 1, True)  # the oldest passes or cannot tell: the search between
    return first(0, failing, True)


def history(probes: Sequence[Probe]) -> list[tuple[bool, list[str]]]:
    """The decided verdicts oldest first, as runs: [(fails, [releases]), ...]; a release that cannot
    tell is left out (it neither splits nor joins a run)."""
    runs: list[tuple[bool, list[str]]] = []
    for p in sorted(probes, key=lambda p: version_key(p.version)):
        if p.verdict is None:
            continue
        if runs and runs[-1][0] == p.verdict:
            runs[-1][1].append(p.version)
        else:
            runs.append((p.verdict, [p.version]))
    return runs


def history_text(runs: Sequence[tuple[bool, Sequence[str]]]) -> str:
    """`fails in 3.0.0, passes in 3.12.0, fails in 3.13.0`: each run of releases with its verdict."""
    def span(vs: Sequence[str]) -> str:
        return vs[0] if len(vs) == 1 else f"{vs[0]}–{vs[-1]}"
    return ", ".join(f"{'fails' if fails else 'passes'} in {span(vs)}" for fails, vs in runs)


def not_monotone(runs: Sequence[tuple[bool, Sequence[str]]]) -> bool:
    """More than one failing run: the bug went away and came back (or the range is not one bug)."""
    return sum(1 for fails, _ in runs if fails) > 1


# up to this many releases every one is tried and the history is shown whole: a cache of a campaign's
# spread and a few more (an audit's cache held 7 and the bisect over them left 3.2.0 to 3.4.0 untried);
# a small reproducer compiles in seconds on each
EXHAUSTIVE = 10


def bisect_entry(entry: CorpusEntry, versions: Sequence[str], say: Callable[[str], None] = lambda _: None,
                 check: Callable[[CorpusEntry, Toolchain], ReplayResult] | None = None,
                 installer: Callable[[str], Toolchain] | None = None,
                 trusted: Collection[str] = (), exhaustive: bool = False,
                 known: Mapping[str, ReplayResult] | None = None) -> BisectResult:
    """Binary search for the first failing and first fixed release among `versions` (oldest first).
    Assumes the bug appears once and goes away once; releases that cannot tell are stepped over.
    `trusted`: releases the entry is known to fail with (the campaign that saved it just saw it
    fail there), taken as failing without a compile; `known`: releases whose verdict was already
    taken (by the caller's own compile), kept as they are. `exhaustive`: every release is tried and
    nothing is assumed (a bug fixed and broken again shows as such): first failing is the start of
    the newest failing run, first fixed the first passing release after it."""
    versions = sorted(versions, key=version_key)
    check = check or (lambda e, t: replay_entry(e, t, confirm=False))
    installer = installer or (lambda v: install(v, say))
    probes: dict[str, Probe] = {
        v: Probe(v, ReplayResult(entry.id, entry.path, ReplayOutcome.STILL_FAILING, entry.expected_state,
                                 entry.signature, detail="the failure the campaign saw"))
        for v in versions if v in trusted}
    probes.update({v: Probe(v, result) for v, result in (known or {}).items() if v in versions})

    def probe(index: int) -> bool | None:
        version = versions[index]
        if version not in probes:
            try:
                toolchain = installer(version)
                result = check(entry, toolchain)
                probes[version] = Probe(version, result)
            except (ToolchainError, UsageError, OSError, subprocess.SubprocessError) as error:
                probes[version] = Probe(version, None, str(error).splitlines()[0][:200] if str(error) else "error")
            say(f"  {version}: {probes[version].describe()}")
        return probes[version].verdict

    notes: list[str] = []

    def first(lo: int, hi: int, want: bool) -> int:
        """The first index in [lo, hi] whose verdict is `want`, given that hi has it (monotone)."""
        while lo < hi:
            mid = (lo + hi) // 2
            step, verdict = mid, probe(mid)
            while verdict is None and step + 1 < hi:  # step over releases that cannot tell
                step += 1
                verdict = probe(step)
            if verdict is None:  # nothing decidable in [mid, hi): look below mid
                step = mid - 1
                while step >= lo and probe(step) is None:
                    step -= 1
                if step < lo or probe(step) != want:
                    notes.append(f"{', '.join(versions[mid:hi])} cannot tell; the change may be in any of them")
                    return hi
                verdict = want
            if verdict == want:
                hi = step
            else:
                lo = step + 1
        return hi

    if exhaustive:
        for index in range(len(versions) - 1, -1, -1):
            probe(index)
        return _from_history(entry, versions, list(probes.values()))

    # A release where it fails: the ones it was seen with first, then from the newest down.
    seen = [versions.index(v.split("rc")[0]) for v in entry.toolchain_versions if v.split("rc")[0] in versions]
    failing = next((i for i in dict.fromkeys(seen + list(range(len(versions) - 1, -1, -1))) if probe(i)), None)
    if failing is None:
        return BisectResult(entry.id, tuple(versions), tuple(probes.values()), None, None,
                            "no release in the range fails (or none could tell)")
    first_fail = _first_failing(failing, probe, first)
    first_fixed = None
    last = len(versions) - 1
    if failing < last:
        end = probe(last)
        if end is False:
            first_fixed = versions[first(failing + 1, last, False)]
        elif end is None:
            notes.append(f"{versions[last]} cannot tell; the first fixed release was not searched")
    if first_fail == 0:
        notes.append("it fails in the oldest release of the range already")
    note = "; ".join(notes)
    return BisectResult(entry.id, tuple(versions), tuple(probes.values()), versions[first_fail], first_fixed, note)


def _from_history(entry: CorpusEntry, versions: Sequence[str], probes: list[Probe]) -> BisectResult:
    """The result of trying every release: read off the runs, assuming nothing."""
    runs = history(probes)
    failing = [i for i, (fails, _) in enumerate(runs) if fails]
    if not failing:
        return BisectResult(entry.id, tuple(versions), tuple(probes), None, None,
                            "no release in the range fails (or none could tell)")
    last = failing[-1]
    first_fail = runs[last][1][0]
    first_fixed = runs[last + 1][1][0] if last + 1 < len(runs) else None
    notes = []
    if not_monotone(runs):
        notes.append(f"not monotone: {history_text(runs)}")
    if first_fail == versions[0]:
        notes.append("it fails in the oldest release of the range already")
    undecided = [p.version for p in sorted(probes, key=lambda p: version_key(p.version)) if p.verdict is None]
    if undecided:
        notes.append(f"{', '.join(undecided)} cannot tell")
    return BisectResult(entry.id, tuple(versions), tuple(probes), first_fail, first_fixed, "; ".join(notes))
