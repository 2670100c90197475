"""`--format issue`: Markdown following iree-org/iree's bug report form, with the files to attach
(a run-module folder), re-checked on this toolchain so the report says what it does today."""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.corpus import CorpusEntry, comment_text, scrub
from shapefuzz.errors import ShapefuzzError, UsageError
from shapefuzz.export.plan import Plan, element_type, number_text
from shapefuzz.export.run_module import run_module_argv, write_run_module
from shapefuzz.families.base import LINALG
from shapefuzz.files import atomic_write
from shapefuzz.markup import code, comment, fenced, spans, text
from shapefuzz.model import Stage, Status
from shapefuzz.shrink import lowered_stage
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.component import component_of, plain_lanes, target_independent
from shapefuzz.triage.cpus import CpuSpread, cpu_spread_of
from shapefuzz.triage.severity import overflow_note
from shapefuzz.triage.shown import (
    COMPILES, OTHER, PASSES, SAME, UNSUPPORTED, LaneRun, ShownRuns, component_said, reproducer_digest, reproduces_on, same_failure,
    scope_said, shown_runs_of, stated_triage, triage_text)
from shapefuzz.triage.shown_output import shown_compile_output
from shapefuzz.triage.tracker import LLVM_URL, TORCH_MLIR_URL, tracker_of
from shapefuzz.triage.issue import (
    backtrace_lines, cut_chain, entry_chain, issue_title, lane_lines, regression_line, reproducer_chain, without_header)


OUTPUT_FILE = "output.txt"  # in the files folder: the failure's output the text shows a part of
RECHECKED = "With this toolchain, on each backend (this reproducer, re-checked here):"


@dataclass(frozen=True)
class IssueContext:
    """What the bug report needs beyond the entry: facts about the toolchain it is filed against."""

    version_text: str  # `iree-compile --version`, as printed
    verdicts: tuple[str, ...]  # one line per backend the entry was checked on, with this toolchain
    detail: str = ""  # the error (or mismatch) its own backend gives today, paths cut
    host_cpu: str = ""  # what `--iree-llvmcpu-target-cpu=host` is on the machine that writes the report
    host_features: str = ""  # the features `host` has there beyond its name's (iree.host_cpu), "" for none
    # the shown reproducer's own runs on its lanes (triage.shown): what "Reproduces on" may name; None: none known
    shown: ShownRuns | None = None
    verdicts_header: str = RECHECKED  # what the `verdicts` lines are of
    reported: str = ""  # the upstream issue a corpus entry of this bug was marked reported as (`corpus mark`)
    cpus: CpuSpread | None = None  # the reproducer compiled for other CPUs than the host (None: meta.json's record)


def issue_plan(entry: CorpusEntry, toolchain: Toolchain, expect: str = "auto") -> Plan:
    """The plan of a bug report: with inputs and expected results only where the report shows or
    runs them (a wrong value, a run-time failure). A compile failure's report needs the reproducer
    alone; its entry keeps no arrays when its lane only compiles here, and building its NumPy
    reference just to write the report took seconds and GBs for a large attention."""
    from shapefuzz.export.plan import plan

    return plan(entry, toolchain, expect, values=entry.signature.stage in (Stage.RUN, Stage.COMPARE))


def issue_context(p: Plan, toolchain: Toolchain) -> IssueContext:
    """Runs `iree-compile --version` and re-checks the reproducer on the backends the entry was
    checked on (that compile here), so the report says what this toolchain does today."""
    from shapefuzz.recheck.replay import check_entry
    from shapefuzz.process.sandbox import Limits, run_sandboxed

    shown = run_sandboxed([str(toolchain.compile_bin), "--version"], Limits(timeout=60.0))
    version_text = (shown.stdout + shown.stderr).strip() or f"(iree-compile --version exited {shown.returncode})"
    probe = toolchain.probe
    lanes = (p.entry.meta.get("bug") or {}).get("lanes") or []  # every lane where it reproduced
    seen = [p.backend.name, *p.entry.backends, *lanes]
    # each variant lane's plain lane too: the text says "only with <flags>" only where it ran (`scope_said`)
    names = [b for b in dict.fromkeys([*seen, *plain_lanes(seen)]) if b in BACKENDS and BACKENDS[b].compiles(probe)]
    lines = [f"{text(b)}: not supported by this iree-compile" for b in p.entry.backends
             if b in BACKENDS and not BACKENDS[b].compiles(probe)]
    try:
        report = check_entry(p.entry, toolchain, names, confirm=False)
    except ShapefuzzError as error:
        return IssueContext(version_text, (*lines, f"could not re-check it here: {text(error)}"))
    if report.verify_error:
        lines.insert(0, "the reproducer does not verify with this toolchain: "
                        + text((report.verify_error.strip().splitlines() or ["?"])[0][:200]))
    detail = ""
    runs = []
    for r in report.results:
        if r.failed and r.backend == p.backend.name:
            detail = scrub(r.detail)
        runs.append(_lane_run(r, p.entry.signature, str((p.entry.meta.get("bug") or {}).get("identity") or "")))
        if r.failed:
            same = r.signature == p.entry.signature
            what = "fails the same way (this issue)" if same else f"fails differently: {code(r.signature)}"
        elif r.status == Status.SKIPPED or (r.status == Status.OK and r.stage == Stage.COMPILE):
            what = "compiles (no device to run it here)"
        elif r.status == Status.UNSUPPORTED:
            what = "unsupported by the target: " + text((r.detail.strip().splitlines() or [""])[0][:160])
        else:
            what = "passes (matches the reference)" if r.stage == Stage.COMPARE else f"passes {r.stage.value}"
        lines.append(f"{text(r.backend)}: {what}")
    # the runs just made are this reproducer's own; a verdict the campaign re-derived from its runs is kept
    kept = shown_runs_of(p.entry.meta, p.entry.mlir)
    own_runs = ShownRuns(reproducer_digest(p.entry.mlir), tuple(runs), triage=kept.triage if kept else "",
                         evidence=kept.evidence if kept else "")
    host = host_cpu_of(p, toolchain)
    return IssueContext(version_text, tuple(lines), detail, host, host_features_of(host, toolchain), shown=own_runs,
                        reported=str(p.entry.meta.get("reported") or ""), cpus=_cpus(p, toolchain))


def cpu_dependent(meta: dict, spread: CpuSpread | None) -> bool:
    """Whether "on another CPU it may not reproduce" can be true of this bug: not when it is placed
    in a target-independent phase, nor when every other CPU it was compiled for fails the same way."""
    if target_independent(str((meta.get("bug") or {}).get("component") or "")):
        return False
    return spread is None or not spread.fails_everywhere


def _cpus(p: Plan, toolchain: Toolchain) -> CpuSpread | None:
    """The entry's record of other CPUs when it is of this reproducer and complete, else taken here
    (within `recheck.cpus`' bound; None when its lane does not compile for the host CPU)."""
    from shapefuzz.recheck.cpus import cpu_spread

    known = cpu_spread_of(p.entry.meta, p.entry.mlir)
    if known is not None and not known.left:
        return known
    try:
        return cpu_spread(p.entry, toolchain)
    except ShapefuzzError:
        return known


def _lane_run(r, signature, identity: str) -> LaneRun:
    """One lane's result on the shown reproducer as `triage.shown` records it."""
    from shapefuzz.triage.identity import identity_of

    if r.failed:
        same = r.signature is not None and same_failure(
            r.signature, identity_of(r.stage.value, r.status.value, r.signature.message, r.detail).key, signature,
            identity)
        return LaneRun(r.backend, SAME if same else OTHER,
                       "fails the same way" if same else f"fails differently ({r.signature})")
    if r.status == Status.UNSUPPORTED:
        return LaneRun(r.backend, UNSUPPORTED, "unsupported by the target")
    if r.status == Status.SKIPPED or r.stage == Stage.COMPILE:
        return LaneRun(r.backend, COMPILES, "compiles (not executed here)")
    return LaneRun(r.backend, PASSES, "passes (matches the reference)" if r.stage == Stage.COMPARE
                   else f"passes {r.stage.value}")


def host_cpu_of(p: Plan, toolchain: Toolchain) -> str:
    """The host CPU's name when the report's compile command targets `host`, else ""."""
    from shapefuzz.iree.host_cpu import host_cpu, uses_host_cpu

    own = p.entry.meta.get("compile_command")
    return host_cpu(toolchain) if uses_host_cpu(p.flags) or uses_host_cpu(own) else ""


def host_features_of(host: str, toolchain: Toolchain) -> str:
    """`iree.host_cpu.host_features_beyond_name` where the report names a host CPU, else ""."""
    from shapefuzz.iree.host_cpu import host_features_beyond_name

    return host_features_beyond_name(toolchain) if host else ""


def components(meta: dict, mlir: str, stage: Stage) -> list[str]:
    """The report form's components: "Frontends" only for a bug placed in a frontend conversion
    (a torch, ONNX or StableHLO spelling whose bug is IREE's says nothing about frontends); an
    entry with no component yet goes by its spelling."""
    from shapefuzz.iree.input_dialect import is_frontend

    parts = ["Runtime"] if stage == Stage.RUN else ["Compiler"]
    placed = str((meta.get("bug") or {}).get("component") or "")
    frontend = placed.startswith("frontend:") if placed else is_frontend(mlir)
    return (["Frontends"] if frontend else []) + parts


def shown_detail(p: Plan, context: IssueContext) -> str:
    """The failure's output the text quotes from (the entry's, else the re-check's)."""
    return str(p.entry.meta.get("detail") or context.detail).strip()


def _what_happened(p: Plan, context: IssueContext, files: str) -> list[str]:
    sig, b = p.entry.signature, p.backend
    detail = shown_detail(p, context)
    target = f"the {code(b.name)} backend ({text(b.description)})"
    bug = p.entry.meta.get("bug") or {}
    placed, failing = str(bug.get("component") or ""), str(bug.get("failing_pass") or "")
    # (a conversion's output failing in one target's codegen is placed in the conversion, yet fails there only)
    before_codegen = target_independent(placed) and (
        not failing or target_independent(component_of(sig.stage.value, sig.status.value, failing, (), [b.name])))
    if sig.stage == Stage.COMPILE and before_codegen:
        # (an audit read "rejects valid input for the vulkan-llvmpipe backend" over a torch-mlir bug every target meets)
        target = f"any target: it breaks in {text(placed)}, before codegen (shown here for {target})"
    if sig.stage == Stage.COMPILE:
        head = {
            Status.CRASH: f"`iree-compile` crashes on valid input for {target}.",
            Status.TIMEOUT: f"`iree-compile` does not finish on valid input for {target} (killed at shapefuzz's time limit).",
            Status.OOM: f"`iree-compile` grows its memory without bound on valid input for {target} "
                        "(killed at shapefuzz's address-space cap).",
        }.get(sig.status, f"`iree-compile` rejects valid input for {target}.")
        lines = [head + " The input verifies (`iree-opt` parses and verifies it); it should compile."]
    elif sig.stage == Stage.RUN:
        verb = {Status.CRASH: "crashes", Status.TIMEOUT: "does not finish", Status.OOM: "runs out of memory"}
        lines = [f"The module compiles for {target}, but `iree-run-module --device={b.driver}` "
                 f"{verb.get(sig.status, 'fails')} on it. It should run and return the results below."]
    else:
        voted = p.voted_reference
        against = ("a NumPy reference computed from the op's definition" if p.entry.case is not None else
                   f"{voted} (the reproducer was cut down as text from a generated case whose NumPy reference "
                   "both match)" if voted and p.expected is not None else
                   "the expected results saved with the reproducer" if p.expected is not None else
                   "what the other backends compute (majority vote)")
        lines = [f"{target[0].upper()}{target[1:]} computes wrong values: its results differ from {against}."]
    chain, by_ladder = entry_chain(p.entry.meta, p.entry.mlir)
    if chain and by_ladder:  # the device said which ops it needs (each dropped in turn there); the reproducer keeps all
        lines += ["", f"The op is inside a chain of ops, as frontends emit them. Run on the device with each context "
                      f"op dropped in turn (and the root alone, which passes), the failure needs {code(chain)}; "
                      f"the reproducer below keeps the whole chain it was found with."]
    elif chain:  # a chain case: the ops around the root that the reproducer keeps (none: a plain family bug)
        lines += ["", f"The op is inside a chain of ops, as frontends emit them: {code(chain)}. The reproducer keeps "
                      "these context ops around it (shapefuzz's shrinker drops each one the failure does not need)."]
    elif cut_chain(p.entry):  # cut down as plain text (shrink.case_stage) from a case drawn inside a chain
        cut_from = p.entry.cut_from
        lines += ["", f"It was found as a {cut_from.family if cut_from else 'generated'} case inside a chain of ops, as "
                      f"frontends emit them: {code(cut_chain(p.entry))} (that case is kept as `case.mlir`). "
                      "shapefuzz's shrinker then cut the module down as plain MLIR: the reproducer below keeps only "
                      "the ops the failure needs."]
    elif by_ladder and reproducer_chain(p.entry.mlir):
        lines += ["", "The reproducer keeps the chain of ops it was found with, but run on the device the root op "
                      "alone fails too: a bug of the op itself."]
    bug = p.entry.meta.get("bug") or {}
    if bug.get("component"):
        lines += ["", f"Where: {text(component_said(p.entry.meta, sig.backend, context.shown))}"
                  + (f", in the pass {code(bug['failing_pass'])}" if bug.get("failing_pass") else "")
                  + f" ({text(scope_said(p.entry.meta, sig.backend, context.shown))})."]
    wrapped = overflow_note(detail)
    if wrapped:  # the dynamic-dim bound's size, overflowed where it fails: the bound's bug, and this pass's own
        lines += ["", f"The size it fails on comes from the 2^53 - 1 bound IREE gives a dynamic dim: {text(wrapped)}."]
    localized = bug.get("localized") or {}
    if localized.get("evidence"):  # where a wrong value starts, found by executing intermediate IR
        lines += ["", f"Localized by running intermediate IR: {spans(localized['evidence'])}."]
        lines += _culprit_ir(localized)
    frames = backtrace_lines(p.entry.meta)
    if frames:  # a crash: its first lines, then the whole top of the backtrace (whole frames)
        said = [line for line in bug.get("first_lines") or [] if "Please report" not in line][:4]
        head = "Stack when stopped with SIGABRT after the timeout (top frames):" if sig.status == Status.TIMEOUT \
            else "Stack dump (top frames):"
        lines += ["", *fenced("\n".join([*said, head, *frames]), "text")]
    elif detail:  # the diagnostics, the failing pass's header; the whole kept output is attached
        shown, cut = shown_compile_output(detail)
        lines += ["", *fenced(shown, "text")]
        if cut:
            lines.append("(The output as the corpus entry keeps it, with the IR it prints and the pipeline's outer "
                         f"passes, is {code(files + '/' + OUTPUT_FILE)}.)")
    if p.expected is not None and sig.stage != Stage.COMPILE:
        lines += ["", "Expected results" + (" (NumPy reference):" if p.entry.case is not None else
                                            f" ({p.voted_reference}):" if p.voted_reference else ":"), ""]
        lines += fenced("\n".join(_shown(f"result {i}", a) for i, a in enumerate(p.expected)), "text")
        if p.ties:
            lines.append("The top-k indices have ties: any indices that select the expected values are right.")
    notes = str(p.entry.meta.get("notes") or "").strip()
    if notes:  # what an engineer found reading the case (the failing pass of a miscompile, a minimal form)
        lines += ["", f"Analysis: {text(notes)}"]
    lines += ["", f"Normalized signature (shapefuzz): {code(sig)}"]
    return lines


def _culprit_ir(localized: dict) -> list[str]:
    """The IR before and after the pass a wrong value was localized to (trimmed when it was kept)."""
    where = f" of {code('@' + localized['dispatch'])}" if localized.get("dispatch") else ""
    named = code(localized.get("pass_class") or localized.get("pass") or "the pass")
    lines: list[str] = []
    for key, when in (("ir_before", "before"), ("ir_after", "after")):
        if isinstance(localized.get(key), str) and localized[key].strip():
            lines += ["", f"The IR{where} {when} {named}:", "", *fenced(localized[key], "mlir")]
    return lines


def _without_long_inline(run: list[str], p: Plan) -> tuple[list[str], list[int]]:
    """`run` with each `--expected_output=` of more than INLINE_LIMIT inline values replaced by an
    `--output=@resultN.npy` (the results written out), and the indices of those results."""
    out: list[str] = []
    compared: list[int] = []
    for w in run:
        i = len([x for x in out if x.startswith(("--expected_output=", "--output="))])
        array = (p.expected or [])[i] if i < len(p.expected or []) else None
        if w.startswith("--expected_output=") and "=@" not in w and array is not None and array.size > INLINE_LIMIT:
            out.append(f"--output=@result{i}.npy")
            compared.append(i)
        else:
            out.append(w)
    return out, compared


def _compare_command(results: list[int]) -> str:
    """A NumPy one-liner: how many elements of each written result differ from expected/, and where first."""
    checks = "; ".join(f"a, e = np.load('result{i}.npy'), np.load('expected/result{i}.npy'); "
                       f"d = np.argwhere(a != e); print('result {i}:', len(d), 'of', e.size, 'differ', d[:4].tolist()); "
                       f"bad |= len(d) > 0" for i in results)
    return f'python3 -c "import numpy as np, sys; bad = False; {checks}; sys.exit(bad)"'


INLINE_LIMIT = 64  # values an issue text pastes of one array; more are in its .npy


def _shown(name: str, array: np.ndarray, limit: int = INLINE_LIMIT) -> str:
    try:
        element = element_type(array)
    except UsageError:
        element = array.dtype.name
    kind = f"{'x'.join(map(str, array.shape))}x{element}" if array.shape else element
    if array.size > limit:
        first = " ".join(number_text(v) for v in array.reshape(-1)[:8].tolist())
        return f"{name}: {kind} ({array.size} elements, in the attached .npy; the first: {first} ...)"
    return f"{name}: {kind} = {' '.join(number_text(v) for v in array.reshape(-1).tolist())}"


def bisect_line(bisect: dict) -> str:
    """What `shapefuzz bisect` recorded: "worked in X, fails from Y" (and where it was fixed)."""
    def release(key: str) -> str:
        return comment_text(bisect.get(key) or "", 40)

    if release("first_failing"):
        worked = f"worked in {release('last_passing')}, " if release("last_passing") else ""
        fixed = f"; fixed in {release('first_fixed')}" if release("first_fixed") else ""
        return text(f"- Bisected over released wheels: {worked}fails from {release('first_failing')}{fixed}.")
    span = "..".join(comment_text(v, 40) for v in (bisect.get("versions") or [])[:2])
    return "- " + text(f"Bisected over released wheels ({span}): "
                       f"{comment_text(bisect.get('note') or 'no failing release found')}.")


def on_plain_lane(p: Plan, context: IssueContext, toolchain: Toolchain) -> Plan:
    """The plan on the entry's plain lane when the entry's lane is a variant of it (rocm-gfx942-o3)
    and the plain lane fails the same way with the shown reproducer: the steps then compile without
    flags the bug does not need (audit B, 2c1205cadd: an O3 command where plain rocm-gfx942 fails alike)."""
    from shapefuzz.iree.input_dialect import input_type_flags

    plain = p.backend.variant_of
    if not plain or plain not in BACKENDS or context.shown is None or plain not in context.shown.lanes(SAME):
        return p
    flags = BACKENDS[plain].compile_flags(toolchain.probe)
    if flags is None:
        return p
    return replace(p, backend=BACKENDS[plain], flags=(*flags, *input_type_flags(p.entry.mlir)))


def _cut_words(entry: CorpusEntry) -> str:
    """How a reproducer cut down as text came from its case: a frontend spelling (torch, ONNX,
    StableHLO) whose reproducer holds none of it went through the frontend's conversion first
    (shrink.lowered_stage), and the text says so: the bug is not that conversion's."""
    cut_from = entry.cut_from
    frontend = str(cut_from.params.get("frontend") or "") if cut_from is not None else ""
    if frontend and frontend != LINALG and not lowered_stage.frontend_spelled(entry.mlir):
        return f"spelled in {frontend}, lowered to linalg by IREE's {frontend} conversion and cut down to plain MLIR"
    return "cut down to plain MLIR"


def to_issue(p: Plan, context: IssueContext, files: str) -> str:
    """Markdown following iree-org/iree's bug report form (.github/ISSUE_TEMPLATE/bug_report.yml)."""
    sig, entry = p.entry.signature, p.entry
    own = entry.meta.get("compile_command")  # the entry's own command, word for word, when it has one
    on_plain = p.backend.name != sig.backend  # its variant lane's plain lane fails alike (`on_plain_lane`)
    words = own if isinstance(own, list) and own[:1] == ["iree-compile"] and not on_plain else \
        ["iree-compile", "reproducer.mlir", *p.flags, "-o", "module.vmfb"]
    compile_cmd = " ".join(shlex.quote(w) for w in words)
    steps = import_steps(entry, files) + [
        f"1. Save the input IR as `reproducer.mlir` (it is also in {code(files + '/')}"
        + (", with the `.npy` files below):" if p.runs and sig.stage != Stage.COMPILE else "):"),
        "", *fenced(without_header(entry.mlir), "mlir"), "",
        "2. Compile it:", "", *fenced(compile_cmd, "sh"),
    ]
    if p.runs and sig.stage != Stage.COMPILE:
        run = [w for w in run_module_argv(p) if not w.startswith("--output=")]
        if p.ties:  # the exact check would fail a right answer: print the results instead
            run = [w for w in run if not w.startswith("--expected_output=")]
        run, compared = _without_long_inline(run, p)
        source = p.voted_reference or "the NumPy reference"
        steps += ["", "3. Run it with the inputs (`inputs/argN.npy`)" + ("" if p.ties else " and the expected results "
                  f"(`expected/resultN.npy`, {source})") + ":", "",
                  *fenced(" ".join(shlex.quote(w) for w in run), "sh"), ""]
        if p.ties:
            steps += [f"({code(f'sh {files}/run.sh')} runs both steps and checks the indices by the values they select.)", ""]
        elif compared:  # too long to paste: written out and compared with the .npy
            steps += ["Then compare what it wrote with the expected results (integers are written inline in "
                      f"{code(files + '/run.sh')}'s {code('--expected_output')}: a `.npy` of integers reads back "
                      "as signed, which iree-run-module counts as a mismatch with its signless results):", "",
                      *fenced(_compare_command(compared), "sh"), ""]
        steps += ["Inputs:", "", *fenced("\n".join(_shown(f"arg{i}", a) for i, a in enumerate(p.inputs or [])), "text")]
    bisect = entry.meta.get("bisect")
    chain = reproducer_chain(entry.mlir)
    # a reproducer cut down as plain text may hold none of its family's ops (a lone `trunci` read "op family: topk")
    family = (f"found as a {entry.family} case, {_cut_words(entry)}" if entry.family and entry.case is None
              else f"op family: {entry.family or 'not generated'}")
    context_lines = ["- " + text(f"Found by the shapefuzz fuzzer ({family}"
                                 + (f", inside the chain {chain}" if chain else "") + "); "
                                 # (no "seen N time(s)": the entry's own count read "seen 1 time(s)" over a
                                 # cause of 11 hits; the lines below give each backend's hits)
                                 f"first seen {entry.meta.get('first_seen', '?')[:10]}, "
                                 f"with IREE {', '.join(entry.toolchain_versions) or '?'}.")]
    if on_plain:
        context_lines.append("- " + text(f"Found on {sig.backend} ({BACKENDS[sig.backend].description}); the plain "
                                         f"{p.backend.name} lane fails the same way with this reproducer, so the "
                                         "steps compile for it, without the variant's flags."))
    context_lines += [f"- {context.verdicts_header}"] + [f"  - {line}" for line in context.verdicts]
    ladder = (entry.meta.get("bug") or {}).get("ladder")
    if isinstance(ladder, dict) and ladder.get("verdict"):  # bundle-judge --save of a ladder bundle
        context_lines.append("- " + text(f"On the device, each context op dropped in turn: {ladder['verdict']} "
                                         f"(still failing: {ladder.get('failing') or 'none'})."))
    triage = entry.meta.get("triage") or entry.meta.get("triage_verdict")
    if isinstance(triage, str) and triage:  # its evidence only where it describes this reproducer (triage.shown)
        context_lines.append("- " + text("Triage: " + triage_text({**entry.meta, "triage": triage}, entry.mlir,
                                                                   context.shown)))
    elif triage:
        context_lines.append("- " + text(f"Triage: {json.dumps(triage, sort_keys=True)}"))
    holds, unchecked = reproduces_on(entry.meta, sig.backend, context.shown)
    context_lines.append("- Reproduces on: " + (", ".join(lane_lines({"bug": {"lanes": holds}}, holds[0]))
                                                if holds else "none of the lanes it was re-checked on") + ".")
    if unchecked:  # where other candidates of its cause failed: said as such, never as this reproducer's
        context_lines.append("- " + text("Not re-checked with this reproducer: " + ", ".join(unchecked)
                                         + " (where the cause's other candidates failed)") + ".")
    if context.reported:
        context_lines.append("- " + text(f"Already reported upstream: {context.reported}") + ".")
    spread = context.cpus or cpu_spread_of(entry.meta, entry.mlir)
    if context.host_cpu and "--iree-llvmcpu-target-cpu=host" in compile_cmd and cpu_dependent(entry.meta, spread):
        beyond = f", with features beyond {context.host_cpu}'s: {context.host_features}" if context.host_features else ""
        features = f" --iree-llvmcpu-target-cpu-features={context.host_features}" if context.host_features else ""
        context_lines.append("- " + text(f"The compile targets this machine's CPU (--iree-llvmcpu-target-cpu=host, "
                                         f"which is {context.host_cpu} here{beyond}); on another CPU it may not "
                                         f"reproduce: pass --iree-llvmcpu-target-cpu={context.host_cpu}{features} to "
                                         "compile as here."))
    if spread is not None:  # the same reproducer compiled for other CPUs (recheck.cpus): is it the machine's?
        context_lines.append("- " + text(f"Compiled for other CPUs (--iree-llvmcpu-target-cpu=X, this reproducer, "
                                         f"on {spread.lane}): {spread.text}."))
    regression = regression_line(entry.meta, entry.id)
    if regression:
        context_lines.append(regression)
    context_lines.append(bisect_line(bisect) if isinstance(bisect, dict) and bisect else
                         f"- Not bisected yet ({code(f'shapefuzz bisect {entry.id}')} finds the release that broke it)."
                         if not regression else "")
    context_lines = [line for line in context_lines if line]
    if entry.flaky:
        context_lines.append("- Flaky: it did not fail on every run.")
    said = {**entry.meta, "bug": {**(entry.meta.get("bug") or {}),
                                  "component": component_said(entry.meta, sig.backend, context.shown)}}
    title = comment_text(issue_title(said, sig.backend, sig.stage.value, sig.status.value, sig.message))
    tracker = tracker_of(stated_triage(entry.meta, entry.mlir, context.shown))
    route = [f"<!-- File at: {comment(tracker.url)} ({comment(tracker.name)}: {comment(tracker.why)}) -->"] \
        if tracker.filed else [f"<!-- Not for filing: {comment(tracker.why)} -->"]
    if context.reported:  # a corpus entry of this bug was marked reported: add to that issue, file no duplicate
        route += [f"<!-- Already reported: {comment(context.reported)} -->", "",
                  f"**Already reported upstream**: <{text(context.reported)}>. Add what this text shows to that "
                  "issue rather than filing a new one."]
    if tracker.name == "torch-mlir":  # the same steps reproduce it; the fix belongs to torch-mlir
        route += ["", f"**For torch-mlir** (<{TORCH_MLIR_URL}>): {text(tracker.why)}. The steps below reproduce it "
                      "with `iree-compile`, which runs torch-mlir's conversions on this torch-dialect IR."]
    elif tracker.name == "LLVM":
        route += ["", f"**For LLVM** (<{LLVM_URL}>): {text(tracker.why)}. The steps below reproduce it with "
                      "`iree-compile`, which runs that backend; adding "
                      f"{code('--iree-hal-dump-executable-intermediates-to=intermediates')} to its command writes the "
                      "LLVM IR it hands the backend (`intermediates/*.ll`), which LLVM's own `llc` takes alone."]
    elif not tracker.filed:
        route += ["", f"**Not a compiler bug to file**: {text(tracker.why)}."]
    body = [
        f"<!-- Suggested title: {comment(title)} -->",
        *route,
        "",
        "### What happened?", "", *_what_happened(p, context, files), "",
        "### Steps to reproduce your issue", "", *steps, "",
        *(["### Where in torch-mlir", "", _torch_mlir_place(entry.meta), ""] if tracker.name == "torch-mlir" else
          ["### What component(s) does this issue relate to?", "",
           ", ".join(components(p.entry.meta, p.entry.mlir, sig.stage)), ""]),
        "### Version information", "", *fenced(context.version_text, "text"), "",
        "### Additional context", "", *context_lines,
    ]
    return "\n".join(body) + "\n"


def _torch_mlir_place(meta: dict) -> str:
    """The torch-mlir pass (or conversion phase) a torch-mlir report names."""
    bug = meta.get("bug") or {}
    localized = bug.get("localized") or {}
    where = bug.get("failing_pass") or localized.get("pass_class") or localized.get("pass") or ""
    phase = localized.get("phase") or ""
    said = f"the pass {code(where)}" if where else text("torch-mlir's conversion (no pass is named in the output)")
    if localized.get("pattern"):
        said += f", its pattern {code(localized['pattern'])}"
    return (f"In {said}" + (f" ({text(phase)})" if phase else "")
            + " of the torch input conversion (`iree-compile --compile-to=input` shows its output).")


def import_steps(entry: CorpusEntry, files: str) -> list[str]:
    """For an entry that keeps its ONNX model: how the IR was made from it."""
    from shapefuzz.corpus.onnx_files import MODEL_FILE, entry_model, model_opset

    model = entry_model(entry.path, entry.meta)
    if model is None:
        return []
    command = " ".join(shlex.quote(w) for w in entry.meta.get("import_command") or
                       ["iree-import-onnx", MODEL_FILE, "-o", "reproducer.mlir"])
    origin = entry.meta.get("origin")
    return [f"0. The IR below is what IREE's ONNX importer (from the same iree-base-compiler package) makes of the "
            f"ONNX model `{MODEL_FILE}` ({text(model_opset(model.read_bytes()))}; attached in {code(files + '/')}"
            + (f"; {text(comment_text(origin, 300))}" if origin else "") + "):", "", *fenced(command, "sh"), ""]


def write_issue(p: Plan, out: Path, toolchain: Toolchain, context: IssueContext | None = None) -> list[Path]:
    """OUT.md plus OUT.files/ (reproducer, inputs, expected results, and the ONNX model an
    imported reproducer came from) to attach to the issue. `context`: what is known of each
    backend already (a campaign's dashboard), instead of re-checking them here."""
    from shapefuzz.corpus.onnx_files import MODEL_FILE, entry_model

    files = out.with_name(out.stem + ".files")
    if p.entry.signature.stage == Stage.COMPILE:  # its steps need only iree-compile: no run, no arrays
        p = replace(p, inputs=None, expected=None)
    context = context or issue_context(p, toolchain)
    p = on_plain_lane(p, context, toolchain)
    written = write_run_module(p, files)
    model = entry_model(p.entry.path, p.entry.meta)
    if model is not None:
        atomic_write(files / MODEL_FILE, model.read_bytes())
        written.append(files / MODEL_FILE)
    detail = shown_detail(p, context)
    if detail and shown_compile_output(detail)[1]:  # what the text leaves out of it
        atomic_write(files / OUTPUT_FILE, (detail + "\n").encode())
        written.append(files / OUTPUT_FILE)
    atomic_write(out, to_issue(p, context, files.name).encode())
    return [out, *written]
