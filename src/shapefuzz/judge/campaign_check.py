"""A campaign's check of one case on the lanes it was given, as the oracle runs it: lanes with a
known limit of their target for the module are not compiled (the caller counts them unsupported);
the inputs and NumPy reference are built only where some lane runs the module here (a large
round's compile-only lanes need none: a large attention's reference is 17 GB); a reference the
generator left undefined is said, never judged; our temporary files failing is our machine, not the
compiler. Also the confirming re-run's question when every backend disagrees with the reference:
does an equivalent form match it? The campaign's adapter (`campaign/iree.py`) turns what comes back
into the campaign's `Outcome`."""

from __future__ import annotations

import errno
from dataclasses import dataclass
from typing import Collection, Mapping, Sequence

from shapefuzz.case import Case
from shapefuzz.errors import EnvironmentFault, UndefinedReference
from shapefuzz.families import validate_case
from shapefuzz.invoke.execute import Budget
from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND, any_runs_here
from shapefuzz.iree.toolchain import Toolchain, ToolchainProbe
from shapefuzz.judge.oracle import Expectation, case_expectation, check_forms, check_module, form_difference
from shapefuzz.model import CheckReport, Status, Verdict
from shapefuzz.process.worktime import timed

# What a full TMPDIR, an I/O error or a file of ours gone raises: our machine, not the compiler.
_ENVIRONMENT_ERRNOS = (errno.ENOSPC, errno.EIO, errno.EDQUOT, errno.EROFS, errno.ENOENT)


@dataclass(frozen=True)
class LaneCheck:
    """What one check gave: the oracle's report on the lanes it compiled (None when the case's
    reference is undefined: `undefined` says why), the expectation it was judged by (None where no
    lane runs the module here), and the lanes left out for a known limit of their target."""

    report: CheckReport | None
    expectation: Expectation | None
    limited: frozenset[str]
    undefined: str = ""


def limited_lanes(text: str, lanes: Sequence[str]) -> frozenset[str]:
    """The lanes whose target cannot support what the module uses (told by its types)."""
    return frozenset(lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].limit_for_module(text))


def expectation_on(case: Case, seed: int, lanes: Sequence[str], probe: ToolchainProbe,
                   validate: bool = False) -> Expectation | None:
    """The inputs and NumPy reference a check (or a saved entry) on `lanes` needs: None when none
    of them runs the module here (an unknown lane name counts as one that does); with `validate`,
    the case is still validated then (a check's)."""
    if any_runs_here(lanes, probe):
        return case_expectation(case, seed)
    if validate:
        with timed("validate"):
            validate_case(case)
    return None


def check_lanes(text: str, case: Case, seed: int, lanes: Sequence[str], toolchain: Toolchain, budget: Budget,
                instrument: Collection[str] = ()) -> LaneCheck:
    """The case's module checked on `lanes` but the limited ones, under `budget`, inputs drawn with
    `seed`; `instrument`: the lanes compiled with the action log. A case whose lanes all only
    compile here is still validated (its reference is not built)."""
    try:
        limited = limited_lanes(text, lanes)
        checked = [lane for lane in lanes if lane not in limited]
        try:
            expectation = expectation_on(case, seed, checked, toolchain.probe, validate=True)
        except UndefinedReference as error:  # the generator's slip: discarded, never judged
            return LaneCheck(None, None, limited, str(error))
        report = check_module(text, checked, expectation, toolchain, budget, confirm=False, instrument=instrument)
        return LaneCheck(report, expectation, limited)
    except OSError as error:  # our temporary files: a full TMPDIR is the machine, not the compiler
        if error.errno in _ENVIRONMENT_ERRNOS:
            raise EnvironmentFault(f"{error.filename or 'temporary file'}: {error.strerror}") from None
        raise


def second_judge(lanes: Mapping[str, Status], verdict: Verdict, expectation: Expectation | None,
                 probe: ToolchainProbe) -> tuple[Status, float] | None:
    """What the second judge (ONNX's reference) said, as one more lane's (status, seconds), so a
    campaign counts how often it ran and disagreed; None unless some lane executed the module."""
    executed = any(lane in BACKENDS and BACKENDS[lane].executes(probe) and status != Status.UNSUPPORTED
                   for lane, status in lanes.items())
    if expectation is None or not executed or verdict == Verdict.INVALID:
        return None
    second = expectation.second
    return None if second is None else (second.status, round(second.seconds, 4))


def form_matching_reference(case: Case, toolchain: Toolchain, seed: int, budget: Budget) -> str:
    """An equivalent form of the case that matches the NumPy reference on the reference lane
    ("form [...] of the same computation matches it on llvm-cpu"), or "": one that does shows the
    reference is right when every backend disagreed with it."""
    forms = check_forms(case, (REFERENCE_BACKEND,), toolchain, seed, budget, confirm=False)
    for form, report in forms.reports:
        if form != case and report.verdict == Verdict.PASS:
            return (f"form [{form_difference(case.params, form.params)}] of the same computation matches "
                    f"it on {REFERENCE_BACKEND}")
    return ""


__all__ = ["LaneCheck", "check_lanes", "expectation_on", "form_matching_reference", "limited_lanes", "second_judge"]
