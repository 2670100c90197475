"""A cause's regression range: its reproducer (a corpus entry, shrunk where it could be) checked on
the releases in the toolchain cache (a campaign fetches a spread of them in the background,
`release_fetch.py`), with the `bisect` machinery; nothing is downloaded here. The result is one
record: "fails since X, passes in Y", or "present in every release tried (X–Y)", with the releases
tried and those stepped over.

An old release shows "the same failure" when it fails at the same stage with the same status and,
where both name one, in the same pass (for wrong values: still wrong against the saved NumPy
reference), never by message text: messages change across releases (the 2^53-1 dim bound reads
"unbounded stack allocations" at 3.2, "exceeded stack allocation limit" at 3.8 and "overflows 64
bits" at 3.13). A release that cannot parse the reproducer (custom syntax changes: 3.13's
`iree_linalg_ext.attention` is "expected 'ins'" to 3.12) is tried again on it printed in generic
form by the pinned wheels (`reprint.py`), and the range says which releases were judged so. One
that fails another way, cannot parse either form or lacks the lane's flags cannot tell, and bisect
steps over it."""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.recheck.bisect import EXHAUSTIVE, bisect_entry, history, history_text, not_monotone
from shapefuzz.corpus import CorpusEntry
from shapefuzz.errors import ShapefuzzError, UsageError
from shapefuzz.model import Stage, Verdict
from shapefuzz.iree.releases import cached_versions, installed_version, version_key
from shapefuzz.recheck.replay import ReplayOutcome, ReplayResult, check_entry, not_runnable_here
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.triage.failing_pass import failing_pass


# Pipelines a pass moves between across releases (FoldUnitExtentDims: iree-flow- at 3.0,
# iree-dispatch-creation- at 3.13): an argument's namespace is not part of what the pass is.
_NAMESPACE = re.compile(r"^(?:iree-)?(?:flow|dispatch-creation|global-opt|preprocessing|stream|codegen|hal|util|abi|"
                        r"input-conversion|vm|torch)-")
# MLIR's core passes whose class is not their argument spelled another way: `Canonicalizer` (3.0 to
# 3.6 print the class so, `CanonicalizerPass` later) is `canonicalize`, `Inliner` is `inline`
_CLASS_NAMED = ((re.compile(r"canonicalizer$"), "canonicalize"), (re.compile(r"^inliner$"), "inline"))


def pass_key(name: str) -> str:
    """A pass name as compared across releases: `iree-codegen-gpu-distribute-shared-memory-copy`,
    `GPUDistributeSharedMemoryCopyPass` and `mlir::iree_compiler::GPUDistributeSharedMemoryCopy`
    differ only in spelling, `iree-flow-fold-unit-extent-dims` and
    `iree-dispatch-creation-fold-unit-extent-dims` only in the pipeline that holds the pass, and
    `...-fold-unit-extent-dims-for-func` only in the op it runs on (the same patterns run function by
    function: the single-dispatch pipeline's)."""
    name = _NAMESPACE.sub("", name.rsplit("::", 1)[-1].lower())
    name = re.sub(r"[^a-z0-9]", "", name)
    name = re.sub(r"^iree", "", name)
    name = re.sub(r"(?:forfunc)?(?:pass)?$", "", name)
    for pattern, argument in _CLASS_NAMED:
        name = pattern.sub(argument, name)
    return name


# a pass a release names by the wrapper that runs it: IREE 3.13's failing link step reads
# `iree-hal-serialize-all-executables`, 3.6's the `SerializeTargetExecutablesPass` it runs per target
# (measured: one f16 softmax's "undefined symbol: fmaxf" in both). Causes are still placed (and
# paired for merging) by `pass_key`, which keeps the two names apart
_SAME_PASS = {"serializeallexecutables": "serializetargetexecutables",
              # renamed: a 1-D reversed dot product fails at 3.2 to 3.6 in the first, at 3.12 and 3.13 in
              # the second, with the same error word for word (measured)
              "llvmcputilerootandfuseproducerconsumer": "llvmcputileandfuseproducerconsumer"}


def same_pass_key(name: str) -> str:
    """`pass_key`, a wrapper pass named as the pass it runs (`_SAME_PASS`): one place a failure is in."""
    key = pass_key(name)
    return _SAME_PASS.get(key, key)


@dataclass(frozen=True)
class Failure:
    """What "the same failure" is judged on: stage, status and the failing pass ("" unknown)."""

    stage: str
    status: str
    failing_pass: str = ""

    def same_as(self, other: "Failure") -> bool:
        if (self.stage, self.status) != (other.stage, other.status):
            return False
        if not (self.failing_pass and other.failing_pass):
            return True  # a pass is compared only where both name one
        mine, theirs = same_pass_key(self.failing_pass), same_pass_key(other.failing_pass)
        short, long = sorted((mine, theirs), key=len)
        return mine == theirs or (len(short) >= 8 and long.endswith(short))  # "codegen" prefixes come and go

    def __str__(self) -> str:
        return f"{self.stage}/{self.status}" + (f" in {self.failing_pass}" if self.failing_pass else "")


def recorded_failure(entry: CorpusEntry, failing: str = "") -> Failure:
    """The entry's failure as recorded: its signature's stage and status, and the failing pass the
    cause names (else the entry's `bug` record)."""
    bug = entry.meta.get("bug")
    failing = failing or (str(bug.get("failing_pass") or "") if isinstance(bug, dict) else "")
    return Failure(entry.signature.stage.value, entry.signature.status.value, failing)


GENERIC_FORM = "on its generic form"  # in a probe's detail: the release read the reprinted reproducer


def same_failure_check(failing: str = "", printer: Callable[[], Toolchain | None] | None = None
                       ) -> Callable[[CorpusEntry, Toolchain], ReplayResult]:
    """A bisect `check`: the entry on its lane with this release, judged by `Failure.same_as`.
    STILL_FAILING: the same failure; FIXED: passes; NOT_RUNNABLE/UNREADABLE (cannot tell, said
    in `detail`): fails another way, no such lane here, or the reproducer does not parse. A
    release that cannot parse it is tried again on its generic form (`reprint.reprinted`), printed
    by `printer()` (default: the pinned wheels); a verdict taken so says GENERIC_FORM."""

    def check(entry: CorpusEntry, toolchain: Toolchain) -> ReplayResult:
        result = _judged(entry, toolchain, failing)
        if result.outcome != ReplayOutcome.UNREADABLE or not result.detail.startswith(_UNPARSED):
            return result
        writer = _printer(printer)
        if writer is None or writer.compile_bin == toolchain.compile_bin:
            return result
        from shapefuzz.invoke.reprint import reprinted

        again = reprinted(entry.mlir, writer, toolchain)
        if again.text is None:
            return replace(result, detail=f"{result.detail}; {again.why}")
        retried = _judged(replace(entry, mlir=again.text), toolchain, failing)
        if retried.outcome == ReplayOutcome.UNREADABLE:
            return replace(result, detail=f"{result.detail}; on its generic form too")
        return replace(retried, seconds=result.seconds + retried.seconds,
                       detail=f"{retried.detail} {GENERIC_FORM} (printed by {writer.probe.version.split('rc')[0]})")

    return check


_UNPARSED = "cannot parse the reproducer"


def _printer(printer: Callable[[], Toolchain | None] | None) -> Toolchain | None:
    from shapefuzz.errors import ToolchainError
    from shapefuzz.iree.toolchain import find_toolchain

    try:
        return printer() if printer is not None else find_toolchain(None)
    except ToolchainError:
        return None


def _judged(entry: CorpusEntry, toolchain: Toolchain, failing: str) -> ReplayResult:
    """One release's verdict on the entry as written (see `same_failure_check`)."""
    started = time.monotonic()
    sig, want = entry.signature, recorded_failure(entry, failing)
    base = ReplayResult(entry.id, entry.path, ReplayOutcome.NOT_RUNNABLE, entry.expected_state, sig)
    why = not_runnable_here(sig, toolchain)
    if why:
        return replace(base, detail=why)
    probe = toolchain.probe
    lanes = [sig.backend]
    if sig.stage == Stage.COMPARE and entry.expected is None and entry.case is None:  # judged by vote
        lanes += [b for b in entry.backends if b != sig.backend and b in BACKENDS and BACKENDS[b].executes(probe)]
    try:
        report = check_entry(entry, toolchain, lanes, confirm=False)
    except ShapefuzzError as error:
        return replace(base, outcome=ReplayOutcome.UNREADABLE, detail=str(error).splitlines()[0][:200])
    seconds = time.monotonic() - started
    if report.verdict == Verdict.INVALID:
        first = (report.verify_error.strip().splitlines() or ["?"])[0]
        first = re.sub(r"^\S*?:\d+:\d+:\s*(?:error:\s*)?", "", first)[:160]  # no temporary file's path
        return replace(base, outcome=ReplayOutcome.UNREADABLE, seconds=seconds,
                       detail=f"{_UNPARSED} ({first})")
    result = next((r for r in report.results if r.backend == sig.backend), None)
    if result is None or result.status.value in ("skipped", "unsupported"):
        return replace(base, seconds=seconds, detail=f"no verdict on {sig.backend}"
                       + (f" ({result.status.value})" if result else ""))
    if result.failed:
        now = Failure(result.stage.value, result.status.value, failing_pass(result.detail) or "")
        if want.same_as(now):
            return replace(base, outcome=ReplayOutcome.STILL_FAILING, now=result.signature, seconds=seconds,
                           detail=f"the same failure ({now})")
        return replace(base, now=result.signature, seconds=seconds,
                       detail=f"fails another way ({now}, not {want}): cannot tell")
    if sig.stage.rank > result.stage.rank:
        return replace(base, seconds=seconds, detail=f"passes {result.stage.value}; cannot reach {sig.stage.value}")
    return replace(base, outcome=ReplayOutcome.FIXED, seconds=seconds, detail=f"passes {result.stage.value}")


def local_releases(current: str | None = None, say: Callable[[str], None] | None = None) -> list[str]:
    """Releases runnable without the network: the cache's that can be believed (a folder that
    cannot is one line to `say`, `releases.cached_versions`) and the pinned wheels' (oldest first)."""
    found = set(cached_versions(say))
    for version in (installed_version(), current):
        if version and "rc" not in version and "dev" not in version:
            found.add(version)
    return sorted(found, key=version_key)


def releases_to_try(current: str | None = None, say: Callable[[str], None] | None = None) -> list[str]:
    """The releases a regression range is taken over; at least two, else a one-line UsageError."""
    versions = local_releases(current, say)
    if len(versions) < 2:
        have = ", ".join(versions) or "none"
        raise UsageError(f"no other release in the toolchain cache (have: {have}); fill it once with "
                         "`shapefuzz bisect ENTRY --versions 3.8.0..` or `--iree-version X.Y.Z`")
    return versions


def local_installer(version: str) -> Toolchain:
    """A cached release's toolchain, or the pinned wheels' when they are that release; never a
    download (a release not here cannot tell, and bisect steps over it)."""
    from shapefuzz.errors import ToolchainError
    from shapefuzz.iree.releases import install
    from shapefuzz.iree.toolchain import find_toolchain

    if version in cached_versions():
        return install(version)
    if version == installed_version():
        return find_toolchain(None)
    raise ToolchainError(f"IREE {version} is not in the toolchain cache")


def regression_range(entry: CorpusEntry, versions: Sequence[str], say: Callable[[str], None] = lambda _: None,
                     check: Callable[[CorpusEntry, Toolchain], ReplayResult] | None = None,
                     installer: Callable[[str], Toolchain] | None = None, failing: str = "",
                     trust_seen: bool = False) -> dict[str, Any]:
    """The range over `versions` (see module doc) as a JSON-able record with a `text`. Without a
    `check`, each release is judged by the same failure (`same_failure_check(failing)`).
    `trust_seen`: the releases the entry was saved with fail without a compile (a campaign's own
    entry, on the toolchain that just found it)."""
    trusted = {v.split("rc")[0] for v in entry.toolchain_versions} if trust_seen else set()
    result = bisect_entry(entry, versions, say, check or same_failure_check(failing), installer or local_installer,
                          trusted=trusted, exhaustive=len(versions) <= EXHAUSTIVE)
    runs = history(result.probes)
    tried = sorted((p.version for p in result.probes if p.verdict is not None), key=version_key)
    stepped = sorted((p for p in result.probes if p.verdict is None), key=lambda p: version_key(p.version))
    span = f"{tried[0]}–{tried[-1]}" if len(tried) > 1 else ", ".join(tried)
    if not tried:
        text = "no range: no release could tell (each was stepped over)"
    elif not_monotone(runs):  # shown as it is, never folded into one range
        text = f"{history_text(runs)}: " + ("a regression of a fixed bug" if runs[-1][0] else
                                            "fixed, broken again and fixed again")
    elif result.first_failing is None:
        text = f"fails in none of the releases tried ({', '.join(tried)})"
    elif len(tried) == 1:
        text = f"no range: only {tried[0]} could tell (the other releases were stepped over)"
    elif result.last_passing is None and result.first_failing == tried[0]:
        text = f"present in every release tried ({span})" if not result.first_fixed else \
            f"fails up to {result.first_fixed}, which passes (tried {', '.join(tried)})"
    elif result.last_passing is not None:
        text = f"fails since {result.first_failing}, passes in {result.last_passing}"
    else:
        text = f"fails since {result.first_failing} or earlier (the release before could not tell)"
    if result.first_fixed and result.first_fixed not in text:  # (said once: "fails up to X, which passes")
        text += f"; fixed in {result.first_fixed}"
    generic = [p.version for p in sorted(result.probes, key=lambda p: version_key(p.version))
               if p.verdict is not None and p.result is not None and GENERIC_FORM in p.result.detail]
    if generic and tried:
        text += f"; {', '.join(generic)} judged {GENERIC_FORM} (the reproducer's syntax is newer)"
    return {"text": text, "entry": entry.id, "first_failing": result.first_failing or "",
            "last_passing": result.last_passing or "", "first_fixed": result.first_fixed or "",
            "tried": ", ".join(tried), "history": history_text(runs), "note": result.note, "generic_form": ", ".join(generic),
            "stepped_over": "; ".join(f"{p.version}: {p.describe()}" for p in stepped)[:1500]}


def range_into_entry(path: Path, versions: Sequence[str], say: Callable[[str], None] = lambda _: None) -> str:
    """A corpus entry's regression range over `versions`, judged by the failing (or localized) pass
    its `bug` record names, written into that record (`corpus rederive --bisect`); returns its text."""
    from shapefuzz.corpus import load_entry, update_meta

    entry = load_entry(path)
    bug = dict(entry.meta.get("bug") or {})
    record = regression_range(entry, versions, say, failing=str(bug.get("failing_pass") or ""))
    update_meta(path, bug={**bug, "regression": record})
    return record["text"]


__all__ = ["Failure", "GENERIC_FORM", "local_installer", "local_releases", "pass_key", "range_into_entry",
           "recorded_failure", "same_pass_key",
           "regression_range", "releases_to_try", "same_failure_check"]
