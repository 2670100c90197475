"""Which pass of a target's codegen makes a wrong value: the failing lane's executables are lowered
again with one pass of a dispatch's lowering pipeline left out, each compile run and judged. Pure
logic over a `CodegenProbe` (the IREE side: `shapefuzz.judge.codegen_probe`), plus the text work it
needs; tested with fakes.

Measured on IREE 3.13:
- A dispatch function's lowering pipeline (`LLVMCPULowerExecutableTargetPass`,
  `SPIRVLowerExecutableTargetPass`, `VMVXLowerExecutableTargetPass`: the one its
  `translation_info` names, e.g. `#iree_cpu.pipeline<DoubleTilingExpert>`) runs its passes as a
  nested pipeline; `--mlir-print-ir-tree-dir` writes each one's IR in the function's own folder
  with its options in the header (`// -----// IR Dump After GenericVectorizationPass:
  iree-codegen-generic-vectorization{enable-cleanup=true ...}`), the lowering pass last.
- The same list written back as `translation_info<pipeline = #iree_codegen.pass_pipeline<"...">>`
  in the IR after `executable-configurations` and compiled on (`--compile-from=executable-configurations`)
  lowers that function by exactly those passes: the whole list reproduces the wrong value, and
  the list without one pass is that pass left out. It all runs inside iree-compile, so the
  passes iree-opt does not register (`arith-expand`) are no obstacle.
- The passes after the lowering pipeline (conversion to LLVM or SPIR-V, serialization) are not
  replayed: they run at module level, outside what a `pass_pipeline` holds.
- A list is not always the pipeline: a named CPU pipeline's bufferization puts its buffers on the
  stack, the same pass in a list on the heap, and that alone went wrong (a strided gather: `Default`
  right by name, wrong as its own list). So a replay counts only when the function's IR after it is the
  pipeline's own (`replayed_ir`, where the probe has it).
When leaving no pass out makes it right, the configuration is changed (a GPU workgroup of one
thread, the CPU `Default` pipeline), then the target's flags that switch a pass off are tried. A
configuration that makes it right names no pass: the strategy-selection pass only chose the pipeline,
the bad IR is made by one of that pipeline's passes (measured: a stride-2 `extract_slice` folded as
stride 1 by OptimizeTensorInsertExtractSlices under DoubleTilingExpert, which no replay could test),
so the finding lists them."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Protocol, Sequence

from shapefuzz.triage.culprit import dumps_in
from shapefuzz.triage.localize_types import PassRun, Values

_HEADER = re.compile(r"^// -----// IR Dump After (\S+): (.*?) //----- //$")
_CONTAINER = re.compile(r"lower-executable-target")  # a lowering pipeline's own pass: it ran the others
_FUNC_DIR = re.compile(r"^func_func_(.+)$")
_EXECUTABLE_DIR = re.compile(r"^hal_executable_(?!variant_)(.+)$")
# `translation_info<pipeline = ...>`: a named pipeline (`#iree_cpu.pipeline<DoubleTilingExpert>`,
# `#iree_gpu.spirv_pipeline<BaseDistribute>`, `#iree_codegen.vmvx_pipeline`)
_PIPELINE = re.compile(r"pipeline = (#[\w.]*pipeline(?:<(\w*)>)?)")
_WORKGROUP = re.compile(r"workgroup_size = \[([\d, ]+)\]")
_ALIAS_USE = re.compile(r"translation_info = (#[\w$.-]+)(?=[,}\s])")
_CPU_PIPELINE = "#iree_cpu.pipeline<"
IR_LINES = 40  # how much of the IR before and after the culprit a report shows
IR_LINE_CHARS = 160


@dataclass(frozen=True)
class Lowering:
    """One dispatch function's lowering pipeline as it ran."""

    function: str  # the dispatch function's symbol
    executable: str
    runs: tuple[PassRun, ...]  # its passes in order (the lowering pass itself not among them)
    lowerer: PassRun  # the lowering pass (LLVMCPULowerExecutableTargetPass)
    dumps: tuple[Path, ...] = ()  # each run's IR dump, same order
    before: Path | None = None  # the function before its first pass (None: not dumped)
    after: Path | None = None  # the function after the lowering pass, its whole pipeline run (None: not dumped)

    def arguments(self, omit: str = "") -> list[str]:
        return [r.arg for r in self.runs if r.name != omit]

    def candidates(self) -> list[PassRun]:
        """Each distinct pass that changed the function, in order of first change."""
        seen: dict[str, PassRun] = {}
        for run in self.runs:
            if run.changed:
                seen.setdefault(run.name, run)
        return list(seen.values())

    def ir_around(self, name: str) -> tuple[str, str]:
        """The function before and after the first run of `name` that changed it (trimmed)."""
        for i, run in enumerate(self.runs):
            if run.name == name and run.changed and i < len(self.dumps):
                before = self.dumps[i - 1] if i else self.before
                return (_body(before) if before else "", _body(self.dumps[i]))
        return "", ""

    @property
    def strategy_pass(self) -> tuple[str, str]:
        """(argument, class) of the pass that chose this pipeline: the target's lowering-strategy pass."""
        return (self.lowerer.name.replace("lower-executable-target", "select-lowering-strategy"),
                self.lowerer.cls.replace("LowerExecutableTarget", "SelectLoweringStrategy"))


def _body(path: Path) -> str:
    try:
        return _without_header(path.read_text(errors="replace"))
    except OSError:
        return ""


def _without_header(text: str) -> str:
    return text.split("\n", 1)[1] if text.startswith("// -----//") else text


def trimmed(ir: str, lines: int = IR_LINES, chars: int = IR_LINE_CHARS) -> str:
    """`ir` cut to its first `lines` lines of at most `chars` characters each, said where cut."""
    kept = [line if len(line) <= chars else line[:chars] + " …" for line in ir.strip("\n").splitlines()]
    return "\n".join(kept[:lines] + ([f"// ... {len(kept) - lines} more lines"] if len(kept) > lines else []))


def lowerings_in(tree: Path) -> list[Lowering]:
    """Every dispatch function's lowering pipeline in a `--mlir-print-ir-after-all
    --mlir-print-ir-tree-dir` folder of `--compile-to=executable-targets`, in the order they ran.
    A pass counts as changing the function when its dump differs from the one before it."""
    by_function: dict[Path, list] = {}
    for dump in dumps_in(tree):
        if _FUNC_DIR.match(dump.path.parent.name):
            by_function.setdefault(dump.path.parent, []).append(dump)
    found = []
    for folder, dumps in by_function.items():
        runs: list[PassRun] = []
        paths: list[Path] = []
        previous: str | None = None
        for dump in dumps:
            text = dump.path.read_text(errors="replace")
            head, _, body = text.partition("\n")
            m = _HEADER.match(head)
            if m is None:
                continue
            run = PassRun(m.group(1), m.group(2), "func.func", changed=previous is None or body != previous)
            if _CONTAINER.search(run.name):
                executable = next((e.group(1) for part in folder.parts if (e := _EXECUTABLE_DIR.match(part))), "")
                function = _FUNC_DIR.match(folder.name).group(1)  # type: ignore[union-attr]
                found.append((dumps[0].order, Lowering(function, executable, tuple(runs), run, tuple(paths),
                                                       after=dump.path)))
                break
            runs.append(run)
            paths.append(dump.path)
            previous = body
    return [lowering for _, lowering in sorted(found, key=lambda pair: pair[0])]


def translation_line(ir: str, function: str) -> tuple[int, int] | None:
    """The span of `func.func @function(...)`'s line in `ir` (None: not there)."""
    m = re.search(r"^[ \t]*func\.func (?:\w+ )?@" + re.escape(function) + r"\(.*$", ir, re.M)
    return (m.start(), m.end()) if m else None


def _resolved(ir: str, line: str) -> str:
    """`line` with a `translation_info = #alias` written out from the alias's definition in `ir`."""
    use = _ALIAS_USE.search(line)
    if use is None or use.group(1).startswith("#iree_codegen."):
        return line
    definition = re.search(r"^" + re.escape(use.group(1)) + r" = (.*)$", ir, re.M)
    return line if definition is None else line.replace(use.group(0), f"translation_info = {definition.group(1)}", 1)


def pipeline_of(ir: str, function: str, attribute: bool = False) -> str:
    """The name of the pipeline `function`'s translation_info names ("DoubleTilingExpert"; with
    `attribute`, the whole attribute: "#iree_cpu.pipeline<DoubleTilingExpert>"), or ""."""
    span = translation_line(ir, function)
    m = _PIPELINE.search(_resolved(ir, ir[span[0]:span[1]])) if span else None
    return "" if m is None else m.group(1) if attribute else (m.group(2) or m.group(1))


def workgroup_of(ir: str, function: str) -> tuple[int, ...]:
    span = translation_line(ir, function)
    m = _WORKGROUP.search(_resolved(ir, ir[span[0]:span[1]])) if span else None
    return tuple(int(n) for n in m.group(1).split(",")) if m else ()


def with_translation(ir: str, function: str, passes: Sequence[str] | None = None,
                     pipeline: str = "", workgroup: Sequence[int] = ()) -> str | None:
    """`ir` with `function`'s translation_info changed: its pipeline replaced by the pass list
    `passes` (`#iree_codegen.pass_pipeline<"...">`) or by the attribute `pipeline`, and/or its
    workgroup size by `workgroup`. None when the function or its pipeline is not found."""
    span = translation_line(ir, function)
    if span is None:
        return None
    line = _resolved(ir, ir[span[0]:span[1]])
    m = _PIPELINE.search(line)
    if m is None:
        return None
    if passes is not None:
        text = ",".join(passes).replace("\\", "\\\\").replace('"', '\\"')
        line = line[:m.start(1)] + f'#iree_codegen.pass_pipeline<"{text}">' + line[m.end(1):]
    elif pipeline:
        line = line[:m.start(1)] + pipeline + line[m.end(1):]
    if workgroup:
        line, n = _WORKGROUP.subn(f"workgroup_size = [{', '.join(map(str, workgroup))}]", line, count=1)
        if not n:
            return None
    return ir[:span[0]] + line + ir[span[1]:]


@dataclass(frozen=True)
class FlagTry:
    """A flag IREE exposes that switches one codegen pass off or changes it."""

    flag: str
    pass_name: str  # what it controls, as a pass argument ("loop-vectorize": LLVM's own passes)
    pass_class: str
    what: str  # for the evidence: "turns LLVM's loop vectorizer off"


# per target backend (the `hal.executable.variant` target): flags of `iree-compile --help` that leave a
# codegen pass out or change it, each a compile judged against the reference. The lowering pipeline's
# own passes are covered by pass omission; these reach what it cannot (LLVM's optimizer, run on the
# LLVM IR after the MLIR pipeline) and the tiling knobs the configuration reads.
FLAG_TABLE: dict[str, tuple[FlagTry, ...]] = {
    "llvm-cpu": (
        FlagTry("--iree-llvmcpu-loop-vectorization=false", "loop-vectorize", "LoopVectorizePass",
                "turns LLVM's loop vectorizer off"),
        FlagTry("--iree-llvmcpu-slp-vectorization=false", "slp-vectorizer", "SLPVectorizerPass",
                "turns LLVM's SLP vectorizer off"),
        FlagTry("--iree-llvmcpu-loop-unrolling=false", "loop-unroll", "LoopUnrollPass", "turns LLVM's loop unroller off"),
        FlagTry("--iree-llvmcpu-disable-vector-peeling", "iree-llvmcpu-peel", "LLVMCPUPeelPass",
                "leaves out the peeling before vectorization"),
        FlagTry("--iree-llvmcpu-disable-distribution", "iree-codegen-tile-and-distribute-to-workgroups-using-forall-op",
                "TileAndDistributeToWorkgroupsUsingForallOpPass", "leaves out the distribution to workgroups"),
        FlagTry("--iree-llvmcpu-enable-ukernels=none", "iree-codegen-cpu-lower-to-ukernels", "CPULowerToUKernelsPass",
                "turns the microkernels off"),
    ),
}


class CodegenProbe(Protocol):
    """What the codegen pass search runs (`shapefuzz.judge.codegen_probe`)."""

    lane: str

    def lowerings(self) -> list[Lowering] | None:
        """The failing lane's dispatch lowering pipelines (None: the executables could not be dumped)."""

    def lower(self, function: str, passes: Sequence[str] | None = None, pipeline: str = "",
              workgroup: Sequence[int] = ()) -> Values:
        """The program with `function`'s translation_info changed (`with_translation`), compiled on
        from its executables' configuration and run."""

    def configured_ir(self) -> str | None:
        """The failing lane's IR after `executable-configurations`."""

    def with_flags(self, flags: Sequence[str]) -> Values:
        """The program compiled with `flags` added, and run."""

    def target_backend(self) -> str:
        """The lane's codegen target ("llvm-cpu", "vulkan-spirv", "vmvx")."""

    # optional: `replayed_ir(function, passes) -> str | None`, the function's IR after its lowering pass
    # when its translation_info is the pass list `passes` (None: not dumped): whether a replay is the lowering


@dataclass(frozen=True)
class CodegenFinding:
    pass_name: str = ""
    pass_class: str = ""
    evidence: str = ""
    ir_before: str = ""
    ir_after: str = ""
    function: str = ""
    serialized: bool = False  # right with one invocation a workgroup, wrong with the configured size


def find_codegen_pass(probe: CodegenProbe, tick: Callable[[], None]) -> CodegenFinding:
    """The codegen pass that makes `probe.lane`'s values wrong (see the module text), or a finding
    without a pass whose evidence says why not. `tick` is called before each compile (it raises
    when the budget is spent)."""
    lane = probe.lane
    tick()
    lowerings = probe.lowerings()
    configured = probe.configured_ir() if lowerings else None
    if not lowerings or configured is None:
        return CodegenFinding(evidence=f"{lane}'s executables could not be dumped pass by pass")
    # in program order (a hoisted constant's initializer first); each dispatch's whole list first: it
    # must reproduce the wrong value for an omission to say anything
    lowerings = sorted(lowerings, key=lambda low: (translation_line(configured, low.function) or (len(configured),))[0])
    faithful: list[Lowering] = []
    notes: list[str] = []
    omitted: dict[str, list[tuple[str, Values]]] = {}  # each dispatch's omissions and how they came out
    tried = 0
    for lowering in lowerings:
        tick()
        replayed = probe.lower(lowering.function, lowering.arguments())
        if replayed != Values.WRONG:
            notes.append(f"@{lowering.function}'s lowering replayed as a pass list " + (
                "computes the right values (not the same lowering)" if replayed == Values.RIGHT else "does not compile"))
            continue
        unlike = _unlike_lowering(probe, lowering)
        if unlike:
            notes.append(unlike)
            continue
        faithful.append(lowering)
        pipeline = pipeline_of(configured, lowering.function)
        for run in reversed(lowering.candidates()):
            tick()
            tried += 1
            outcome = probe.lower(lowering.function, lowering.arguments(omit=run.name))
            omitted.setdefault(lowering.function, []).append((run.name, outcome))
            if outcome != Values.RIGHT:
                continue
            before, after = lowering.ir_around(run.name)
            return CodegenFinding(run.name, run.cls, function=lowering.function, ir_before=trimmed(before),
                                  ir_after=trimmed(after), evidence=(
                f"the {pipeline or 'lowering'} pipeline of @{lowering.function} replayed pass by pass "
                f"(`translation_info<pipeline = #iree_codegen.pass_pipeline<\"...\">>`, compiled on from "
                f"`executable-configurations`) computes the wrong values on {lane}; the same without {run.name} "
                f"computes the right ones (the last of its passes that changed the function whose omission does; "
                f"{tried} omission(s) tried)"))
    chosen = _configuration(probe, lowerings, configured, omitted, tick)
    found = _flags(probe, tick)
    said = [*notes, chosen.evidence] if chosen is not None else notes  # what the replays said first
    if found is not None:
        return replace(found, evidence="; ".join([*said, found.evidence]))
    if chosen is not None:
        return replace(chosen, evidence="; ".join(said))
    flags = FLAG_TABLE.get(probe.target_backend(), ())
    return CodegenFinding(evidence="; ".join([*notes, (
        f"leaving out one pass of a dispatch's lowering pipeline at a time names none ({tried} omission(s) tried "
        f"in {len(faithful)} dispatch(es); the passes after it, the conversion to the target's code, are not "
        "replayed)")] + ([f"no flag of {', '.join(f.flag for f in flags)} makes it right"] if flags else [])))


def _unlike_lowering(probe: CodegenProbe, lowering: Lowering) -> str:
    """Why `lowering` replayed as a pass list is not that lowering, though it computes wrong values too
    ("" when it is, or the probe cannot tell): its IR after the pipeline differs from the pipeline's own
    (measured on 3.13, llvm-cpu: bufferization in a named pipeline allocates on the stack, as a pass of a
    list on the heap, and a heap buffer in the dispatch went wrong by itself: the `Default` pipeline was
    right by name and wrong as its own pass list, so every omission from the list said nothing)."""
    replayed_ir = getattr(probe, "replayed_ir", None)
    own = _body(lowering.after) if lowering.after is not None else ""
    replayed = replayed_ir(lowering.function, lowering.arguments()) if replayed_ir is not None and own else None
    if replayed is None:
        return ""
    ours, theirs = _lines(own), _lines(_without_header(replayed))
    if ours == theirs:
        return ""
    _, i, i_end, j, j_end = next(op for op in difflib.SequenceMatcher(None, ours, theirs, autojunk=False).get_opcodes()
                                 if op[0] != "equal")
    said = lambda lines, k, end: f"`{lines[k].strip()[:IR_LINE_CHARS]}`" if k < end else "nothing"  # noqa: E731
    return (f"@{lowering.function}'s lowering replayed as a pass list computes wrong values too, but is not the same "
            f"lowering: after the pipeline the replay has {said(theirs, j, j_end)} where the pipeline's own has "
            f"{said(ours, i, i_end)}, so no pass was left out of it")


def _lines(body: str) -> list[str]:
    """A function's IR as compared: without its `func.func` line, which names the translation_info."""
    return [line for line in body.strip("\n").splitlines()[1:] if line.strip()]


def _configuration(probe: CodegenProbe, lowerings: list[Lowering], configured: str,
                   omitted: dict[str, list[tuple[str, Values]]], tick: Callable[[], None]) -> CodegenFinding | None:
    """A configuration change that makes the values right: one thread a workgroup (GPU targets),
    the `Default` pipeline (CPU), each on one dispatch. It names no pass (see the module text): its
    evidence says under which configuration it is right and wrong, and lists the wrong one's passes
    that changed the function, with those whose omission could not be judged (`omitted`)."""
    lane = probe.lane
    for lowering in lowerings:
        pipeline = pipeline_of(configured, lowering.function)
        workgroup = workgroup_of(configured, lowering.function)
        changes: list[tuple[str, str, dict]] = []
        if workgroup and any(n > 1 for n in workgroup):
            changes.append((f"with `workgroup_size = [{', '.join('1' * len(workgroup))}]`",
                            f"with [{', '.join(map(str, workgroup))}] under {pipeline}", {"workgroup": (1,) * len(workgroup)}))
        if pipeline_of(configured, lowering.function, attribute=True).startswith(_CPU_PIPELINE) and pipeline != "Default":
            changes.append(("under the `Default` pipeline", f"under {pipeline}", {"pipeline": _CPU_PIPELINE + "Default>"}))
        for right, wrong, change in changes:
            tick()
            if probe.lower(lowering.function, **change) == Values.RIGHT:
                return CodegenFinding(function=lowering.function, serialized="workgroup" in change, evidence=_among(
                    lowering, pipeline, lane, right, wrong, omitted.get(lowering.function, [])))
    return None


def _among(lowering: Lowering, pipeline: str, lane: str, right: str, wrong: str,
           omitted: list[tuple[str, Values]]) -> str:
    """The evidence of a configuration that makes it right: where the culprit is left to look."""
    names = [run.name for run in lowering.candidates()]
    unjudged = [name for name, outcome in omitted if outcome == Values.UNUSABLE]
    wrong_too = [name for name, outcome in omitted if outcome == Values.WRONG]
    return (f"@{lowering.function} computes the right values on {lane} {right}, wrong {wrong}; "
            f"{lowering.strategy_pass[1]} only chose that configuration, the culprit is among {pipeline}'s passes "
            f"that changed the function: {', '.join(names) or 'none recorded'} (or the conversion after them, "
            "which reads the form they leave)"
            + (f"; left out alone, {len(wrong_too)} of them still compute wrong values (another pass may make "
               "the same IR)" if wrong_too else "")
            + (f"; without {', '.join(unjudged)} it does not compile, so those are untried" if unjudged else ""))


def _flags(probe: CodegenProbe, tick: Callable[[], None]) -> CodegenFinding | None:
    for flag in FLAG_TABLE.get(probe.target_backend(), ()):
        tick()
        if probe.with_flags((flag.flag,)) == Values.RIGHT:
            return CodegenFinding(flag.pass_name, flag.pass_class, evidence=(
                f"no single pass of its lowering pipeline left out makes it right, but with `{flag.flag}` (it "
                f"{flag.what}) {probe.lane} computes the right values"))
    return None


__all__ = ["FLAG_TABLE", "CodegenFinding", "CodegenProbe", "FlagTry", "Lowering", "find_codegen_pass",
           "lowerings_in", "pipeline_of", "trimmed", "with_translation", "workgroup_of"]
