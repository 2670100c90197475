"""Where a device-only wrong value breaks, found here without the device (`bundle-judge`).

Two checks, both with the real compiler and llvm-cpu's runtime:
- **the same flags on llvm-cpu**: a finding of a variant lane (cuda-sm80-o3) is run on llvm-cpu's
  lane with the same variant flags (llvm-cpu-o3). Wrong there too, the bug is in the
  target-independent pipeline under that flag, and the ordinary localizer on that lane names the
  pass (`localize_probe.localize_entry`, plain llvm-cpu being right);
- **cross-lane finishing from the device lane's IR**: the case compiled for the device lane (its
  own flags) to each target-independent phase is finished by an llvm-cpu lane that computes it
  right (`triage.localize.localize`, the device global swapped as `IreeProbe.finish` swaps it).
  The first phase whose finished result is wrong holds the bug; right through `stream`, it is the
  device's codegen (or its runtime): "codegen (cuda)", and "codegen (cuda, Distribute)" when every
  dispatch goes through one GPU codegen pipeline (`--compile-to=executable-configurations`: the
  pipeline is the module's, so the bug's code path is that pipeline's). Measured on 3.13: the CUDA
  lanes' IR after `stream` was the llvm-cpu twin's, device aside, for all 20 CUDA-only wrong values
  found on an H200, so their place is codegen; the pipeline is what tells them apart.

The place goes into the signature's message ("wrong values in topk [codegen (cuda)]"), so two
device wrong values with different places are two corpus entries and one place is one."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, Callable, Sequence

import numpy as np

from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.judge.localize_probe import DEFAULT_SECONDS, IreeProbe, family_compare, localize_entry
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.localize import CODEGEN, Localization, Values, localize

_CUDA_VARIANT = re.compile(r"^cuda-sm\d{2,3}[a-z]?-(.+)$")  # a variant of an arch the registry does not name
# each dispatch's codegen pipeline: `pipeline = #iree_gpu.pipeline<Distribute>` (3.13), or a bare name
_PIPELINE = re.compile(r"translation_info<pipeline = (?:#[\w.]+<)?(\w+)")
CONFIGURED = "executable-configurations"  # the phase after which each dispatch has its pipeline


def twin_lane(lane: str, toolchain: Toolchain) -> str:
    """The llvm-cpu lane with `lane`'s variant flags (cuda-sm80-o3 -> llvm-cpu-o3), "" when `lane`
    is no variant, llvm-cpu has no such variant, or it does not execute here."""
    backend = BACKENDS.get(lane)
    if backend is not None:
        suffix = lane[len(backend.variant_of) + 1:] if backend.variant_of else ""
    else:
        found = _CUDA_VARIANT.match(lane)
        suffix = found.group(1) if found else ""
    twin = BACKENDS.get(f"{REFERENCE_BACKEND}-{suffix}") if suffix else None
    if twin is None or twin.variant_of != REFERENCE_BACKEND or not twin.executes(toolchain.probe):
        return ""
    return twin.name


class DeviceProbe(IreeProbe):
    """The device lane's program (compiled with the bundle's own flags), finished here by llvm-cpu
    lanes; the device lane itself runs nothing here. Verdicts are kept, so a program checked once
    is not compiled again."""

    without_const_eval = None  # type: ignore[assignment]  # the device's own values are not here to compare
    lowerings = None  # type: ignore[assignment]  # nor its codegen replayed pass by pass (it runs nothing here)
    for_lane = None  # type: ignore[assignment]

    def __init__(self, *args: Any, flags: Sequence[str], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.own_flags = tuple(flags)
        self._seen: dict[tuple[str, str, str], Values] = {}

    def _flags(self, lane: str) -> tuple[str, ...]:
        return (*self.own_flags, *self.extra) if lane == self.lane else super()._flags(lane)

    def finish(self, ir: str, phase: str, lane: str) -> Values:
        if lane == self.lane:
            return Values.UNUSABLE
        key = (ir, phase, lane)
        if key not in self._seen:
            self._seen[key] = super().finish(ir, phase, lane)
        return self._seen[key]


@dataclass(frozen=True)
class Placed:
    """Where a device lane's wrong value breaks, and what the llvm-cpu twin lane said."""

    loc: Localization
    twin: str = ""  # the llvm-cpu lane with the same variant flags ("" when none)
    twin_values: str = ""  # right, wrong or unusable on the twin ("" when none)
    who: str = ""  # whose codegen a CODEGEN place names: the device's driver, or the twin lane
    pipelines: tuple[str, ...] = ()  # each dispatch's codegen pipeline on the device lane (CODEGEN only)

    @property
    def place(self) -> str:
        """What the signature's message carries: "codegen (cuda)", a pass or a phase ("needs X"
        when not certain), "" when not localized."""
        loc = self.loc
        if not loc.localized:
            return ""
        if loc.phase == CODEGEN:
            one = sorted(set(self.pipelines))
            return f"{CODEGEN} ({self.who}, {one[0]})" if len(one) == 1 else f"{CODEGEN} ({self.who})"
        where = f"frontend:{loc.frontend}" if loc.frontend else loc.pass_name or loc.phase
        return where if loc.certain else f"needs {where}"

    @property
    def twin_text(self) -> str:
        return f"{self.twin} {self.twin_values}" if self.twin else "-"

    def to_json(self) -> dict[str, Any]:
        return {"place": self.place, "twin": self.twin, "twin_values": self.twin_values,
                "pipelines": list(self.pipelines), "localized": self.loc.to_json()}


def place_device_values(text: str, lane: str, flags: Sequence[str], driver: str, inputs: Sequence[np.ndarray],
                        expected: Sequence[np.ndarray], toolchain: Toolchain, case: Any = None,
                        seconds: float = DEFAULT_SECONDS,
                        clock: Callable[[], float] = time.monotonic) -> Placed:
    """Where `lane` (compiled with `flags`, run elsewhere on `driver`) starts computing wrong
    values for `text`, within `seconds` (see the module's docstring); every compile and run is
    within them too (a call the bound cuts is "the budget ran out", no answer)."""
    started = time.monotonic()
    with time_bound(seconds) as bound:
        placed = _place_device_values(text, lane, flags, driver, inputs, expected, toolchain, case, seconds, clock)
    if bound.ran_out:
        return Placed(Localization(evidence=f"not localized: the {seconds:.0f}s budget ran out",
                                   seconds=time.monotonic() - started), twin_lane(lane, toolchain))
    return placed


def _place_device_values(text: str, lane: str, flags: Sequence[str], driver: str, inputs: Sequence[np.ndarray],
                         expected: Sequence[np.ndarray], toolchain: Toolchain, case: Any, seconds: float,
                         clock: Callable[[], float]) -> Placed:
    start = clock()
    left = lambda: seconds - (clock() - start)  # noqa: E731
    compare = family_compare(case, inputs)
    twin = twin_lane(lane, toolchain)
    with temp_dir("devloc") as tmp:
        probe = DeviceProbe(text, lane, inputs, expected, toolchain, tmp, compare, flags=flags)
        twin_values = probe.finish(text, "start", twin) if twin else None
        said = twin_values.value if twin_values is not None else ""
        if twin_values == Values.WRONG:  # the same flags on llvm-cpu: the target-independent pipeline's
            entry = SimpleNamespace(mlir=text, inputs=list(inputs), expected=list(expected), case=case)
            loc = localize_entry(entry, toolchain, twin, (REFERENCE_BACKEND,), max(1.0, left()))
            flag = " ".join(BACKENDS[twin].extra_flags)
            loc = replace(loc, evidence=f"{twin} (the same flags, `{flag}`) computes it wrong too: the bug is in the "
                                        f"target-independent pipeline under that flag; {loc.evidence}")
            return Placed(loc, twin, said, twin)
        finishers = tuple(f for f in (twin if twin_values == Values.RIGHT else "", REFERENCE_BACKEND) if f)
        right = tuple(f for f in finishers if left() > 1.0 and probe.finish(text, "start", f) == Values.RIGHT)
        if left() <= 1.0:
            loc = Localization(evidence=f"not localized: the {seconds:.0f}s budget ran out checking it on llvm-cpu")
        elif not right:
            loc = Localization(evidence=f"not localized: {' and '.join(finishers)} do not compute it right here")
        else:
            loc = localize(probe, right, left(), clock)
            if loc.phase == CODEGEN:
                loc = replace(loc, evidence=loc.evidence.replace(f"{lane}'s codegen", f"{lane}'s codegen ({driver})"))
                pipelines = _pipelines(probe) if left() > 1.0 else ()
                if pipelines:
                    counts = {p: pipelines.count(p) for p in sorted(set(pipelines))}
                    loc = replace(loc, evidence=f"{loc.evidence}; its {len(pipelines)} dispatch(es) go through "
                                                + ", ".join(f"{p} ×{n}" for p, n in counts.items()))
                return Placed(replace(loc, seconds=clock() - start), twin, said, driver, pipelines)
    return Placed(replace(loc, seconds=clock() - start), twin, said, driver)


def _pipelines(probe: DeviceProbe) -> tuple[str, ...]:
    """Each dispatch's codegen pipeline on the device lane, in order (() when it does not compile that far)."""
    configured = probe.phase_ir(CONFIGURED)
    return tuple(_PIPELINE.findall(configured)) if configured else ()


def place_entry_values(entry: Any, toolchain: Toolchain, seconds: float = DEFAULT_SECONDS) -> Placed:
    """A corpus entry of a device lane (a CUDA wrong value saved by `bundle-judge`) placed here."""
    lane = entry.signature.backend
    backend = BACKENDS.get(lane)
    if backend is None:
        return Placed(Localization(evidence=f"not localized: {lane} is not a lane of this shapefuzz"))
    if backend.driver is None:
        return Placed(Localization(evidence=f"not localized: {lane} runs on no device"))
    if entry.inputs is None or entry.expected is None:
        return Placed(Localization(evidence="not localized: the entry has no inputs and expected outputs"))
    return place_device_values(entry.mlir, lane, backend.compile_flags(toolchain.probe) or (), backend.driver,
                               entry.inputs, entry.expected, toolchain, entry.case, seconds)


__all__ = ["DeviceProbe", "Placed", "place_device_values", "place_entry_values", "twin_lane"]
