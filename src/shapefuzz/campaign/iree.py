"""The IREE side of a campaign: the `Target` the engine drives. Draws cases from the families'
Hypothesis strategies, checks them with the oracle on the chosen backends (in worker
processes), and saves confirmed buckets into the corpus. The engine never imports this."""

from __future__ import annotations

import importlib
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from shapefuzz.campaign.engine import Candidate, Failure, Outcome
from shapefuzz.campaign.values import Triage, Verdict
from shapefuzz.case import Case
from shapefuzz.execute import DEFAULT_BUDGET, Budget
from shapefuzz.families import FAMILY_MODULES
from shapefuzz.families.base import Family
from shapefuzz.model import CheckReport, Signature
from shapefuzz.sandbox import GIB
from shapefuzz.toolchain import Toolchain

_FAMILIES: dict[str, Family] = {}


def load_family(name: str) -> Family:
    """One family's module, imported on its own (a family that does not import yet does not
    take the others down with it)."""
    if name not in _FAMILIES:
        from shapefuzz.families.frontends import with_frontends

        # With its torch and ONNX spellings, as the registry serves it, so campaigns draw them too.
        _FAMILIES[name] = with_frontends(importlib.import_module(f"shapefuzz.families.{name}").FAMILY)
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


CONFIRM_TIME_FACTOR = 2.0  # a confirming re-run's time limits: a timeout is filed only if it holds here


def longer(budget: Budget, factor: float = CONFIRM_TIME_FACTOR) -> Budget:
    """The budget with compile and run timeouts multiplied by `factor`."""
    return Budget(budget.verify, replace(budget.compile, timeout=budget.compile.timeout * factor),
                  replace(budget.run, timeout=budget.run.timeout * factor))


def input_seed(seed: int) -> int:
    return seed % (1 << 31)


@dataclass(frozen=True)
class IreeTarget:
    toolchain: Toolchain
    corpus_dir: Path
    budget: Budget = DEFAULT_BUDGET  # the full caps: confirmations and shrinks
    memory_cap: int | None = CAMPAIGN_MEMORY_CAP  # candidate checks
    shrink_seconds: float = 300.0  # per shrink when the engine does not say

    # --- campaign process --------------------------------------------------------------------
    def generate(self, group: str, seed: int, large: bool = False) -> Candidate:
        """One candidate for (family, seed): a swarm draw (each candidate first draws which of the
        family's features it may use); `large` draws the sizes meant for compile-only lanes."""
        from shapefuzz.generate import draw_params

        family = load_family(group)
        case = Case.make(group, draw_params(group, seed, regime="large" if large else "small", swarm=True))
        text = case.header() + "\n" + family.render(case.params)
        features = tuple(family.features(case.params)) + (("regime:large",) if large else ())
        return Candidate(case.case_id, group, seed, features, case.params_json, text)

    def size(self, text: str) -> tuple[int, ...]:
        from shapefuzz.shrink.measure import size_of

        return astuple(size_of(text))

    def deadline(self, lanes: tuple[str, ...]) -> float:
        b = self.budget
        return b.verify.timeout + 2 * len(lanes) * (b.compile.timeout + b.run.timeout) + 60.0

    def corpus_count(self, failure: Failure) -> tuple[str, int]:
        """(the corpus entry this failure goes to, how many times it was saved so far)."""
        from shapefuzz.corpus import META, entry_id
        from shapefuzz.schema import is_int, load_json

        folder = self.corpus_dir / entry_id(Signature.from_json(failure.fields))
        try:
            meta = load_json((folder / META).read_text(), META)  # bounded: a foreign entry may be anything
        except (OSError, ValueError):
            return str(folder), 0
        count = meta.get("count") if isinstance(meta, dict) else None
        return str(folder), count if is_int(count) else 0

    def save(self, candidate: Candidate, failure: Failure, flaky: bool, cause: str = "",
             triage: str = "", evidence: str = "") -> str:
        from shapefuzz.corpus import make_finding, save_finding

        expectation = self._expectation(candidate)
        finding = make_finding(
            Signature.from_json(failure.fields), candidate.text, self.toolchain,
            case=Case(candidate.group, candidate.payload), seed=input_seed(candidate.seed),
            inputs=expectation.inputs, expected=expectation.expected, detail=failure.detail, flaky=flaky,
            cause=cause, triage=triage, evidence=evidence)
        entry, _ = save_finding(self.corpus_dir, finding)
        return str(entry)

    def rename_cause(self, entry: str, cause: str) -> None:
        from shapefuzz.corpus import update_meta

        update_meta(entry, cause=cause)

    def triage(self, candidate: Candidate, failure: Failure, outcome: Outcome) -> tuple[Triage, str]:
        """compiler bug, target limit, suspected driver or ours, with the evidence (flaky is
        decided by the re-run)."""
        from shapefuzz.backends import BACKENDS, REFERENCE_BACKEND

        backend = BACKENDS.get(failure.lane)
        stage, status = failure.fields.get("stage", ""), failure.fields.get("status", "")
        reason = backend.limit_for_module(candidate.text) if backend else None
        if reason:
            return Triage.TARGET_LIMIT, f"{failure.lane}: {reason}"
        probe = self.toolchain.probe
        ran = {lane: st for lane, (st, _) in outcome.lanes.items()
               if lane in BACKENDS and BACKENDS[lane].executes(probe)}
        if stage in ("run", "compare") and backend is not None:
            others = {lane: st for lane, st in ran.items() if BACKENDS[lane].driver != backend.driver}
            agree = sorted(lane for lane, st in others.items() if st == "ok")
            if backend.driver == "vulkan" and agree and len(agree) == len(others):
                what = "wrong numbers" if status == "mismatch" else f"a run failure ({status})"
                return Triage.SUSPECTED_DRIVER, (
                    f"{what} only on {failure.lane}, which runs on Mesa's software Vulkan device (the only "
                    f"Vulkan device here), while {', '.join(agree)} agree with the NumPy reference on the same "
                    "candidate; would settle it: the same module on a hardware GPU or on another Vulkan "
                    "implementation")
            wrong = every_run_mismatches(outcome, probe)
            if status == "mismatch" and wrong and outcome.reference_form:
                return Triage.COMPILER_BUG, (
                    f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy reference, but "
                    f"{outcome.reference_form}: the reference is right, and the bug is shared by every backend")
            if status == "mismatch" and wrong:
                return Triage.OURS, (f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy "
                                     "reference: the reference is suspect")
        passed = sorted(lane for lane, (st, _) in outcome.lanes.items() if st == "ok")
        note = f"; passes on {', '.join(passed)}" if passed else ""
        ref = " (the reference)" if passed == [REFERENCE_BACKEND] else " (the reference among them)" \
            if REFERENCE_BACKEND in passed else ""
        return Triage.COMPILER_BUG, f"{stage}/{status} on {failure.lane} for input that verifies{note}{ref}"

    # --- worker processes ----------------------------------------------------------------------
    def worker_init(self) -> None:
        self.toolchain.probe  # noqa: B018 - read the cached probe once, before the first task

    def _expectation(self, candidate: Candidate):
        from shapefuzz.oracle import case_expectation

        return case_expectation(Case(candidate.group, candidate.payload), input_seed(candidate.seed))

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """Under the campaign's memory cap; lanes that cannot support what the candidate uses
        (a known target limit, told by its types) are not compiled, only counted unsupported."""
        return self._check(candidate, lanes, capped(self.budget, self.memory_cap))

    def confirm(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        """The same check again, on the failing lanes only, under the full caps: a blow-up cut
        short by the campaign's cap is filed only if it blows past the full cap too. When every
        backend that ran disagrees with the reference, the case's equivalent forms are checked on
        the reference lane: one that matches the reference shows the reference is right."""
        outcome = self._check(candidate, lanes, longer(self.budget))
        if every_run_mismatches(outcome, self.toolchain.probe):
            return replace(outcome, reference_form=self._form_matching_reference(candidate))
        return outcome

    def _form_matching_reference(self, candidate: Candidate) -> str:
        from shapefuzz.backends import REFERENCE_BACKEND
        from shapefuzz.oracle import check_forms, form_difference

        case = Case(candidate.group, candidate.payload)
        forms = check_forms(case, (REFERENCE_BACKEND,), self.toolchain, input_seed(candidate.seed), self.budget,
                            confirm=False)
        for form, report in forms.reports:
            if form != case and report.verdict.value == "pass":
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
        from shapefuzz.backends import BACKENDS
        from shapefuzz.execute import tool_seconds
        from shapefuzz.oracle import check_module

        limited = {lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].limit_for_module(candidate.text)}
        before = tool_seconds()
        report = check_module(candidate.text, [lane for lane in lanes if lane not in limited],
                              self._expectation(candidate), self.toolchain, budget, confirm=False)
        outcome = outcome_of(report, tool_seconds() - before)
        if not limited or outcome.verdict == Verdict.INVALID:
            return outcome
        statuses = {lane: ("unsupported", 0.0) if lane in limited else outcome.lanes[lane] for lane in lanes}
        return replace(outcome, lanes=statuses)

    def shrink(self, candidate: Candidate, lanes: tuple[str, ...]):
        """(smaller text or None, corpus entry or None, new findings) once the shrunk reproducer
        is confirmed and saved (it replaces the entry's reproducer, being smaller), else None.
        Trials run with the candidate's own input seed. New failures met while shrinking (each
        confirmed by two re-checks) are handed back as (candidate, failure) pairs, for the
        engine's buckets: nothing is written into the corpus behind the campaign's back.
        lanes: (backend, signature, seconds allowed)."""
        import tempfile

        from shapefuzz.corpus import make_finding, save_finding
        from shapefuzz.errors import EnvironmentFault, ShapefuzzError
        from shapefuzz.shrink.run import shrink_file

        backend, signature_text = lanes[0], lanes[1]
        seconds = float(lanes[2]) if len(lanes) > 2 else self.shrink_seconds
        seed = input_seed(candidate.seed)
        with tempfile.TemporaryDirectory(prefix="shapefuzz-shrink-") as tmp:
            path = str(Path(tmp) / "candidate.mlir")
            try:
                result = shrink_file(
                    path, candidate.text, self.toolchain, (backend,), out=str(Path(tmp) / "min.mlir"),
                    signature_text=signature_text, backend=backend, time_limit=seconds,
                    compile_timeout=self.budget.compile.timeout, seed=seed,
                )
            except EnvironmentFault:
                raise  # our machine, not the case: the engine keeps the shrink pending
            except ShapefuzzError:
                return None  # did not reproduce in isolation
        found = [self._shrink_finding(candidate, sig, text, report) for sig, text, report in result.findings]
        if not result.confirmed or result.minimized == candidate.text:
            return (None, None, found) if found else None
        signature = next(iter(result.target.signatures.values()))
        # no detail: the entry keeps the one its bucket was saved with (same signature, same folder)
        finding = make_finding(signature, result.minimized, self.toolchain, case=case_of(result.minimized), seed=seed)
        entry, _ = save_finding(self.corpus_dir, finding, sighting=False)
        return result.minimized, str(entry), found

    def _shrink_finding(self, candidate: Candidate, signature: Signature, text: str, report: CheckReport):
        """A new failure met while shrinking, as a candidate of its own (its text, the family and
        input seed of the candidate it came from) with its failure."""
        import hashlib

        from shapefuzz.case import case_from_mlir

        detail = next((r.detail for r in report.failures if r.signature == signature), "")
        case = case_from_mlir(text)
        key = "shrunk-" + hashlib.sha256(text.encode()).hexdigest()[:16]
        found = Candidate(key, candidate.group, candidate.seed, candidate.features,
                          case.params_json if case is not None else candidate.payload, text)
        return found, Failure(signature.backend, str(signature), failure_fields(signature, detail), detail)


def case_of(text: str):
    from shapefuzz.case import case_from_mlir

    return case_from_mlir(text)


def every_run_mismatches(outcome: Outcome, probe) -> list[str]:
    """The executing backends that ran the candidate, when there are at least two and every one
    of them gave wrong numbers (the reference is then suspect), else []."""
    from shapefuzz.backends import BACKENDS

    ran = {lane: st for lane, (st, _) in outcome.lanes.items() if lane in BACKENDS and BACKENDS[lane].executes(probe)}
    wrong = sorted(lane for lane, st in ran.items() if st == "mismatch")
    return wrong if len(ran) >= 2 and len(wrong) == len(ran) else []


def failure_fields(signature: Signature, detail: str) -> dict[str, str]:
    """The structured signature plus the bug identity the engine groups causes by (`identity`;
    `strong` when the compiler said where it failed, see triage.identity)."""
    from shapefuzz.triage.identity import identity_of

    fields = signature.to_json()
    ident = identity_of(fields["stage"], fields["status"], fields["message"], detail)
    fields.update(identity=ident.key, strong="1" if ident.strong else "", failing_pass=ident.failing_pass)
    return fields


def outcome_of(report: CheckReport, tool_seconds: float) -> Outcome:
    lanes = {r.backend: (r.status.value, round(r.seconds, 4)) for r in report.results}
    failures = tuple(
        Failure(r.backend, str(r.signature), failure_fields(r.signature, r.detail), r.detail)
        for r in report.failures if r.signature is not None
    )
    return Outcome(Verdict(report.verdict.value), lanes, failures, tool_seconds, report.verify_error[-2000:])
