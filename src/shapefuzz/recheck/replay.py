"""Replaying the corpus against the current toolchain: is each bug still there, fixed, or different?

Each entry is re-checked on its own backend with its saved inputs and expected outputs (or, for a
generated case without saved arrays, the family's inputs and NumPy reference). The outcome compares
the new signature on that backend with the recorded one. Nothing is written unless `update=True`.
"""

from __future__ import annotations

import enum
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from shapefuzz.iree.backends import BACKENDS, any_runs_here
from shapefuzz.triage.target_limits import limit_of_failure
from shapefuzz.corpus import (
    EXPECTED_FAILING,
    EXPECTED_FIXED,
    CorpusEntry,
    UnreadableEntry,
    iter_entries,
    now_text,
    scrub,
    update_meta,
)
from shapefuzz.errors import ShapefuzzError
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget
from shapefuzz.process.parallel import run_parallel
from shapefuzz.model import CheckReport, Signature, Stage, Verdict
from shapefuzz.process.sandbox import Limits
from shapefuzz.iree.toolchain import Toolchain

EXIT_CLEAN, EXIT_REGRESSED, EXIT_UNREADABLE = 0, 1, 3


class ReplayOutcome(str, enum.Enum):
    """How a corpus entry fares when replayed against a toolchain."""

    STILL_FAILING = "still failing"  # same signature as recorded
    FIXED = "fixed"  # the backend now passes
    CHANGED = "changed"  # fails differently (another stage, status or message)
    NOT_RUNNABLE = "not runnable"  # backend missing here, or not selected
    UNREADABLE = "unreadable"  # broken entry, or a reproducer this toolchain no longer parses


@dataclass(frozen=True)
class ReplayResult:
    entry_id: str
    path: Path
    outcome: ReplayOutcome
    expected_state: str | None  # "failing"/"fixed" as recorded; None when unreadable
    recorded: Signature | None
    now: Signature | None = None  # the new failure signature, when it fails
    detail: str = ""  # one line: why not runnable/unreadable, or what changed
    flaky: bool = False  # failed, but not the same way on the confirming re-run
    seconds: float = 0.0
    reported: str = ""  # the upstream issue it was filed as (`corpus mark --reported`): a known bug

    @property
    def fails(self) -> bool:
        return self.outcome in (ReplayOutcome.STILL_FAILING, ReplayOutcome.CHANGED)

    @property
    def regressed(self) -> bool:
        """An entry recorded as fixed that fails again: what CI must catch."""
        return self.expected_state == EXPECTED_FIXED and self.fails

    @property
    def as_expected(self) -> bool:
        if self.expected_state == EXPECTED_FIXED:
            return self.outcome == ReplayOutcome.FIXED
        return self.outcome in (ReplayOutcome.STILL_FAILING, ReplayOutcome.NOT_RUNNABLE)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.entry_id,
            "outcome": self.outcome.value,
            "expected_state": self.expected_state,
            "regressed": self.regressed,
            "recorded": str(self.recorded) if self.recorded else None,
            "now": str(self.now) if self.now else None,
            "detail": self.detail,
            "flaky": self.flaky,
            "seconds": round(self.seconds, 3),
            "reported": self.reported or None,
            "known": bool(self.reported),
        }


@dataclass(frozen=True)
class ReplaySummary:
    toolchain_version: str
    toolchain_source: str
    results: tuple[ReplayResult, ...]
    stopped: KeyboardInterrupt | None = None  # Ctrl-C or SIGTERM: `results` holds the entries that finished

    def count(self, outcome: ReplayOutcome) -> int:
        return sum(r.outcome == outcome for r in self.results)

    @property
    def regressions(self) -> tuple[ReplayResult, ...]:
        return tuple(r for r in self.results if r.regressed)

    @property
    def unexpected(self) -> tuple[ReplayResult, ...]:
        return tuple(r for r in self.results if not r.as_expected and r.outcome != ReplayOutcome.UNREADABLE)

    def exit_code(self, strict: bool = False) -> int:
        """1: an entry recorded as fixed fails again (or, with strict, any entry differs from its
        recorded state); 3: otherwise clean but some entry is unreadable; 0: all as recorded."""
        if self.regressions or (strict and self.unexpected):
            return EXIT_REGRESSED
        if self.count(ReplayOutcome.UNREADABLE):
            return EXIT_UNREADABLE
        return EXIT_CLEAN

    def to_json(self, strict: bool = False) -> dict[str, Any]:
        return {
            "toolchain": {"version": self.toolchain_version, "source": self.toolchain_source},
            "summary": {o.value: self.count(o) for o in ReplayOutcome} | {"regressed": len(self.regressions)},
            "exit_code": self.exit_code(strict),
            "entries": [r.to_json() for r in self.results],
        }


def _one_line(text: str, limit: int = 200) -> str:
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return (lines[0] if lines else "")[:limit]


def entry_expectation(entry: CorpusEntry):
    """Inputs, reference and comparison for an entry; None when the file brings none (check_file then)."""
    from shapefuzz.judge.oracle import Expectation, case_expectation, case_label, onnx_judge_for

    case = entry.case
    if entry.inputs is not None:
        compare: Callable[[Any, Any], Any] | None = None
        if case is not None and entry.expected is not None:
            try:
                from shapefuzz.families import get_family

                family, params, inputs = get_family(case.family), case.params, entry.inputs

                def family_compare(want, got):  # noqa: E306 - the family's tie-safe rule on the saved arrays
                    return family.compare(params, inputs, want, got)

                compare = family_compare
            except Exception:  # noqa: BLE001 - a family that no longer loads: plain comparison
                compare = None
        if case is None:
            # a reproducer cut from a case as plain text (shrink.voted_stage) keeps its case's label, so its
            # mismatch is the very signature it was saved under ("wrong values in conv")
            cut_from = entry.cut_from if entry.expected is not None else None
            return Expectation(entry.inputs, entry.expected, compare,
                               label=case_label(cut_from) if cut_from is not None else "")
        judge = onnx_judge_for(case, entry.inputs, entry.expected) if entry.expected is not None else None
        return Expectation(entry.inputs, entry.expected, compare, label=case_label(case), judge=judge)
    if case is not None:
        return case_expectation(case, entry.seed)
    return None


def _backends_for(entry: CorpusEntry, backend: str, toolchain: Toolchain) -> list[str]:
    """The entry's own backend, plus, for a mismatch judged by vote (no reference), the other
    backends it was checked on that execute here."""
    names = [backend]
    if entry.signature.stage == Stage.COMPARE and entry.expected is None and entry.case is None:
        probe = toolchain.probe
        names += [b for b in entry.backends if b != backend and b in BACKENDS and BACKENDS[b].executes(probe)]
    return names


def _judge(entry: CorpusEntry, report: CheckReport, backend: str, started: float) -> ReplayResult:
    base = ReplayResult(entry.id, entry.path, ReplayOutcome.FIXED, entry.expected_state, entry.signature,
                        seconds=time.monotonic() - started, reported=str(entry.meta.get("reported") or ""))
    if report.verdict == Verdict.INVALID:
        return replace(base, outcome=ReplayOutcome.UNREADABLE,
                       detail=f"reproducer does not verify here: {_one_line(scrub(report.verify_error))}")
    result = next((r for r in report.results if r.backend == backend), None)
    if result is None:
        return replace(base, outcome=ReplayOutcome.NOT_RUNNABLE, detail="no result for its backend")
    if result.failed:
        outcome = ReplayOutcome.STILL_FAILING if result.signature == entry.signature else ReplayOutcome.CHANGED
        detail = "" if outcome == ReplayOutcome.STILL_FAILING else f"now {result.stage.value}/{result.status.value}"
        gap = limit_of_failure(backend, result.stage.value, result.status.value, result.signature.message, result.detail) \
            if outcome == ReplayOutcome.CHANGED and result.signature is not None else None
        if gap is not None:  # a documented gap of the target now (triage.target_limits): no bug of the entry's
            detail = "now reported as a target limit: " + _one_line(gap.evidence)
        return replace(base, outcome=outcome, now=result.signature, detail=detail, flaky=result.flaky)
    if result.status.value == "skipped":
        return replace(base, outcome=ReplayOutcome.NOT_RUNNABLE, detail=_one_line(result.detail) or "skipped")
    if result.status.value == "unsupported":
        return replace(base, outcome=ReplayOutcome.CHANGED, detail="now reported as a target limit: " + _one_line(result.detail))
    if entry.signature.stage.rank > result.stage.rank:
        # It used to fail later than we got now (a run-stage bug, but no device to run here).
        return replace(base, outcome=ReplayOutcome.NOT_RUNNABLE,
                       detail=f"passes {result.stage.value}; its {entry.signature.stage.value} stage cannot run here")
    return replace(base, detail=f"passes {result.stage.value}")


def check_entry(entry: CorpusEntry, toolchain: Toolchain, backends: Sequence[str],
                budget: Budget = DEFAULT_BUDGET, confirm: bool = True) -> CheckReport:
    """The entry's reproducer on `backends`, with its saved inputs and reference (or its family's,
    or, for a file that brings none, generated inputs and a vote). A generated case that keeps no
    arrays, checked on lanes none of which runs the module here (rocm, cuda), is only compiled:
    its inputs and NumPy reference (seconds and GBs for a large case) are not made, as a
    campaign's check of such lanes makes none."""
    from shapefuzz.judge.oracle import check_module

    if entry.inputs is None and entry.case is not None and not any_runs_here(backends, toolchain.probe):
        from shapefuzz.families import validate_case

        validate_case(entry.case)  # a header its family cannot build is an input error, as when referenced
        return check_module(entry.mlir, backends, None, toolchain, budget, confirm)
    expectation = entry_expectation(entry)
    if expectation is None:
        from shapefuzz.judge.modulecheck import check_file

        report, _ = check_file(entry.mlir, backends, toolchain, seed=entry.seed,
                               compile_timeout=budget.compile.timeout, confirm=confirm)
        return report
    return check_module(entry.mlir, backends, expectation, toolchain, budget, confirm)


def not_runnable_here(sig: Signature, toolchain: Toolchain) -> str:
    """Why this toolchain cannot re-check a failure on its own lane, or "": a lane this shapefuzz
    does not know, flags the compiler lacks, or no device for a failure at run time."""
    backend = BACKENDS.get(sig.backend)
    if backend is None:
        return f"unknown backend {sig.backend!r} in this shapefuzz"
    probe = toolchain.probe
    if not backend.compiles(probe):
        return f"{sig.backend} is not supported by this compiler ({probe.version}: {backend.availability(probe)})"
    if sig.stage in (Stage.RUN, Stage.COMPARE) and not backend.executes(probe):
        return f"{sig.backend}: {backend.availability(probe)}"
    return ""


def replay_entry(entry: CorpusEntry, toolchain: Toolchain, selected: Sequence[str] | None = None,
                 budget: Budget = DEFAULT_BUDGET, confirm: bool = True) -> ReplayResult:
    """Re-checks one entry on its backend."""
    started = time.monotonic()
    sig = entry.signature
    base = ReplayResult(entry.id, entry.path, ReplayOutcome.NOT_RUNNABLE, entry.expected_state, sig,
                        reported=str(entry.meta.get("reported") or ""))
    if selected is not None and sig.backend not in selected:
        return replace(base, detail="backend not selected (--backends)")
    why = not_runnable_here(sig, toolchain)
    if why:
        return replace(base, detail=why)
    try:
        report = check_entry(entry, toolchain, _backends_for(entry, sig.backend, toolchain), budget, confirm)
    except ShapefuzzError as error:
        return replace(base, outcome=ReplayOutcome.UNREADABLE, detail=_one_line(str(error)),
                       seconds=time.monotonic() - started)
    return judge_case_form(entry, _judge(entry, report, sig.backend, started), toolchain, budget, confirm)


def judge_case_form(entry: CorpusEntry, result: ReplayResult, toolchain: Toolchain, budget: Budget = DEFAULT_BUDGET,
                    confirm: bool = True) -> ReplayResult:
    """A reproducer cut down as plain text (shrink.case_stage) that passes now: the generated case
    it was cut from (`case.mlir`), judged on the same lane against its family's NumPy reference,
    says whether the fix fixed the computation too, or left a wrong value or another failure behind
    (then CHANGED, with the case's failure). A compile fix alone is not a clean bill: the text
    reproducer has no reference of its own."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.corpus.entry import CASE_FORM
    from shapefuzz.families import validate_case
    from shapefuzz.judge.oracle import case_expectation, check_module

    if result.outcome != ReplayOutcome.FIXED or entry.meta.get("case_form") != CASE_FORM:
        return result
    backend, started = entry.signature.backend, time.monotonic()
    try:
        text = (entry.path / CASE_FORM).read_text()
        case = case_from_mlir(text)
        if case is None:
            raise ShapefuzzError("it has no shapefuzz-case header")
        if any_runs_here([backend], toolchain.probe):
            report = check_module(text, [backend], case_expectation(case, entry.seed), toolchain, budget, confirm)
        else:  # compile-only lane (rocm, cuda): the case compiles or not, no reference is made
            validate_case(case)
            report = check_module(text, [backend], None, toolchain, budget, confirm)
    except (OSError, UnicodeDecodeError, ShapefuzzError) as error:
        return replace(result, detail=f"{result.detail}; its case ({CASE_FORM}) could not be judged: "
                                      f"{_one_line(scrub(str(error)), 120)}")
    seconds = result.seconds + time.monotonic() - started
    own = next((r for r in report.results if r.backend == backend), None)
    if report.verdict == Verdict.INVALID or own is None:
        why = _one_line(scrub(report.verify_error), 120) if report.verdict == Verdict.INVALID else "no result"
        return replace(result, seconds=seconds, detail=f"{result.detail}; its case ({CASE_FORM}) was not judged: {why}")
    if own.failed and own.signature is not None:
        return replace(result, outcome=ReplayOutcome.CHANGED, now=own.signature, flaky=own.flaky, seconds=seconds,
                       detail=f"the reproducer passes, but the {case.family} case it was cut from ({CASE_FORM}) now "
                              f"fails: {own.stage.value}/{own.status.value}: {_one_line(own.signature.message, 120)}")
    judged = f"matches the {case.family} reference" if own.stage == Stage.COMPARE else f"passes {own.stage.value}"
    return replace(result, seconds=seconds, detail=f"{result.detail}; the case it was cut from ({CASE_FORM}) {judged}")


def record(result: ReplayResult, toolchain_version: str, when: str | None = None) -> None:
    """`--update`: write what replay saw into the entry's meta.json (last_seen, expected state)."""
    if result.outcome in (ReplayOutcome.NOT_RUNNABLE, ReplayOutcome.UNREADABLE):
        return
    when = when or now_text()
    from shapefuzz.corpus import load_entry

    meta = load_entry(result.path).meta
    changes: dict[str, Any] = {"last_replay": {"date": when, "toolchain": toolchain_version,
                                               "outcome": result.outcome.value,
                                               "now": str(result.now) if result.now else None}}
    if result.outcome == ReplayOutcome.STILL_FAILING:
        versions = list(meta.get("toolchain_versions") or [])
        if toolchain_version not in versions:
            versions.append(toolchain_version)
        changes.update(last_seen=max(meta.get("last_seen", ""), when), toolchain_versions=versions,
                       expected_state=EXPECTED_FAILING)
    elif result.outcome == ReplayOutcome.FIXED:
        changes["expected_state"] = EXPECTED_FIXED
        if meta.get("expected_state") != EXPECTED_FIXED:
            changes["fixed_in"] = toolchain_version
    update_meta(result.path, **changes)


def replay_corpus(
    corpus_dir: str | Path,
    toolchain: Toolchain,
    selected: Sequence[str] | None = None,
    jobs: int = 1,
    budget: Budget = DEFAULT_BUDGET,
    update: bool = False,
    confirm: bool = True,
    progress: Callable[[ReplayResult], None] | None = None,
) -> ReplaySummary:
    """Replays every entry (in parallel with `jobs`); results in id order."""
    items: list[CorpusEntry | UnreadableEntry] = list(iter_entries(corpus_dir))
    version = toolchain.probe.version

    def one(item: CorpusEntry | UnreadableEntry) -> ReplayResult:
        if isinstance(item, UnreadableEntry):
            result = ReplayResult(item.id, item.path, ReplayOutcome.UNREADABLE, None, None, detail=item.reason)
        else:
            try:
                result = replay_entry(item, toolchain, selected, budget, confirm)
            except ShapefuzzError as error:
                result = ReplayResult(item.id, item.path, ReplayOutcome.UNREADABLE, item.expected_state,
                                      None, detail=_one_line(str(error)))
        if progress is not None:
            progress(result)
        return result

    finished = run_parallel(one, items, jobs)  # Ctrl-C or SIGTERM: what finished, promptly
    results = sorted(finished.results, key=lambda r: r.entry_id)
    if update:
        when = now_text()
        for result in results:
            record(result, version, when)
    return ReplaySummary(version, toolchain.source, tuple(results), finished.stopped)


def budget_with(compile_timeout: float) -> Budget:
    return Budget(DEFAULT_BUDGET.verify, Limits(timeout=compile_timeout), DEFAULT_BUDGET.run)


def table_lines(summary: ReplaySummary) -> list[str]:
    """The replay table: one row per entry, a line under it for what changed or why it did not run."""
    lines = [f"toolchain: {summary.toolchain_source} {summary.toolchain_version}"]
    width = max([len(r.entry_id) for r in summary.results] + [5])
    lines.append(f"{'ENTRY':<{width}}  {'EXPECTED':<8}  RESULT")
    for r in summary.results:
        mark = "  REGRESSED" if r.regressed else ("" if r.as_expected or r.outcome == ReplayOutcome.UNREADABLE
                                                   else "  (differs from recorded state)")
        flaky = " (flaky)" if r.flaky else ""
        known = f"  [known: {r.reported}]" if r.reported else ""
        lines.append(f"{r.entry_id:<{width}}  {r.expected_state or '-':<8}  {r.outcome.value}{flaky}{mark}{known}")
        if r.outcome == ReplayOutcome.CHANGED and r.now is not None:
            lines.append(f"    was: {r.recorded}")
            lines.append(f"    now: {r.now}")
        elif r.detail and r.outcome != ReplayOutcome.STILL_FAILING:
            lines.append(f"    {r.detail}")
    counts = ", ".join(f"{summary.count(o)} {o.value}" for o in ReplayOutcome)
    lines.append(f"summary: {len(summary.results)} entries: {counts}; {len(summary.regressions)} regressed")
    return lines


def rederive(entry: CorpusEntry, toolchain: Toolchain, budget: Budget = DEFAULT_BUDGET,
             localize_seconds: float = 60.0) -> str:
    """Re-derives an entry's records with the current code (`corpus rederive`): its reproducer is
    checked again on its backend (and the lanes its record names that compile here), and when it
    still fails the same way its `detail` becomes today's output (the failing pass from
    `--mlir-print-ir-after-failure`, which older entries lack), a wrong value or run-time failure
    is localized (within `localize_seconds`; 0: not, the old localization kept), its `bug` record
    is computed again (regression range and a device ladder's verdict kept) and an entry with no
    cause is named by its bug identity, as a campaign names causes. Otherwise only the record is
    computed again from the kept detail. Returns one line."""
    from shapefuzz.judge.localize_probe import localize_entry
    from shapefuzz.triage.identity import identity_of
    from shapefuzz.triage.localize import Localization
    from shapefuzz.triage.record import bug_record, kept_bug_fields, reworded_evidence

    sig = entry.signature
    old = entry.meta.get("bug") or {}
    probe = toolchain.probe
    lanes = [b for b in dict.fromkeys([sig.backend, *(old.get("lanes") or [])])
             if b in BACKENDS and BACKENDS[b].compiles(probe)]
    detail, how = str(entry.meta.get("detail") or ""), "not re-checked (its backend does not compile here)"
    same = [sig.backend] if sig.backend in lanes else []
    right: list[str] = []  # lanes that ran it right today (localization finishes IR with them first)
    if same:
        try:
            report = check_entry(entry, toolchain, lanes, budget, confirm=False)
        except ShapefuzzError as error:
            report, how = None, f"not re-checked: {_one_line(str(error))}"
        results = {r.backend: r for r in report.results} if report is not None else {}
        own = results.get(sig.backend)
        if own is not None and own.signature == sig:
            detail, how = scrub(own.detail) or detail, "re-checked: fails the same way"
            same += [b for b, r in results.items() if b != sig.backend and r.signature is not None
                     and (r.signature.stage, r.signature.status, r.signature.message) == (sig.stage, sig.status,
                                                                                          sig.message)]
            right = [b for b, r in results.items() if not r.failed and r.stage == Stage.COMPARE]
        elif report is not None:
            how = f"re-checked: now {own.signature if own is not None and own.signature else 'passes'}; record only"
            same = []
    localized = Localization.from_json(old.get("localized"))
    if same and sig.stage in (Stage.COMPARE, Stage.RUN) and localize_seconds > 0:
        localized = localize_entry(entry, toolchain, sig.backend, right, localize_seconds)
        how += f"; localized: {localized.where or localized.evidence[:160]}"
    record = {**bug_record(sig.to_json(), detail, [*same, *(old.get("lanes") or [])] if same else
                           [sig.backend, *(old.get("lanes") or [])], entry.mlir, localized),
              **kept_bug_fields(old, entry.mlir, entry.mlir)}  # its reproducer: a ladder's verdict stays
    changes: dict[str, Any] = {"bug": record, "detail": detail}
    if entry.meta.get("triage_evidence"):  # "passes on" a lane that only compiles, as older versions said
        changes["triage_evidence"] = reworded_evidence(str(entry.meta["triage_evidence"]), probe)
    if not entry.meta.get("cause"):
        changes["cause"] = "cause-" + identity_of(sig.stage.value, sig.status.value, sig.message, detail).digest
    update_meta(entry.path, **changes)
    return f"{entry.id}: {how}; {record['severity']}; {record['component']}" + (
        f"; {record['failing_pass']}" if record["failing_pass"] else "")
