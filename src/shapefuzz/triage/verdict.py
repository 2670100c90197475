"""A bucket's triage verdict: compiler bug, target limit, suspected driver or ours (flaky is its
re-run's to say), with the evidence kept beside it. Pure functions over what a check left (the
module, the failing lane, every lane's status); nothing is run here. The campaign's IREE adapter
(`campaign/iree.py`) gathers those facts and asks; someone asking "why a suspected driver?" reads
`vulkan_verdict`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Protocol, Sequence

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.toolchain import ToolchainProbe
from shapefuzz.model import Signature, Stage, Status, Triage
from shapefuzz.triage.driver import loop_limit_reached, narrow_words_lost
from shapefuzz.triage.record import lanes_evidence
from shapefuzz.triage.target_limits import device_limit, limit_of_failure


class FailingLane(Protocol):
    """One failing lane as the verdicts read it (the campaign's `Failure` is one)."""

    @property
    def signature(self) -> Signature: ...
    @property
    def detail(self) -> str: ...


@dataclass(frozen=True)
class Seen:
    """What a check (or its confirming re-run) left for judging one of its failing lanes."""

    text: str  # the module
    lanes: Mapping[str, Status]  # every lane's status so far (the second judge's lane among them)
    probe: ToolchainProbe  # which lanes execute here
    # lane -> what an earlier run said there (a driver suspicion judged again with its re-run)
    earlier: Mapping[str, str] = field(default_factory=dict)
    # an equivalent form that matches the reference ("form [...] matches it on llvm-cpu"), or ""
    reference_form: str = ""
    second_judge: Status | None = None  # ONNX's own reference (onnx.reference), where it judged
    references_disagree: bool = False  # our two references gave different values: no backend is judged
    second_judge_name: str = "onnx.reference"  # which reference the second judge is (XLA for StableHLO)
    # the shapes of @main's arguments in the run (for `?` dims: Mesa's loop limit), asked only when needed
    arg_shapes: Callable[[], Sequence[Sequence[int]]] = field(default=lambda: (), compare=False)


def _no_contradiction() -> tuple[str, str]:
    return "", ""


def verdict(failure: FailingLane, seen: Seen,
            types: Callable[[], tuple[str, str]] = _no_contradiction) -> tuple[Triage, str]:
    """The verdict on `failure`, with its evidence. `types()`: (what ONNX types two ways for a case
    spelled as an ONNX model, "" for none; what of that was not checked), asked only once our two
    references agree (it computes them)."""
    if failure.signature.status == Status.MISMATCH and seen.references_disagree:
        return Triage.OURS, f"our two references disagree, so no backend is judged: {failure.detail[:1500]}"
    contradiction, unchecked = types()
    if contradiction:
        return Triage.OURS, (f"{contradiction}: the importer's types contradict each other, so what the compiler "
                             "makes of them is no compiler bug (ours, or upstream ONNX's)")
    triage, evidence = lane_verdict(failure, seen)
    return triage, evidence + (f"; {unchecked}" if unchecked else "")


def lane_verdict(failure: FailingLane, seen: Seen) -> tuple[Triage, str]:
    """`verdict` once our references and ONNX's types are not in doubt: a known limit of the lane's
    target, a Vulkan-only wrong value (`vulkan_verdict`), wrong values on every lane that ran it
    (the reference is suspect unless an equivalent form or ONNX's reference agrees with it), else
    a compiler bug on input that verifies."""
    lane = failure.signature.backend
    backend = BACKENDS.get(lane)
    stage, status = failure.signature.stage, failure.signature.status
    gap = limit_of_failure(lane, stage.value, status.value, failure.signature.message, failure.detail)
    if gap is not None:  # a documented gap, with its rule and diagnostic (triage.target_limits)
        return Triage.TARGET_LIMIT, gap.evidence
    reason = backend.limit_for_module(seen.text) if backend else None
    if reason:
        return Triage.TARGET_LIMIT, f"{lane}: {reason}"
    ran = {other: st for other, st in seen.lanes.items() if other in BACKENDS and BACKENDS[other].executes(seen.probe)}
    if stage in (Stage.RUN, Stage.COMPARE) and backend is not None:
        others = {other: st for other, st in ran.items() if BACKENDS[other].driver != backend.driver}
        agree = sorted(other for other, st in others.items() if st == Status.OK)
        if backend.driver == "vulkan" and agree and len(agree) == len(others):
            twin = backend.driver_twin
            twin_runs = bool(twin) and twin in BACKENDS and BACKENDS[twin].executes(seen.probe)
            return vulkan_verdict(seen.text, failure, seen.lanes, agree, twin_runs, seen.earlier.get(lane, ""),
                                  seen.arg_shapes)
        wrong = every_run_mismatches(seen.lanes, seen.probe)
        if status == Status.MISMATCH and wrong and seen.reference_form:
            return Triage.COMPILER_BUG, (
                f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy reference, but "
                f"{seen.reference_form}: the reference is right, and the bug is shared by every backend")
        if status == Status.MISMATCH and wrong and seen.second_judge == Status.OK:
            # a second, independent reference (ONNX's own, or XLA) computed the same values
            return Triage.COMPILER_BUG, (
                f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy reference, but "
                f"{seen.second_judge_name} computes the same values as the NumPy reference: the reference is right, "
                "and the bug is shared by every backend")
        if status == Status.MISMATCH and wrong:
            return Triage.OURS, (f"every backend that ran it ({', '.join(wrong)}) disagrees with the NumPy "
                                 "reference: the reference is suspect")
    passed = sorted(other for other, st in seen.lanes.items() if st == Status.OK and other in BACKENDS)
    return Triage.COMPILER_BUG, (f"{stage.value}/{status.value} on {lane} for input that verifies"
                                 f"{lanes_evidence(passed, seen.probe)}")


def vulkan_verdict(text: str, failure: FailingLane, lanes: Mapping[str, Status], agree: list[str],
                   twin_runs: bool = True, earlier: str = "",
                   arg_shapes: Callable[[], Sequence[Sequence[int]]] = lambda: ()) -> tuple[Triage, str]:
    """A wrong value or run failure only on a Vulkan lane (`agree`: the other drivers' lanes, all
    right) is blamed on the driver only after the lane's twin, another target on the same Mesa
    driver (default profile and llvmpipe), ran it, and after IREE's i8/i16 emulation and Mesa's
    loop limit were considered (see triage.driver). `lanes`: every lane's status so far;
    `twin_runs`: whether the twin executes here at all; `earlier`: what an earlier run of the
    lane said (wrong values that change from run to run are a race in the generated code);
    `arg_shapes()`: the run's argument shapes, for the sizes the text leaves `?`."""
    lane = failure.signature.backend
    backend = BACKENDS[lane]
    status = failure.signature.status
    what = "wrong numbers" if status == Status.MISMATCH else f"a run failure ({status.value})"
    seen = (f"{what} only on {lane} (Mesa's software Vulkan device, the only one here), while "
            f"{', '.join(agree)} agree with the NumPy reference")
    twin = backend.driver_twin or ""
    twin_status = lanes.get(twin)
    narrow = narrow_words_lost(text, backend.emulated)
    emulation = (f"; {lane} has no 8/16-bit storage, so IREE emulates {'/'.join(backend.emulated)} in 32-bit "
                 f"words, and the module holds a {narrow}: an emulated tensor whose byte size is not a multiple "
                 "of 4 loses its last word (IREE's emulation, codegen for SPIR-V)") if narrow else ""
    if twin_status == Status.OK and twin_runs:  # a twin that only compiled here says nothing about values
        return Triage.COMPILER_BUG, (
            f"{seen}, and {twin}, another target on the same Mesa driver, is right: two targets disagreeing on "
            f"one driver is the compiler's (codegen for SPIR-V){emulation}")
    if twin_status is None or not twin_status.is_failure or not twin_runs:  # not run there (yet), or it cannot take it
        # lost i8 words explain wrong values on the default profile only, Mesa's loop limit on both targets: a
        # module that meets both waits for the twin (an audit found a si8 sort along 1023 filed as the i8 bug;
        # the llvmpipe target got it wrong too: the loop limit)
        undecided = twin_runs and twin_status is None and bool(narrow) and bool(loop_limit_reached(text, arg_shapes()))
        if narrow and not undecided:
            return Triage.COMPILER_BUG, f"{seen}{emulation}"
        refused = BACKENDS[twin].limit_for_module(text) if twin in BACKENDS else None
        cannot = (f"{twin} does not take it ({refused})" if twin_status == Status.UNSUPPORTED and refused else
                  f"{twin} does not take it" if twin_status == Status.UNSUPPORTED else f"{twin} cannot check it here")
        limit = loop_limit_reached(text, arg_shapes()) if twin and (twin_status == Status.UNSUPPORTED or not twin_runs) \
            else ""
        if limit:  # the device's documented limit, met on its own: no twin to corroborate it (audit B)
            return Triage.TARGET_LIMIT, f"{device_limit('llvmpipe-loop-limit', lane, limit).evidence}; {seen}; {cannot}"
        why = ("its confirming re-run runs it there" if twin_runs and twin_status is None else
               cannot if twin else "no other Vulkan target to check it against")
        both = (f"; both IREE's i8 emulation (the module holds a {narrow}) and Mesa's loop limit could explain it: "
                f"{twin} tells them apart") if undecided else ""
        return Triage.SUSPECTED_DRIVER, (
            f"{seen}; not yet checked on {twin or 'another Vulkan target'} on the same driver ({why}){both}; would "
            "settle it: the same module on a hardware GPU or on another Vulkan implementation")
    limit = loop_limit_reached(text, arg_shapes())
    if limit:  # a documented limit of the device (triage.target_limits), met by both targets on it
        return Triage.TARGET_LIMIT, (f"{device_limit('llvmpipe-loop-limit', lane, limit).evidence}; {seen}; "
                                     f"{twin} on the same driver fails too ({twin_status.value})")
    if status == Status.MISMATCH and earlier and earlier[:4000] != failure.detail[:4000]:
        return Triage.COMPILER_BUG, (
            f"{seen}; {twin} on the same driver fails too, and the wrong values change from run to run "
            f"(first: {earlier[:300]}; again: {failure.detail[:300]}): a race in the code IREE generates for "
            "both targets (a missing barrier), not a limit of the driver")
    return Triage.SUSPECTED_DRIVER, (
        f"{seen}; {twin} on the same driver fails too ({twin_status.value}) and no known limit explains it: the "
        "driver, or SPIR-V codegen both targets share; would settle it: the same module on a hardware GPU or on "
        "another Vulkan implementation")


def every_run_mismatches(lanes: Mapping[str, Status], probe: ToolchainProbe) -> list[str]:
    """The executing backends that ran the candidate, when there are at least two and every one
    of them gave wrong numbers (the reference is then suspect), else []."""
    ran = {lane: st for lane, st in lanes.items() if lane in BACKENDS and BACKENDS[lane].executes(probe)}
    wrong = sorted(lane for lane, st in ran.items() if st == Status.MISMATCH)
    return wrong if len(ran) >= 2 and len(wrong) == len(ran) else []


__all__ = ["FailingLane", "Seen", "every_run_mismatches", "lane_verdict", "verdict", "vulkan_verdict"]
