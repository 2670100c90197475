"""Localizing a wrong value on real IREE: the `Probe` that `triage.localize` searches with. Every
call goes through the sandbox with its own limits; a compile or run that fails is "unusable"
evidence, never an exception. Entry point: `localize_entry` (a corpus entry's reproducer, inputs
and expected outputs, the failing lane and the lanes that computed it right). A case spelled in a
frontend is also checked in its linalg spelling on the failing lane (`frontend_values`), which
places a bug in the frontend conversion or clears it (`triage.localize.with_frontend`)."""

from __future__ import annotations

import contextlib
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterator, Sequence

import numpy as np

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.judge.iree_probe import CALL as _CALL, Compare, IreeProbe
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.culprit import Dump, Offence
from shapefuzz.triage.identity import anchor_op
from shapefuzz.triage.localize import (CODEGEN, FRONTEND_NAMES, Localization, Values, algorithm_ops, frontend_open, localize,
                                       unlike_text, with_frontend)

DEFAULT_SECONDS = 60.0  # a localization's whole budget (the campaign's knob: --localize-time)
FRONTEND_SECONDS = 20.0  # kept for a frontend conversion's pass search (measured: 5 to 15 s)


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
    """Where `lane` starts computing wrong values for `text` (see triage.localize), within `seconds`
    (each compile's and run's timeout clipped to what is left of them)."""
    return within(seconds, lambda: _localize_program(text, lane, inputs, expected, toolchain, passed, seconds, compare))


def within(seconds: float, localizing: Callable[[], Localization]) -> Localization:
    """`localizing()` under a time bound of `seconds` for every call it makes: a compile cut by the
    bound is "the budget ran out", never a compile that hung or an answer."""
    start = time.monotonic()
    with time_bound(seconds) as bound:
        loc = localizing()
    if bound.ran_out:
        return Localization(evidence=f"not localized: the {seconds:.0f}s budget ran out",
                            seconds=time.monotonic() - start)
    return loc


def _localize_program(text: str, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                      toolchain: Toolchain, passed: Sequence[str], seconds: float,
                      compare: Compare | None) -> Localization:
    if lane not in BACKENDS or not BACKENDS[lane].executes(toolchain.probe):
        return Localization(evidence=f"not localized: {lane} does not execute here")
    with temp_dir("localize") as tmp:
        probe = IreeProbe(text, lane, inputs, expected, toolchain, tmp, compare)
        loc = localize(probe, right_lanes_for(lane, passed, toolchain.probe), seconds)
    ref = BACKENDS.get(loc.finished_by)
    if loc.phase == CODEGEN and ref is not None and ref.driver == BACKENDS[lane].driver:
        return replace(loc, evidence=loc.evidence.replace(
            "(or in the device that runs its code)",
            f"(the same {ref.driver} device runs {loc.finished_by}'s code right: IREE's, not the device's)"))
    return loc


def frontend_values(case, lane: str, inputs: Sequence[np.ndarray], expected: Sequence[np.ndarray],
                    toolchain: Toolchain, compare: Compare | None = None) -> tuple[str, Values, Values | None, str]:
    """(the case's spelling, how its linalg spelling comes out on `lane`, how its torch spelling
    does for an ONNX case whose linalg spelling is right, else None, and why the linalg spelling is
    no evidence: it lowers to another algorithm than the case's own spelling, compared after `flow` by
    `triage.localize.unlike_text`; "" when the same): both take and return the same arrays as the case.
    Nothing is compiled for a linalg case, a lane that does not execute here, or a family that does not
    load ("linalg", UNUSABLE, None, "")."""
    from shapefuzz.families import get_family
    from shapefuzz.families.base import LINALG
    from shapefuzz.families.frontends import frontend_of, linalg_params, spelled, spellings_for

    nothing = (LINALG, Values.UNUSABLE, None, "")
    if case is None or frontend_of(case.params) == LINALG or lane not in BACKENDS \
            or not BACKENDS[lane].executes(toolchain.probe):
        return nothing
    try:
        family = get_family(case.family)
        p = family.load(case.params)
        q = linalg_params(p)
        texts = [family.render(q)]
        own = family.render(p)
        torch = next((s for s in spellings_for(family.name) if s.frontend == "torch"), None)
        if p.frontend == "onnx" and torch is not None and torch.expressible(q):
            texts.append(family.render(spelled(q, torch)))
    except Exception:  # noqa: BLE001 - a case this version no longer renders: no evidence
        return nothing
    verdicts: list[Values] = []
    unlike = ""
    with temp_dir("localize") as tmp:
        for linalg_text in texts:
            probe = IreeProbe(linalg_text, lane, inputs, expected, toolchain, tmp, compare)
            verdicts.append(probe.finish(linalg_text, "start", lane))
            if verdicts[0] != Values.RIGHT:  # not the frontend's: which conversion does not matter
                break
        if verdicts[0] in (Values.RIGHT, Values.WRONG):  # evidence only if it computes the same way
            flows = [IreeProbe(t, lane, inputs, expected, toolchain, tmp, compare).phase_ir("flow") for t in (own, texts[0])]
            if flows[0] is not None and flows[1] is not None:
                unlike = unlike_text(p.frontend, algorithm_ops(flows[0]), algorithm_ops(flows[1]))
    return p.frontend, verdicts[0], verdicts[1] if len(verdicts) > 1 else None, unlike


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
    `seconds`) and the two are weighed by `with_frontend`. Every compile is within `seconds` too."""
    return within(seconds, lambda: _localize_entry(entry, toolchain, lane, passed, seconds))


def _localize_entry(entry, toolchain: Toolchain, lane: str, passed: Sequence[str], seconds: float) -> Localization:
    if entry.inputs is None or entry.expected is None:
        return Localization(evidence="not localized: the entry has no inputs and expected outputs")
    case = entry.case
    compare = family_compare(case, entry.inputs)
    lane = lane or entry.signature.backend
    start = time.monotonic()
    spelling, linalg, torch, unlike = frontend_values(case, lane, entry.inputs, entry.expected, toolchain, compare)
    # its linalg spelling right: the frontend's conversion is likely where it breaks, so the search of
    # IREE's passes leaves time for the search of the conversion's
    reserve = min(FRONTEND_SECONDS, seconds / 3) if linalg == Values.RIGHT and not unlike else 0.0
    loc = localize_program(entry.mlir, lane, entry.inputs, entry.expected, toolchain, passed,
                           max(1.0, seconds - reserve - (time.monotonic() - start)), compare)
    if not frontend_open(loc):
        return loc
    before, loc = loc, with_frontend(loc, spelling, lane, linalg, torch, unlike)
    if not loc.frontend:
        return loc
    from shapefuzz.judge.frontend_probe import conversion_right_elsewhere, place_frontend_pass

    # the linalg spelling is ours, not the conversion's output: that output computed right by an older
    # release clears the conversion (the bug is in what this release does after it)
    elsewhere = conversion_right_elsewhere(entry.mlir, lane, entry.inputs, entry.expected, toolchain, compare,
                                           min(FRONTEND_SECONDS, seconds - (time.monotonic() - start)))
    if elsewhere:
        cleared = (f"not the {FRONTEND_NAMES.get(loc.frontend, loc.frontend)} conversion's: the IR it makes of this "
                   f"program in this release (`--compile-to=input`), compiled by IREE {elsewhere}, computes the right "
                   "values on the same inputs, so the conversion is right and this release breaks after it")
        return replace(before, evidence=f"{before.evidence}; {cleared}" if before.evidence else cleared,
                       seconds=time.monotonic() - start)

    # placed in the frontend conversion: which of its passes (what is left of the budget)
    return place_frontend_pass(loc, entry.mlir, lane, entry.inputs, entry.expected, toolchain, compare,
                               seconds - (time.monotonic() - start))


def place_compile_failure(text: str, lane: str, toolchain: Toolchain, failing: str,
                          seconds: float = DEFAULT_SECONDS) -> Localization:
    """A compile error in a pass that runs in every phase (canonicalize, cse: `is_generic_pass`)
    placed by its phase: the first `--compile-to` phase whose compile fails in that pass (a compile
    to a phase runs every phase before it, so the search halves the phases each time; none: the
    target's codegen), with the pass it ran inside from the nested IR-dump headers. Every compile is
    within `seconds` (a compile the bound cuts is no answer)."""
    return within(seconds, lambda: _place_compile_failure(text, lane, toolchain, failing, seconds))


def _place_compile_failure(text: str, lane: str, toolchain: Toolchain, failing: str, seconds: float) -> Localization:
    from shapefuzz.triage.failing_pass import PRINT_IR_AFTER_FAILURE, enclosing_passes
    from shapefuzz.triage.localize import PHASES

    end, start = time.monotonic() + seconds, time.monotonic()
    key = _pass_word(failing)
    with temp_dir("place") as tmp:
        probe = IreeProbe(text, lane, (), (), toolchain, tmp)
        source = probe._path(".mlir", text)
        outputs: dict[str, list[str]] = {}

        def fails(phase: str) -> bool | None:
            """Whether the compile to `phase` fails in the pass (None: out of time)."""
            left = end - time.monotonic()
            if left < 1.0:
                return None
            flags = (PRINT_IR_AFTER_FAILURE, *((f"--compile-to={phase}",) if phase != CODEGEN else ()))
            # (no clip of its own: a compile the step's bound cuts is "out of time", never "does not fail")
            result, _ = probe._compile(source, lane, *flags, limits=_CALL)
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


def _first_maker(text: str, lane: str, toolchain: Toolchain, offence: Offence, seconds: float,
                 fails_in: str = "", *flags: str,
                 again: Callable[[str], Offence | None] | None = None) -> tuple[str, str]:
    """(the first pass whose output holds `offence`, what that offence is) or ("", why not): the
    compile is run again writing the IR after every pass that changed it (`--mlir-print-ir-tree-dir`,
    with `flags`);
    `fails_in`: the checker it must fail in again (its refusal), or "" when it must compile (a buffer
    the run cannot allocate). `again`: the offence read anew from this compile's own output, where it
    names one (the entry's reproducer may fail on another op than the candidate whose output was kept).
    A maker outside the target's codegen (the input holds it already) is none."""
    from shapefuzz.triage.culprit import first_maker

    with _dumps_after_each_pass(text, lane, toolchain, seconds, *flags) as (ok, dumps, output):
        if ok == bool(fails_in):
            return "", f"the compile did not fail in {fails_in} again" if fails_in else "the compile failed"
        offence = again(output) or offence if again is not None else offence
        maker = first_maker(dumps, offence)
        if maker is not None and "hal_executable" not in str(maker.path):
            return "", f"{offence.what} is in the IR before codegen (after {maker.pass_name})"
        return (maker.pass_name, offence.what) if maker is not None else ("", f"no pass's output holds {offence.what}")


@contextlib.contextmanager
def _dumps_after_each_pass(text: str, lane: str, toolchain: Toolchain, seconds: float,
                           *flags: str) -> Iterator[tuple[bool, list[Dump], str]]:
    """The compile of `text` on `lane` run again writing the IR after every pass that changed it
    (`--mlir-print-ir-tree-dir`): whether it compiled, and its dumps in pass order, readable inside
    the block (their folder goes with it)."""
    from shapefuzz.triage.culprit import dumps_in

    with temp_dir("culprit") as tmp:
        probe = IreeProbe(text, lane, (), (), toolchain, tmp)
        source = probe._path(".mlir", text)
        tree = Path(tmp) / "tree"
        result, _ = probe._compile(source, lane, *flags, "--mlir-print-ir-after-all", "--mlir-print-ir-after-change",
                                   f"--mlir-print-ir-tree-dir={tree}", "--mlir-disable-threading",
                                   limits=replace(_CALL, timeout=max(1.0, min(_CALL.timeout, seconds))))
        yield result.ok, dumps_in(tree), result.stderr + result.stdout


def place_checked_failure(text: str, lane: str, toolchain: Toolchain, failing: str, output: str,
                          seconds: float = DEFAULT_SECONDS) -> Localization:
    """A compile error in a checker pass (`triage.culprit.is_checker`), or in a pass that reports an
    op left for it (`triage.culprit.left_op_of`), placed at the pass that made what it refuses: the
    first dump holding the offence its `output` names (`triage.culprit.offence_of`) names the maker;
    the checker stays in the evidence."""
    from shapefuzz.triage.culprit import left_op_of, offence_of

    start = time.monotonic()
    offence, left = offence_of(output), left_op_of(output)
    if offence is None and left is None:
        return Localization(evidence=f"not localized: {failing}'s message names no buffer size to trace",
                            seconds=time.monotonic() - start)
    # an op left for the checker is found by its generic form, as the diagnostic prints it
    generic = () if offence is not None else ("--mlir-print-op-generic",)
    found = offence or left
    assert found is not None
    maker, why = _first_maker(text, lane, toolchain, found, seconds, failing, *generic,
                              again=None if offence is not None else left_op_of)
    if not maker or _pass_word(maker) == _pass_word(failing):
        return Localization(evidence=f"not localized: {why or f'{failing} makes {found.what} itself'}",
                            seconds=time.monotonic() - start)
    return Localization(CODEGEN, maker, seconds=time.monotonic() - start, certain=True,
                        evidence=f"the IR first holds {why} after {maker}; {failing} only refuses it")


# the phase a pass outside the executables runs in, by its argument's prefix (codegen's are inside them)
_PHASE_OF_PREFIX = (("iree-global-opt-", "global-optimization"), ("iree-dispatch-creation-", "dispatch-creation"),
                    ("iree-flow-", "flow"), ("iree-stream-", "stream"), ("iree-preprocessing-", "preprocessing"),
                    ("iree-abi-", "abi"), ("torch-", "input"), ("convert-torch-", "input"), ("iree-input-", "input"))


def phase_of_dump(dump: Dump) -> str:
    if "hal_executable" in str(dump.path):
        return CODEGEN
    return next((phase for prefix, phase in _PHASE_OF_PREFIX if dump.pass_name.startswith(prefix)), "")


def place_latent_failure(text: str, lane: str, toolchain: Toolchain, failing: str, output: str,
                         seconds: float = DEFAULT_SECONDS) -> Localization:
    """A compile error placed at the pass that made the IR it fails on, where the IR after each pass
    shows one: a lowering configuration a pass dropped (`triage.culprit.config_dropper`) at that pass;
    an op a conversion finds unlowered (`triage.culprit.unlowered_op_of`) at the last pass
    that lowered others of its kind and left it (`skipping_lowerer`); a `linalg.generic` whose operands
    give one loop two extents (`triage.extents`, which the verifier checks only for static shapes) at
    the first pass whose output holds one. Else not localized: the caller places it as it would."""
    from shapefuzz.triage.culprit import config_dropper, config_lost, skipping_lowerer, unlowered_op_of
    from shapefuzz.triage.extents import conflicting_extent

    start = time.monotonic()
    if conflicting_extent(text):
        return Localization(evidence="not localized: the input itself holds a linalg.generic whose operands give "
                                     "one loop two extents", seconds=time.monotonic() - start)
    with _dumps_after_each_pass(text, lane, toolchain, seconds) as (ok, dumps, again):
        if ok:
            return Localization(evidence=f"not localized: the compile did not fail in {failing} again",
                                seconds=time.monotonic() - start)
        op = unlowered_op_of(again) or unlowered_op_of(output)
        skip = skipping_lowerer(dumps, op) if op else None
        if skip is not None and _pass_word(skip.dump.pass_name) != _pass_word(failing):
            return Localization(CODEGEN, skip.dump.pass_name, certain=True, seconds=time.monotonic() - start,
                                dispatch=skip.function,
                                evidence=f"{skip.dump.pass_name} lowered {skip.before - skip.after} of the {skip.before} "
                                         f"{op} ops of `{skip.function}` and left {skip.after}; no later pass lowers "
                                         f"{'it' if skip.after == 1 else 'them'}, and {failing} fails on it")
        dropped = config_dropper(dumps) if config_lost(again or output) else None
        if dropped is not None and _pass_word(dropped.dump.pass_name) != _pass_word(failing):
            return Localization(CODEGEN, dropped.dump.pass_name, certain=True, seconds=time.monotonic() - start,
                                dispatch=dropped.function,
                                evidence=f"`{dropped.function}` holds a lowering_config before "
                                         f"{dropped.dump.pass_name} and none after it; {failing} then finds no "
                                         "lowering configuration")
        for dump in dumps:
            conflict = conflicting_extent(dump.path.read_text(errors="replace"))
            if not conflict:
                continue
            phase = phase_of_dump(dump)
            if not phase or _pass_word(dump.pass_name) == _pass_word(failing):
                break
            return Localization(phase, dump.pass_name, certain=True, seconds=time.monotonic() - start,
                                evidence=f"the IR first holds a linalg.generic whose operands give one loop two "
                                         f"extents ({conflict}) after {dump.pass_name}; the verifier checks extents "
                                         f"only for static shapes, and {failing} fails on what follows from it")
    why = [*([f"no pass lowered any other {op}"] if op else []),
           *(["no pass dropped a lowering_config"] if config_lost(output) else []),
           "no pass's output holds a linalg.generic with two extents for one loop"]
    return Localization(evidence=f"not localized: {'; '.join(why)}", seconds=time.monotonic() - start)


def place_frontend_refusal(text: str, lane: str, toolchain: Toolchain, failing: str,
                           seconds: float = DEFAULT_SECONDS, message: str = "") -> Localization:
    """A torch-mlir conversion's verifier error (`triage.frontend_offence.refused_by_conversion`)
    placed at the pass that made the ill-typed op it refused: the first dump holding a broadcasting
    torch op whose shapes contradict its type names the maker, with the ONNX or torch op it
    rewrote; the conversion stays in the evidence. An input that holds such an op already is not
    placed (the program, not a pass, made it). Where no pass's output holds one and the op the
    verifier refuses (its `message`'s op) is not a torch op, the conversion made that op itself
    from valid input: it is placed there, for certain (a fresh campaign's three torch-mlir verifier
    errors, `tensor.expand_shape` from `unflatten.int` among them, read "not localized")."""
    from shapefuzz.triage.culprit import first_maker
    from shapefuzz.triage.frontend_offence import ILL_TYPED_BROADCAST, ill_typed_broadcasts
    from shapefuzz.triage.frontend_pass import entry_function, pattern_of, rewritten_ops

    start = time.monotonic()
    held = ill_typed_broadcasts(text)
    if held:
        return Localization(evidence=f"not localized: the input itself holds {held[0]}",
                            seconds=time.monotonic() - start)
    with _dumps_after_each_pass(text, lane, toolchain, seconds, "--compile-to=input") as (ok, dumps, _):
        if ok:
            return Localization(evidence=f"not localized: the compile did not fail in {failing} again",
                                seconds=time.monotonic() - start)
        maker = first_maker(dumps, ILL_TYPED_BROADCAST)
        if maker is None:
            made, conversion = anchor_op(message), failing.split("{", 1)[0]
            failed = next((i for i, d in enumerate(dumps) if d.pass_name == conversion), None)
            before = dumps[failed - 1].path.read_text(errors="replace") if failed else text
            if made and not made.startswith("torch.") and failed is not None \
                    and not re.search(rf"\b{re.escape(made)}\b", before):
                return Localization("input", conversion, seconds=time.monotonic() - start, certain=True,
                                    ir_before=entry_function(before),
                                    ir_after=entry_function(dumps[failed].path.read_text(errors="replace")),
                                    evidence=f"{conversion} itself emits the '{made}' its verifier refuses: its "
                                             f"input holds no {made}, and no pass before it holds "
                                             f"{ILL_TYPED_BROADCAST.what}")
            return Localization(evidence=f"not localized: no pass before {conversion} holds "
                                         f"{ILL_TYPED_BROADCAST.what}, and the op it refuses ('{made or '?'}') is "
                                         "not one only it emits", seconds=time.monotonic() - start)
        after = maker.path.read_text(errors="replace")
        index = dumps.index(maker)
        before = dumps[index - 1].path.read_text(errors="replace") if index > 0 else text
    ops = rewritten_ops(before, after)
    pattern = pattern_of(maker.pass_name, ops)
    rewrote = f" (it rewrote {', '.join(ops)})" if ops else ""
    return Localization("input", maker.pass_name, seconds=time.monotonic() - start, certain=True, pattern=pattern,
                        ir_before=entry_function(before), ir_after=entry_function(after),
                        evidence=f"the IR first holds {ill_typed_broadcasts(after)[0]} after {maker.pass_name}"
                                 f"{rewrote}; {failing} only refuses it")


def place_run_oom(text: str, lane: str, toolchain: Toolchain, seconds: float = DEFAULT_SECONDS) -> Localization:
    """A run that runs out of memory placed at the pass that sized a buffer from a dynamic dim's bound
    (`triage.culprit.BOUND_SIZED`), when one did: the first dump holding such a buffer names the maker
    (audit C of the fresh campaign: vmvx's `memref<1x9007199254740991xf32>` filed as the runtime's
    out-of-memory)."""
    from shapefuzz.triage.culprit import BOUND_SIZED

    start = time.monotonic()
    maker, why = _first_maker(text, lane, toolchain, BOUND_SIZED, seconds)
    if not maker:
        return Localization(evidence=f"not localized: {why}", seconds=time.monotonic() - start)
    return Localization(CODEGEN, maker, seconds=time.monotonic() - start, certain=True,
                        evidence=f"the IR first holds {BOUND_SIZED.what} after {maker}; the run then runs out of "
                                 "memory allocating it")


def _pass_word(name: str) -> str:
    """A pass name as compared here: `canonicalize{...}`, `CanonicalizerPass` and `Canonicalizer` alike."""
    word = re.sub(r"[^a-z0-9]", "", name.split("{", 1)[0].rsplit("::", 1)[-1].lower())
    return {"canonicalizer": "canonicalize", "inliner": "inline"}.get(re.sub(r"pass$", "", word),
                                                                     re.sub(r"pass$", "", word))


__all__ = ["DEFAULT_SECONDS", "IreeProbe", "family_compare", "phase_of_dump", "place_checked_failure", "place_compile_failure",
           "place_latent_failure",
           "place_frontend_refusal", "place_run_oom",
           "frontend_values", "localize_entry", "localize_program", "right_lanes_for", "within"]
