"""`shapefuzz shrink FILE`: find the file's failure, shrink under "same signature", write the
result and say how much smaller it is. The flow: `find_target` -> `shrink_text` -> `ShrinkResult`."""

from __future__ import annotations

import os
import shlex
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.case import case_from_mlir
from shapefuzz.judge.modulecheck import check_file
from shapefuzz.errors import InvalidInputError, UsageError
from shapefuzz.files import atomic_write
from shapefuzz.invoke.execute import compile_command
from shapefuzz.model import BackendResult, CheckReport, Signature, Stage, Status, Verdict
from shapefuzz.process.sandbox import Limits, cancel_running, resume
from shapefuzz.shrink import case_stage, lowered_stage, mlirtext, replace_ops, voted_stage
from shapefuzz.shrink.engine import Accepted, Pass, Problem, Stats
from shapefuzz.shrink.iree import (
    BLOWUPS, SameSignature, Target, Verifier, calibrate, describe, earliest_phase, matches, roundtrip_pass,
)
from shapefuzz.shrink.trials import CHECK, COMPILE, Trial, TrialCache
from shapefuzz.size import Metrics, byte_size, measure, sort_key
from shapefuzz.process.time_bounds import time_bound, unless_cut
from shapefuzz.shrink.params import has_case, shrink_params
from shapefuzz.iree.toolchain import Toolchain


RECHECK_CUT = "not confirmed: the time limit ran out during the final re-check (give a longer --time)"
BLOWUPS_SPENT = "its trials at the full limit spent"  # a hang's or out-of-memory's step budget
NO_ROOM = "no room for a step at the full limit"  # a blow-up's limit does not cover one trial and the re-check
# The --compile-to phase search (about five compiles) is worth it with room for this many checks: in
# 6-minute campaigns it took 38 of 185 shrink seconds at 6, most shrinks then having 10-50 s in all.
PHASE_SEARCH_CHECKS = 20


def _passes(named) -> list[Pass]:
    return [Pass(name, fn) for name, fn in named]


def tiers_for(text: str, target: Target, toolchain: Toolchain | None) -> list[list[Pass]]:
    """Plain lists of passes, cheapest and most aggressive first."""
    tiers: list[list[Pass]] = []
    if has_case(text):
        # A generated file changes only through its parameters: the header keeps describing the
        # body (so replay can judge numbers against the family's reference once a bug is fixed),
        # and every step stays a sound computation. Text passes made compile-only reproducers
        # that verify but read out of bounds or alias an accumulator: a different bug, or none.
        # Only steps that keep the computation are taken on its text (its dead values, blank lines).
        # A compile-stage failure goes on after them as plain text (`shrink_text`, `case_stage`):
        # its guard refuses the steps that made those (an index made an input, an aliased or
        # undefined accumulator, the diagnostic's op gone), and the parameter-shrunk case is kept
        # beside the result, so replay can still judge that case against its family.
        return [[Pass("shrink_params", shrink_params)], _passes(mlirtext.CASE_CLEANUP)]
    tiers.append(_passes(mlirtext.TEXT_STRUCTURE))
    # the ops around the failing one, and that op itself, once the cheap structure steps are done:
    # a producer cut to an argument, a consumer cut by an early return, an op by a smaller one
    tiers.append(_passes(replace_ops.ROOT_PASSES))
    tiers.append(_passes(mlirtext.TEXT_SHAPES))
    detail = _passes(mlirtext.TEXT_DETAIL)
    if toolchain is not None:
        detail.append(Pass("iree_opt_roundtrip", roundtrip_pass(toolchain)))
    tiers.append(detail)
    return tiers


def find_target(
    text: str,
    name: str,
    toolchain: Toolchain,
    backends: Sequence[str],
    signature_text: str | None = None,
    backend: str | None = None,
    compile_timeout: float = 120.0,
    seed: int = 0,
    signature: Signature | None = None,
    recheck: bool = True,
    cache: TrialCache | None = None,
) -> tuple[Target, CheckReport]:
    """Check the file (re-running failures unless `recheck` is off: a campaign's bucket was
    confirmed already) and choose the failure to keep: exactly `signature` when given (a campaign's
    bucket: another failure is never kept in its place), else the one on `backend`, else the one a
    user's `signature_text` names, else the first; user errors otherwise. Without `recheck`, a check
    of the same text on the signature's lane in `cache` (the campaign's check or confirming re-run
    of its bucket, under limits that end it the same) is that check: the file is not checked again."""
    if signature is not None:
        backend = signature.backend
    if backend is not None and backend not in backends:
        backends = (*backends, backend)
    known = _known_check(text, backends, compile_timeout, seed, cache, signature) \
        if signature is not None and not recheck else None
    if known is not None:
        report = known
    else:
        report, _ = check_file(text, backends, toolchain, compile_timeout=compile_timeout, confirm=recheck, seed=seed)
    if report.verify_error:
        first = report.verify_error.strip().splitlines()[0] if report.verify_error.strip() else "unknown error"
        raise InvalidInputError(f"{name} does not verify, so there is nothing to shrink: {first}")
    real = [r for r in report.failures if not r.flaky and r.signature is not None]
    if not real:
        flaky = [r.backend for r in report.failures if r.flaky]
        if flaky:
            raise UsageError(
                f"{name} fails only intermittently on {', '.join(flaky)} (passed on its re-runs): "
                f"{describe(report)}; a flaky failure cannot be shrunk -- try a longer --compile-timeout"
            )
        raise UsageError(
            f"{name} does not fail on {', '.join(backends)} ({describe(report)}): nothing to shrink; "
            f"try another backend (--backends all) or a longer --compile-timeout"
        )
    if signature is not None:
        chosen = [r for r in real if r.signature == signature]
        if not chosen:
            got = " | ".join(str(r.signature) for r in real)
            raise UsageError(f"{name} no longer fails with {signature}; got: {got}")
    elif backend is not None:
        chosen = [r for r in real if r.backend == backend]
        if not chosen:
            raise UsageError(f"{name} does not fail on --backend {backend} ({describe(report)}); failing: "
                             f"{', '.join(r.backend for r in real)}")
    elif signature_text is not None:
        chosen = [r for r in real if r.signature is not None and matches(r.signature, signature_text)][:1]
        if not chosen:
            got = " | ".join(str(r.signature) for r in real)
            raise UsageError(f"no failure of {name} matches --signature {signature_text!r}; got: {got}")
    else:
        chosen = real[:1]  # one backend is enough to keep the bug; --backend picks another
    first_seconds = max(r.compile_seconds for r in chosen)
    timeout = calibrate(first_seconds, compile_timeout, any(r.status == Status.TIMEOUT for r in chosen))
    signatures = {r.backend: r.signature for r in chosen if r.signature is not None}  # all of them (`real`)
    stages_compile = all(s.stage.value in ("compile", "verify") for s in signatures.values())
    check_backends = tuple(signatures) if stages_compile else tuple(backends)
    return Target(signatures, check_backends, timeout, seed=seed), report


def _known_check(text: str, backends: Sequence[str], timeout: float, seed: int, cache: TrialCache | None,
                 signature: Signature) -> CheckReport | None:
    """The check of `text` on `backends` as `cache` holds it (every backend's, the signature's lane
    failing with it), or None. A hang that hung again at the full limit is the same hang wherever its
    second stop landed (as the campaign's confirm counts it: BucketBook._settle): its own signature."""
    if cache is None:
        return None
    memory = Limits(timeout=timeout).memory_bytes
    found = [cache.find(text, b, CHECK, None, seed, timeout, memory) for b in backends]
    if not all(t is not None and (t.lane != signature.backend or _same_failure(t.signature, signature))
               for t in found):
        return None
    results = tuple(BackendResult(t.lane, t.signature.stage if t.signature else Stage.RUN,
                                  t.signature.status if t.signature else Status.OK, t.detail,
                                  signature if t.lane == signature.backend else t.signature,
                                  t.seconds, t.seconds) for t in found if t is not None)
    return CheckReport(Verdict.FAIL if any(r.failed for r in results) else Verdict.PASS, results)


def _same_failure(got: Signature | None, want: Signature) -> bool:
    """`got` is `want`, or both hangs at one stage (a hang's stop lands where the abort finds it)."""
    return got == want or (got is not None and got.status == want.status == Status.TIMEOUT and got.stage == want.stage)


@dataclass
class ShrinkResult:
    original: str
    minimized: str
    target: Target
    before: Metrics
    after: Metrics
    seconds: float
    stats: Stats
    stopped_because: str | None
    findings: list[tuple[Signature, str, CheckReport]] = field(default_factory=list)
    # the parameter-shrunk generated case, where the text stage went on from it (`minimized` then
    # has no header): replay judges it against its family; None otherwise
    case_form: str | None = None
    case_path: str | None = None
    stage_note: str = ""  # what a case's text stage did: cut it down (judged by whom), or why not
    # a wrong value's voted text stage (shrink.voted_stage): the inputs it was judged on, the two
    # reference lanes' agreed results, and which lanes those were (None/"" otherwise)
    inputs: list[np.ndarray] | None = None
    expected: list[np.ndarray] | None = None
    reference: str = ""
    confirmed: bool | None = None  # the final re-check (None when skipped)
    detail: str = ""  # the kept failure's output on the minimized text (its mismatch, its error)
    out_path: str | None = None
    trials: list[Trial] = field(default_factory=list)  # the compiles it ran (shrink.trials), for others to find
    cache_hits: int = 0  # compiles it found already run instead of running them
    commands: list[str] = field(default_factory=list)
    saved: list[str] = field(default_factory=list)
    finding_paths: list[str] = field(default_factory=list)
    # where the run's seconds went: the first check, the --compile-to phase search, the trials, the
    # re-checks of failures met while shrinking, the final re-check
    timings: dict[str, float] = field(default_factory=dict)

    def facts(self) -> dict:
        """The run's figures, as a campaign's task log keeps them (campaign/task_log.py)."""
        s = self.stats
        return {"trials": s.trials, "steps": s.accepted, "tail_trials": s.trials - s.trials_at_accept, "gaps": s.gaps,
                "stopped": self.stopped_because or "", "seconds": {k: round(v, 3) for k, v in self.timings.items()},
                "cache_hits": self.cache_hits, **({"text_stage": self.stage_note} if self.stage_note else {}),
                "tail_seconds": round(max(0.0, self.timings.get("trials", 0.0) - s.accepted_at), 3)}


def shrink_text(
    text: str,
    toolchain: Toolchain,
    target: Target,
    known: frozenset[Signature],
    jobs: int = 1,
    time_limit: float | None = None,
    on_accept: Callable[[Accepted], None] | None = None,
    cache: TrialCache | None = None,
    blowup_trials: int | None = None,
    stall_trials: int | None = None,
    finding_seconds: float = 0.0,
    stage: TextStage | None = None,
) -> tuple[str, Problem, SameSignature]:
    """The trials, within `time_limit` less twice `finding_seconds` (what one check costs) for each
    new failure met, which is re-checked after them. A generated case whose kept failure is a
    compile-stage one goes on as plain text (`case_stage`) once its parameter steps are done, and
    one whose kept failure is one lane's wrong result as plain text judged by two reference lanes
    (`voted_stage`); a compile failure of a frontend spelling is tried on the linalg its conversion
    makes (`lowered_stage`). `stage` says what the text stage did (the case it cut from, the judge)."""
    stage = stage if stage is not None else TextStage()
    # a share of the time kept for the tidy steps a run the deadline cut still gets (`TIDY`)
    tidy = 0.0 if time_limit is None else min(TIDY_SHARE * time_limit, TIDY_CHECKS * max(finding_seconds, 1.0))
    oracle = SameSignature(toolchain, target, known)
    oracle.cache, oracle.blowup_trials = cache, blowup_trials
    limit = byte_size(text)  # a shrink never returns a larger file, whatever the order says
    with time_bound(time_limit):  # each trial's compile ends with the limit (a hang's trials had 120 s each)
        # a trial or a verify the limit cuts is "not interesting" (the engine stops at its deadline next)
        interesting = unless_cut(oracle, lambda candidate: False)
        verifier = unless_cut(Verifier(toolchain), lambda texts: [False] * len(texts))
        problem = Problem(
            text, interesting, sort_key, prefilter=verifier, jobs=jobs,
            time_limit=None if time_limit is None else time_limit - tidy, on_accept=on_accept,
            admissible=lambda candidate: byte_size(candidate) <= limit, stall_trials=stall_trials,
        )
        def spent() -> None:  # a blow-up's trials at the full limit spent (blowup_trials)
            problem.stopped_because = problem.stopped_because or BLOWUPS_SPENT
            problem.stop()

        oracle.stop = spent

        def keep_room() -> None:  # a new failure met: its re-check (two runs) comes out of the trials' time
            if problem.deadline is not None:
                problem.deadline -= 2 * finding_seconds

        oracle.on_finding = keep_room
        best = problem.run(tiers_for(text, target, toolchain))
        if has_case(best) and problem.stopped_because is None:
            if case_stage.applies(target.signatures.values()):
                best = _text_stage(best, problem, target, limit, stage)
            elif any(s.stage == Stage.COMPARE for s in target.signatures.values()):
                best = _voted_stage(best, problem, target, limit, toolchain, stage)
        cut_from = stage.case_form or (best if has_case(best) else None)  # (a case's: its text stage's passes)
        if problem.stopped_because is None and toolchain is not None and (low := lowered_stage.shrink_lowered(
                best, text, problem, target, toolchain, lambda t: case_stage.tiers() if has_case(text)
                else tiers_for(t, target, toolchain), cut_from)):
            stage.case_form, stage.note, best = cut_from, lowered_stage.NOTE, low
        if problem.stopped_because == TIME_LIMIT and tidy > 0 and best == problem.current:
            # cut by the deadline: its dead values and unread arguments still go (a fresh campaign's
            # 20 s shrinks left the ops a cut scatter had fed under "keeps only the ops it needs")
            problem.extend(tidy)
            best = problem.run([_passes(mlirtext.CASE_CLEANUP if has_case(best) else TIDY)])
            problem.stopped_because = problem.stopped_because or TIME_LIMIT
    return best, problem, oracle


TIME_LIMIT = "time limit"  # Problem.stopped_because when its deadline stopped it
TIDY = (("drop_unused_ops", mlirtext.drop_unused_ops), ("drop_unused_args", mlirtext.drop_unused_args),
        ("drop_blank_lines", mlirtext.drop_blank_lines))
TIDY_SHARE = 0.2  # at most this share of a shrink's time is kept for its tidy steps
TIDY_CHECKS = 4  # and at most this many checks' worth


@dataclass
class TextStage:
    """What a case's text stage did: the parameter-shrunk case it cut the result from (None: the
    result is still a case), the voted judge of a wrong value's steps, or why it was not taken."""

    case_form: str | None = None
    voted: voted_stage.VotedMismatch | None = None
    note: str = ""
    reference_lanes: tuple[str, ...] | None = None  # the lanes a voted stage may judge with (None: its own list)


def _text_stage(case_form: str, problem: Problem, target: Target, limit: int, stage: TextStage,
                interesting: Callable[[str], bool] | None = None) -> str:
    """The text stage of a parameter-shrunk case: its text without the header, shrunk by the text
    passes under `case_stage.Guard` (judged by `interesting` where given, else as before); the case
    itself when no text step was taken (the header-less start was never tried on its own)."""
    start = case_stage.decase(case_form)
    guard = case_stage.Guard(start, target.signatures.values())
    problem.rebase(start, lambda candidate: byte_size(candidate) <= limit and guard(candidate), interesting)
    steps = problem.stats.accepted
    best = problem.run(case_stage.tiers())
    if problem.stats.accepted == steps:
        stage.note = stage.note or "no text step kept the failure"
        return case_form
    stage.case_form = case_form
    stage.note = "cut down as text"
    return best


def _voted_stage(case_form: str, problem: Problem, target: Target, limit: int, toolchain: Toolchain | None,
                 stage: TextStage) -> str:
    """A wrong value's text stage (`voted_stage`): the two reference lanes chosen on the decased
    start, then the text passes judged by them; the case itself when it is not taken or kept nothing."""
    case = case_from_mlir(case_form)
    start = case_stage.decase(case_form)
    why = "no toolchain to run references with" if toolchain is None or case is None else \
        voted_stage.refusal(case, start, target.signatures.values())
    if why:
        stage.note = f"text stage not taken: {why}"
        return case_form
    assert toolchain is not None and case is not None
    (signature,) = target.signatures.values()  # (refusal: one lane's wrong result)
    budget = voted_stage.budget_for(target.compile_timeout)
    references, verdict, why = voted_stage.choose_references(start, case, signature, toolchain, target.seed, budget,
                                                             stage.reference_lanes)
    if references is None or verdict is None:
        stage.note = f"text stage not taken: {why}"
        return case_form
    voted = voted_stage.VotedMismatch(toolchain, signature.backend, references, voted_stage.mismatch_kind(signature),
                                      voted_stage.known_inputs(start, verdict.inputs), target.seed, budget)
    voted.verdicts[start] = verdict
    best = _text_stage(case_form, problem, target, limit, stage, unless_cut(voted, lambda candidate: False))
    if stage.case_form is not None:
        stage.voted = voted
        stage.note = f"cut down as text, judged by {references[0]} and {references[1]}"
    return best


def default_output(path: str) -> str:
    p = Path(path)
    stem = p.name[: -len(".mlir")] if p.name.endswith(".mlir") else p.name
    return str(p.with_name(stem + ".min.mlir"))


def _write(path: str, text: str) -> None:
    atomic_write(path, text.encode())


def shrink_file(
    path: str,
    text: str,
    toolchain: Toolchain,
    backends: Sequence[str],
    out: str | None = None,
    signature_text: str | None = None,
    backend: str | None = None,
    time_limit: float | None = None,
    jobs: int = 1,
    compile_timeout: float = 120.0,
    corpus: str | None = None,
    confirm: bool = True,
    progress: Callable[[str], None] | None = None,
    seed: int = 0,
    on_step: Callable[[Accepted, Metrics], None] | None = None,  # a live view's hook
    signature: Signature | None = None,
    recheck: bool = True,
    trials: Iterable[Trial] = (),
    blowup_trials: int | None = None,
    stall_trials: int | None = None,
    reference_lanes: Sequence[str] | None = None,
) -> ShrinkResult:
    """Shrinks `text` under "same signature", checking every trial with the inputs of `seed`
    (a campaign's candidate keeps its own input seed, so a wrong-values bug stays the same).
    With `signature` (a campaign's bucket), the file must fail with exactly that signature, as
    normalized by a re-check, or nothing is shrunk (UsageError). `time_limit` bounds the whole
    run, the first check and the final re-check included: a campaign gives shrinks a share of its
    worker time, and a shrink of a slow-compiling case that ran past it took that time from checks.

    `trials`: compiles already run (a campaign's: its check of the file, other shrinks' trials on
    the lane; shrink.trials), found there instead of run again. `blowup_trials`: for a blow-up
    target (a timeout or out of memory, every step of which costs the full limit), at most that
    many trials may reach the limit, and none starts unless the limit covers one and the final
    re-check. `stall_trials`: stop once that many trials in a row shrank nothing. `reference_lanes`:
    the lanes a wrong value's voted text stage may judge with (None: `voted_stage.REFERENCE_LANES`)."""
    say = progress or (lambda line: None)
    resume()  # an earlier interrupted shrink in this process (a test) cancelled its stragglers' calls
    start = time.monotonic()
    cache = TrialCache(trials)
    # (the first check has the --compile-timeout it was given: what it costs is taken from the limit)
    target, report = find_target(text, path, toolchain, backends, signature_text, backend, compile_timeout, seed,
                                 signature, recheck, cache)
    timings = {"first check": time.monotonic() - start}
    # what one check of the file costs, the yardstick below (a check found in `trials` took its seconds)
    check_seconds = max([timings["first check"], *(r.seconds for r in report.failures)])
    for b, s in target.signatures.items():
        say(f"keeping: {s}")

    def left() -> float | None:
        return None if time_limit is None else time_limit - (time.monotonic() - start)

    # the final re-check runs the file twice; the phase search compiles it about four times
    reserve = 2 * check_seconds if confirm else 0.0
    if target.compile_only and ((t := left()) is None or t - reserve > PHASE_SEARCH_CHECKS * check_seconds):
        began = time.monotonic()
        target = replace(target, phase=earliest_phase(text, toolchain, target, cache))
        timings["phase search"] = time.monotonic() - began
    phase = f", compiling up to --compile-to={target.phase}" if target.phase else ""
    say(f"trial compile timeout {target.compile_timeout:.1f}s{phase}; {jobs} job(s)")
    out = out or default_output(path)
    before = measure(text)

    def accepted(step: Accepted) -> None:
        _write(out, step.text)
        m = measure(step.text)
        if on_step is not None:
            on_step(step, m)
        say(f"[{step.seconds:6.1f}s] {step.pass_name:<18} elements {m.elements}, ops {m.ops}, lines {m.lines}")

    remaining = None if (t := left()) is None else max(0.0, t - reserve)
    blowup = blowup_trials is not None and any(s.status in BLOWUPS for s in target.signatures.values())
    room = not blowup or remaining is None or remaining >= target.compile_timeout
    began = time.monotonic()
    stage = TextStage(reference_lanes=tuple(reference_lanes) if reference_lanes is not None else None)
    best, problem, oracle = shrink_text(
        text, toolchain, target, frozenset(report.signatures), jobs, remaining if room else 0.0, accepted,
        cache, blowup_trials if blowup else None, stall_trials, check_seconds, stage,
    )
    if not room:
        problem.stopped_because = NO_ROOM
    timings["trials"] = time.monotonic() - began
    _write(out, best)
    result = ShrinkResult(
        original=text, minimized=best, target=target, before=before, after=measure(best),
        seconds=time.monotonic() - start, stats=problem.stats, stopped_because=problem.stopped_because,
        out_path=out, timings=timings, trials=cache.added, case_form=stage.case_form, stage_note=stage.note,
    )
    kept = stage.voted.verdicts.get(best) if stage.voted is not None else None
    if stage.voted is not None and kept is not None:  # its inputs and agreed results (a final re-check retakes them)
        result.inputs, result.expected, result.detail = kept.inputs, kept.expected, kept.detail
        result.reference = voted_stage.reference_words(stage.voted.references)
    if problem.stopped_because != "interrupted":
        began = time.monotonic()
        with time_bound(left()) as confirming:  # (the reserve kept for them; None: no limit)
            result.findings = oracle.confirmed_findings()
        if confirming.ran_out:
            result.findings = []
        timings["findings"] = time.monotonic() - began
    elif jobs > 1:  # the trials still running on other threads: their compiles killed now, not awaited at exit
        cancel_running()
    stem = out[: -len(".mlir")] if out.endswith(".mlir") else out
    if result.case_form is not None:  # the generated case the text stage started from, beside it
        result.case_path = f"{stem}.case.mlir"
        _write(result.case_path, result.case_form)
    for i, (_, finding_text, _) in enumerate(result.findings, 1):
        finding_path = f"{stem}.new{i}.mlir"
        _write(finding_path, finding_text)
        result.finding_paths.append(finding_path)
    name = os.path.basename(out)
    vmfb = name[: -len(".mlir")] + ".vmfb" if name.endswith(".mlir") else name + ".vmfb"
    for b in target.signatures:
        result.commands.append(shlex.join(compile_command(toolchain, BACKENDS[b], name, vmfb)))
    if best == text:
        result.detail = kept_detail(report, target)
    if confirm and best == text:
        result.confirmed = True  # unchanged: the first check just showed it fails this way
    elif confirm and problem.stopped_because != "interrupted":
        began = time.monotonic()
        with time_bound(left()) as rechecking:  # the final re-check is within the limit too
            if stage.voted is not None:
                result.confirmed, result.detail = _confirm_voted(best, stage.voted, result)
            else:
                result.confirmed, result.detail = _confirm(best, toolchain, target, cache)
        if rechecking.ran_out:
            result.confirmed, result.detail = False, RECHECK_CUT
        timings["recheck"] = time.monotonic() - began
        result.seconds = time.monotonic() - start
    result.cache_hits = cache.hits
    if corpus:
        result.saved = save_to_corpus(corpus, result, toolchain)
    return result


def _confirm(text: str, toolchain: Toolchain, target: Target, cache: TrialCache | None = None) -> tuple[bool, str]:
    """Re-run the minimized file (twice): whether it still fails the same way, and the kept
    failure's output on it (what the entry and its issue text then show). The trial that accepted
    it, where it was a whole compile or check as this one (in `cache`), is the first of the two: one
    re-run that fails the same way confirms it; else both runs as before."""
    timeout = max(target.compile_timeout, 30.0)
    if cache is not None and _tried_whole(text, target, cache, timeout):
        again, _ = check_file(text, target.check_backends, toolchain, compile_timeout=timeout, confirm=False,
                              seed=target.seed)
        got = {r.backend: r.signature for r in again.failures}
        if all(got.get(b) == s for b, s in target.signatures.items()):
            return True, kept_detail(again, target)
    report, _ = check_file(text, target.check_backends, toolchain, compile_timeout=timeout,
                           confirm=True, seed=target.seed)
    got = {r.backend: r.signature for r in report.failures if not r.flaky}
    return all(got.get(b) == s for b, s in target.signatures.items()), kept_detail(report, target)


def _confirm_voted(text: str, voted: voted_stage.VotedMismatch, result: ShrinkResult) -> tuple[bool, str]:
    """The voted stage's result re-run once more (the trial that kept it was the first run): whether
    the references still agree and the lane still differs; its inputs and the references' results
    go into `result` (what the entry keeps and replay judges against)."""
    again = voted.judge(text)
    if text not in voted.verdicts or again is None:
        return False, again.detail if again is not None else ""
    result.inputs, result.expected = again.inputs, again.expected
    return True, again.detail


def _tried_whole(text: str, target: Target, cache: TrialCache, timeout: float) -> bool:
    """Whether a trial of `text` in `cache` failed with the kept signature on every kept backend as
    a whole compile (a compile-only failure, no --compile-to phase) or a whole check under
    `timeout` would: the final re-check's first run, run already."""
    if target.compile_only and target.phase is not None:
        return False
    mode, seed = (COMPILE, None) if target.compile_only else (CHECK, target.seed)
    memory = Limits(timeout=timeout).memory_bytes
    found = {b: cache.find(text, b, mode, None, seed, timeout, memory) for b in target.signatures}
    return all(t is not None and t.signature == target.signatures[b] for b, t in found.items())


def kept_detail(report: CheckReport, target: Target) -> str:
    """The output of the kept failure in a check of the text (the first backend's)."""
    wanted = set(target.signatures.values())
    return next((r.detail for r in report.failures if r.signature in wanted), "")


def save_to_corpus(corpus: str, result: ShrinkResult, toolchain: Toolchain) -> list[str]:
    """The shrunk reproducer, and what turned up while shrinking, into the corpus."""
    from shapefuzz import corpus as corpus_module  # written alongside; only needed with --corpus

    saved = []
    # The kept failure is no new sighting (its original was counted where it was found);
    # failures that turned up while shrinking are.
    items: list[tuple[Signature, str, CheckReport | None, bool]] = [
        (s, result.minimized, None, False) for s in result.target.signatures.values()]
    items += [(s, t, r, True) for s, t, r in result.findings]
    for signature, text, report, sighting in items:
        detail = result.detail if report is None else ""
        if report is not None:
            detail = next((r.detail for r in report.failures if r.signature == signature), "")
        case_form = result.case_form if report is None else None
        voted = report is None and result.expected is not None  # a voted text stage's inputs and agreed results
        finding = corpus_module.make_finding(signature, text, toolchain, detail=detail, seed=result.target.seed,
                                             case_form=case_form, inputs=result.inputs if voted else None,
                                             expected=result.expected if voted else None,
                                             reference=result.reference if voted else "")
        folder, _ = corpus_module.save_finding(corpus, finding, sighting=sighting)
        saved.append(str(folder))
    return saved


def result_lines(result: ShrinkResult) -> list[str]:
    """The summary a user pastes into a bug report."""
    b, a = result.before, result.after
    rows = [
        ("lines", b.lines, a.lines),
        ("ops", b.ops, a.ops),
        ("tensor elements", b.elements, a.elements),
        ("max rank", b.max_rank, a.max_rank),
        ("dynamic dims", b.dynamic_dims, a.dynamic_dims),
        ("characters", b.chars, a.chars),
    ]
    lines = [f"{'':<16} {'before':>9} {'after':>9}"]
    lines += [f"{label:<16} {x:>9} {y:>9}" for label, x, y in rows]
    s = result.stats
    why = f" (stopped: {result.stopped_because})" if result.stopped_because else ""
    lines.append(f"time {result.seconds:.1f}s{why}: {s.accepted} steps accepted, {s.trials} trials, "
                 f"{s.invalid} candidates rejected by the verifier")
    for name, reason in s.set_aside.items():
        lines.append(f"note: pass {name} set aside: {reason}")
    for error in s.predicate_errors[:3]:
        lines.append(f"note: a trial raised {error}")
    if result.stage_note and result.case_form is None:  # (why the text stage was not taken, or kept nothing)
        lines.append(f"note: {result.stage_note}")
    if result.reference:
        lines.append(f"expected results: {result.reference} (saved beside the reproducer with its inputs)")
    if result.confirmed is False and result.detail == RECHECK_CUT:
        lines.append(f"note: {RECHECK_CUT}")
    elif result.confirmed is False:
        lines.append("warning: the minimized file did not fail the same way on a re-check (flaky?)")
    lines.append(f"minimized: {result.out_path}")
    if result.case_path:
        lines.append(f"case form: {result.case_path} (the parameter-shrunk generated case it was cut from)")
    for signature in result.target.signatures.values():
        lines.append(f"signature: {signature}")
    for command in result.commands:
        lines.append(f"reproduce: {command}")
    if result.findings:
        lines.append(f"new failures seen while shrinking ({len(result.findings)}):")
        for i, (signature, text, _) in enumerate(result.findings):
            m = measure(text)
            where = result.finding_paths[i] if i < len(result.finding_paths) else ""
            lines.append(f"  {signature}")
            lines.append(f"    {where} ({m.lines} lines, {m.elements} elements)")
    for folder in result.saved:
        lines.append(f"saved: {folder}")
    return lines
