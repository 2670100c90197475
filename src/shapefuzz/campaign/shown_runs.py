"""The reproducer each issue text shows, re-checked on the lanes the text would name (`triage.shown`).

A cause's verdict and lanes come from the candidates the campaign drew; its issue text shows its first
corpus entry, shrunk since. After the wrap-up shrinks, within DEFAULT_SHOWN_SECONDS (`--localize-time`
bounds it too; `triage --localize` runs it), each cause whose shown reproducer has no record of its own
runs is checked, one lane at a time, on its own lane, the plain lane of a variant lane (rocm-gfx942 of
rocm-gfx942-o3), for a wrong value the reference lane, the other Vulkan target of a Vulkan lane and the
cause's lanes, with the campaign's own check (a compile failure cut down as plain text, with no case to
judge values by, is compiled on each); its verdict is re-derived from those runs by the campaign's own triage
(`IreeTarget.triage`: the loop limit or the i8 words of the shrunk module, not of the candidate). The
record goes into the entry's meta.json `shown`; lanes the time did not reach are listed as left, and the
text says only what was run. Then, within DEFAULT_TARGETS_SECONDS, each compile failure with a whole
record is compiled on the default targets it was not run on (a variant's bug: that variant of each;
`other_targets`), so "Reproduces on" names every target that fails the same way."""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Callable, Iterable

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.outcomes import Candidate, Outcome, Triage, Verdict
from shapefuzz.model import Signature, Stage, Status
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.triage.shown import (
    BLOW_UPS, COMPILES, OTHER, PASSES, SAME, UNSUPPORTED, LaneRun, ShownRuns, claimed_lanes, reproducer_digest, same_failure,
    shown_runs_of)

# the whole step: one lane at a time, a few seconds a compile (60 s reached 27 of a 20-minute campaign's
# 66 causes, and the texts of the rest said "not tried on the plain lane")
DEFAULT_SHOWN_SECONDS = 150.0
MAX_LANES = 6  # lanes re-checked for one reproducer
# A compile failure on the default pipeline, checked on each default target it was not run on, after
# every cause had its own lanes: a hand audit found "Reproduces on: cuda-sm80" over a dispatch-creation
# crash llvm-cpu shares (its range was even taken there), and "llvm-cpu" over a unit-dim folding bug
# every backend shares. The cheapest first.
OTHER_TARGETS = ("llvm-cpu", "vmvx", "vulkan-spirv", "cuda-sm80", "rocm-gfx942")
DEFAULT_TARGETS_SECONDS = 120.0
TIME_IS_UP = "time is up (`shapefuzz triage CAMPAIGN --localize` checks them)"

Check = Callable[[Candidate, str], Outcome]  # one candidate on one lane


def lanes_to_check(meta: dict[str, Any], backend: str, cause_lanes: Iterable[str], stage: str, probe) -> list[str]:
    """The lanes a shown reproducer is checked on: its own, the cause's, each Vulkan lane's twin, each
    variant lane's plain lane and, for a wrong value or run failure, the reference lane; those this
    compiler builds, at most MAX_LANES."""
    from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND
    from shapefuzz.triage.component import plain_lanes

    claimed = [*claimed_lanes(meta, backend), *cause_lanes]
    # first its own lane and each variant lane's plain lane: what the text's "only with <flags>" rests on
    # (`triage.shown.scope_said`; cut at MAX_LANES behind the cause's lanes, the plain lane went unchecked)
    lanes = [claimed[0], *plain_lanes(claimed), *(BACKENDS[lane].driver_twin or "" for lane in claimed if lane in BACKENDS),
             *claimed]
    if stage in (Stage.RUN.value, Stage.COMPARE.value):
        lanes.insert(1, REFERENCE_BACKEND)
    picked = [lane for lane in dict.fromkeys(lanes) if lane in BACKENDS and BACKENDS[lane].compiles(probe)]
    return picked[:MAX_LANES]


def lane_run(lane: str, outcome: Outcome, signature: Signature, identity: str) -> LaneRun | None:
    """One lane's verdict in an outcome (None: the lane gave no result, or passed: the caller says how)."""
    status = outcome.lanes.get(lane, (None,))[0]
    if status is None:
        return None
    failure = next((f for f in outcome.failures if f.lane == lane), None)
    if failure is not None:
        same = same_failure(failure.signature, failure.identity, signature, identity)
        return LaneRun(lane, SAME if same else OTHER,
                       "fails the same way" if same else f"fails differently ({failure.signature})",
                       failure.identity if failure.strong else "")
    if status == Status.UNSUPPORTED:
        return LaneRun(lane, UNSUPPORTED, "unsupported by the target")
    if status == Status.OK:
        return None  # filled in by the caller, who knows whether the lane executes here
    return LaneRun(lane, OTHER, f"fails ({status.value})")


def recheck_shown(causes: Iterable[Cause], toolchain, seconds: float, say: Callable[[str], None] = lambda text: None,
                  check: Check | None = None, corpus_dir: Path | None = None) -> int:
    """Each cause's shown reproducer without a record, checked and recorded (module doc), within
    `seconds` in all; `check(candidate, lane)` -> its `Outcome` (None: the campaign's real check).
    Returns how many reproducers got a record."""
    from shapefuzz.campaign.iree import IreeTarget
    from shapefuzz.corpus import load_entry, update_meta

    end = time.monotonic() + seconds
    target = IreeTarget(toolchain, corpus_dir or Path("."))
    check = check or (lambda candidate, lane: target.check(candidate, (lane,)))
    done = 0
    for cause in causes:
        if cause.triage == Triage.FLAKY or not cause.corpus_entries:
            continue
        try:
            entry = load_entry(Path(cause.corpus_entries[0]))
        except Exception:  # noqa: BLE001 - an entry that does not load shows nothing
            continue
        if entry.signature.status in BLOW_UPS:
            continue  # each lane again would cost its full cap or time limit; its confirm judged the lanes
        candidate, lane_check = _candidate(entry), check
        cut = candidate is None and entry.signature.stage == Stage.COMPILE
        if cut:  # cut down as plain text (no case header): compiled on each lane, as its failure needs
            candidate, lane_check = _text_candidate(entry), _compile_check(entry.mlir, toolchain)
        known = shown_runs_of(entry.meta, entry.mlir)
        if candidate is None or (known is not None and not known.left):  # a record cut short is taken again
            continue
        lanes = lanes_to_check(entry.meta, entry.signature.backend, cause.lanes, entry.signature.stage.value,
                               toolchain.probe)
        identity = str((entry.meta.get("bug") or {}).get("identity") or "")
        record, outcome = _run(candidate, lanes, entry.signature, identity, end, lane_check, toolchain.probe, cut)
        failure = next((f for f in outcome.failures if str(f.signature) == str(entry.signature)), None)
        if failure is not None and not record.left:  # the verdict as the campaign would give it
            verdict, evidence = target.triage(candidate, failure, outcome)
            record = replace(record, triage=Triage(verdict).value, evidence=evidence)
        update_meta(entry.path, shown=record.to_json())
        done += 1
        say(f"shown reproducer {entry.id}: " + "; ".join(f"{r.lane} {r.verdict}" for r in record.runs)
            + (f"; not run on {', '.join(record.left)}: {record.why_left}" if record.left else ""))
        if record.left:
            say(f"shown reproducers: {TIME_IS_UP}")
            return done
    return done


def _candidate(entry) -> Candidate | None:
    """The entry's reproducer as a candidate of its own (its case header's family and params, its
    input seed); None for a file without a header (nothing to judge it against)."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.errors import ShapefuzzError

    try:
        case = case_from_mlir(entry.mlir)
    except (ShapefuzzError, ValueError):
        return None
    if case is None:
        return None
    seed = int(entry.meta.get("seed") or 0)
    return Candidate("shown-" + reproducer_digest(entry.mlir), case.family, seed, (), case.params_json, entry.mlir)


def _text_candidate(entry) -> Candidate:
    """A reproducer cut down as plain text, as a candidate to compile (its family: the case it was cut from)."""
    return Candidate("shown-" + reproducer_digest(entry.mlir), entry.family or "", int(entry.meta.get("seed") or 0), (),
                     "{}", entry.mlir)


_ACTUAL = "; actual output: "


def _actual(outcome: Outcome, lane: str) -> str:
    """The values a lane's wrong-value failure computed, as its detail shows them ("" where none is shown)."""
    failure = next((f for f in outcome.failures if f.lane == lane), None)
    return failure.detail.rsplit(_ACTUAL, 1)[1].strip() if failure is not None and _ACTUAL in failure.detail else ""


def _same_values(run: LaneRun, outcome: Outcome, own_lane: str, own_values: str) -> LaneRun:
    """A lane's wrong values said as the same failure only where they are the entry's own lane's (an audit
    read "vulkan-spirv fails the same way" over a ui8 dot whose vulkan-spirv result was all zeros, the i8
    emulation's bug, where llvm-cpu computed other wrong values); another lane's other values are said so."""
    values = _actual(outcome, run.lane)
    if not own_values or not values or values == own_values:
        return run
    return LaneRun(run.lane, OTHER, f"computes other wrong values than {own_lane} ({values[:200]})", run.identity)


def _compile_check(mlir: str, toolchain) -> Check:
    """Each lane compiles the text (no case: no reference to judge values by, and a compile failure needs none)."""
    from shapefuzz.campaign.iree import outcome_of
    from shapefuzz.invoke.execute import DEFAULT_BUDGET, tool_seconds
    from shapefuzz.judge.oracle import check_module

    def check(candidate: Candidate, lane: str) -> Outcome:
        before = tool_seconds()
        report = check_module(mlir, [lane], None, toolchain, DEFAULT_BUDGET, confirm=False)
        return outcome_of(report, tool_seconds() - before)

    return check


def _run(candidate: Candidate, lanes: list[str], signature: Signature, identity: str, end: float, check: Check,
         probe, compile_only: bool = False) -> tuple[ShownRuns, Outcome]:
    """The candidate on each lane in turn within the step's time: the record and the outcome of every
    lane that finished (merged, as one check on them all would give it); `compile_only`: a lane that
    compiles it says so, whether or not it runs here."""
    from shapefuzz.iree.backends import BACKENDS

    runs: list[LaneRun] = []
    merged = Outcome(Verdict.PASS, {})
    own_values = ""  # the entry's own lane's wrong values (its lane is run first)
    for i, lane in enumerate(lanes):
        left = end - time.monotonic()
        if left <= 1.0:
            return ShownRuns(reproducer_digest(candidate.text), tuple(runs), tuple(lanes[i:]), TIME_IS_UP), merged
        with time_bound(left) as bound:
            outcome = check(candidate, lane)
        if bound.ran_out:
            return ShownRuns(reproducer_digest(candidate.text), tuple(runs), tuple(lanes[i:]), TIME_IS_UP), merged
        merged = Outcome(Verdict.FAIL if outcome.failures or merged.failures else outcome.verdict,
                         {**merged.lanes, **outcome.lanes}, (*merged.failures, *outcome.failures))
        run = lane_run(lane, outcome, signature, identity)
        if run is not None and run.verdict == SAME and signature.stage == Stage.COMPARE:
            if lane == signature.backend:
                own_values = _actual(outcome, lane)
            else:
                run = _same_values(run, outcome, signature.backend, own_values)
        if run is None and lane in outcome.lanes:
            ran = BACKENDS[lane].executes(probe) and not compile_only
            run = LaneRun(lane, PASSES if ran else COMPILES, "passes (matches the reference)" if ran else
                          "compiles" if compile_only else "compiles (not executed here)")
        if run is not None:
            runs.append(run)
    return ShownRuns(reproducer_digest(candidate.text), tuple(runs)), merged


def _targets_for(scope: str, cause_lanes: Iterable[str]) -> list[str]:
    """The lanes `other_targets` compiles a cause's reproducer on: the default targets for a bug of the
    default pipeline; for one that needs a variant's flags, the same variant of each other target where
    there is one (an audit read "ROCm" over a single-dispatch bug cuda-sm80-single-dispatch shares)."""
    from shapefuzz.iree.backends import BACKENDS

    if scope.startswith("default pipeline"):
        return [lane for lane in OTHER_TARGETS if lane in BACKENDS]
    suffixes = dict.fromkeys(lane[len(base) + 1:] for lane in cause_lanes
                             if lane in BACKENDS and (base := BACKENDS[lane].variant_of) and lane.startswith(base + "-"))
    return [f"{target}-{suffix}" for suffix in suffixes for target in OTHER_TARGETS if f"{target}-{suffix}" in BACKENDS]


def other_targets(causes: Iterable[Cause], toolchain, seconds: float, say: Callable[[str], None] = lambda text: None,
                  check: Check | None = None) -> int:
    """Each compile failure whose shown reproducer has a whole record of its own lanes, compiled on each
    of OTHER_TARGETS it was not run on (this compiler's; for a bug that needs a variant's flags, that
    variant of each: `_targets_for`), within `seconds` in all. The runs join its record, so the text's
    "Reproduces on" names every target that fails the same way. Returns how many records grew."""
    from shapefuzz.corpus import load_entry, update_meta
    from shapefuzz.iree.backends import BACKENDS

    end = time.monotonic() + seconds
    done = 0
    for cause in causes:
        if cause.triage == Triage.FLAKY or not cause.corpus_entries:
            continue
        targets = _targets_for(cause.scope, cause.lanes)
        if not targets:
            continue
        try:
            entry = load_entry(Path(cause.corpus_entries[0]))
        except Exception:  # noqa: BLE001 - an entry that does not load shows nothing
            continue
        known = shown_runs_of(entry.meta, entry.mlir)
        if entry.signature.stage != Stage.COMPILE or entry.signature.status in BLOW_UPS or known is None or known.left:
            continue
        ran = {r.lane for r in known.runs} | {entry.signature.backend}
        lanes = [lane for lane in targets if lane not in ran and BACKENDS[lane].compiles(toolchain.probe)]
        if not lanes:
            continue
        if end - time.monotonic() <= 1.0:
            say(f"shown reproducers on the other targets: {TIME_IS_UP}")
            return done
        lane_check = check or _compile_check(entry.mlir, toolchain)
        identity = str((entry.meta.get("bug") or {}).get("identity") or "")
        record, _ = _run(_text_candidate(entry), lanes, entry.signature, identity, end, lane_check, toolchain.probe,
                         compile_only=True)
        if not record.runs:
            continue
        update_meta(entry.path, shown=replace(known, runs=(*known.runs, *record.runs)).to_json())
        done += 1
        say(f"shown reproducer {entry.id} on the other targets: " + "; ".join(f"{r.lane} {r.verdict}" for r in record.runs))
        if record.left:
            say(f"shown reproducers on the other targets: {TIME_IS_UP}")
            return done
    return done


def shown_facts(causes: Iterable[Cause], toolchain, seconds: float, say: Callable[[str], None] = lambda text: None,
                corpus_dir: Path | None = None) -> None:
    """What each issue text says of its reproducer, from that reproducer's own runs: on its lanes
    (`recheck_shown`), then for other CPUs (`campaign.cpu_spreads`), each within at most a minute of
    `seconds` (the campaign's `--localize-time`)."""
    from shapefuzz.campaign.cpu_spreads import DEFAULT_SPREAD_SECONDS, spread_causes

    causes = list(causes)
    started = time.monotonic()
    recheck_shown(causes, toolchain, min(DEFAULT_SHOWN_SECONDS, seconds), say, corpus_dir=corpus_dir)
    other_targets(causes, toolchain, min(DEFAULT_TARGETS_SECONDS, max(0.0, seconds - (time.monotonic() - started))), say)
    spread_causes(causes, toolchain, min(DEFAULT_SPREAD_SECONDS, max(0.0, seconds - (time.monotonic() - started))),
                  say)


__all__ = ["DEFAULT_SHOWN_SECONDS", "DEFAULT_TARGETS_SECONDS", "MAX_LANES", "OTHER_TARGETS", "lane_run", "lanes_to_check",
           "other_targets", "recheck_shown", "shown_facts"]
