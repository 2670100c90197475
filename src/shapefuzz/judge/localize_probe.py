"""Localizing a wrong value on real IREE: the `Probe` that `triage.localize` searches with. Every
call goes through the sandbox with its own limits; a compile or run that fails is "unusable"
evidence, never an exception. Entry point: `localize_entry` (a corpus entry's reproducer, inputs
and expected outputs, the failing lane and the lanes that computed it right). A case spelled in a
frontend is also checked in its linalg spelling on the failing lane (`frontend_values`), which
places a bug in the frontend conversion or clears it (`triage.localize.with_frontend`)."""

from __future__ import annotations

import os
import re
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from shapefuzz.iree.backends import BACKENDS, Backend
from shapefuzz.judge.codegen_probe import CodegenReplay
from shapefuzz.process.cleanup import temp_prefix
from shapefuzz.invoke.execute import run_module, run_sandboxed
from shapefuzz.process.sandbox import Limits
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.localize import CODEGEN, NO_CONST_EVAL, Localization, Values, frontend_open, localize, with_frontend

DEFAULT_SECONDS = 60.0  # a localization's whole budget (the campaign's knob: --localize-time)
_CALL = Limits(timeout=60.0)
_DUMP = Limits(timeout=60.0, output_bytes=64 * 1024 * 1024)  # the module after every pass of a phase
_DEVICE_GLOBAL = re.compile(r"^\s*util\.global private @__device_0 = .*: !hal\.device$", re.M)

Compare = Callable[[list[np.ndarray], list[np.ndarray]], object]  # (expected, actual) -> mismatch or None


def _plain_compare(expected: list[np.ndarray], actual: list[np.ndarray]) -> object:
    same = len(expected) == len(actual) and all(
        e.shape == a.shape and np.allclose(e, a, rtol=1e-5, atol=1e-6, equal_nan=True) for e, a in zip(expected, actual))
    return None if same else "differs"


class IreeProbe(CodegenReplay):
    """The failing lane's program at each phase, finished by a lane and run on the entry's inputs;
    its codegen replayed pass by pass (`CodegenReplay`)."""

    def __init__(self, text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                 toolchain: Toolchain, workdir: str, compare: Compare | None = None, extra: tuple[str, ...] = ()) -> None:
        self.text, self.lane, self.toolchain, self.workdir = text, lane, toolchain, workdir
        self.inputs, self.expected = list(inputs), list(expected)
        self.compare = compare or _plain_compare
        self.extra = extra  # flags every compile of this probe adds
        self._devices: dict[str, str | None] = {}
        self._n = 0

    def without_const_eval(self) -> "IreeProbe":
        """The same program, every compile with const-eval off (its files in a folder of their own)."""
        workdir = os.path.join(self.workdir, "no-const-eval")
        os.makedirs(workdir, exist_ok=True)
        return IreeProbe(self.text, self.lane, self.inputs, self.expected, self.toolchain, workdir, self.compare,
                         (*self.extra, NO_CONST_EVAL))

    def for_lane(self, lane: str) -> "IreeProbe":
        """The same program and flags on another lane (its files in a folder of their own)."""
        workdir = os.path.join(self.workdir, lane)
        os.makedirs(workdir, exist_ok=True)
        return IreeProbe(self.text, lane, self.inputs, self.expected, self.toolchain, workdir, self.compare, self.extra)

    def _path(self, suffix: str, text: str | None = None) -> str:
        self._n += 1
        path = os.path.join(self.workdir, f"{self._n}{suffix}")
        if text is not None:
            Path(path).write_text(text)
        return path

    def _flags(self, lane: str) -> tuple[str, ...]:
        backend: Backend = BACKENDS[lane]
        return (*(backend.compile_flags(self.toolchain.probe) or ()), *self.extra)

    def _compile(self, source: str, lane: str, *flags: str, limits: Limits = _CALL):
        out = self._path(".out")
        argv = [str(self.toolchain.compile_bin), source, *self._flags(lane), *flags, "-o", out]
        return run_sandboxed(argv, limits), out

    def phase_ir(self, phase: str) -> str | None:
        if phase == "start":
            return self.text
        result, out = self._compile(self._path(".mlir", self.text), self.lane, f"--compile-to={phase}")
        return Path(out).read_text() if result.ok else None

    def _device_line(self, lane: str) -> str | None:
        """`lane`'s device global, as its own compile of the program declares it."""
        if lane not in self._devices:
            result, out = self._compile(self._path(".mlir", self.text), lane, "--compile-to=preprocessing")
            found = _DEVICE_GLOBAL.search(Path(out).read_text()) if result.ok else None
            self._devices[lane] = found.group(0) if found else None
        return self._devices[lane]

    def finish(self, ir: str, phase: str, lane: str) -> Values:
        if lane != self.lane and _DEVICE_GLOBAL.search(ir):
            line = self._device_line(lane)
            if line is None:
                return Values.UNUSABLE
            ir = _DEVICE_GLOBAL.sub(lambda _: line, ir, count=1)
        result, vmfb = self._compile(self._path(".mlir", ir), lane, f"--compile-from={phase}")
        return self._judge(vmfb, lane) if result.ok else Values.UNUSABLE

    def _judge(self, vmfb: str, lane: str) -> Values:
        """A compiled module run on `lane`'s device against the expected values."""
        ran, outputs = run_module(self.toolchain, BACKENDS[lane], vmfb, self.inputs, len(self.expected), self.workdir,
                                  limits=_CALL)
        if outputs is None:
            return Values.WRONG if not ran.timed_out else Values.UNUSABLE  # the run-time failure reproduces
        return Values.RIGHT if self.compare(self.expected, outputs) is None else Values.WRONG

    def phase_dump(self, ir: str, after: str, phase: str) -> str:
        flags = [f"--compile-to={phase}", "--mlir-print-ir-after-all", "--mlir-print-ir-module-scope",
                 "--mlir-disable-threading"]
        if after != "start":
            flags.insert(0, f"--compile-from={after}")
        result, _ = self._compile(self._path(".mlir", ir), self.lane, *flags, limits=_DUMP)
        return result.stderr if result.ok else ""

    def replay(self, ir: str, pipeline: str) -> str | None:
        if self.toolchain.opt_bin is None:
            return None
        out = self._path(".mlir")
        argv = [str(self.toolchain.opt_bin), self._path(".mlir", ir), f"--pass-pipeline={pipeline}", "-o", out]
        return Path(out).read_text() if run_sandboxed(argv, _CALL).ok else None


def right_lanes_for(lane: str, passed: Sequence[str], probe) -> tuple[str, ...]:
    """Lanes that may compute it right, each checked on the program before it finishes anything:
    those that did in the campaign, then the other plain lanes that execute here (a shrunk
    reproducer can fail on a lane its candidate passed; a lane the campaign did not run may be
    right), other targets before the failing lane's own (they share its codegen)."""
    base = lambda name: BACKENDS[name].variant_of or name  # noqa: E731
    driver = BACKENDS[lane].driver if lane in BACKENDS else None
    others = [name for name, b in BACKENDS.items() if b.variant_of is None]
    ok = [p for p in dict.fromkeys([*passed, *others]) if p != lane and p in BACKENDS and BACKENDS[p].executes(probe)]
    # another target on the same device first: right there, the device is not the bug
    return tuple(sorted(ok, key=lambda p: (base(p) == base(lane), BACKENDS[p].driver != driver, p not in passed)))


def localize_program(text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                     toolchain: Toolchain, passed: Sequence[str] = (), seconds: float = DEFAULT_SECONDS,
                     compare: Compare | None = None) -> Localization:
    """Where `lane` starts computing wrong values for `text` (see triage.localize), within `seconds`."""
    if lane not in BACKENDS or not BACKENDS[lane].executes(toolchain.probe):
        return Localization(evidence=f"not localized: {lane} does not execute here")
    with tempfile.TemporaryDirectory(prefix=temp_prefix("localize")) as tmp:
        probe = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare)
        loc = localize(probe, right_lanes_for(lane, passed, toolchain.probe), seconds)
    ref = BACKENDS.get(loc.finished_by)
    if loc.phase == CODEGEN and ref is not None and ref.driver == BACKENDS[lane].driver:
        return replace(loc, evidence=loc.evidence.replace(
            "(or in the device that runs its code)",
            f"(the same {ref.driver} device runs {loc.finished_by}'s code right: IREE's, not the device's)"))
    return loc


def frontend_values(case, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                    toolchain: Toolchain, compare: Compare | None = None) -> tuple[str, Values, Values | None]:
    """(the case's spelling, how its linalg spelling comes out on `lane`, how its torch spelling
    does for an ONNX case whose linalg spelling is right, else None): both take and return the same
    arrays as the case. Nothing is compiled for a linalg case, a lane that does not execute here,
    or a family that does not load ("linalg", UNUSABLE, None)."""
    from shapefuzz.families import get_family
    from shapefuzz.families.base import LINALG
    from shapefuzz.families.frontends import frontend_of, linalg_params, spelled, spellings_for

    nothing = (LINALG, Values.UNUSABLE, None)
    if case is None or frontend_of(case.params) == LINALG or lane not in BACKENDS \
            or not BACKENDS[lane].executes(toolchain.probe):
        return nothing
    try:
        family = get_family(case.family)
        p = family.load(case.params)
        q = linalg_params(p)
        texts = [family.render(q)]
        torch = next((s for s in spellings_for(family.name) if s.frontend == "torch"), None)
        if p.frontend == "onnx" and torch is not None and torch.expressible(q):
            texts.append(family.render(spelled(q, torch)))
    except Exception:  # noqa: BLE001 - a case this version no longer renders: no evidence
        return nothing
    verdicts: list[Values] = []
    with tempfile.TemporaryDirectory(prefix=temp_prefix("localize")) as tmp:
        for text in texts:
            probe = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare)
            verdicts.append(probe.finish(text, "start", lane))
            if verdicts[0] != Values.RIGHT:  # not the frontend's: which conversion does not matter
                break
    return p.frontend, verdicts[0], verdicts[1] if len(verdicts) > 1 else None


def family_compare(case, inputs: Sequence[np.ndarray]) -> Compare | None:
    """The case's family's own comparison (None: no case, or a family that no longer loads: the plain one)."""
    if case is None:
        return None
    try:
        from shapefuzz.families import get_family

        family, params = get_family(case.family), case.params
    except Exception:  # noqa: BLE001 - a family that no longer loads: the plain comparison
        return None
    return lambda want, got: family.compare(params, list(inputs), want, got)


def localize_entry(entry, toolchain: Toolchain, lane: str = "", passed: Sequence[str] = (),
                   seconds: float = DEFAULT_SECONDS) -> Localization:
    """A corpus entry's wrong value (or run-time failure) localized on its lane (or `lane`); for a
    case spelled in a frontend, its linalg spelling is run first (a few compiles, taken from
    `seconds`) and the two are weighed by `with_frontend`."""
    if entry.inputs is None or entry.expected is None:
        return Localization(evidence="not localized: the entry has no inputs and expected outputs")
    case = entry.case
    compare = family_compare(case, entry.inputs)
    lane = lane or entry.signature.backend
    start = time.monotonic()
    spelling, linalg, torch = frontend_values(case, lane, entry.inputs, entry.expected, toolchain, compare)
    loc = localize_program(entry.mlir, lane, entry.inputs, entry.expected, toolchain, passed,
                           max(1.0, seconds - (time.monotonic() - start)), compare)
    return with_frontend(loc, spelling, lane, linalg, torch) if frontend_open(loc) else loc


def place_compile_failure(text: str, lane: str, toolchain: Toolchain, failing: str,
                          seconds: float = DEFAULT_SECONDS) -> Localization:
    """A compile error in a pass that runs in every phase (canonicalize, cse: `is_generic_pass`)
    placed by its phase: the first `--compile-to` phase whose compile fails in that pass (a compile
    to a phase runs every phase before it, so the search halves the phases each time; none: the
    target's codegen), with the pass it ran inside from the nested IR-dump headers."""
    from shapefuzz.triage.failing_pass import PRINT_IR_AFTER_FAILURE, enclosing_passes
    from shapefuzz.triage.localize import PHASES

    end, start = time.monotonic() + seconds, time.monotonic()
    key = _pass_word(failing)
    with tempfile.TemporaryDirectory(prefix=temp_prefix("place")) as tmp:
        probe = IreeProbe(text, lane, (), (), toolchain, tmp)
        source = probe._path(".mlir", text)
        outputs: dict[str, list[str]] = {}

        def fails(phase: str) -> bool | None:
            """Whether the compile to `phase` fails in the pass (None: out of time)."""
            left = end - time.monotonic()
            if left < 1.0:
                return None
            flags = (PRINT_IR_AFTER_FAILURE, *((f"--compile-to={phase}",) if phase != CODEGEN else ()))
            result, _ = probe._compile(source, lane, *flags, limits=replace(_CALL, timeout=min(_CALL.timeout, left)))
            passes = enclosing_passes(result.stderr + result.stdout) if not result.ok else []
            outputs[phase] = passes
            return bool(passes) and _pass_word(passes[0]) == key

        if not fails(CODEGEN):
            return Localization(evidence="not localized: the whole compile did not fail in "
                                         f"{failing} again", seconds=time.monotonic() - start)
        lo, hi = 0, len(PHASES)  # the first failing phase is in PHASES[lo:hi], or codegen (hi)
        while lo < hi:
            mid = (lo + hi) // 2
            found = fails(PHASES[mid])
            if found is None:
                return Localization(evidence=f"not localized: time ran out placing {failing} by phase",
                                    seconds=time.monotonic() - start)
            lo, hi = (lo, mid) if found else (mid + 1, hi)
        phase = PHASES[lo] if lo < len(PHASES) else CODEGEN
        before = PHASES[lo - 1] if lo > 0 else "its input"
        passes = outputs.get(phase, [])
        inside = next((p for p in passes[1:] if _pass_word(p) != key), "")
        return Localization(phase, failing, evidence=f"compiled to {phase} it fails in {failing}"
                            + (f" (inside {inside})" if inside else "") + f"; compiled to {before} it does not",
                            seconds=time.monotonic() - start, certain=True, inside=inside)


def place_checked_failure(text: str, lane: str, toolchain: Toolchain, failing: str, output: str,
                          seconds: float = DEFAULT_SECONDS) -> Localization:
    """A compile error in a checker pass (`triage.culprit.is_checker`) placed at the pass that made
    what it refuses: the compile is run again writing the IR after every pass that changed it
    (`--mlir-print-ir-tree-dir`), and the first dump holding the offence its `output` names
    (`triage.culprit.offence_of`) names the maker; the checker stays in the evidence."""
    from shapefuzz.triage.culprit import dumps_in, first_maker, offence_of

    start = time.monotonic()
    offence = offence_of(output)
    if offence is None:
        return Localization(evidence=f"not localized: {failing}'s message names no buffer size to trace",
                            seconds=time.monotonic() - start)
    with tempfile.TemporaryDirectory(prefix=temp_prefix("culprit")) as tmp:
        probe = IreeProbe(text, lane, (), (), toolchain, tmp)
        source = probe._path(".mlir", text)
        tree = Path(tmp) / "tree"
        result, _ = probe._compile(source, lane, "--mlir-print-ir-after-all", "--mlir-print-ir-after-change",
                                   f"--mlir-print-ir-tree-dir={tree}", "--mlir-disable-threading",
                                   limits=replace(_CALL, timeout=max(1.0, min(_CALL.timeout, seconds))))
        if result.ok:
            return Localization(evidence=f"not localized: the compile did not fail in {failing} again",
                                seconds=time.monotonic() - start)
        maker = first_maker(dumps_in(tree), offence)
        seconds_taken = time.monotonic() - start
        if maker is None:
            return Localization(evidence=f"not localized: no pass's output holds {offence.what}", seconds=seconds_taken)
        return Localization(CODEGEN, maker.pass_name, seconds=seconds_taken, certain=True,
                            evidence=f"the IR first holds {offence.what} after {maker.pass_name}; "
                                     f"{failing} only refuses it")


def _pass_word(name: str) -> str:
    """A pass name as compared here: `canonicalize{...}`, `CanonicalizerPass` and `Canonicalizer` alike."""
    word = re.sub(r"[^a-z0-9]", "", name.split("{", 1)[0].rsplit("::", 1)[-1].lower())
    return {"canonicalizer": "canonicalize", "inliner": "inline"}.get(re.sub(r"pass$", "", word),
                                                                     re.sub(r"pass$", "", word))


__all__ = ["DEFAULT_SECONDS", "IreeProbe", "family_compare", "place_checked_failure", "place_compile_failure", "frontend_values", "localize_entry", "localize_program", "right_lanes_for"]
