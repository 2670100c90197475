"""The oracle: verify first, then compile on every selected backend, run where a device exists,
and judge each run against the NumPy reference (or, for a file without one, against the other
backends by majority). A finding names the wrong backend and the stage; a failure is re-run
before it is reported, and one that passes on its re-runs is marked flaky (one failing another way is not)."""

from __future__ import annotations

import contextlib
import os
import time
from collections import OrderedDict
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Collection, Iterator, Sequence

import numpy as np

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.files import write_text
from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND, Backend
from shapefuzz.case import Case
from shapefuzz.coverage.actionlog import failing_pass, log_flags, read_action_log, strip_noise
from shapefuzz.coverage.probe import action_log_support
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget, compile_module, run_module, verify
from shapefuzz.iree.input_dialect import input_type_flags, is_frontend, unlowered_op
from shapefuzz.families.common import compare_arrays
from shapefuzz.iree.mlirinfo import function_info, module_traits
from shapefuzz.model import (BackendResult, CheckReport, Mismatch, ProcessResult, Signature, Stage, Status, Verdict,
                             reruns_for)
from shapefuzz.judge.onnx_judge import DISAGREE, SecondOpinion, show
from shapefuzz.triage.signature import classify, normalize, signature_for
from shapefuzz.triage.target_limits import limit_in_output
from shapefuzz.iree.toolchain import Toolchain, find_toolchain
from shapefuzz.triage.excerpt import excerpt, short_frame
from shapefuzz.triage.failing_pass import HANG_STACK_FRAMES, raw_frames
from shapefuzz.triage.identity import placed_timeout
from shapefuzz.process.worktime import timed

Comparator = Callable[[list[np.ndarray], list[np.ndarray]], Mismatch | None]  # (expected, actual) -> mismatch

@dataclass(frozen=True)
class Expectation:
    """What the numbers should be: inputs, the reference results and how to compare them."""

    inputs: list[np.ndarray]
    expected: list[np.ndarray] | None  # None: judge backends against each other
    compare: Comparator | None = None
    # What computed the reference (the op family), part of a mismatch's signature: wrong numbers
    # have no error text, and a wrong scatter and a wrong conv on one backend are different bugs.
    label: str = ""
    # ONNX's reference on the same inputs, where ONNX can write the case (onnx_judge): when it
    # disagrees with `expected`, no backend's numbers are judged a compiler bug. Asked only once
    # some backend ran the module (`second`): a compile-only check never pays for it.
    judge: Callable[[], SecondOpinion | None] | None = None

    @cached_property
    def second(self) -> SecondOpinion | None:
        return self.judge() if self.judge is not None else None


def default_compare(expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
    """Element-wise comparison with a tolerance per dtype (exact for integers)."""
    return compare_arrays(expected, actual, tolerance=_DEFAULT_TOLERANCE)


_DEFAULT_TOLERANCE = {"f16": (1e-2, 1e-2), "f32": (1e-5, 1e-5), "f64": (1e-9, 1e-9)}


# a crash keeps more of its output: its backtrace down to the failing pass is what a report shows
# (cut at 4000, a torch-mlir si8 crash lost frames #13-#26, its pass among them); the corpus keeps 7900
CRASH_DETAIL = 7800


def _unsupported(backend: Backend, stage: Stage, reason: str, detail: str, seconds: float = 0.0,
                 compile_seconds: float = 0.0, run_seconds: float = 0.0) -> BackendResult:
    """A limit of the target, kept apart from bugs: no signature, never filed."""
    return BackendResult(backend.name, stage, Status.UNSUPPORTED, f"target limit ({reason}): {detail}"[:4000],
                         None, seconds, compile_seconds, run_seconds)


def _as_frontend_gap(result: BackendResult, mlir_text: str) -> BackendResult:
    """A torch or StableHLO op this release cannot lower is a frontend gap, not a finding: "unsupported"."""
    op = unlowered_op(result.detail, mlir_text) if result.failed and is_frontend(mlir_text) else None
    if op is None:
        return result
    return replace(result, status=Status.UNSUPPORTED, signature=None,
                   detail=f"frontend: this release does not lower {op}; was {result.status.value} "
                          f"at {result.stage.value}: {result.detail[:500]}")


def _run_backend(
    toolchain: Toolchain,
    backend: Backend,
    mlir_path: str,
    workdir: str,
    expectation: Expectation | None,
    num_results: int,
    function: str,
    budget: Budget,
    traits: frozenset[str] = frozenset(),
    instrument: bool = False,  # compile with the action log (see coverage.actionlog); the result carries it
) -> tuple[BackendResult, list[np.ndarray] | None]:
    probe = toolchain.probe
    missing = backend.unavailable(probe)
    if missing is not None:
        return BackendResult(backend.name, Stage.COMPILE, Status.SKIPPED, missing), None
    known = backend.limit_for(traits)
    if known is not None:  # a known limit of the target: nothing to learn from compiling
        return _unsupported(backend, Stage.COMPILE, known, "not compiled"), None
    vmfb = os.path.join(workdir, f"{backend.name}.vmfb")
    # a compiler without the flag (a node's own build, say) would fail every compile: not instrumented
    log = os.path.join(workdir, f"{backend.name}.actions.log") if instrument and not action_log_support(toolchain) \
        else None
    with timed("action log"):
        kept = _keep_on_crash(log) if log else None
    compiled = compile_module(toolchain, backend, mlir_path, vmfb, budget.compile,
                              input_type_flags(Path(mlir_path).read_text()) + (log_flags(log) if log else ()))
    coverage = None
    if log is not None:  # what it reached; the log's own stderr line must not reach the signature
        with timed("action log"):
            coverage = read_action_log(kept or log)
            compiled = replace(compiled, stderr=strip_noise(compiled.stderr))
            if coverage is not None:
                coverage = replace(coverage, failing_pass=failing_pass(classify(compiled).value, compiled.stderr,
                                                                       coverage))
            for path in (log, kept):
                if path is not None:
                    with contextlib.suppress(OSError):
                        os.unlink(path)
    result, outputs = _finish_backend(toolchain, backend, vmfb, workdir, expectation, num_results, function, budget,
                                      compiled)
    return (replace(result, coverage=coverage) if coverage is not None else result), outputs


def _keep_on_crash(log: str) -> str | None:
    """A second name for the action log: a crashing compiler's signal handler deletes the file it
    was writing (LLVM removes its output files), and the failing pass is read from what is left
    (all but the last unwritten block). None where the folder cannot hold a hard link."""
    kept = log + ".kept"
    try:
        Path(log).touch()
        os.link(log, kept)
    except OSError:
        return None
    return kept


def _same_failure(again: Signature | None, first: Signature | None) -> bool:
    """Whether a re-run failed as the first run did; a compile that hangs again hangs, wherever its
    second SIGABRT stopped it (the pass on its stack can be missing from one of the two)."""
    if again == first:
        return True
    hang = (Stage.COMPILE, Status.TIMEOUT)
    return again is not None and first is not None and (again.stage, again.status) == (first.stage, first.status) == hang


def timeout_detail(seconds: float, output: str) -> str:
    """A compile timeout's detail: how long, and the stack the compiler printed when stopped with
    SIGABRT (where it hangs is read from it, as a crash's pass is), when it printed one. Only the
    frame lines, each within 240 characters (its argument lists' contents dropped first, then its
    middle: never its end, the `X::runOnOperation` a pass is read from): the compile's other threads
    go on printing warnings while the handler writes, and a frame's template arguments would push
    its passes out."""
    said = f"compile timed out after {seconds:.0f}s"
    frames = [short_frame(line, 240) for line in raw_frames(output, HANG_STACK_FRAMES)]
    if not frames:
        return said
    return f"{said}; stopped with SIGABRT, where it was:\n{excerpt(chr(10).join(frames), CRASH_DETAIL - 100)}"


def _finish_backend(
    toolchain: Toolchain,
    backend: Backend,
    vmfb: str,
    workdir: str,
    expectation: Expectation | None,
    num_results: int,
    function: str,
    budget: Budget,
    compiled: ProcessResult,
) -> tuple[BackendResult, list[np.ndarray] | None]:
    probe = toolchain.probe
    status = classify(compiled)
    if status != Status.OK:
        text = compiled.stderr + compiled.stdout
        reason = backend.limit_in_error(text) if status == Status.ERROR else None
        if reason is not None:
            return _unsupported(backend, Stage.COMPILE, reason, text.strip()[-3000:],
                                compiled.seconds, compiled.seconds), None
        detail = (timeout_detail(compiled.seconds, text) if status == Status.TIMEOUT else
                  excerpt(text.strip(), CRASH_DETAIL if status == Status.CRASH else 4000))
        sig = placed_timeout(signature_for(backend.name, Stage.COMPILE, status, compiled), text) \
            if status.is_failure else None
        gap = limit_in_output(backend.name, Stage.COMPILE.value, status.value, text) if sig is not None else None
        if gap is not None and sig is not None:  # a documented gap: its own bucket, never a bug's (triage.target_limits)
            sig = replace(sig, message=gap.rule.message)
        return BackendResult(backend.name, Stage.COMPILE, status, detail, sig, compiled.seconds, compiled.seconds), None
    if not backend.executes(probe) or expectation is None:
        note = "compiled; not executed here" if expectation is not None else "compiled"
        return BackendResult(backend.name, Stage.COMPILE, Status.OK, note, None, compiled.seconds, compiled.seconds), None
    ran, outputs = run_module(
        toolchain, backend, vmfb, expectation.inputs, num_results, workdir, function, budget.run
    )
    total = compiled.seconds + ran.seconds
    status = classify(ran)
    if status == Status.OK and outputs is None:
        status = Status.ERROR  # exited 0 but wrote no readable output
    if status != Status.OK:
        detail = excerpt((ran.stderr + ran.stdout).strip(), 4000) or "no output written"
        reason = backend.limit_in_error(detail) if status == Status.ERROR else None
        if reason is not None:
            return _unsupported(backend, Stage.RUN, reason, detail[-3000:], total, compiled.seconds, ran.seconds), None
        sig = signature_for(backend.name, Stage.RUN, status, ran)
        return BackendResult(backend.name, Stage.RUN, status, detail, sig, total, compiled.seconds, ran.seconds), None
    return BackendResult(backend.name, Stage.RUN, Status.OK, "", None, total, compiled.seconds, ran.seconds), outputs


def _mismatch(backend: str, mismatch: Mismatch, base: BackendResult, label: str = "",
              actual: list[np.ndarray] | None = None) -> BackendResult:
    # Bucketed by the mismatch's kind (shape, count, dtype, indices, values), never by where the
    # numbers first differ; the op family is part of it (see `Expectation.label`). The detail shows
    # the actual output too, small arrays whole (what a maintainer reads beside the expected one).
    kind = mismatch.kind.value
    sig = signature_for(backend, Stage.COMPARE, Status.MISMATCH, None, f"{kind} in {label}" if label else kind)
    detail = mismatch.detail if actual is None else f"{mismatch.detail}; actual output: {show(actual, 400)}"
    return replace(base, stage=Stage.COMPARE, status=Status.MISMATCH, detail=detail, signature=sig)


def _judge(
    results: dict[str, BackendResult],
    outputs: dict[str, list[np.ndarray]],
    expectation: Expectation,
) -> tuple[dict[str, BackendResult], list[str]]:
    notes: list[str] = []
    compare = expectation.compare or default_compare
    second = expectation.second
    if expectation.expected is not None and second is not None and second.disagreement:
        # Our two references differ: whatever a backend gives, the fault to look at is ours.
        for name, actual in outputs.items():
            mismatch = compare(expectation.expected, actual)
            which = "matches the NumPy reference" if mismatch is None else f"differs from the NumPy reference ({mismatch.detail})"
            sig = signature_for(name, Stage.COMPARE, Status.MISMATCH, None,
                                f"{DISAGREE} in {expectation.label}" if expectation.label else DISAGREE)
            results[name] = replace(results[name], stage=Stage.COMPARE, status=Status.MISMATCH, signature=sig,
                                    detail=f"{second.disagreement}; {name} {which}"[:4000])
        notes.append(second.disagreement[:2000])
        return results, notes
    if expectation.expected is not None:
        for name, actual in outputs.items():
            mismatch = compare(expectation.expected, actual)
            if mismatch:
                results[name] = _mismatch(name, mismatch, results[name], expectation.label, actual)
            else:
                results[name] = replace(results[name], stage=Stage.COMPARE)
        return results, notes
    # No reference: the backends vote. A backend is wrong when it disagrees with a strict majority.
    names = list(outputs)
    if len(names) < 2:
        notes.append("no reference and fewer than two executing backends: numbers not compared")
        return results, notes
    agree = {a: sum(default_compare(outputs[b], outputs[a]) is None for b in names) for a in names}
    majority = [n for n in names if agree[n] * 2 > len(names)]
    if not majority:
        anchor = REFERENCE_BACKEND if REFERENCE_BACKEND in outputs else names[0]
        notes.append(f"backends disagree with no majority; {anchor} taken as the reference")
        majority = [anchor]
    truth = outputs[majority[0]]
    for name in names:
        mismatch = default_compare(truth, outputs[name])
        if mismatch:
            results[name] = _mismatch(name, replace(mismatch, detail=f"{mismatch.detail} (vs {majority[0]})"), results[name])
        else:
            results[name] = replace(results[name], stage=Stage.COMPARE)
    return results, notes


def check_module(
    text: str,
    backends: Sequence[str],
    expectation: Expectation | None,
    toolchain: Toolchain | None = None,
    budget: Budget = DEFAULT_BUDGET,
    confirm: bool = True,
    function: str | None = None,
    instrument: Collection[str] = (),
) -> CheckReport:
    """Verify, compile, run and judge one module on the given backends; those in `instrument`
    compile with the action log and their results carry what the compile reached."""
    toolchain = toolchain or find_toolchain()
    start = time.perf_counter()
    error = verify(text, toolchain, budget.verify)
    verify_seconds = time.perf_counter() - start
    if error is not None:
        report = CheckReport(Verdict.INVALID, (), verify_error=error)
    else:
        report = _verified_check(text, backends, expectation, toolchain, budget, confirm, function, instrument)
    for watcher in tuple(_WATCHERS):
        watcher(report, verify_seconds, expectation)
    return report


# Who watches the checks of this process (`watch_checks`); nobody in a campaign.
CheckWatcher = Callable[[CheckReport, float, "Expectation | None"], None]
_WATCHERS: list[CheckWatcher] = []


@contextlib.contextmanager
def watch_checks(watcher: CheckWatcher) -> Iterator[None]:
    """Within the block, `watcher(report, verify_seconds, expectation)` is called after every
    `check_module` of this process, whoever calls it (a campaign's target included): what a
    study sees of the checks it times without taking them apart (bench/studies/bench_chain_split.py:
    the verifier's seconds, each lane's compile and run, the arrays judged)."""
    _WATCHERS.append(watcher)
    try:
        yield
    finally:
        _WATCHERS.remove(watcher)


def _verified_check(text: str, backends: Sequence[str], expectation: Expectation | None, toolchain: Toolchain,
                    budget: Budget, confirm: bool, function: str | None, instrument: Collection[str]) -> CheckReport:
    """`check_module` once the module verified: check, and re-run each failing backend."""
    info = function_info(text, function)
    report = _check_once(text, backends, expectation, toolchain, budget, info.name, info.results, instrument)
    if not confirm or not report.failures:
        return report
    # Re-run each failing backend: flaky only when it passes on its re-runs (model.reruns_for)
    passed, notes = _rerun(report, lambda lanes: _check_once(text, lanes, expectation, toolchain, budget, info.name,
                                                              info.results))
    results = tuple(replace(r, flaky=True) if r.backend in passed else r for r in report.results)
    verdict = Verdict.FAIL if any(r.failed and not r.flaky for r in results) else Verdict.FLAKY
    return CheckReport(verdict, results, notes=(*report.notes, *notes))


def _rerun(report: CheckReport, check: Callable[[list[str]], CheckReport]) -> tuple[set[str], list[str]]:
    """Re-runs of a report's failing backends (`check(backends)` checks those once more): the
    backends that passed on a re-run and never failed on one (flaky), and a note for each that
    failed another way (the same bug's other face: not flaky). A backend is re-run until one of its
    re-runs fails, at most `reruns_for` its status times."""
    passed: set[str] = set()
    notes: list[str] = []
    left = {r.backend: r for r in report.failures}
    runs = 0
    while left:
        runs += 1
        again = {r.backend: r for r in check(list(left)).results}
        for backend, first in list(left.items()):
            second = again.get(backend)
            if second is not None and second.failed:
                if not _same_failure(second.signature, first.signature):
                    notes.append(f"{backend}: a re-run failed another way, the same bug's other face: {second.signature}")
                passed.discard(backend)
                del left[backend]
                continue
            if second is not None and second.status == Status.OK:
                passed.add(backend)
            if runs >= reruns_for(first.status):
                del left[backend]
    return passed, notes


def lane_outputs(text: str, backends: Sequence[str], expectation: Expectation | None, toolchain: Toolchain,
                 budget: Budget, function: str, num_results: int, instrument: Collection[str] = (),
                 ) -> tuple[dict[str, BackendResult], dict[str, list[np.ndarray]]]:
    """Each backend's result and, where it ran to an answer, its outputs, unjudged (a check judges
    them next; the shrinker's voted stage, `shrink.voted_stage`, judges them by two reference lanes)."""
    results: dict[str, BackendResult] = {}
    outputs: dict[str, list[np.ndarray]] = {}
    with temp_dir("check", part="files") as workdir:  # (made and removed with signals held: never left behind)
        mlir_path = os.path.join(workdir, "module.mlir")
        with timed("files"):
            write_text(mlir_path, text)
        traits = module_traits(text)
        for name in backends:
            result, out = _run_backend(
                toolchain, BACKENDS[name], mlir_path, workdir, expectation, num_results, function, budget, traits,
                name in instrument)
            results[name] = result
            if out is not None:
                outputs[name] = out
    return results, outputs


def _check_once(
    text: str,
    backends: Sequence[str],
    expectation: Expectation | None,
    toolchain: Toolchain,
    budget: Budget,
    function: str,
    num_results: int,
    instrument: Collection[str] = (),
) -> CheckReport:
    results, outputs = lane_outputs(text, backends, expectation, toolchain, budget, function, num_results, instrument)
    notes: list[str] = []
    if expectation is not None and outputs:
        expectation.second  # noqa: B018 - ONNX's judgement, timed on its own (see onnx_judge_for)
        with timed("compare"):
            results, notes = _judge(results, outputs, expectation)
    ordered = tuple(_as_frontend_gap(results[name], text) for name in backends)
    verdict = Verdict.FAIL if any(r.failed for r in ordered) else Verdict.PASS
    return CheckReport(verdict, ordered, notes=tuple(notes))


def compile_only(text: str, backend: Backend, workdir: str, toolchain: Toolchain,
                 budget: Budget = DEFAULT_BUDGET) -> tuple[BackendResult, str]:
    """Compile `text` for `backend` as a check does, without running it (a bundle compiles here
    what another machine runs): the same verdict (a target's limit unsupported, a failure with its
    signature) and the path of the .vmfb, written into `workdir` when the result is OK."""
    mlir_path = os.path.join(workdir, "module.mlir")
    write_text(mlir_path, text)
    info = function_info(text)
    result, _ = _run_backend(toolchain, backend, mlir_path, workdir, None, info.results, info.name, budget,
                             module_traits(text))
    return _as_frontend_gap(result, text), os.path.join(workdir, f"{backend.name}.vmfb")


def case_expectation(case: Case, seed: int = 0) -> Expectation:
    """Inputs, NumPy reference and comparison rule for a generated case."""
    from shapefuzz.families import get_family, guarded, validate_case  # families import hypothesis: keep lazy

    with timed("reference"):
        validate_case(case)  # the params may come from a file: renderable, arrays under the cap
        family = get_family(case.family)
        params = case.params
        known = _remembered(case, seed)
        if known is not None:
            inputs, expected = known
        else:
            # The params may come from a file (a case header, a corpus entry): failures are input errors.
            inputs = guarded(case.family, "making inputs", lambda: family.make_inputs(params, seed))
            expected = guarded(case.family, "the NumPy reference", lambda: family.reference(params, inputs))
            _remember(case, seed, inputs, expected)

    def compare(want: list[np.ndarray], got: list[np.ndarray]) -> Mismatch | None:
        return family.compare(params, inputs, want, got)

    return Expectation(inputs, expected, compare, label=case_label(case), judge=onnx_judge_for(case, inputs, expected))


# The last cases' inputs and NumPy outputs in this process, by (family, params JSON, seed): a campaign
# checks a failing case again to confirm it, to save it and at shrink re-checks, and both are pure
# functions of those. Kept as private copies and handed out as fresh copies (a caller that writes
# into its arrays cannot change what the next one gets); bounded in entries and bytes.
_MEMO: OrderedDict[tuple[str, str, int], tuple[list[np.ndarray], list[np.ndarray]]] = OrderedDict()
MEMO_ENTRIES = 16
MEMO_BYTES = 32 << 20  # in all; a case whose arrays are larger than a quarter of it is not kept


def _nbytes(arrays: list[np.ndarray]) -> int:
    return sum(int(np.asarray(a).nbytes) for a in arrays)


def _remember(case: Case, seed: int, inputs: list[np.ndarray], expected: list[np.ndarray]) -> None:
    if not (isinstance(inputs, list) and isinstance(expected, list)) or \
            not all(isinstance(a, np.ndarray) for a in inputs + expected):
        return
    size = _nbytes(inputs) + _nbytes(expected)
    if size > MEMO_BYTES // 4:
        return
    _MEMO[(case.family, case.params_json, seed)] = ([a.copy() for a in inputs], [a.copy() for a in expected])
    while len(_MEMO) > MEMO_ENTRIES or sum(_nbytes(i) + _nbytes(e) for i, e in _MEMO.values()) > MEMO_BYTES:
        _MEMO.popitem(last=False)


def forget_expectations() -> None:
    """Forget the inputs and NumPy references this process kept: the next `case_expectation` of
    each case makes them again (the context studies time a check from cold)."""
    _MEMO.clear()


def _remembered(case: Case, seed: int) -> tuple[list[np.ndarray], list[np.ndarray]] | None:
    key = (case.family, case.params_json, seed)
    known = _MEMO.get(key)
    if known is None:
        return None
    _MEMO.move_to_end(key)
    return [a.copy() for a in known[0]], [a.copy() for a in known[1]]


def case_label(case: Case) -> str:
    """What a mismatch's signature names: the family, and the spelling when it is a frontend's
    (a frontend-only bug is its own bucket); a family of many ops names the op too (`Family.label`:
    onnx_op's wrong Div and wrong InstanceNormalization are two bugs)."""
    from shapefuzz.families import get_family

    spelling = case.params.get("frontend", "linalg")
    name = case.family
    try:
        family = get_family(case.family)
        name = family.label(case.params) if family.label is not None else name
    except Exception:  # noqa: BLE001 - params that do not load: the family's name alone
        pass
    return name if spelling == "linalg" else f"{name} via {spelling}"


def onnx_judge_for(case: Case, inputs: list[np.ndarray], expected: list[np.ndarray]) -> Callable[[], SecondOpinion | None]:
    """The second judge of `expected` for this case, asked when a backend has run (`Expectation.judge`):
    XLA for a case spelled in StableHLO where jax is installed (`xla_judge`), else ONNX's reference."""

    def judge() -> SecondOpinion | None:
        from shapefuzz.judge import onnx_judge, xla_judge

        with timed("judge"):
            if case.params.get("frontend") == "stablehlo" and xla_judge.available():
                return xla_judge.second_opinion(case, inputs, expected)
            try:
                return onnx_judge.second_opinion(case, inputs, expected)
            except Exception as error:  # noqa: BLE001 - building the model failed: the case is still judged by NumPy
                return SecondOpinion(None, "", f"no ONNX model: {type(error).__name__}: {str(error)[:200]}")

    return judge


def check_case(
    case: Case,
    backends: Sequence[str] = (REFERENCE_BACKEND,),
    toolchain: Toolchain | None = None,
    seed: int = 0,
    budget: Budget = DEFAULT_BUDGET,
    confirm: bool = True,
) -> CheckReport:
    """Render a generated case and check it against its NumPy reference."""
    from shapefuzz.families import render_case

    return check_module(render_case(case), backends, case_expectation(case, seed), toolchain, budget, confirm)


__all__ = ["Expectation", "check_module", "lane_outputs", "check_case", "case_expectation", "default_compare", "forget_expectations",
           "normalize", "watch_checks"]


@dataclass(frozen=True)
class FormsReport:
    """A case and its equivalent formulations, each checked against the same reference."""

    reports: tuple[tuple[Case, CheckReport], ...]
    disagreements: tuple[str, ...]  # one line per backend where some forms pass and others fail

    @property
    def verdict(self) -> Verdict:
        verdicts = {report.verdict for _, report in self.reports}
        for worst in (Verdict.INVALID, Verdict.FAIL, Verdict.FLAKY):
            if worst in verdicts:
                return worst
        return Verdict.PASS


def form_difference(base: dict, other: dict) -> str:
    """The parameters in which `other` differs from `base`, as `key=value` pairs. A key left out
    of the JSON takes its default (`frontend` is left out for the linalg forms, `operand` for the
    plain operands)."""
    defaults = {"frontend": "linalg", "operand": ""}
    keys = sorted(set(base) | set(other))
    changed = [f"{k}={other.get(k, defaults.get(k))!r}" for k in keys
               if base.get(k, defaults.get(k)) != other.get(k, defaults.get(k))]
    return ", ".join(changed) or "same form"


def check_forms(
    case: Case,
    backends: Sequence[str] = (REFERENCE_BACKEND,),
    toolchain: Toolchain | None = None,
    seed: int = 0,
    budget: Budget = DEFAULT_BUDGET,
    confirm: bool = True,
) -> FormsReport:
    """The metamorphic oracle: the same computation in each of its family's equivalent forms must
    give the same answer on every backend. Every form is judged against the NumPy reference; a
    backend where one form fails and another passes is a class-4 finding, named per form."""
    from shapefuzz.families import get_family

    family = get_family(case.family)
    cases = {case.case_id: case}
    for params in family.equivalent_forms(case.params):
        other = Case.make(case.family, params)
        cases.setdefault(other.case_id, other)
    reports = tuple((c, check_case(c, backends, toolchain, seed, budget, confirm)) for c in cases.values())
    base = case.params
    lines = []
    for name in backends:
        passing: list[tuple[Case, BackendResult]] = []
        failing: list[tuple[Case, BackendResult]] = []
        for form, report in reports:
            result = next((r for r in report.results if r.backend == name), None)
            if result is None:
                continue
            (failing if result.failed and not result.flaky else passing).append((form, result))
        if passing and failing:
            for form, result in failing:
                lines.append(
                    f"{name}: form [{form_difference(base, form.params)}] fails ({result.signature}) "
                    f"while {len(passing)} equivalent form(s) pass"
                )
    return FormsReport(reports, tuple(lines))
