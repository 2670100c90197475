"""The IREE side of a campaign: the `Target` the engine drives, a thin adapter over the rooms that
do the work. Drawing is the families' (`families/generate.py`: a release-parsable draw, a
neighbour), checking and confirming the judge's (`judge/campaign_check.py` over the oracle, in
worker processes), a bucket's verdict triage's (`triage/verdict.py`), shrinking the shrinker's
(`shrink/run.py`), saving the corpus's; this module turns their values into the campaign's
(`Candidate`, `Outcome`, `Failure`). The engine never imports this."""

from __future__ import annotations

import hashlib
import importlib
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from shapefuzz.campaign.onnx_contradiction import onnx_contradiction
from shapefuzz.campaign.outcomes import (
    NOT_FOR_RELEASE, UNDEFINED_REFERENCE, Candidate, Failure, Outcome, ShrinkJob, ShrinkOutcome, Triage,
)
from shapefuzz.case import Case, case_from_mlir
from shapefuzz.corpus import META, REPRODUCER, entry_id, make_finding, save_finding, update_meta
from shapefuzz.coverage.probe import action_log_support
from shapefuzz.errors import EnvironmentFault, ShapefuzzError
from shapefuzz.families import FAMILY_MODULES, get_family
from shapefuzz.families.base import Family
from shapefuzz.families.context.strategy import CONSUMER_NAMES, PRODUCER_NAMES
from shapefuzz.families.context.wrap import with_context
from shapefuzz.families.frontends import with_frontends
from shapefuzz.families.gates import Gated
from shapefuzz.families.generate import draw_for_release, neighbour_params
from shapefuzz.files import child, read_bytes, safe_name
from shapefuzz.invoke.execute import COMPILE_ABORT_GRACE, DEFAULT_BUDGET, Budget, tool_seconds
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import module_traits
from shapefuzz.iree.toolchain import Toolchain, ToolchainProbe
from shapefuzz.judge.campaign_check import check_lanes, expectation_on, form_matching_reference, second_judge
from shapefuzz.judge.onnx_judge import DISAGREE, JUDGE_LANE, preload
from shapefuzz.judge.xla_judge import JUDGE_LANE as XLA_LANE
from shapefuzz.judge.oracle import Expectation, case_expectation
from shapefuzz.model import CheckReport, Signature, Status, Verdict
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.process.sandbox import GIB
from shapefuzz.process.worktime import skip, take, timed
from shapefuzz.schema import is_int, load_json
from shapefuzz.shrink.run import ShrinkResult, shrink_file
from shapefuzz.shrink.trials import CHECK, Trial, trial
from shapefuzz.size import size_of, smaller
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.verdict import Seen, every_run_mismatches, verdict

_FAMILIES: dict[str, Family] = {}


def load_family(name: str) -> Family:
    """One family's module, imported on its own (a family that does not import yet does not
    take the others down with it)."""
    if name not in _FAMILIES:
        # With its torch and ONNX spellings and its context chains, as the registry serves it, so
        # campaigns draw them too (and render, feed and judge a chain case as one computation).
        _FAMILIES[name] = with_context(with_frontends(importlib.import_module(f"shapefuzz.families.{name}").FAMILY))
    return _FAMILIES[name]


def available_families(names: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """(the families that import, one warning line per family that does not)."""
    ok, warnings = [], []
    for name in names:
        try:
            load_family(name)
            ok.append(name)
        except Exception as error:  # a family being written right now: skip it, say so
            warnings.append(f"family {name} is not available ({type(error).__name__}: {error}); skipped")
    return tuple(ok), warnings


KNOWN_FAMILIES = tuple(FAMILY_MODULES)

# Candidate checks run under this address-space cap; a new out-of-memory bucket is confirmed once
# under the full cap (the budget's) before it is filed. Measured with bench/bench_memory.py on
# 100 compiles of 20 default-campaign candidates (IREE 3.13, 5 default backends): every compile
# that succeeded peaked at 0.15 GiB resident and 0.45 GiB of address space; the one blow-up
# (batch-less scatter) passed 6 GiB on every backend before the 8 GiB cap. So 2 GiB is 4x what
# real cases need and cuts a blow-up at a quarter of the old cost.
CAMPAIGN_MEMORY_CAP = 2 * GIB


def capped(budget: Budget, memory_bytes: int | None) -> Budget:
    """The budget with compile and run under `memory_bytes` (None: unchanged)."""
    if memory_bytes is None:
        return budget
    return Budget(budget.verify, replace(budget.compile, memory_bytes=memory_bytes),
                  replace(budget.run, memory_bytes=memory_bytes))


# Candidate checks run at half the time limits (60 s a compile by default), and a new timeout is
# filed only if the confirming re-run, at the full limits (`--compile-timeout`, 120 s: what `check`
# and `replay` use), times out too. Over 17,670 lane checks of ten-family campaigns, 11 timed out
# and one compile took 60-120 s; each timeout cost 120 s to find and 240 s to confirm (three of
# them took a quarter of a 20-minute campaign's worker time), now 60 s and 120 s.
CHECK_TIME_FACTOR = 0.5

# A campaign's shrink of a hang or an out-of-memory bucket, whose every step costs the full limit
# (120 s a compile), takes at most one trial that reaches it, and none unless its time covers that
# trial and the final re-check (two more runs): three full limits, more than a shrink's 300 s, so in
# a default campaign such a shrink stops on the confirm's run it is handed (its first check).
BLOWUP_TRIALS = 1
# A campaign's shrink stops once this many trials in a row shrank nothing: in the 6-minute campaigns
# measured for it no accepted step took more than 4 trials since the step before (29 steps).
STALL_TRIALS = 16

# Candidates drawn inside a producer/consumer chain (families/context), unless --context-share says.
CONTEXT_SHARE = 0.5


def scaled(budget: Budget, factor: float) -> Budget:
    """The budget with compile and run timeouts multiplied by `factor`."""
    return Budget(budget.verify, replace(budget.compile, timeout=budget.compile.timeout * factor),
                  replace(budget.run, timeout=budget.run.timeout * factor))


@dataclass(frozen=True)
class IreeTarget:
    toolchain: Toolchain
    corpus_dir: Path
    budget: Budget = DEFAULT_BUDGET  # the full caps: confirmations and shrinks
    memory_cap: int | None = CAMPAIGN_MEMORY_CAP  # candidate checks
    gated: Gated = Gated()  # the forms this toolchain's release cannot parse (families/gates.py)
    context_share: float | None = None  # cases drawn inside a producer/consumer chain (None: the default)

    # --- campaign process --------------------------------------------------------------------
    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        """One candidate for (family, seed): a swarm draw (each candidate first draws which of the
        family's features it may use); `large` draws the sizes meant for compile-only lanes. A form
        the release cannot parse is drawn as an equivalent form it can (or the draw moves on)."""
        return self._generate(group, seed, large, CONTEXT_SHARE if self.context_share is None else self.context_share)

    def chain_ops(self) -> tuple[tuple[str, ...], ...]:
        """The chain ops a swarm epoch may leave out, by side; none when `--context-share` pins the share."""
        return () if self.context_share is not None else (PRODUCER_NAMES, CONSUMER_NAMES)

    def generate_shaped(self, group: str, seed: int, large: bool, chain: bool, left_out: tuple[str, ...]) -> Candidate:
        """`generate`, inside a chain (where the root takes one) or not, as the campaign's
        allocation asks, with the chain ops `left_out` never drawn."""
        return self._generate(group, seed, large, 1.0 if chain else 0.0, left_out)

    def _generate(self, group: str, seed: int, large: bool, share: float, left_out: tuple[str, ...] = ()) -> Candidate:
        family = load_family(group)
        params = draw_for_release(group, seed, self.gated, regime="large" if large else "small", swarm=True,
                                  context_share=share, left_out=left_out)
        case = Case.make(group, params)
        text = case.header() + "\n" + family.render(case.params)
        features = tuple(family.features(case.params)) + (("regime:large",) if large else ())
        return Candidate(case.case_id, group, seed, features, case.params_json, text)

    def from_payload(self, group: str, seed: int, payload: str) -> Candidate:
        """The candidate with these parameters (a neighbour is not regenerated by its seed). Its
        key is the payload's; its header is written as today's cases are (an older payload's
        spelling would make every shrink step a re-spelled, longer header)."""
        family = load_family(group)
        case = Case(group, payload)
        params = family.load(case.params)
        text = Case.make(group, params).header() + "\n" + family.render(params)
        return Candidate(case.case_id, group, seed, tuple(family.features(params)), case.params_json, text)

    def neighbour(self, candidate: Candidate, seed: int) -> Candidate | None:
        """A small change of the candidate's parameters (`families.generate.neighbour_params`),
        chosen by `seed`; None when its family offers none."""
        family = load_family(candidate.group)
        changed = neighbour_params(family, candidate.group, family.load(case_of_candidate(candidate).params), seed,
                                   self.gated)
        if changed is None:
            return None
        case = Case.make(candidate.group, changed)
        return Candidate(case.case_id, candidate.group, seed, tuple(family.features(changed)), case.params_json,
                         case.header() + "\n" + family.render(changed))

    def coverage_support(self) -> str:
        """"" when this compiler writes the action log coverage is read from, else why not."""
        return action_log_support(self.toolchain)

    def ineligible(self, candidate: Candidate, lanes: tuple[str, ...]) -> set[str]:
        """The lanes that cannot take the candidate, decided before compiling: a known limit of the
        target (they would only report it unsupported), or a variant whose flags change none of its
        ops (it would compile as its base lane does)."""
        traits = module_traits(candidate.text)
        return {lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].ineligible_for(traits)}

    def size(self, text: str) -> tuple[int, ...]:
        return astuple(size_of(text))

    def deadline(self, lanes: tuple[str, ...]) -> float:
        b = self.budget  # (a hung compile also gets COMPILE_ABORT_GRACE to print its stack)
        return b.verify.timeout + 2 * len(lanes) * (b.compile.timeout + COMPILE_ABORT_GRACE + b.run.timeout) + 60.0

    def corpus_count(self, failure: Failure) -> tuple[str, int]:
        """(the corpus entry this failure goes to, how many times it was saved so far)."""
        folder = self.corpus_dir / entry_id(failure.signature)
        try:
            meta = load_json(read_bytes(folder / META).decode("utf-8"), META)  # bounded, never a FIFO
        except (OSError, ValueError):
            return str(folder), 0
        count = meta.get("count") if isinstance(meta, dict) else None
        return str(folder), count if is_int(count) else 0

    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str = "",
             triage: Triage | None = None, evidence: str = "") -> str:
        # The arrays only for a lane that runs the module here: a large round's compile failure on a
        # GPU lane keeps none (replay makes them from the header where it runs), as its check built
        # none, and this is the campaign's own process (a large attention's reference is 17 GB).
        expectation = expectation_on(case_of_candidate(candidate), candidate.input_seed, [failure.lane],
                                     self.toolchain.probe)
        finding = make_finding(
            failure.signature, candidate.text, self.toolchain,
            case=case_of_candidate(candidate), seed=candidate.input_seed,
            inputs=expectation.inputs if expectation else None,
            expected=expectation.expected if expectation else None, detail=failure.detail, flaky=flaky,
            cause=cause, triage=Triage(triage).value if triage else "", evidence=evidence)  # meta.json: the text
        entry, _ = save_finding(self.corpus_dir, finding)
        return str(entry)

    def rename_cause(self, entry: str, cause: str) -> None:
        # the entry as the store names it, taken inside this campaign's corpus (a resumed store is read back)
        update_meta(child(self.corpus_dir, Path(entry).name, "corpus entry"), cause=safe_name(cause, "cause"))

    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]:
        """compiler bug, target limit, suspected driver or ours, with the evidence (flaky is
        decided by the re-run): `triage.verdict` over what the check left."""
        return verdict(failure, self._seen(candidate, failure, outcome), lambda: self._onnx_contradiction(candidate))

    def _seen(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> Seen:
        """What the check (or its confirming re-run) left for judging `failure`: the second judge is
        ONNX's reference, or XLA for a StableHLO case, whichever ran."""
        judged = next(((lane, name) for lane, name in ((JUDGE_LANE, "onnx.reference"), (XLA_LANE, "XLA"))
                       if lane in outcome.lanes), (JUDGE_LANE, "onnx.reference"))
        return Seen(candidate.text, statuses(outcome), self.toolchain.probe, outcome.earlier, outcome.reference_form,
                    outcome.lanes.get(judged[0], (None,))[0], failure.signature.message.startswith(DISAGREE),
                    second_judge_name=judged[1], arg_shapes=lambda: self._arg_shapes(candidate))

    def _arg_shapes(self, candidate: Candidate) -> list[tuple[int, ...]]:
        """The shapes of the arguments the check ran the candidate with (its inputs, made again from its seed)."""
        try:
            return [tuple(array.shape) for array in self._expectation(candidate).inputs]
        except (ShapefuzzError, ValueError):  # no case to make them from: the text's static dims only
            return []

    def _onnx_contradiction(self, candidate: Candidate) -> tuple[str, str]:
        """(what ONNX types two ways for a case spelled as an ONNX model, "" for none; what was not
        checked: campaign.onnx_contradiction, which skips a large candidate's references here)."""
        return onnx_contradiction(candidate, self._expectation)

    # --- worker processes ----------------------------------------------------------------------
    def worker_init(self) -> None:
        """Once per worker, before its first task: the cached probe read, every family built and
        ONNX's reference loaded, timed as the worker's start-up and reported with its first check
        (worktime.take). (The oracle and the families' modules come with this one's imports.)"""
        with timed("start-up"):
            self.toolchain.probe  # noqa: B018
            for name in KNOWN_FAMILIES:
                get_family(name)
            preload()

    def _expectation(self, candidate: Candidate) -> Expectation:
        return case_expectation(case_of_candidate(candidate), candidate.input_seed)

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """Under the campaign's memory cap and half the time limits; lanes that cannot support what the candidate uses
        (a known target limit, told by its types) are not compiled, only counted unsupported."""
        before = tool_seconds()
        outcome = self._check(candidate, lanes, scaled(capped(self.budget, self.memory_cap), CHECK_TIME_FACTOR))
        return replace(outcome, tool_seconds=tool_seconds() - before, split=take())

    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """The same check again, on the failing lanes only, under the full caps and limits: a blow-up cut
        short by the campaign's cap is filed only if it blows past the full cap too. When every
        backend that ran disagrees with the reference, and the reference is in doubt (`ours`:
        `candidate.forms`; a bucket the check's reference lane got right never is), the case's
        equivalent forms are checked on the reference lane: one that matches the reference shows
        the reference is right."""
        before = tool_seconds()
        outcome = self._check(replace(candidate, instrument=()), lanes, self.budget)  # coverage was read once
        if candidate.forms and every_run_mismatches(statuses(outcome), self.toolchain.probe):
            outcome = replace(outcome, reference_form=form_matching_reference(
                case_of_candidate(candidate), self.toolchain, candidate.input_seed, self.budget))
        return replace(outcome, tool_seconds=tool_seconds() - before, split=take())

    def _check(self, candidate: Candidate, lanes: tuple[str, ...], budget: Budget) -> Outcome:
        """`judge.campaign_check.check_lanes` as the campaign's outcome: a case the release cannot
        parse said so, the second judge as one more lane, limited lanes counted unsupported."""
        case = case_of_candidate(candidate)
        before = tool_seconds()
        checked = check_lanes(candidate.text, case, candidate.input_seed, lanes, self.toolchain, budget,
                              candidate.instrument)
        if checked.report is None:  # the generator's slip: discarded, never judged
            return Outcome(Verdict.INVALID, {}, (), 0.0, UNDEFINED_REFERENCE + checked.undefined)
        outcome = outcome_of(checked.report, tool_seconds() - before)
        outcome = replace(outcome, trials=failing_trials(checked.report, candidate, budget))
        if outcome.verdict == Verdict.INVALID and not self.gated.accepts(candidate.group, case.params):
            return replace(outcome, error=NOT_FOR_RELEASE + outcome.error)
        outcome = with_judge(outcome, checked.expectation, self.toolchain.probe)
        if not checked.limited or outcome.verdict == Verdict.INVALID:
            return outcome
        return replace(outcome, lanes={lane: (Status.UNSUPPORTED, 0.0) if lane in checked.limited else outcome.lanes[lane]
                                       for lane in lanes})

    def shrink(self, candidate: Candidate, job: ShrinkJob) -> ShrinkOutcome | None:
        """The shrink and its corpus write (`save_shrunk`); None when the candidate did not fail
        with the job's signature in isolation, or nothing came of it."""
        result = self.shrink_only(candidate, job)
        return None if result is None else self.save_shrunk(result)

    def shrink_only(self, candidate: Candidate, job: ShrinkJob) -> ShrinkResult | None:
        """The shrink without the corpus write (a cluster node returns this to the head): its
        `ShrinkResult`, or None when the candidate did not fail with the job's signature in
        isolation (another failure is not shrunk in its place). Trials run with the job's input seed."""
        with temp_dir("shrink") as tmp:
            path = str(Path(tmp) / "candidate.mlir")
            try:
                result = shrink_file(
                    path, candidate.text, self.toolchain, (job.backend,), out=str(Path(tmp) / "min.mlir"),
                    signature=job.signature, time_limit=job.seconds,
                    compile_timeout=self.budget.compile.timeout, seed=job.input_seed,
                    recheck=False,  # the campaign's confirming re-run already showed it is no fluke
                    trials=job.trials, blowup_trials=BLOWUP_TRIALS, stall_trials=STALL_TRIALS,
                    reference_lanes=job.references or None,
                )
            except EnvironmentFault:
                raise  # our machine, not the case: the engine keeps the shrink pending
            except ShapefuzzError:
                return None  # did not reproduce in isolation
            finally:
                skip()  # a shrink's time is not split (its share is the engine's to bound)
        return result

    def save_shrunk(self, result: ShrinkResult) -> ShrinkOutcome | None:
        """A shrink's result on the campaign's side: the smaller reproducer into the corpus when it
        was confirmed, and the new failures met while shrinking (each confirmed by two re-checks)
        handed back for the engine's buckets: nothing is written into the corpus behind the
        campaign's back. With the shrinker's figures (`ShrinkResult.facts`) for the task log."""
        # (a failure met in a case's text stage, shrink.case_stage, is plain MLIR: no case, so no
        # candidate the buckets can check, judge or save; `shapefuzz shrink` reports it)
        found = tuple(self._shrink_finding(result, sig, text, report) for sig, text, report in result.findings
                      if case_of(text) is not None)
        if not result.confirmed or not smaller(result.minimized, result.original):
            return ShrinkOutcome(found=found, facts=result.facts(), trials=tuple(result.trials))
        signature = next(iter(result.target.signatures.values()))
        case = case_of(result.minimized)
        # the shrunk case's own inputs and NumPy outputs (a smaller entry replaces the whole payload)
        expectation = case_expectation(case, result.target.seed) if case is not None else None
        # (a voted text stage's result, shrink.voted_stage: its inputs and the reference lanes' agreed results)
        inputs = expectation.inputs if expectation else result.inputs
        expected = expectation.expected if expectation else result.expected
        # the shrunk reproducer's own output (its mismatch, its actual values), as its re-check gave it
        finding = make_finding(signature, result.minimized, self.toolchain, case=case, seed=result.target.seed,
                               inputs=inputs, expected=expected, detail=result.detail,
                               case_form=result.case_form,  # a text-stage result: its case beside it
                               reference="" if expectation else result.reference)
        entry, _ = save_finding(self.corpus_dir, finding, sighting=False)
        # what the entry holds now: the shrunk file, or a smaller one the corpus kept (an earlier
        # shrink's), which the campaign records then: never a larger file than the entry's as "shrunk"
        return ShrinkOutcome(read_bytes(Path(entry) / REPRODUCER).decode(), str(entry), found, result.facts(),
                             tuple(result.trials))

    def _shrink_finding(self, result: ShrinkResult, signature: Signature, text: str,
                        report: CheckReport) -> tuple[Candidate, Failure]:
        """A new failure met while shrinking, as a candidate of its own (its text, the family and
        input seed of the candidate it came from) with its failure."""
        detail = next((r.detail for r in report.failures if r.signature == signature), "")
        case, origin = case_of(text), case_of(result.original)
        key = "shrunk-" + hashlib.sha256(text.encode()).hexdigest()[:16]
        found = Candidate(key, origin.family if origin is not None else "", result.target.seed, (),
                          case.params_json if case is not None else "", text)
        return found, failure_of(signature, detail)


def case_of_candidate(candidate: Candidate) -> Case:
    """The case a candidate's payload holds (its family and parameters)."""
    return Case(candidate.group, candidate.payload)


def case_of(text: str):
    return case_from_mlir(text)


def statuses(outcome: Outcome) -> dict[str, Status]:
    """Each lane's status in `outcome` (its seconds left out)."""
    return {lane: status for lane, (status, _) in outcome.lanes.items()}


def failure_of(signature: Signature, detail: str) -> Failure:
    """A failing lane with the bug identity the engine groups causes by (`strong` when the
    compiler said where it failed, see triage.identity)."""
    ident = identity_of(signature.stage.value, signature.status.value, signature.message, detail)
    return Failure(signature, detail, ident.key, ident.strong, ident.failing_pass)


def with_judge(outcome: Outcome, expectation: Expectation | None, probe: ToolchainProbe) -> Outcome:
    """The second judge (ONNX's reference, or XLA for a StableHLO case) as one more lane of the
    outcome, so the store and report count how often it ran and disagreed; only where some lane
    executed the candidate."""
    second = second_judge(statuses(outcome), outcome.verdict, expectation, probe)
    if second is None or expectation is None or expectation.second is None:
        return outcome
    return replace(outcome, lanes={**outcome.lanes, expectation.second.lane: second})


def failing_trials(report: CheckReport, candidate: Candidate, budget: Budget) -> tuple[Trial, ...]:
    """The check's failing lanes as trials a shrink of the candidate can find instead of checking
    it again (shrink.trials): each under the limits it ran with; not a lane compiled with the
    action log (other flags: another compile)."""
    return tuple(trial(candidate.text, r.backend, CHECK, r.signature, r.seconds, budget.compile.timeout,
                       budget.compile.memory_bytes, r.detail, seed=candidate.input_seed)
                 for r in report.failures if r.signature is not None and r.backend not in candidate.instrument)


def outcome_of(report: CheckReport, tool_seconds: float) -> Outcome:
    lanes = {r.backend: (r.status, round(r.seconds, 4)) for r in report.results}
    failures = tuple(failure_of(r.signature, r.detail) for r in report.failures if r.signature is not None)
    coverage = {r.backend: (tuple(sorted(r.coverage.items())), r.coverage.failing_pass)
                for r in report.results if r.coverage is not None}
    return Outcome(report.verdict, lanes, failures, tool_seconds, report.verify_error[-2000:],
                   coverage=coverage)
