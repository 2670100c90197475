"""`shapefuzz fuzz`: puts a campaign together (toolchain, families, backends, store, target,
engine), runs it and writes the report. The CLI calls `run_campaign` and nothing else."""

from __future__ import annotations

import dataclasses
import json
import os
import sqlite3
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from shapefuzz.campaign.report.dashboard import Refresher, refresh_seconds, write_dashboard
from shapefuzz.campaign.config import FAIL_ON, CampaignConfig, check_fraction, parse_size, default_jobs, parse_duration, resolve_names
from shapefuzz.durations import parse_budget
from shapefuzz.campaign.config import parse_chance
from shapefuzz.campaign.corpus_place import corpus_record, stored_corpus
from shapefuzz.campaign.engine import CORPUS_FULL, Engine, EngineConfig, Limits
from shapefuzz.campaign.outcomes import BucketState
from shapefuzz.campaign.coverage_map import CoverageKnobs, default_share
from shapefuzz.campaign.steering import SteeringKnobs
from shapefuzz.campaign.iree import CONTEXT_SHARE, KNOWN_FAMILIES, IreeTarget, available_families
from shapefuzz.campaign.report.progress import Progress, ProgressFn
from shapefuzz.campaign.report.summary import Summary, summarize, write_report
from shapefuzz.campaign.folder_lock import hold_campaign
from shapefuzz.campaign.database import CampaignStore
from shapefuzz.campaign.localizing import DEFAULT_LOCALIZE_SECONDS
from shapefuzz.campaign.shown_runs import shown_facts
from shapefuzz.corpus import DEFAULT_CORPUS
from shapefuzz.errors import ClusterLost, CorpusError, UsageError
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget
from shapefuzz.families.gates import Gated, release_gates
from shapefuzz.campaign.withheld import withhold
from shapefuzz.process.sandbox import Limits as ProcessLimits
from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND
from shapefuzz.iree.toolchain import Toolchain

if TYPE_CHECKING:
    from shapefuzz.campaign.ranging import RangeWorker
    from shapefuzz.iree.release_fetch import FetchKnobs, ReleaseFetcher

DEFAULT_CAMPAIGN = "shapefuzz-campaign"
LARGE_EVERY = 8  # one candidate in 8 is a large-shape round on the compile-only lanes (rotating lanes only)


MAX_JOBS = 256


@dataclass(frozen=True)
class FuzzRequest:
    """The command line, unparsed: strings as typed, None where not given."""

    ops: str | None = None
    backends: tuple[str, ...] | None = None  # already resolved by the CLI's BackendList
    time: str | float | None = None  # as typed, or seconds already parsed by the CLI
    count: int | None = None
    jobs: int | None = None
    seed: int | None = None
    campaign: str | None = None
    corpus: str | None = None
    shrink: bool = True
    compile_timeout: float | None = None
    argv: tuple[str, ...] = ()
    shrink_time: str | float | None = None
    memory_cap: str | None = None
    shrink_share: float | None = None
    saturate_after: int | None = None
    explore: float | None = None
    lanes_per_candidate: int | None = None
    fail_on: str | None = None
    cluster: str | None = None  # a Ray cluster's address ("auto", "local", HOST:PORT, ray://HOST:PORT)
    iree_bin: str | None = None  # the toolchain as named on the command line, for the cluster's nodes
    iree_version: str | None = None
    coverage: float | None = None  # share of candidates instrumented (coverage feedback); 0: off
    # Steering by coverage (frontier neighbours, yields, lane choice) is asked for (`--steer`): in
    # bench/bench_coverage.py's 7-minute campaigns it never found more causes than measuring alone,
    # and cost candidates/min (see the README). Measured or not, the map and failing passes are kept.
    coverage_steer: bool = False
    coverage_lanes: bool = True  # with coverage_steer, False: steered draws, but lane slots by rotation
    context_share: float | None = None  # `--context-share`: cases drawn inside a producer/consumer chain; 0: none
    bisect_time: str | float | None = None  # the regression-range phase's budget (default 2 min)
    localize_time: str | float | None = None  # the localization step's budget (default 3 min; 0: off)
    fetch_releases: int | None = None  # older releases fetched for it in the background (default 3; 0: none)
    fetch_disk: str | None = None  # the most those downloads may add to the toolchain cache (default 1.5GB)
    until_saturated: str | float | None = None  # as typed: stop once the Good-Turing chance stays below it
    force: bool = False  # `--force`: resume even with pins other than the campaign's (campaign.pins)
    cluster_bind: str | None = None  # `--cluster-bind`: where a `--cluster local` head listens (default 127.0.0.1)
    allocate: bool | None = None  # draw by yield (campaign/allocation.py); None: as stored, else on
    without: str | None = None  # `--without`: form groups left out of the draw (campaign/withheld.py); None: as stored


DEFAULT_BISECT_SECONDS = 120.0
BISECT_SHARE = 0.1  # of a longer campaign's --time: the phase after the budget scales with it


def bisect_seconds(req: FuzzRequest) -> float:
    """`--bisect-time`; by default 2 minutes, or a tenth of a longer campaign's `--time` (most
    ranges are taken during the campaign, campaign.ranging: the phase takes what is left)."""
    if req.bisect_time is None:
        seconds = parse_duration(req.time) if isinstance(req.time, str) else req.time
        return max(DEFAULT_BISECT_SECONDS, BISECT_SHARE * float(seconds or 0))
    seconds = parse_budget(req.bisect_time, "--bisect-time")  # (finite: nan and inf are one line, exit 2)
    return 0.0 if seconds is None else seconds  # (not None here: bisect_time was given)


def localize_seconds(req: FuzzRequest) -> float | None:
    """`--localize-time` in seconds; None: the step's default."""
    return parse_budget(req.localize_time, "--localize-time")


ENV_FETCH_RELEASES = "SHAPEFUZZ_FETCH_RELEASES"  # --fetch-releases's default (0: offline CI, the test suite)


def fetch_knobs(req: FuzzRequest) -> FetchKnobs:
    """`--fetch-releases` and `--fetch-disk`, checked (one line, exit 2, for a bad value)."""
    from shapefuzz.iree.release_fetch import FetchKnobs
    from shapefuzz.schema import parse_bytes

    knobs = FetchKnobs()
    from_env = os.environ.get(ENV_FETCH_RELEASES, "").strip()
    if req.fetch_releases is None and from_env:
        if not from_env.isdigit() or len(from_env) > 3:
            raise UsageError(f"{ENV_FETCH_RELEASES}={from_env[:20]!r}: give a number of releases, e.g. 0 or 3")
        knobs = dataclasses.replace(knobs, releases=int(from_env))
    if req.fetch_releases is not None:
        if req.fetch_releases < 0:
            raise UsageError(f"--fetch-releases {req.fetch_releases}: give 0 (use the toolchain cache only) or more")
        knobs = dataclasses.replace(knobs, releases=req.fetch_releases)
    if req.fetch_disk is not None:
        knobs = dataclasses.replace(knobs, disk_bytes=parse_bytes(req.fetch_disk, "--fetch-disk"))
    return knobs


def _start_fetcher(config: CampaignConfig, toolchain: Toolchain, progress: ProgressFn) -> ReleaseFetcher | None:
    """The background fetch of older releases for the regression phase, or None when it has
    nothing to do (no phase, --fetch-releases 0)."""
    import re

    from shapefuzz.iree.release_fetch import PipSource, ReleaseFetcher

    knobs = config.fetch
    if config.bisect_seconds <= 0 or knobs is None or knobs.releases == 0:
        return None
    pinned = re.match(r"\d+\.\d+\.\d+", toolchain.probe.version)
    say = lambda text: progress("message", text)  # noqa: E731
    return ReleaseFetcher(PipSource(say), pinned.group(0) if pinned else None, knobs, say).start()


def _start_ranging(config: CampaignConfig, folder: Path, fetcher: ReleaseFetcher | None,
                   progress: ProgressFn) -> RangeWorker | None:
    """Regression ranges taken during the campaign (campaign.ranging), once the fetch is over; None
    when there is no regression phase."""
    from shapefuzz.campaign.ranging import RangeWorker
    from shapefuzz.recheck.regression import local_releases

    if config.bisect_seconds <= 0:
        return None
    say = lambda text: progress("message", text)  # noqa: E731
    return RangeWorker(folder, config.corpus_dir.resolve(), (lambda: fetcher.done) if fetcher else (lambda: True),
                       lambda: local_releases(say=say), say).start()


def default_families() -> tuple[str, ...]:
    from shapefuzz.families import DEFAULT_FAMILIES

    return tuple(DEFAULT_FAMILIES)


def build_config(req: FuzzRequest, stored: dict | None) -> CampaignConfig:
    """Validated configuration; on resume, what was stored fills in what is not given again, and
    a pin given again with another value (`campaign.pins`) is refused unless `req.force`."""
    from shapefuzz.campaign.pins import changed_pins, keep_order, refusal

    stored = stored or {}
    asked_families = resolve_names(req.ops, KNOWN_FAMILIES, "op family", "--ops")
    changes = changed_pins(stored, families=asked_families, backends=req.backends, seed=req.seed,
                           context_share=req.context_share, lanes_per_candidate=req.lanes_per_candidate)
    families = keep_order(asked_families, stored.get("families")) if asked_families else \
        tuple(stored.get("families") or default_families())
    from shapefuzz.iree.backends import DEFAULT_BACKENDS

    from shapefuzz.campaign.withheld import parse_without, withheld_lanes

    without = parse_without(req.without) if req.without is not None else tuple(stored.get("without") or ())
    backends = keep_order(req.backends, stored.get("backends")) if req.backends else \
        tuple(stored.get("backends") or withheld_lanes(without, DEFAULT_BACKENDS))
    seconds = parse_duration(req.time) if req.time is not None else None
    if req.count is not None and req.count < 1:
        raise UsageError(f"--count {req.count}: give at least 1")
    if req.cluster is not None and not req.cluster.strip():
        raise UsageError("--cluster: give 'auto', 'local', HOST:PORT or ray://HOST:PORT")
    cluster_bind = None
    if req.cluster_bind is not None:
        from shapefuzz.campaign.cluster.local import check_bind

        if req.cluster != "local":
            raise UsageError("--cluster-bind: only with --cluster local (a cluster shapefuzz starts itself); a "
                             "running cluster listens where `ray start` put it")
        cluster_bind = check_bind(req.cluster_bind)
    if req.jobs is not None and req.jobs < 1:
        raise UsageError(f"--jobs {req.jobs}: give at least 1")
    if req.jobs is not None and req.jobs > MAX_JOBS and not req.cluster:
        raise UsageError(f"--jobs {req.jobs}: at most {MAX_JOBS} (each job is a worker process)")
    if req.time is None and req.count is None and stored:
        seconds, count = stored.get("seconds"), stored.get("count")
    else:
        count = req.count
    seed = req.seed if req.seed is not None else stored.get("seed", 0)
    campaign = Path(req.campaign or DEFAULT_CAMPAIGN)
    kept = stored_corpus(campaign, stored)
    corpus = Path(req.corpus) if req.corpus else kept or Path(DEFAULT_CORPUS)
    if req.corpus and kept is not None and _differ(req.corpus, str(kept)):
        raise UsageError(f"--corpus {req.corpus}: this campaign saves to {kept}; leave --corpus out "
                         "to resume it, or give another --campaign folder")
    if corpus.exists() and not corpus.is_dir():
        raise UsageError(f"--corpus {corpus} is a file, not a folder")
    shrink_time = parse_budget(req.shrink_time, "--shrink-time")
    memory_cap = parse_size(req.memory_cap, "--memory-cap") if req.memory_cap is not None else None
    check_fraction(req.shrink_share, "--shrink-share", low_open=False)
    check_fraction(req.explore, "--explore")
    check_fraction(req.coverage, "--coverage", low_open=False)
    check_fraction(req.context_share, "--context-share", low_open=False)
    if req.saturate_after is not None and req.saturate_after < 1:
        raise UsageError(f"--saturate-after {req.saturate_after}: give at least 1")
    if req.lanes_per_candidate is not None and req.lanes_per_candidate < 1:
        raise UsageError(f"--lanes-per-candidate {req.lanes_per_candidate}: give at least 1")
    if req.fail_on is not None and req.fail_on not in FAIL_ON:
        raise UsageError(f"--fail-on {req.fail_on!r}: choose from {', '.join(FAIL_ON)}")
    rotate = not (req.backends or stored.get("forced"))
    # part of the budget: a resume that names no budget keeps the stored one, this rule included
    until = parse_chance(req.until_saturated, "--until-saturated")
    if until is None and req.time is None and req.count is None:
        until = parse_chance(stored.get("until_saturated"), "--until-saturated (stored)")
    if changes and not req.force:  # after every value is checked: a bad one is said as such
        raise UsageError(refusal(changes))
    lanes_per_candidate = req.lanes_per_candidate or stored.get("lanes_per_candidate") or 2
    # the stored share is the campaign's pin only where its first session gave one (else the allocation's)
    context_share = req.context_share if req.context_share is not None else \
        stored.get("context_share") if stored.get("context_share_pinned", True) else None
    return CampaignConfig(campaign, corpus, families, backends, int(seed), req.jobs or default_jobs(), count,
                          seconds, req.shrink, rotate, lanes_per_candidate, memory_cap,
                          float(shrink_time or 0.0), 0.25 if req.shrink_share is None else req.shrink_share,
                          req.saturate_after or 3, 0.05 if req.explore is None else req.explore,
                          req.fail_on or "never", default_share(req.coverage_steer) if req.coverage is None else req.coverage,
                          until, jobs_given=req.jobs is not None, compile_timeout=req.compile_timeout,
                          coverage_steer=req.coverage_steer, coverage_lanes=req.coverage_lanes, argv=tuple(req.argv),
                          bisect_seconds=bisect_seconds(req), localize_seconds=localize_seconds(req),
                          fetch=fetch_knobs(req), cluster=req.cluster, iree_bin=req.iree_bin,
                          iree_version=req.iree_version, context_share=context_share, cluster_bind=cluster_bind,
                          changed_pins=tuple(c.line() for c in changes),
                          allocate=req.allocate if req.allocate is not None else stored.get("allocate", True) is not False,
                          without=without)


def _regression_phase(store: CampaignStore, summary: Summary, seconds: float, progress: ProgressFn, reason: str,
                      messages: list[str], fetcher: ReleaseFetcher | None = None,
                      ranging: RangeWorker | None = None) -> Summary:
    """Regression ranges of the new compiler-bug causes that the campaign did not range while it ran
    (`ranging`, stopped first), over the releases in the toolchain cache, within its own budget: the
    background fetch gets at most half of it to finish (what is not fetched by then is left out and
    said). A cause left without one says "no range: <why>" (with no other release at all, that too)."""
    from shapefuzz.campaign.causes.cause_facts import mark_unranged

    import time

    from shapefuzz.campaign.causes.cause_facts import bisect_causes
    from shapefuzz.recheck.regression import local_releases

    say = lambda text: progress("message", text)  # noqa: E731
    started = time.monotonic()
    if ranging is not None and not ranging.stop(wait=min(60.0, seconds / 2)):
        say("regression ranges: the range under way during the campaign did not stop in time; going on without it")
    if fetcher is not None and not fetcher.done:
        say(f"regression ranges: waiting at most {seconds / 2:.0f} s for the releases still being fetched")
        if not fetcher.wait(seconds / 2):
            fetcher.stop()
            say("regression ranges: the fetch did not finish in time; bisecting over the releases cached so far")
    versions = local_releases(say=say)
    if ranging is not None and ranging.taken:
        say(f"regression ranges: {ranging.taken} taken during the campaign ({ranging.seconds:.0f} s)")
        summary = _resummarized(summary, store, reason, messages)
    if len(versions) < 2:
        say("regression ranges: no other release in the toolchain cache (none could be fetched; `shapefuzz triage "
            "CAMPAIGN --bisect` fetches them and takes the ranges later), so none were taken")
        why = "no other release in the toolchain cache could be fetched (`shapefuzz triage CAMPAIGN --bisect`)"
    else:
        bisect_causes(store, summary.new_findings, seconds - (time.monotonic() - started), versions, say)
        why = "the bisect budget ran out (`--bisect-time`; `shapefuzz triage CAMPAIGN --bisect` takes it)"
    mark_unranged(store, summarize(store, reason, messages).causes, why)
    # the causes again, with their ranges; what was added to the summary after it (nodes) stays
    return _resummarized(summary, store, reason, messages)


def _localize_phase(store: CampaignStore, summary: Summary, toolchain: Toolchain, budget: float | None,
                    progress: ProgressFn, reason: str, messages: list[str]) -> Summary:
    """Where each new wrong value or run-time failure starts (campaign.localizing), within its budget
    (None: the step's default); then which causes at one pass cross-trigger (campaign.causes.crosstrigger),
    within at most a minute more."""
    from shapefuzz.campaign.causes.crosstrigger import DEFAULT_CROSS_SECONDS, cross_trigger
    from shapefuzz.campaign.localizing import DEFAULT_LOCALIZE_SECONDS, localize_causes

    seconds = DEFAULT_LOCALIZE_SECONDS if budget is None else budget
    # suspected drivers too: localizing one to the target's codegen on another Vulkan target is evidence
    new = [c for c in summary.causes if c.new]
    say = lambda text: progress("message", text)  # noqa: E731
    if localize_causes(store, new, toolchain, seconds, say):
        summary = _resummarized(summary, store, reason, messages)
    # then the causes placed at one pass run each other's reproducers (campaign.causes.crosstrigger)
    if cross_trigger(store, summary.causes, toolchain, min(DEFAULT_CROSS_SECONDS, seconds), say):
        summary = _resummarized(summary, store, reason, messages)
    return summary


def _resummarized(summary: Summary, store: CampaignStore, reason: str, messages: list[str]) -> Summary:
    """The summary after a phase past the budget changed the store: its causes, and its buckets
    with them (a shrink there can meet a new bucket, which a cause then names)."""
    fresh = summarize(store, reason, messages)
    return dataclasses.replace(summary, causes=fresh.causes, buckets=fresh.buckets, timeline=fresh.timeline)


WRAP_UP_SHRINK_SECONDS = 180.0  # the most wall time the shrinks of causes split after the budget may take


def _shrink_phase(engine: Engine, store: CampaignStore, summary: Summary, reason: str,
                  messages: list[str]) -> Summary:
    """The compiler-bug causes the report shows with no shrunk example (a shrink of the engine's cause
    went to a bucket localization later split off), most severe first, each shrunk once within
    what is left of the shrink share; what is not reached says why in the report."""
    from shapefuzz.campaign.localizing import localizations

    causes = [list(c.buckets) for c in summary.findings if not c.shrunk]
    if not causes:
        return summary
    seconds = max(WRAP_UP_SHRINK_SECONDS, engine.config.final_shrink_seconds)
    engine.shrink_causes(causes, localizations(store, store.buckets()), seconds)
    # the causes again: shrunk now, or pending with the reason why not
    return _resummarized(summary, store, reason, messages)


def _stop_for_full_corpus(engine: Engine, summary: Summary, folder: Path, corpus: Path) -> None:
    """The corpus disk filled up: nothing more can be saved, so the campaign stopped. Its report
    is written where there is room (the campaign folder may be on another disk); INDEX.md, a
    write into the full corpus, is left for the resume. Raises the one line (exit 2)."""
    saved = sum(1 for b in engine.buckets.values() if b.corpus_entry)
    unsaved = sum(1 for b in engine.buckets.values() if not b.corpus_entry and b.state != BucketState.PENDING)
    try:
        write_report(summary, folder)
        report = f"report in {folder / 'report.md'}"
    except OSError as error:
        report = f"no report written ({error.strerror or error})"
    raise CorpusError(f"corpus {corpus}: the disk is full ({engine.book.corpus_full}); the campaign stopped: {saved} "
                      f"bucket(s) saved whole, {unsaved} left to save, its state intact; {report}; free space and "
                      "run the same command again to resume (the rest is saved then)")


def _differ(given: str, stored: str) -> bool:
    return os.path.normpath(given) != os.path.normpath(stored) and Path(given).resolve() != Path(stored).resolve()


def _stored_config(store: CampaignStore) -> dict | None:
    from shapefuzz.campaign.rows import stored_config

    return stored_config(store.path, store.get_meta("config"), KNOWN_FAMILIES, tuple(BACKENDS))


def run_campaign(req: FuzzRequest, toolchain: Toolchain, progress: ProgressFn | None = None,
                 start_method: str = "spawn") -> Summary:
    # Everything a user can get wrong is checked before the campaign folder is touched.
    given = build_config(req, None)
    refresh_seconds()  # SHAPEFUZZ_HTML_EVERY checked before anything starts
    progress = progress or Progress()
    cluster = _start_cluster(given, toolchain, progress) if given.cluster else None
    try:
        if cluster is not None:
            toolchain = cluster.toolchain
        return _run(req, given.campaign_dir, toolchain, progress, start_method, cluster)
    finally:
        if cluster is not None:
            cluster.close()


def _start_cluster(config: CampaignConfig, toolchain: Toolchain, progress: ProgressFn):
    from shapefuzz.campaign.cluster.setup import start_cluster, toolchain_spec

    assert config.cluster is not None  # only called with --cluster
    return start_cluster(config.cluster, toolchain_spec(config.iree_bin, config.iree_version), toolchain,
                         REFERENCE_BACKEND, lambda line: progress("message", line), cpus=config.jobs,
                         bind=config.cluster_bind)


def _run(req: FuzzRequest, folder: Path, toolchain: Toolchain, progress: ProgressFn, start_method: str,
         cluster) -> Summary:
    """The campaign in `folder`; `req` is read once, with what the folder's store holds, into the
    configuration, and never again."""
    return _Session(folder, toolchain, progress, start_method, cluster).run(req)


class _Session:
    """One session of the campaign in its folder, phase by phase (`run`): the configuration, the
    families and lanes this release takes, the engine, the search, what comes after its budget
    (localizing, shrinking, regression ranges), the corpus's bug records and the report."""

    def __init__(self, folder: Path, toolchain: Toolchain, progress: ProgressFn, start_method: str, cluster) -> None:
        self.folder, self.toolchain, self.progress = folder, toolchain, progress
        self.start_method, self.cluster = start_method, cluster
        self.head_lost = ""  # the Ray head went away mid-search: said after the report is written

    def say(self, text: str) -> None:
        self.progress("message", text)

    def run(self, req: FuzzRequest) -> Summary:
        lock = hold_campaign(self.folder)  # not someone's own folder, not in use; held until the end
        try:
            self.store = CampaignStore(self.folder)
        except BaseException:
            lock.release()
            raise
        try:
            self.config = self._configuration(req)
            del req  # from here on, the checked configuration alone
            families, gated = self._families_this_release_parses()
            lanes = self._lanes_that_compile()
            self._record_configuration(lanes)
            target = self._target(gated)
            self.fetcher = _start_fetcher(self.config, self.toolchain, self.progress)
            engine = self._engine(target, families, lanes)
            reason = self._search(engine)
            summary = self._summary_of_the_search(engine, reason)
            summary = self._after_the_budget(engine, summary, reason)
            self._stop_background_work()
            self._annotate_corpus(summary)
            self._write_report(summary)
            return summary
        finally:
            self.store.close()
            lock.release()

    def _configuration(self, req: FuzzRequest) -> CampaignConfig:
        """`req` read with what the store holds (a resume); the store's rows checked before anything is written."""
        config = build_config(req, _stored_config(self.store))
        for line in config.changed_pins:  # given with --force: said, then stored as the campaign's
            self.say(f"resuming with other pins (--force): {line}")
        self.store.check_rows()  # a resume reads back only what shapefuzz writes, before it writes anything
        if self.cluster is not None and not config.jobs_given:  # a task in flight per CPU of the cluster
            config = dataclasses.replace(config, jobs=self.cluster.cpus)
        return config

    def _families_this_release_parses(self) -> tuple[tuple[str, ...], Gated]:
        """The chosen families that import and that this release parses, and the forms it does not."""
        families, warnings = available_families(self.config.families)
        for line in warnings:
            self.say(line)
        if not families:
            raise UsageError("no op family is available: " + "; ".join(warnings))
        gated = release_gates(self.toolchain, families)  # forms (or families) this release cannot parse
        gated = withhold(gated, families, self.config.without)  # and those the campaign leaves out (--without)
        for line in gated.lines():
            self.say(line)
        families = tuple(f for f in families if gated.family_off(f) is None)
        if not families:
            raise UsageError(f"none of the chosen op families is parsed by IREE {self.toolchain.probe.version}")
        return families, gated

    def _lanes_that_compile(self) -> tuple[str, ...]:
        probe = self.toolchain.probe
        lanes = tuple(b for b in self.config.backends if BACKENDS[b].compiles(probe))
        for b in self.config.backends:
            if b not in lanes:
                self.say(f"backend {b}: {BACKENDS[b].availability(probe)}; skipped")
        if not lanes:
            raise UsageError("none of the chosen backends compiles with this toolchain")
        return lanes

    def _record_configuration(self, lanes: tuple[str, ...]) -> None:
        """What a resume and `shapefuzz report` read back: the lanes' kin and the configuration."""
        config = self.config
        # lanes that are variants of one target learn their slow kinds together (campaign/lanecost.py)
        self.store.set_meta("lane_kin", json.dumps({b: BACKENDS[b].variant_of for b in lanes if BACKENDS[b].variant_of}))
        self.store.set_meta("config", json.dumps({
            "families": list(config.families), "backends": list(config.backends), "seed": config.seed,
            "count": config.count, "seconds": config.seconds, **corpus_record(config.campaign_dir, config.corpus_dir),
            "forced": not config.rotate, "until_saturated": config.until_saturated, "allocate": config.allocate,
            "without": list(config.without),
            "context_share": CONTEXT_SHARE if config.context_share is None else config.context_share,
            "lanes_per_candidate": config.lanes_per_candidate,
            # given: the allocation leaves the chain share alone on every resume; not given: it allocates chains
            "context_share_pinned": config.context_share is not None,
        }))

    def _target(self, gated: Gated) -> IreeTarget:
        config = self.config
        budget = DEFAULT_BUDGET
        if config.compile_timeout is not None:
            budget = Budget(DEFAULT_BUDGET.verify, ProcessLimits(timeout=config.compile_timeout), DEFAULT_BUDGET.run)
        target = IreeTarget(self.toolchain, config.corpus_dir.resolve(), budget, gated=gated,
                            context_share=config.context_share)
        if config.memory_cap is not None:
            target = dataclasses.replace(target, memory_cap=config.memory_cap)
        return target

    def _engine(self, target: IreeTarget, families: tuple[str, ...], lanes: tuple[str, ...]) -> Engine:
        config, probe, cluster = self.config, self.toolchain.probe, self.cluster
        engine = Engine(target, self.store, EngineConfig(
            families, lanes, config.seed, config.jobs, Limits(config.count, config.seconds), shrink=config.shrink,
            argv=tuple(config.argv), start_method=self.start_method, reference=REFERENCE_BACKEND,
            lanes_per_candidate=config.lanes_per_candidate if config.rotate else None,
            knobs=SteeringKnobs(config.saturate_after, config.explore),
            coverage=CoverageKnobs(share=config.coverage, steer=config.coverage_steer, lanes=config.coverage_lanes),
            shrink_share=config.shrink_share, final_shrink_seconds=config.shrink_time,
            compile_only=tuple(b for b in lanes if not BACKENDS[b].executes(probe)),
            large_every=LARGE_EVERY, until_saturated=config.until_saturated, allocate=config.allocate),
            progress=self.progress, pool_factory=cluster.pool_factory if cluster else None)
        self.say(f"campaign {self.folder}: {', '.join(families)} on {', '.join(engine.lanes)}; "
                 f"{config.jobs} job(s), seed {config.seed}; corpus {config.corpus_dir}"
                 + (f"; resuming after {engine.store.candidate_count()} candidates" if engine.tried else ""))
        return engine

    def _search(self, engine: Engine) -> str:
        """The engine's run within its budget, the dashboard refreshed and regression ranges taken
        beside it; why it stopped (kept in the store for `shapefuzz report`)."""
        self.refresher = Refresher(self.folder, self.toolchain, refresh_seconds(), say=self.say).start()
        self.ranging = _start_ranging(self.config, self.folder, self.fetcher, self.progress)
        try:
            reason = engine.run()
        except sqlite3.Error as error:  # a full disk mid-campaign: the last transaction rolled back
            raise CorpusError(f"campaign database {self.store.path}: {error}; the campaign stopped with its state "
                              "intact; run the same command again to resume once there is room") from None
        except ClusterLost as lost:  # the report is still written, from the store, before the one line
            self.head_lost, reason = str(lost), "the Ray head went away"
        finally:
            self.refresher.stop()
        if self.ranging is not None:
            self.ranging.budget_spent()  # it goes on while localizing, now with the causes no shrink reached
        self.progress("tick", engine.snapshot())  # the view's last frame shows the end, not the last tick
        self.progress.close() if hasattr(self.progress, "close") else None
        self.store.set_meta("stopped", reason)  # for `shapefuzz report` later
        return reason

    def _summary_of_the_search(self, engine: Engine, reason: str) -> Summary:
        summary = summarize(self.store, reason, engine.stats.messages)
        if reason == CORPUS_FULL:
            _stop_for_full_corpus(engine, summary, self.folder, self.config.corpus_dir)
        if self.cluster is not None:
            summary = dataclasses.replace(summary, nodes=self.cluster.node_rates())
        return summary

    def _after_the_budget(self, engine: Engine, summary: Summary, reason: str) -> Summary:
        """Localizing the new causes, shrinking those left unshrunk, their regression ranges: none
        after an interrupt or a lost head."""
        config, messages = self.config, engine.stats.messages
        try:  # Ctrl-C or SIGTERM while localizing or taking ranges: the report is still written
            if config.localize_seconds != 0 and reason != "interrupted" and not self.head_lost and \
                    any(c.new for c in summary.causes):
                summary = _localize_phase(self.store, summary, self.toolchain, config.localize_seconds, self.progress,
                                          reason, messages)
            if config.shrink and reason != "interrupted" and not self.head_lost:
                summary = _shrink_phase(engine, self.store, summary, reason, messages)
            if config.localize_seconds != 0 and reason != "interrupted" and not self.head_lost:
                # what each issue text says of its (shrunk) reproducer, from its own runs (campaign.shown_runs)
                shown_facts(summary.causes, self.toolchain, DEFAULT_LOCALIZE_SECONDS if config.localize_seconds is None
                            else config.localize_seconds, lambda text: self.progress("message", text), config.corpus_dir)
            if config.bisect_seconds > 0 and reason != "interrupted" and not self.head_lost and summary.new_findings:
                summary = _regression_phase(self.store, summary, config.bisect_seconds, self.progress, reason,
                                            messages, self.fetcher, self.ranging)
        except KeyboardInterrupt:
            self.store.set_meta("stopped", "interrupted")
            summary = dataclasses.replace(summary, reason="interrupted")
        return summary

    def _stop_background_work(self) -> None:
        if self.ranging is not None:
            self.ranging.stop(wait=0)
        if self.fetcher is not None:
            self.fetcher.stop()

    def _annotate_corpus(self, summary: Summary) -> None:
        """Each corpus entry's bug record, and INDEX.md, which counts causes too (each entry names its own)."""
        if self.config.corpus_dir.is_dir():
            from shapefuzz.campaign.causes.cause_facts import annotate_corpus
            from shapefuzz.corpus import rebuild_index

            # before the issue texts are written: they quote each entry's bug record (its regression range)
            annotate_corpus(self.store, summary.causes, self.say)

            rebuild_index(self.config.corpus_dir)

    def _write_report(self, summary: Summary) -> None:
        """report.md, the issue texts and the dashboard; then a lost head's one line."""
        write_report(summary, self.folder)
        write_dashboard(self.store, summary=summary, issues=self.refresher.issues)
        if self.head_lost:
            raise ClusterLost(f"{self.head_lost} ({self.config.cluster}); the store is intact and "
                              f"{self.folder / 'report.md'} is written: resume with the same command once a head "
                              "runs again")


__all__ = ["FuzzRequest", "run_campaign", "build_config", "DEFAULT_CAMPAIGN", "sys"]
