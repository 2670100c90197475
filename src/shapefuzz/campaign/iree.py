"""The IREE side of a campaign: the `Target` the engine drives. Draws cases from the families'
Hypothesis strategies, checks them with the oracle on the chosen backends (in worker
processes), and saves confirmed buckets into the corpus. The engine never imports this."""

from __future__ import annotations

import importlib
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.campaign.outcomes import (
    NOT_FOR_RELEASE, UNDEFINED_REFERENCE, Candidate, Failure, Outcome, ShrinkJob, Triage,
)
from shapefuzz.case import Case
from shapefuzz.invoke.execute import COMPILE_ABORT_GRACE, DEFAULT_BUDGET, Budget
from shapefuzz.families import FAMILY_MODULES
from shapefuzz.families.base import Family
from shapefuzz.families.gates import Gated
from shapefuzz.model import CheckReport, Signature, Stage, Status, Verdict
from shapefuzz.process.sandbox import GIB
from shapefuzz.iree.toolchain import Toolchain

_FAMILIES: dict[str, Family] = {}


def load_family(name: str) -> Family:
    """One family's module, imported on its own (a family that does not import yet does not
    take the others down with it)."""
    if name not in _FAMILIES:
        from shapefuzz.families.context.wrap import with_context
        from shapefuzz.families.frontends import with_frontends

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

_RELEASE_DRAWS = 8  # draws of a family before giving up on one this release parses


def _redraw_seed(seed: int, attempt: int) -> int:
    import hashlib

    return int.from_bytes(hashlib.sha256(f"{seed}:release:{attempt}".encode()).digest()[:6], "big")


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
        from shapefuzz.families.context.strategy import CONSUMER_NAMES, PRODUCER_NAMES

        return () if self.context_share is not None else (PRODUCER_NAMES, CONSUMER_NAMES)

    def generate_shaped(self, group: str, seed: int, large: bool, chain: bool, left_out: tuple[str, ...]) -> Candidate:
        """`generate`, inside a chain (where the root takes one) or not, as the campaign's
        allocation asks, with the chain ops `left_out` never drawn."""
        return self._generate(group, seed, large, 1.0 if chain else 0.0, left_out)

    def _generate(self, group: str, seed: int, large: bool, share: float, left_out: tuple[str, ...] = ()) -> Candidate:
        from shapefuzz.families.generate import draw_params

        family = load_family(group)
        params = None
        for attempt in range(_RELEASE_DRAWS):
            drawn = draw_params(group, seed if attempt == 0 else _redraw_seed(seed, attempt),
                                regime="large" if large else "small", swarm=True, context_share=share,
                                left_out=left_out)
            params = self.gated.params(group, drawn)
            if params is not None:
                break
        if params is None:
            raise ValueError(f"{_RELEASE_DRAWS} draws of {group} were all forms this release cannot parse")
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
        """A small change of the candidate's parameters (coverage feedback draws these near
        candidates that reached new passes or patterns): one of its family's shrink steps, swarm
        projections (a feature switched off) or equivalent forms, chosen by `seed`."""
        import random

        family = load_family(candidate.group)
        params = family.load(case_of_candidate(candidate).params)
        rng = random.Random(seed)
        kind = rng.choice(("shrink", "swarm", "form"))
        if kind == "swarm" and family.swarm_knobs:
            options = [family.apply_swarm(params, [knob]) for knob in sorted(family.swarm_knobs)]
        elif kind == "form":
            options = family.equivalent_forms(params)
        else:
            options = family.shrink_candidates(params)
        options = [p for p in options if p != params] or family.shrink_candidates(params)
        options = [q for q in (self.gated.params(candidate.group, p) for p in options) if q is not None and q != params]
        if not options:
            return None
        changed = rng.choice(options)
        case = Case.make(candidate.group, changed)
        return Candidate(case.case_id, candidate.group, seed, tuple(family.features(changed)), case.params_json,
                         case.header() + "\n" + family.render(changed))

    def coverage_support(self) -> str:
        """"" when this compiler writes the action log coverage is read from, else why not."""
        from shapefuzz.coverage.probe import action_log_support

        return action_log_support(self.toolchain)

    def ineligible(self, candidate: Candidate, lanes: tuple[str, ...]) -> set[str]:
        """The lanes that cannot take the candidate, decided before compiling: a known limit of the
        target (they would only report it unsupported), or a variant whose flags change none of its
        ops (it would compile as its base lane does)."""
        from shapefuzz.iree.backends import BACKENDS
        from shapefuzz.iree.mlirinfo import module_traits

        traits = module_traits(candidate.text)
        return {lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].ineligible_for(traits)}

    def size(self, text: str) -> tuple[int, ...]:
        from shapefuzz.size import size_of

        return astuple(size_of(text))

    def deadline(self, lanes: tuple[str, ...]) -> float:
        b = self.budget  # (a hung compile also gets COMPILE_ABORT_GRACE to print its stack)
        return b.verify.timeout + 2 * len(lanes) * (b.compile.timeout + COMPILE_ABORT_GRACE + b.run.timeout) + 60.0

    def corpus_count(self, failure: Failure) -> tuple[str, int]:
        """(the corpus entry this failure goes to, how many times it was saved so far)."""
        from shapefuzz.corpus import META, entry_id
        from shapefuzz.schema import is_int, load_json

        folder = self.corpus_dir / entry_id(failure.signature)
        try:
            from shapefuzz.files import read_bytes

            meta = load_json(read_bytes(folder / META).decode("utf-8"), META)  # bounded, never a FIFO
        except (OSError, ValueError):
            return str(folder), 0
        count = meta.get("count") if isinstance(meta, dict) else None
        return str(folder), count if is_int(count) else 0

    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str = "",
             triage: Triage | None = None, evidence: str = "") -> str:
        from shapefuzz.corpus import make_finding, save_finding

        # The arrays only for a lane that runs the module here: a large round's compile failure on a
        # GPU lane keeps none (replay makes them from the header where it runs), as its check built
        # none, and this is the campaign's own process (a large attention's reference is 17 GB).
        expectation = self._expectation(candidate) if self._runs_here([failure.lane]) else None
        finding = make_finding(
            failure.signature, candidate.text, self.toolchain,
            case=case_of_candidate(candidate), seed=candidate.input_seed,
            inputs=expectation.inputs if expectation else None,
            expected=expectation.expected if expectation else None, detail=failure.detail, flaky=flaky,
            cause=cause, triage=Triage(triage).value if triage else "", evidence=evidence)  # meta.json: the text
        entry, _ = save_finding(self.corpus_dir, finding)
        return str(entry)

    def rename_cause(self, entry: str, cause: str) -> None:
        from shapefuzz.corpus import update_meta
        from shapefuzz.files import child, safe_name

        # the entry as the store names it, taken inside this campaign's corpus (a resumed store is read back)
        update_meta(child(self.corpus_dir, Path(entry).name, "corpus entry"), cause=safe_name(cause, "cause"))

    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]:
        """compiler bug, target limit, suspected driver or ours, with the evidence (flaky is
        decided by the re-run)."""
        from shapefuzz.judge.onnx_judge import DISAGREE

        if failure.signature.status == Status.MISMATCH and failure.signature.message.startswith(DISAGREE):
            return Triage.OURS, f"our two references disagree, so no backend is judged: {failure.detail[:1500]}"
        contradiction, unchecked = self._onnx_contradiction(candidate)
        if contradiction:
            return Triage.OURS, (f"{contradiction}: the importer's types contradict each other, so what the compiler "
                                 "makes of them is no compiler bug (ours, or upstream ONNX's)")
        verdict, evidence = self._verdict(candidate, failure, outcome)
        return verdict, evidence + (f"; {unchecked}" if unchecked else "")

    def _verdict(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]:
        """`triage`'s verdict once our references and ONNX's types are not in doubt."""
        from shapefuzz.iree.backends import BACKENDS
        from shapefuzz.judge.onnx_judge import JUDGE_LANE
        from shapefuzz.judge.xla_judge import JUDGE_LANE as XLA_LANE

        backend = BACKENDS.get(failure.lane)
        stage, status = failure.signature.stage, failure.signature.status
        reason = backend.limit_for_module(candidate.text) if backend else None
        if reason:
            return Triage.TARGET_LIMIT, f"{failure.lane}: {reason}"
        probe = self.toolchain.probe
        ran = {lane: st for lane, (st, _) in outcome.lanes.items()
               if lane in BACKENDS and BACKENDS[lane].executes(probe)}
        if stage in (Stage.RUN, Stage.COMPARE) and backend is not None:
            others = {lane: st for lane, st in ran.items() if BACKENDS[lane].driver != backend.driver}
            agree = sorted(lane for lane, st in others.items() if st == Status.OK)
            if backend.driver == "vulkan" and agree and len(agree) == len(others):
                twin = backend.driver_twin
                twin_runs = bool(twin) and twin in BACKENDS and BACKENDS[twin].executes(probe)
                return vulkan_verdict(candidate.text, failure, {lane: st for lane, (st, _) in outcome.lanes.items()},
                                      agree, twin_runs, outcome.earlier.get(failure.lane, ""))
            wrong = every_run_mismatches(outcome, probe)
            if status == Status.MISMATCH and wrong and outcome.reference_form:
                return Triage.COMPILER_BUG, (
                    f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy reference, but "
                    f"{outcome.reference_form}: the reference is right, and the bug is shared by every backend")
            judged = next((name for lane, name in ((JUDGE_LANE, "onnx.reference"), (XLA_LANE, "XLA"))
                           if outcome.lanes.get(lane, (None,))[0] == Status.OK), None)
            if status == Status.MISMATCH and wrong and judged:
                # a second, independent reference (ONNX's own, or XLA) computed the same values
                return Triage.COMPILER_BUG, (
                    f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy reference, but "
                    f"{judged} computes the same values as the NumPy reference: the reference is right, "
                    "and the bug is shared by every backend")
            if status == Status.MISMATCH and wrong:
                return Triage.OURS, (f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy "
                                     "reference: the reference is suspect")
        from shapefuzz.triage.record import lanes_evidence

        passed = sorted(lane for lane, (st, _) in outcome.lanes.items() if st == Status.OK and lane in BACKENDS)
        return Triage.COMPILER_BUG, (f"{stage.value}/{status.value} on {failure.lane} for input that verifies"
                                     f"{lanes_evidence(passed, probe)}")

    def _onnx_contradiction(self, candidate: Candidate) -> tuple[str, str]:
        """(what ONNX types two ways for a case spelled as an ONNX model, "" for none; what was not
        checked: campaign.onnx_contradiction, which skips a large candidate's references here)."""
        from shapefuzz.campaign.onnx_contradiction import onnx_contradiction

        return onnx_contradiction(candidate, self._expectation)

    # --- worker processes ----------------------------------------------------------------------
    def worker_init(self) -> None:
        """Once per worker, before its first task: the cached probe read, and what every check
        imports (families, the oracle, ONNX's reference), timed as the worker's start-up and
        reported with its first check (worktime.take)."""
        from shapefuzz.process.worktime import timed

        with timed("start-up"):
            self.toolchain.probe  # noqa: B018
            import shapefuzz.judge.oracle  # noqa: F401
            from shapefuzz.families import get_family
            from shapefuzz.judge.onnx_judge import preload

            for name in KNOWN_FAMILIES:
                get_family(name)
            preload()

    def _expectation(self, candidate: Candidate):
        from shapefuzz.judge.oracle import case_expectation

        return case_expectation(case_of_candidate(candidate), candidate.input_seed)

    def _runs_here(self, lanes: list[str]) -> bool:
        """Whether one of `lanes` runs the module here (an unknown name counts as one)."""
        from shapefuzz.iree.backends import any_runs_here

        return any_runs_here(lanes, self.toolchain.probe)

    def _run_expectation(self, candidate: Candidate, lanes: list[str]):
        """The expectation a check on `lanes` needs: None when none of them executes here (a large
        round's compile-only lanes), which use no inputs and no NumPy reference (for a large case the
        most costly part of a worker's time outside the compiler); the case is still validated."""
        from shapefuzz.families import validate_case
        from shapefuzz.process.worktime import timed

        if self._runs_here(lanes):
            return self._expectation(candidate)
        with timed("reference"):
            validate_case(case_of_candidate(candidate))
        return None

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """Under the campaign's memory cap and half the time limits; lanes that cannot support what the candidate uses
        (a known target limit, told by its types) are not compiled, only counted unsupported."""
        from shapefuzz.invoke.execute import tool_seconds
        from shapefuzz.process.worktime import take

        before = tool_seconds()
        outcome = self._check(candidate, lanes, scaled(capped(self.budget, self.memory_cap), CHECK_TIME_FACTOR))
        return replace(outcome, tool_seconds=tool_seconds() - before, split=take())

    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """The same check again, on the failing lanes only, under the full caps and limits: a blow-up cut
        short by the campaign's cap is filed only if it blows past the full cap too. When every
        backend that ran disagrees with the reference, the case's equivalent forms are checked on
        the reference lane: one that matches the reference shows the reference is right."""
        from shapefuzz.invoke.execute import tool_seconds
        from shapefuzz.process.worktime import take

        before = tool_seconds()
        outcome = self._check(replace(candidate, instrument=()), lanes, self.budget)  # coverage was read once
        if every_run_mismatches(outcome, self.toolchain.probe):
            outcome = replace(outcome, reference_form=self._form_matching_reference(candidate))
        return replace(outcome, tool_seconds=tool_seconds() - before, split=take())

    def _form_matching_reference(self, candidate: Candidate) -> str:
        from shapefuzz.iree.backends import REFERENCE_BACKEND
        from shapefuzz.judge.oracle import check_forms, form_difference

        case = case_of_candidate(candidate)
        forms = check_forms(case, (REFERENCE_BACKEND,), self.toolchain, candidate.input_seed, self.budget,
                            confirm=False)
        for form, report in forms.reports:
            if form != case and report.verdict == Verdict.PASS:
                return (f"form [{form_difference(case.params, form.params)}] of the same computation matches "
                        f"it on {REFERENCE_BACKEND}")
        return ""

    def _check(self, candidate: Candidate, lanes: tuple[str, ...], budget: Budget) -> Outcome:
        import errno

        from shapefuzz.errors import EnvironmentFault

        try:
            return self._check_lanes(candidate, lanes, budget)
        except OSError as error:  # our temporary files: a full TMPDIR is the machine, not the compiler
            if error.errno in (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EROFS, errno.ENOENT):
                raise EnvironmentFault(f"{error.filename or 'temporary file'}: {error.strerror}") from None
            raise

    def _check_lanes(self, candidate: Candidate, lanes: tuple[str, ...], budget: Budget) -> Outcome:
        from shapefuzz.iree.backends import BACKENDS
        from shapefuzz.errors import UndefinedReference
        from shapefuzz.invoke.execute import tool_seconds
        from shapefuzz.judge.oracle import check_module

        limited = {lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].limit_for_module(candidate.text)}
        checked = [lane for lane in lanes if lane not in limited]
        before = tool_seconds()
        # (a large attention's reference, 8x16x4096x4096 scores or 17 GB, once took a worker with it
        # for compile-only lanes: 151 s and 383 s of two context-bench campaigns)
        try:
            expectation = self._run_expectation(candidate, checked)
        except UndefinedReference as error:  # the generator's slip: discarded, never judged
            return Outcome(Verdict.INVALID, {}, (), 0.0, UNDEFINED_REFERENCE + str(error))
        report = check_module(candidate.text, checked,
                              expectation, self.toolchain, budget, confirm=False,
                              instrument=candidate.instrument)
        outcome = outcome_of(report, tool_seconds() - before)
        if outcome.verdict == Verdict.INVALID and not self.gated.accepts(candidate.group, case_of_candidate(candidate).params):
            return replace(outcome, error=NOT_FOR_RELEASE + outcome.error)
        outcome = with_judge(outcome, expectation, self.toolchain.probe)
        if not limited or outcome.verdict == Verdict.INVALID:
            return outcome
        statuses = {lane: (Status.UNSUPPORTED, 0.0) if lane in limited else outcome.lanes[lane] for lane in lanes}
        return replace(outcome, lanes=statuses)

    def shrink(self, candidate: Candidate, job: ShrinkJob):
        """(smaller text or None, corpus entry or None, new findings) once the shrunk reproducer
        is confirmed and saved (it replaces the entry's reproducer, being smaller), else None."""
        result = self.shrink_only(candidate, job)
        return None if result is None else self.save_shrunk(result)

    def shrink_only(self, candidate: Candidate, job: ShrinkJob):
        """The shrink without the corpus write (a cluster node returns this to the head): its
        `ShrinkResult`, or None when the candidate did not fail with the job's signature in
        isolation (another failure is not shrunk in its place). Trials run with the job's input seed."""

        from shapefuzz.errors import EnvironmentFault, ShapefuzzError
        from shapefuzz.shrink.run import shrink_file

        from shapefuzz.process.worktime import skip

        with temp_dir("shrink") as tmp:
            path = str(Path(tmp) / "candidate.mlir")
            try:
                result = shrink_file(
                    path, candidate.text, self.toolchain, (job.backend,), out=str(Path(tmp) / "min.mlir"),
                    signature=job.signature, time_limit=job.seconds,
                    compile_timeout=self.budget.compile.timeout, seed=job.input_seed,
                    recheck=False,  # the campaign's confirming re-run already showed it is no fluke
                )
            except EnvironmentFault:
                raise  # our machine, not the case: the engine keeps the shrink pending
            except ShapefuzzError:
                return None  # did not reproduce in isolation
            finally:
                skip()  # a shrink's time is not split (its share is the engine's to bound)
        return result

    def save_shrunk(self, result):
        """A shrink's result on the campaign's side: the smaller reproducer into the corpus when it
        was confirmed, and the new failures met while shrinking (each confirmed by two re-checks)
        handed back as (candidate, failure) pairs for the engine's buckets: nothing is written
        into the corpus behind the campaign's back. (the entry's reproducer after the save, or None
        when nothing was saved; entry or None; found), or None when there is nothing."""
        from shapefuzz.corpus import REPRODUCER, make_finding, save_finding
        from shapefuzz.files import read_bytes
        from shapefuzz.size import smaller

        found = [self._shrink_finding(result, sig, text, report) for sig, text, report in result.findings]
        if not result.confirmed or not smaller(result.minimized, result.original):
            return (None, None, found) if found else None
        from shapefuzz.judge.oracle import case_expectation

        signature = next(iter(result.target.signatures.values()))
        case = case_of(result.minimized)
        # the shrunk case's own inputs and NumPy outputs (a smaller entry replaces the whole payload)
        expectation = case_expectation(case, result.target.seed) if case is not None else None
        # the shrunk reproducer's own output (its mismatch, its actual values), as its re-check gave it
        finding = make_finding(signature, result.minimized, self.toolchain, case=case, seed=result.target.seed,
                               inputs=expectation.inputs if expectation else None,
                               expected=expectation.expected if expectation else None, detail=result.detail)
        entry, _ = save_finding(self.corpus_dir, finding, sighting=False)
        # what the entry holds now: the shrunk file, or a smaller one the corpus kept (an earlier
        # shrink's), which the campaign records then: never a larger file than the entry's as "shrunk"
        return read_bytes(Path(entry) / REPRODUCER).decode(), str(entry), found

    def _shrink_finding(self, result, signature: Signature, text: str, report: CheckReport):
        """A new failure met while shrinking, as a candidate of its own (its text, the family and
        input seed of the candidate it came from) with its failure."""
        import hashlib

        detail = next((r.detail for r in report.failures if r.signature == signature), "")
        case, origin = case_of(text), case_of(result.original)
        key = "shrunk-" + hashlib.sha256(text.encode()).hexdigest()[:16]
        found = Candidate(key, origin.family if origin is not None else "", result.target.seed, (),
                          case.params_json if case is not None else "", text)
        return found, failure_of(signature, detail)


def vulkan_verdict(text: str, failure: Failure, lanes: dict[str, Status], agree: list[str],
                   twin_runs: bool = True, earlier: str = "") -> tuple[Triage, str]:
    """A wrong value or run failure only on a Vulkan lane (`agree`: the other drivers' lanes, all
    right) is blamed on the driver only after the lane's twin, another target on the same Mesa
    driver (default profile and llvmpipe), ran it, and after IREE's i8/i16 emulation and Mesa's
    loop limit were considered (see triage.driver). `lanes`: every lane's status so far;
    `twin_runs`: whether the twin executes here at all; `earlier`: what an earlier run of the
    lane said (wrong values that change from run to run are a race in the generated code)."""
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.triage.driver import loop_limit_reached, narrow_words_lost

    backend = BACKENDS[failure.lane]
    status = failure.signature.status
    what = "wrong numbers" if status == Status.MISMATCH else f"a run failure ({status.value})"
    seen = (f"{what} only on {failure.lane} (Mesa's software Vulkan device, the only one here), while "
            f"{', '.join(agree)} agree with the NumPy reference")
    twin = backend.driver_twin or ""
    twin_status = lanes.get(twin)
    narrow = narrow_words_lost(text, backend.emulated)
    emulation = (f"; {failure.lane} has no 8/16-bit storage, so IREE emulates {'/'.join(backend.emulated)} in 32-bit "
                 f"words, and the module holds a {narrow}: an emulated tensor whose byte size is not a multiple "
                 "of 4 loses its last word (IREE's emulation, codegen for SPIR-V)") if narrow else ""
    if twin_status == Status.OK and twin_runs:  # a twin that only compiled here says nothing about values
        return Triage.COMPILER_BUG, (
            f"{seen}, and {twin}, another target on the same Mesa driver, is right: two targets disagreeing on "
            f"one driver is the compiler's (codegen for SPIR-V){emulation}")
    if twin_status is None or not twin_status.is_failure or not twin_runs:  # not run there (yet), or it cannot take it
        if narrow:
            return Triage.COMPILER_BUG, f"{seen}{emulation}"
        why = ("its confirming re-run runs it there" if twin_runs and twin_status is None else
               f"{twin} cannot check it here" if twin else "no other Vulkan target to check it against")
        return Triage.SUSPECTED_DRIVER, (
            f"{seen}; not yet checked on {twin or 'another Vulkan target'} on the same driver ({why}); would "
            "settle it: the same module on a hardware GPU or on another Vulkan implementation")
    limit = loop_limit_reached(text)
    if limit:
        return Triage.SUSPECTED_DRIVER, f"{seen}; {twin} on the same driver fails too ({twin_status.value}), and {limit}"
    if status == Status.MISMATCH and earlier and earlier[:4000] != failure.detail[:4000]:
        return Triage.COMPILER_BUG, (
            f"{seen}; {twin} on the same driver fails too, and the wrong values change from run to run "
            f"(first: {earlier[:300]}; again: {failure.detail[:300]}): a race in the code IREE generates for "
            "both targets (a missing barrier), not a limit of the driver")
    return Triage.SUSPECTED_DRIVER, (
        f"{seen}; {twin} on the same driver fails too ({twin_status.value}) and no known limit explains it: the "
        "driver, or SPIR-V codegen both targets share; would settle it: the same module on a hardware GPU or on "
        "another Vulkan implementation")


def case_of_candidate(candidate: Candidate) -> Case:
    """The case a candidate's payload holds (its family and parameters)."""
    return Case(candidate.group, candidate.payload)


def case_of(text: str):
    from shapefuzz.case import case_from_mlir

    return case_from_mlir(text)


def every_run_mismatches(outcome: Outcome, probe) -> list[str]:
    """The executing backends that ran the candidate, when there are at least two and every one
    of them gave wrong numbers (the reference is then suspect), else []."""
    from shapefuzz.iree.backends import BACKENDS

    ran = {lane: st for lane, (st, _) in outcome.lanes.items() if lane in BACKENDS and BACKENDS[lane].executes(probe)}
    wrong = sorted(lane for lane, st in ran.items() if st == Status.MISMATCH)
    return wrong if len(ran) >= 2 and len(wrong) == len(ran) else []


def failure_of(signature: Signature, detail: str) -> Failure:
    """A failing lane with the bug identity the engine groups causes by (`strong` when the
    compiler said where it failed, see triage.identity)."""
    from shapefuzz.triage.identity import identity_of

    ident = identity_of(signature.stage.value, signature.status.value, signature.message, detail)
    return Failure(signature, detail, ident.key, ident.strong, ident.failing_pass)


def with_judge(outcome: Outcome, expectation, probe) -> Outcome:
    """The second judge (ONNX's reference, or XLA for a StableHLO case) as one more lane of the
    outcome, so the store and report count how often it ran and disagreed; only where some lane
    executed the candidate."""
    from shapefuzz.iree.backends import BACKENDS

    executed = any(lane in BACKENDS and BACKENDS[lane].executes(probe) and outcome.lanes[lane][0] != Status.UNSUPPORTED
                   for lane in outcome.lanes)
    if expectation is None or not executed or outcome.verdict == Verdict.INVALID:
        return outcome
    second = expectation.second
    if second is None:
        return outcome
    return replace(outcome, lanes={**outcome.lanes, second.lane: (second.status, round(second.seconds, 4))})


def outcome_of(report: CheckReport, tool_seconds: float) -> Outcome:
    lanes = {r.backend: (r.status, round(r.seconds, 4)) for r in report.results}
    failures = tuple(failure_of(r.signature, r.detail) for r in report.failures if r.signature is not None)
    coverage = {r.backend: (tuple(sorted(r.coverage.items())), r.coverage.failing_pass)
                for r in report.results if r.coverage is not None}
    return Outcome(report.verdict, lanes, failures, tool_seconds, report.verify_error[-2000:],
                   coverage=coverage)
