"""A lane's expected failures for `shapefuzz onnx-suite --expected FILE`, in the form IREE keeps its
own (iree-org/iree `tests/external/iree-test-suites/onnx_ops/onnx_ops_<config>.json`: `config_name`,
`expected_compile_failures`, `expected_run_failures`, `skip_compile_tests`, `skip_run_tests`, each
test named `onnx/node/generated/test_<name>`; a bare `test_<name>` is read too). A run is judged
against the list as IREE's CI judges it: a test that fails where the list does not say so (or fails
to compile where the list expects it to compile and fail at run time) is unexpected; a listed test
that now passes is reported so the list can shrink; everything else is as expected.

How a lane's outcome reads in the list's words: the importer's rejection, a module that does not
verify, a compile failure and a release that does not lower the op are compile failures; a run
failure, wrong values and a run-time target limit are run failures; a test whose arrays do not pass
through .npy files, or that was compiled but cannot run here, says nothing about running."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from shapefuzz.errors import InvalidInputError
from shapefuzz.recheck.onnx_suite import PASS, LaneResult, TestResult

PREFIX = "onnx/node/generated/"
COMPILE, RUN, PASSED, NOT_JUDGED = "compile failure", "run failure", "pass", "not judged"
_LISTS = ("expected_compile_failures", "expected_run_failures", "skip_compile_tests", "skip_run_tests")


def bare(name: str) -> str:
    """`onnx/node/generated/test_x` -> `test_x` (a bare name as it is)."""
    return name[len(PREFIX):] if name.startswith(PREFIX) else name


@dataclass(frozen=True)
class ExpectedFailures:
    """One lane's lists, by bare test name."""

    config_name: str = ""
    compile_failures: frozenset[str] = frozenset()
    run_failures: frozenset[str] = frozenset()
    skip_compile: frozenset[str] = frozenset()
    skip_run: frozenset[str] = frozenset()
    extra: dict[str, Any] = field(default_factory=dict)  # the file's other keys (its flags), kept on rewrite

    def expected(self, name: str) -> str:
        return COMPILE if name in self.compile_failures else RUN if name in self.run_failures else PASSED

    def skipped(self, name: str) -> bool:
        return name in self.skip_compile or name in self.skip_run


def load(path: str | Path) -> ExpectedFailures:
    """The file's lists; a file that is missing, not JSON or not of this shape: one-line InvalidInputError."""
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise InvalidInputError(f"--expected {path}: no such file") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInputError(f"--expected {path}: not a JSON file ({type(error).__name__}: "
                                f"{(str(error).splitlines() or [''])[0][:120]})") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"--expected {path}: not a JSON object of lists (as IREE's onnx_ops_*.json)")
    lists: dict[str, frozenset[str]] = {}
    for key in _LISTS:
        value = data.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InvalidInputError(f"--expected {path}: {key!r} is not a list of test names")
        lists[key] = frozenset(bare(v) for v in value)
    name = data.get("config_name", "")
    extra = {k: v for k, v in data.items() if k not in (*_LISTS, "config_name")}
    return ExpectedFailures(str(name) if isinstance(name, str) else "", lists["expected_compile_failures"],
                            lists["expected_run_failures"], lists["skip_compile_tests"], lists["skip_run_tests"], extra)


def seen(lane: LaneResult) -> str:
    """A lane's outcome in the list's words (module doc)."""
    if lane.outcome == PASS:  # (status "compiled": it compiled, and was not run here)
        return PASSED
    if lane.stage in ("import", "compile"):
        return COMPILE
    if lane.stage == "run":
        return RUN
    return NOT_JUDGED  # arrays that do not pass through .npy files: never tried


@dataclass(frozen=True)
class Judged:
    """A run judged against the lists: test names by what came of them."""

    unexpected: tuple[tuple[str, str, str], ...]  # (test, expected, seen)
    newly_passing: tuple[tuple[str, str], ...]  # (test, what the list expected)
    as_expected: int
    skipped: int
    not_judged: int

    @property
    def failed(self) -> bool:
        return bool(self.unexpected)


def judge(results: Sequence[TestResult], lane: str, expected: ExpectedFailures) -> Judged:
    """Each test's outcome on `lane` against the lists. A test compiled but not run here passes the
    compile; a run failure it was expected to have cannot be told here (counted as expected)."""
    unexpected, newly, same, skipped, unjudged = [], [], 0, 0, 0
    for r in results:
        name = r.test.name
        if expected.skipped(name):
            skipped += 1
            continue
        got = r.lanes.get(lane)
        outcome = seen(got) if got is not None else NOT_JUDGED
        want = expected.expected(name)
        if outcome == NOT_JUDGED:
            unjudged += 1
        elif outcome == want or (got is not None and got.status == "compiled" and want == RUN):
            same += 1
        elif outcome == PASSED:
            newly.append((name, want))
        elif want == PASSED or (want == RUN and outcome == COMPILE):
            unexpected.append((name, want, outcome))
        else:  # expected to fail compiling, now compiles and fails at run time: progress, not a regression
            newly.append((name, want))
    return Judged(tuple(unexpected), tuple(newly), same, skipped, unjudged)


def lists_for(results: Sequence[TestResult], lane: str, keep: ExpectedFailures | None = None) -> dict[str, Any]:
    """This run's failures on `lane` as a file of the same form (sorted, prefixed names), keeping the
    given file's name, flags and skip lists; tests this run did not reach keep their old entries."""
    keep = keep or ExpectedFailures(config_name=lane)
    ran = {r.test.name for r in results}
    compile_failures = {n for n in keep.compile_failures if n not in ran}
    run_failures = {n for n in keep.run_failures if n not in ran}
    for r in results:
        got = r.lanes.get(lane)
        if got is None or keep.skipped(r.test.name):
            continue
        outcome = seen(got)
        if outcome == COMPILE:
            compile_failures.add(r.test.name)
        elif outcome == RUN:
            run_failures.add(r.test.name)
        elif outcome == NOT_JUDGED or got.status == "compiled":  # nothing new about running: as it was
            run_failures |= {r.test.name} & keep.run_failures
    return {"config_name": keep.config_name or lane, **keep.extra,
            "skip_compile_tests": sorted(PREFIX + n for n in keep.skip_compile),
            "skip_run_tests": sorted(PREFIX + n for n in keep.skip_run),
            "expected_compile_failures": sorted(PREFIX + n for n in compile_failures),
            "expected_run_failures": sorted(PREFIX + n for n in run_failures)}


def judged_lines(judged: Judged, lane: str, path: str) -> list[str]:
    lines = [f"against {path} on {lane}: {judged.as_expected} as expected, {len(judged.unexpected)} unexpected "
             f"failure(s), {len(judged.newly_passing)} now better than listed, {judged.skipped} skipped by the list, "
             f"{judged.not_judged} not judged here"]
    lines += [f"unexpected: {name}: expected {want}, got {got}" for name, want, got in judged.unexpected]
    lines += [f"better than listed: {name} (listed as {want}; the list can drop it)" for name, want in judged.newly_passing]
    return lines


__all__ = ["COMPILE", "ExpectedFailures", "Judged", "NOT_JUDGED", "PASSED", "RUN", "bare", "judge", "judged_lines",
           "lists_for", "load", "seen"]
