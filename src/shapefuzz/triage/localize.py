"""Where a wrong value starts: the phase, then the pass, that first makes a program compute wrong
values (or fail at run time), found by executing intermediate IR. Pure logic over a `Probe` (the
IREE side is `shapefuzz.judge.localize_probe`), so it is tested with fakes and knows no process.

Two kinds of evidence, both measured on IREE 3.13:
- **Cross-lane finishing** (a lane that computed the right values is known): the failing lane's IR
  after a target-independent phase (`--compile-to=P`) is compiled onward by the right lane
  (`--compile-from=P`, its device swapped in) and run. Right after `stream`: the bug is in the
  failing target's codegen. Wrong: the first phase whose IR comes out wrong holds it.
- **Pass omission** (inside a phase, and the only evidence when every lane is wrong): the phase's
  pass list (the `--mlir-print-ir-after-all` headers) is replayed with `iree-opt` on the IR before
  the phase, once per pass with that pass left out, and finished with `--compile-from=P`. A pass
  whose omission makes the values right is named; only passes that changed the module are tried,
  from the last back, so when several would do, the last in pipeline order is named (the earlier
  ones produce the form it mishandles, e.g. the generalization FoldUnitExtentDims works on).
- **Const-eval off** (every lane wrong): IREE's compile-time evaluator computes constant expressions
  with llvm-cpu for every target, so an llvm-cpu codegen bug can make every lane wrong; compiled
  with `--iree-opt-const-eval=false`, a lane that is right then finishes the failing lane's IR.
A localization that runs out of budget or evidence says why ("not localized: ...").

A program spelled in a frontend (torch, ONNX) is converted to linalg inside `input`, by passes a
replay cannot leave out; `with_frontend` places it there, in the frontend conversion, when the same
computation written in linalg is right on the failing lane (or the IR is already wrong after
`input`), and says it is not the frontend's when the linalg form is wrong too; either only when the
two lower to the same algorithm (`algorithm_ops`)."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from typing import Any, Callable, Protocol

from shapefuzz.triage.localize_types import PassRun, Values

# iree-compile's target-independent phases, in pipeline order (`--compile-to` / `--compile-from`)
PHASES = ("input", "abi", "preprocessing", "global-optimization", "dispatch-creation", "flow", "stream")
CODEGEN = "codegen"  # after `stream`: the target's executables (configuration, codegen, serialization)
# where pass omission looks first when no lane is right: where wrong-value bugs were found so far
OMISSION_ORDER = ("global-optimization", "dispatch-creation", "input", "flow", "stream", "preprocessing", "abi")

_HEADER = re.compile(r"^// -----// IR Dump After (\S+): (.*?) \('([\w.]+)' operation(?:: @(\S+))?\) //----- //$", re.M)
# passes that place the module on devices: the IR already carries them, and their printed options
# (`target-registry=unknown`) do not parse in iree-opt
_DEVICE_PASS = re.compile(r"^iree-hal-")
_ADAPTOR = "iree-op-pipeline-adaptor"
# passes that only change how ops are spelled (a named op as linalg.generic): omitting one can fix a
# wrong value by steering a later pass or codegen away from the form it mishandles, so it is never
# named as the pass that makes values wrong (measured: a GenericVectorization bug shared by every
# lane went away without iree-global-opt-generalize-linalg-named-ops)
_FORM_ONLY = re.compile(r"generalize")
# Localization.frontend -> what converts it
FRONTEND_NAMES = {"torch": "torch-mlir", "onnx": "ONNX import", "stablehlo": "StableHLO input"}
NO_CONST_EVAL = "--iree-opt-const-eval=false"  # no constant expression is evaluated at compile time
CONST_EVAL_PASS = "iree-consteval-jit-globals"
# what a record keeps (a corpus entry's meta.json refuses more): the evidence, and each IR around the pass
MAX_EVIDENCE = 8000
MAX_IR = 16_000
JIT_LANE = "llvm-cpu"  # the lane the compile-time evaluator compiles constant expressions for


def pass_runs(dump: str) -> list[PassRun]:
    """The passes a `--mlir-print-ir-after-all --mlir-print-ir-module-scope` dump ran, in order,
    each marked whether it changed the module (its dump differs from the one before; a dump of
    headers alone counts every pass as changing it)."""
    found = list(_HEADER.finditer(dump))
    runs, before = [], None
    for i, m in enumerate(found):
        body = dump[m.end(): found[i + 1].start() if i + 1 < len(found) else len(dump)].strip()
        cls, arg, anchor, func = m.groups(default="")
        runs.append(PassRun(cls, arg, anchor, func, changed=not body or body != before))
        before = body
    return runs


def pipeline_text(runs: list[PassRun], omit: str = "") -> str:
    """An `iree-opt --pass-pipeline` replaying `runs` without the pass named `omit`: function
    passes (printed once per function, then an op-pipeline adaptor) are nested under their anchor
    once; passes that assign devices are left out."""
    parts: list[str] = []
    group: list[str] = []
    anchor = first = ""

    def close() -> None:
        nonlocal group, anchor, first
        kept = [a for a in group if a.split("{", 1)[0] != omit]
        if kept:
            parts.append(f"{anchor}({','.join(kept)})")
        group, anchor, first = [], "", ""

    for run in runs:
        if run.name == _ADAPTOR:
            close()
        elif run.anchor == "builtin.module":
            if group:
                close()
            if not _DEVICE_PASS.match(run.name) and run.name != omit:
                parts.append(run.arg)
        else:
            anchor, first = anchor or run.anchor, first or run.func
            if run.func == first:  # every function runs the same list: the first one's is the list
                group.append(run.arg)
    close()
    return "builtin.module(" + ",".join(parts) + ")"


def omittable(runs: list[PassRun]) -> list[PassRun]:
    """Each distinct pass that changed the module once, in order of first run (device passes and
    adaptors excluded)."""
    out: dict[str, PassRun] = {}
    for run in runs:
        if run.changed and run.name != _ADAPTOR and not _DEVICE_PASS.match(run.name):
            out.setdefault(run.name, run)
    return list(out.values())


@dataclass(frozen=True)
class Localization:
    phase: str = ""  # one of PHASES, CODEGEN, or "" when not localized
    pass_name: str = ""  # the pass argument, e.g. iree-dispatch-creation-fold-unit-extent-dims
    pass_class: str = ""  # e.g. FoldUnitExtentDimsPass
    evidence: str = ""  # what was run and what came out (or why it was not localized)
    seconds: float = 0.0
    # a lane that computed it right finished the IR (the phase is proven), or every other lane
    # computes it wrong too. Otherwise a pass whose omission fixes it is only needed for the failure:
    # it may make a form the lane's codegen mishandles (measured: omitting ElementwiseOpFusion fixed
    # an llvm-cpu-only pool bug that vulkan-spirv computes right)
    certain: bool = False
    finished_by: str = ""  # the right lane that finished the failing lane's IR, if one did
    frontend: str = ""  # the frontend conversion that makes it wrong ("torch", "onnx"), if placed there
    inside: str = ""  # a generic pass's failure (canonicalize): the pass it ran inside ("inline"), if any
    # the named pass's IR before and after it ran (trimmed: `codegen_pass.trimmed`), and where:
    # the dispatch function whose lowering ran it (codegen), or the frontend op it rewrote
    ir_before: str = ""
    ir_after: str = ""
    dispatch: str = ""
    pattern: str = ""  # a frontend pass's pattern, by the op it rewrote ("DecomposeAtenInstanceNormOp")
    target: str = ""  # the lane whose codegen holds it, when not the failing lane's (the evaluator's llvm-cpu)
    # a GPU lane whose code computes right with one invocation a workgroup and wrong with more: that device
    # runs the program right when nothing runs beside it, so the wrong values are a race in the code (IREE's)
    serialized: str = ""

    @property
    def localized(self) -> bool:
        return bool(self.phase)

    @property
    def target_independent(self) -> bool:
        return self.phase in PHASES

    @property
    def where(self) -> str:
        """"FoldUnitExtentDimsPass (global-optimization)", "codegen", or ""."""
        if not self.phase:
            return ""
        if self.frontend:
            conversion = f"{FRONTEND_NAMES.get(self.frontend, self.frontend)} conversion"
            named = self.pass_class or self.pass_name
            return f"{named} ({conversion}, {self.phase})" if named else f"{conversion} ({self.phase})"
        inside = f", inside {self.inside}" if self.inside else ""
        where = f"{self.pass_class or self.pass_name} ({self.phase}{inside})" if self.pass_name else self.phase
        return where if self.certain else f"needs {where}"

    def to_json(self) -> dict[str, object]:
        optional = {key: value for key, value in (("inside", self.inside), ("ir_before", _cut(self.ir_before, MAX_IR)),
                                                  ("ir_after", _cut(self.ir_after, MAX_IR)), ("dispatch", self.dispatch),
                                                  ("pattern", self.pattern), ("target", self.target),
                                                  ("serialized", self.serialized)) if value}
        return {"phase": self.phase, "pass": self.pass_name, "pass_class": self.pass_class,
                "evidence": _cut(self.evidence, MAX_EVIDENCE), "seconds": round(self.seconds, 1), "certain": self.certain,
                "finished_by": self.finished_by, "frontend": self.frontend} | optional

    @staticmethod
    def from_json(data: dict[str, Any] | None) -> "Localization | None":
        if not isinstance(data, dict):
            return None
        text = lambda key: str(data.get(key) or "")  # noqa: E731
        return Localization(text("phase"), text("pass"), text("pass_class"), text("evidence"),
                            float(data.get("seconds") or 0.0), bool(data.get("certain")), text("finished_by"),
                            text("frontend"), text("inside"), text("ir_before"), text("ir_after"),
                            text("dispatch"), text("pattern"), text("target"), text("serialized"))


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit - 2] + " …"


class Probe(Protocol):
    """What localization runs (the IREE side: `shapefuzz.judge.iree_probe.IreeProbe`)."""

    lane: str  # the failing lane

    def phase_ir(self, phase: str) -> str | None:
        """The failing lane's IR after `phase` (None when it does not compile that far)."""

    def finish(self, ir: str, phase: str, lane: str) -> Values:
        """`ir` (after `phase`) compiled onward from `phase` by `lane` and run against the expected values."""

    def phase_dump(self, ir: str, after: str, phase: str) -> str:
        """The print-ir-after-all dump of `phase` run on `ir` (the IR after phase `after`)."""

    def replay(self, ir: str, pipeline: str) -> str | None:
        """`ir` through `iree-opt --pass-pipeline=pipeline` (None when that fails)."""

    # optional: `without_const_eval() -> Probe`, the same program compiled with NO_CONST_EVAL


class _OutOfTime(Exception):
    pass


class _Search:
    def __init__(self, probe: Probe, seconds: float, clock: Callable[[], float]) -> None:
        self.probe, self.clock = probe, clock
        self.start = clock()
        self.end = self.start + seconds
        self.irs: dict[str, str | None] = {}
        self.tries = 0

    def tick(self) -> None:
        if self.clock() >= self.end:
            raise _OutOfTime

    def ir(self, phase: str) -> str | None:
        if phase not in self.irs:
            self.tick()
            self.irs[phase] = self.probe.phase_ir(phase)
        return self.irs[phase]

    def finish(self, ir: str, phase: str, lane: str) -> Values:
        self.tick()
        self.tries += 1
        return self.probe.finish(ir, phase, lane)

    def done(self, **fields) -> Localization:
        return Localization(seconds=self.clock() - self.start, **fields)


def localize(probe: Probe, right_lanes: tuple[str, ...] = (), seconds: float = 60.0,
             clock: Callable[[], float] = time.monotonic) -> Localization:
    """The phase and pass where the failing lane's program first computes wrong values, within
    `seconds`. `right_lanes`: lanes that may compute the program right, in order of preference;
    each is checked on the program itself first (a wrong one counts as a lane that is wrong too)."""
    search = _Search(probe, seconds, clock)
    try:
        return _localize(search, right_lanes)
    except _OutOfTime:
        return search.done(evidence=f"not localized: the {seconds:.0f}s budget ran out after "
                                    f"{search.tries} finished compiles")


def _localize(search: _Search, right_lanes: tuple[str, ...]) -> Localization:
    lane = search.probe.lane
    found, wrong_too = _finish_by_right_lane(search, right_lanes)
    if found is not None:
        return found
    if wrong_too:
        found = _without_const_eval(search, tuple(wrong_too))
        if found is not None:
            return found
    # every other lane computes it wrong too: a target-independent pass whose omission fixes it is
    # where it breaks (a pass that only makes a form one codegen mishandles would leave some lane right)
    every = len(right_lanes) > 0 and len(wrong_too) == len(right_lanes)
    tried, notes = [], []
    for phase in OMISSION_ORDER:
        found = _omit_in_phase(search, phase, lane)
        if found.pass_name:
            if every:
                return replace(found, certain=True, evidence=(
                    f"every lane tried ({', '.join([lane, *wrong_too])}) computes it wrong; {found.evidence}"))
            untried = sorted(set(right_lanes) - set(wrong_too))
            others = (f"{', '.join(untried)} could not run it" if untried else "no other lane runs here")
            return replace(found, evidence=(
                f"no lane computed it right, but {others}, so the pass may only make a form that {lane}'s "
                f"codegen mishandles; {found.evidence}"))
        tried.append(phase)
        if found.evidence.startswith("in `"):  # a form-only pass: worth saying
            notes.append(found.evidence)
    said = (("no lane computed it right; " if not right_lanes else "") +
            f"leaving out one pass of {', '.join(tried)} at a time names none that makes {lane} right")
    # nothing target-independent: the failing lane's own codegen, pass by pass (a bug in a codegen pass
    # that several targets share makes every lane wrong)
    found = _with_codegen_pass(search, search.done(phase=CODEGEN, certain=every))
    if found.pass_name:
        return replace(found, evidence=f"{said}; in {lane}'s codegen: {found.evidence}")
    return search.done(evidence=(
        f"not localized: {said} (the bug may be in codegen shared by every lane)" + "".join(f"; {n}" for n in notes)
        + (f"; in {lane}'s codegen: {found.evidence}" if found.evidence else "")))


def _finish_by_right_lane(search: _Search, right_lanes: tuple[str, ...],
                          note: str = "") -> tuple[Localization | None, list[str]]:
    """(where a lane right on the program places it by cross-lane finishing, or None; the lanes
    that computed the program wrong too). `note` starts the evidence."""
    lane = search.probe.lane
    wrong_too: list[str] = []
    for ref in right_lanes:
        start = search.ir("start")
        verdict = search.finish(start, "start", ref) if start is not None else Values.UNUSABLE
        if verdict != Values.RIGHT:  # not right on this program after all (a shrunk reproducer, its own bug)
            wrong_too += [ref] if verdict == Values.WRONG else []
            continue
        phase, why = _wrong_phase(search, ref)
        if phase == CODEGEN:
            return _with_codegen_pass(search, search.done(phase=CODEGEN, certain=True, finished_by=ref, evidence=note + (
                f"the IR {lane} has after `stream` (its last target-independent phase), compiled onward by {ref} "
                f"(`--compile-from=stream`), computes the right values: the bug is in {lane}'s codegen (or in the "
                f"device that runs its code)"))), wrong_too
        if phase:
            found = _omit_in_phase(search, phase, ref)
            prefix = (f"{why}; ") if why else ""
            return search.done(phase=phase, pass_name=found.pass_name, pass_class=found.pass_class, certain=True,
                               finished_by=ref, evidence=note + prefix + found.evidence), wrong_too
    return None, wrong_too


def _with_codegen_pass(search: _Search, loc: Localization) -> Localization:
    """`loc` (in the failing lane's codegen) with the codegen pass that makes it wrong, when the
    probe can replay its executables' lowering (`triage.codegen_pass`); its evidence says why not
    otherwise."""
    from shapefuzz.triage.codegen_pass import find_codegen_pass

    if getattr(search.probe, "lowerings", None) is None:
        return loc
    try:
        found = find_codegen_pass(search.probe, search.tick)  # type: ignore[arg-type]
    except _OutOfTime:
        return replace(loc, seconds=search.clock() - search.start, evidence="; ".join(
            filter(None, [loc.evidence, "the budget ran out replaying its codegen pass by pass"])))
    return replace(loc, pass_name=found.pass_name, pass_class=found.pass_class, ir_before=found.ir_before,
                   ir_after=found.ir_after, dispatch=found.function, seconds=search.clock() - search.start,
                   serialized=search.probe.lane if found.serialized else "",
                   evidence="; ".join(filter(None, [loc.evidence, found.evidence])))


def _without_const_eval(search: _Search, wrong_too: tuple[str, ...]) -> Localization | None:
    """Every lane tried computes it wrong: they may all read a constant that IREE's compile-time
    evaluator computed (JitGlobalsPass compiles hoisted constant expressions for llvm-cpu, whatever
    the target; measured: an avg pool's window count, 1 instead of 2, on every plain lane, while the
    single-dispatch lane, whose one dispatch hoists nothing, is wrong on llvm-cpu only). So the
    program is compiled with const-eval off (`Probe.without_const_eval`): the failing lane right
    there, the evaluated constant is the wrong value; still wrong with another lane right,
    cross-lane finishing places it. None: no evidence (the search goes on with const-eval on)."""
    make = getattr(search.probe, "without_const_eval", None)
    if make is None:
        return None
    lane, saved = search.probe.lane, (search.probe, search.irs)
    search.probe, search.irs = make(), {}
    try:
        start = search.ir("start")
        own = search.finish(start, "start", lane) if start is not None else Values.UNUSABLE
        every = f"every lane tried ({', '.join([lane, *wrong_too])}) computes it wrong"
        if own == Values.RIGHT:
            said = (f"{every}, and {lane} computes it right with `{NO_CONST_EVAL}`: the wrong value is a constant "
                    f"IREE's compile-time evaluator computed (JitGlobalsPass compiles the hoisted constant expressions "
                    f"for {JIT_LANE}, whatever the target)")
            return _in_jit_codegen(search, said) or search.done(
                phase="global-optimization", pass_name=CONST_EVAL_PASS, pass_class="JitGlobalsPass", certain=True,
                evidence=said)
        if own == Values.WRONG:
            found, _ = _finish_by_right_lane(search, wrong_too, note=(
                f"{every} (they read constants IREE's compile-time evaluator computed for llvm-cpu); with "
                f"`{NO_CONST_EVAL}`: "))
            if found is not None:
                return found
    finally:
        search.probe, search.irs = saved
    return None


def _in_jit_codegen(search: _Search, said: str) -> Localization | None:
    """The codegen pass of the compile-time evaluator's lane (llvm-cpu) that computes the wrong
    constant: that lane's own program, const-eval off, still wrong, replayed pass by pass
    (`Probe.for_lane`; None: it is right there, does not run here, or no pass is named)."""
    make = getattr(search.probe, "for_lane", None)
    jit = make(JIT_LANE) if make is not None and search.probe.lane != JIT_LANE else None
    if jit is None:
        return None
    saved = (search.probe, search.irs)
    search.probe, search.irs = jit, {}
    try:
        start = search.ir("start")
        if start is None or search.finish(start, "start", JIT_LANE) != Values.WRONG:
            return None
        found = _with_codegen_pass(search, search.done(phase=CODEGEN, certain=True, target=JIT_LANE))
    except _OutOfTime:  # the evaluator's constant is still the place found
        return None
    finally:
        search.probe, search.irs = saved
    if not found.pass_name:
        return None
    return replace(found, evidence=(f"{said}; {JIT_LANE} computes it wrong with `{NO_CONST_EVAL}` too, in its own "
                                    f"code: {found.evidence}"))


def _wrong_phase(search: _Search, ref: str) -> tuple[str, str]:
    """(the first phase whose IR, finished by `ref`, computes wrong values, or CODEGEN when even the
    IR after the last one is right, or "" when no answer; the evidence)."""
    lane = search.probe.lane
    last = search.ir(PHASES[-1])
    if last is None:
        return "", ""
    verdict = search.finish(last, PHASES[-1], ref)
    if verdict == Values.RIGHT:
        return CODEGEN, ""
    if verdict == Values.UNUSABLE:
        return "", ""
    lo, hi = -1, len(PHASES) - 1  # IR before PHASES[0] (the input) is right on ref; after PHASES[hi] wrong
    while hi - lo > 1:
        mid = (lo + hi) // 2
        ir = search.ir(PHASES[mid])
        verdict = search.finish(ir, PHASES[mid], ref) if ir is not None else Values.UNUSABLE
        if verdict == Values.UNUSABLE:
            return "", ""
        if verdict == Values.WRONG:
            hi = mid
        else:
            lo = mid
    before = f"after `{PHASES[lo]}` right, " if lo >= 0 else ""
    return PHASES[hi], (f"{lane}'s IR finished by {ref}: {before}after `{PHASES[hi]}` wrong")


def _omit_in_phase(search: _Search, phase: str, finisher: str) -> Localization:
    """The pass of `phase` whose omission makes the values right (finished by `finisher`), or a
    Localization without a pass saying why not."""
    index = PHASES.index(phase)
    after = PHASES[index - 1] if index else "start"
    before = search.ir(after)
    if before is None:
        return search.done(evidence=f"no IR before `{phase}`")
    search.tick()
    runs = pass_runs(search.probe.phase_dump(before, after, phase))
    if not runs:
        return search.done(evidence=f"no pass list for `{phase}`")
    search.tick()
    baseline = search.probe.replay(before, pipeline_text(runs))
    if baseline is None or search.finish(baseline, phase, finisher) != Values.WRONG:
        return search.done(evidence=f"`{phase}` replayed with iree-opt does not reproduce the failure")
    # from the last pass that changed the module back: the first whose omission makes the values
    # right is the last such pass in pipeline order (earlier ones make the form it mishandles)
    tried = 0
    form_only: list[PassRun] = []
    for run in reversed(omittable(runs)):
        search.tick()
        ir = search.probe.replay(before, pipeline_text(runs, omit=run.name))
        if ir is None or ir == baseline:  # the rest of the phase needs it, or it changed nothing here
            continue
        tried += 1
        if search.finish(ir, phase, finisher) == Values.RIGHT:
            if _FORM_ONLY.search(run.name):  # it changes how ops are spelled, not what they compute
                form_only.append(run)
                continue
            return search.done(phase=phase, pass_name=run.name, pass_class=run.cls, evidence=(
                f"`{phase}` replayed with iree-opt and finished by {finisher} (`--compile-from={phase}`) goes "
                f"wrong; the same without {run.name} computes the right ones (the last of its passes "
                f"that changed the module whose omission does; {tried} omission(s) tried)"))
    if form_only:
        return search.done(evidence=(
            f"in `{phase}` only omitting {', '.join(r.cls for r in form_only)} makes the values right, and it "
            "changes how ops are spelled, not what they compute: what mishandles that form comes later "
            "(codegen, when every lane fails)"))
    return search.done(evidence=f"omitting no single pass of `{phase}` makes the values right ({tried} tried)")


def frontend_open(loc: Localization) -> bool:
    """Whether a frontend spelling's own conversion may still be where it breaks: the localization
    did not name a pass, or placed it no later than `input` without a pass (certainly placed
    after `input`, or at a named pass, it is not the frontend's)."""
    return not (loc.certain and loc.phase and (loc.phase != PHASES[0] or loc.pass_name))


_EXT_OP = re.compile(r"\biree_linalg_ext\.(\w+)")


def algorithm_ops(ir: str) -> frozenset[str]:
    """The `iree_linalg_ext` ops a program's IR holds (after `flow`: what its dispatches compute with),
    their terminator aside: a torch top-k becomes a `sort` of the whole dim, `iree_linalg_ext.topk` stays one."""
    return frozenset(op for op in _EXT_OP.findall(ir) if op != "yield")


def unlike_text(spelling: str, own: frozenset[str], linalg: frozenset[str]) -> str:
    """Why the linalg spelling's values say nothing of the `spelling` conversion: the two lower to
    different algorithms (`algorithm_ops` of each after `flow`); "" when they are the same."""
    if own == linalg:
        return ""
    ops = lambda names: " and ".join(f"iree_linalg_ext.{n}" for n in sorted(names)) or "no iree_linalg_ext op"  # noqa: E731
    return (f"the same computation written in linalg is not the same algorithm after `flow`: it lowers to {ops(linalg)}, "
            f"the {spelling} spelling to {ops(own)}, so its values say nothing of the "
            f"{FRONTEND_NAMES.get(spelling, spelling)} conversion")


def with_frontend(loc: Localization, spelling: str, lane: str, linalg: Values,
                  torch: Values | None = None, unlike: str = "") -> Localization:
    """`loc` for a program spelled in `spelling` ("torch", "onnx", "stablehlo"), given how the same computation
    written in linalg (and, for ONNX, in torch) came out on `lane`: in the frontend conversion
    when the linalg form is right there (the torch form wrong too: torch-mlir's lowering, which
    the ONNX import goes through; right: the ONNX import), or when a right lane showed the IR
    already wrong after `input`; when the linalg form is wrong too, not the frontend's (said).
    `unlike` (`unlike_text`): the linalg form lowers to another algorithm, so its values are no evidence
    either way (audit A: torch's top-1 of 512 is a sort, `iree_linalg_ext.topk` is not; a driver's loop
    limit was placed in torch-mlir); it is said, and only the IR after `input` can place it there."""
    if spelling not in FRONTEND_NAMES or not frontend_open(loc):
        return loc
    if unlike and linalg in (Values.RIGHT, Values.WRONG):
        linalg = Values.UNUSABLE
        loc = replace(loc, evidence=f"{loc.evidence}; {unlike}" if loc.evidence else unlike)
    if linalg == Values.WRONG:
        said = (f"the same computation written in linalg computes wrong values on {lane} too, so it is not the "
                f"{FRONTEND_NAMES[spelling]} conversion's")
        return replace(loc, evidence=f"{loc.evidence}; {said}" if loc.evidence else said)
    wrong_after_input = loc.certain and loc.phase == PHASES[0] and bool(loc.finished_by)
    if linalg != Values.RIGHT and not wrong_after_input:
        return loc
    which = spelling if spelling not in ("torch", "onnx") else \
        "torch" if spelling == "torch" or torch == Values.WRONG else "onnx"
    name = FRONTEND_NAMES[which]
    told = []
    if wrong_after_input:
        told.append(f"{loc.evidence}: the IR is already wrong after the {spelling} spelling's conversion to linalg")
    if linalg == Values.RIGHT:
        told.append(f"the {spelling} spelling computes wrong values on {lane} while the same computation written in "
                    f"linalg computes the right ones there")
    if spelling == "onnx" and torch in (Values.RIGHT, Values.WRONG):
        told.append("its torch spelling is " + ("wrong too (torch-mlir lowers both)" if torch == Values.WRONG else "right"))
    searched = f" (pass by pass: {loc.evidence})" if loc.evidence and not wrong_after_input else ""
    return replace(loc, phase=PHASES[0], pass_name="", pass_class="", certain=True, frontend=which, evidence=(
        "; ".join(told) + f": the bug is in the {name} conversion, before IREE's global optimization{searched}"))


__all__ = ["CODEGEN", "CONST_EVAL_PASS", "NO_CONST_EVAL", "FRONTEND_NAMES", "Localization", "OMISSION_ORDER", "PHASES", "PassRun", "Probe", "Values",
           "algorithm_ops", "frontend_open", "localize", "omittable", "pass_runs", "pipeline_text", "unlike_text",
           "with_frontend"]
