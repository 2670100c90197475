"""A cause's regression range: its reproducer (a corpus entry, shrunk where it could be) checked on
the releases in the toolchain cache (a campaign fetches a spread of them in the background,
`release_fetch.py`), with the `bisect` machinery; nothing is downloaded here. The result is one
record: "fails since X, passes in Y", or "present in every release tried (X–Y)", with the releases
tried and those stepped over.

An old release shows "the same failure" when it fails as the reproducer itself fails at the current
release (compiled first: a cause's pass may come from another, unshrunk example): at the same stage
with the same status and, where both name one, in the same pass however spelled, or for a compile
error with the same first error line word for word (a pass renamed); for wrong values: still wrong
against the saved NumPy reference. Never told apart by message text: messages change across
releases (the 2^53-1 dim bound reads
"unbounded stack allocations" at 3.2, "exceeded stack allocation limit" at 3.8 and "overflows 64
bits" at 3.13). A release that cannot parse the reproducer (custom syntax changes: 3.13's
`iree_linalg_ext.attention` is "expected 'ins'" to 3.12) is tried again on it printed in generic
form by the pinned wheels (`reprint.py`), and the range says which releases were judged so. One
that fails another way, cannot parse either form or lacks the lane's flags cannot tell, and bisect
steps over it."""

from __future__ import annotations

import hashlib
import re
import subprocess
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable, Sequence

from shapefuzz.iree.backends import BACKENDS
from shapefuzz.recheck.bisect import (EXHAUSTIVE, BisectResult, Probe, bisect_entry, history, history_text,
                                      not_monotone)
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
    """What "the same failure" is judged on: stage, status and the failing pass ("" unknown); for a
    compile error, its first error line too ("" unknown), never compared unless both have one."""

    stage: str
    status: str
    failing_pass: str = ""
    error: str = ""

    def same_as(self, other: "Failure") -> bool:
        if (self.stage, self.status) != (other.stage, other.status):
            return False
        if not (self.failing_pass and other.failing_pass):
            return True  # a pass is compared only where both name one
        mine, theirs = same_pass_key(self.failing_pass), same_pass_key(other.failing_pass)
        short, long = sorted((mine, theirs), key=len)
        if mine == theirs or (len(short) >= 8 and long.endswith(short)):  # "codegen" prefixes come and go
            return True
        # the same reproducer stopped by the same error word for word: a pass renamed or its work moved
        # into another (3.0's iree-llvmcpu-tile does what 3.13's tile-and-fuse-producer-consumer does)
        return bool(self.error) and self.error == other.error

    def same_message(self, other: "Failure") -> bool:
        """Whether the two error lines say the same, what differs between hits of one bug folded
        (sizes, dispatch names); true where either has none."""
        from shapefuzz.triage.identity import fold_message, without_printed_op
        from shapefuzz.triage.signature import normalize

        if not (self.error and other.error):
            return True
        # (an op the message prints whole is no part of what it says: 3.0.0 and 3.6.0 say "failed to legalize
        # operation 'math.ctpop' that was explicitly marked illegal" without it, 3.13 with it; an audit read
        # "fails with another message" there over one bug)
        said = lambda error: without_printed_op(fold_message(normalize(error), True))  # noqa: E731
        return said(self.error) == said(other.error)

    def __str__(self) -> str:
        return f"{self.stage}/{self.status}" + (f" in {self.failing_pass}" if self.failing_pass else "")


def observed_failure(result: Any) -> Failure:
    """A lane's failure as a check saw it (`judge`'s result: stage, status, the compiler's output in
    `detail`), named as every release's is: the failing pass read from that output, and for a
    compile error its first error line (the location dropped)."""
    from shapefuzz.triage.signature import first_error_line

    status = result.status.value
    error = first_error_line(result.detail).strip() if status == "error" else ""
    return Failure(result.stage.value, status, failing_pass(result.detail) or "", error)


def recorded_failure(entry: CorpusEntry, failing: str = "") -> Failure:
    """The entry's failure as recorded: its signature's stage and status, and the failing pass the
    cause names (else the entry's `bug` record). What a release is judged against only where the
    reproducer's own failure at the current release could not be read (`own_failure`)."""
    bug = entry.meta.get("bug")
    failing = failing or (str(bug.get("failing_pass") or "") if isinstance(bug, dict) else "")
    return Failure(entry.signature.stage.value, entry.signature.status.value, failing)


def reproducer_digest(mlir: str) -> str:
    """What a range records of the reproducer it was taken on: a shrink rewrites an entry's
    reproducer in place, and a range of the text before says nothing of the one after."""
    return hashlib.sha256(mlir.encode("utf-8", "replace")).hexdigest()[:16]


GENERIC_FORM = "on its generic form"  # in a probe's detail: the release read the reprinted reproducer


def same_failure_check(failing: str = "", printer: Callable[[], Toolchain | None] | None = None,
                       want: Failure | None = None) -> Callable[[CorpusEntry, Toolchain], ReplayResult]:
    """A bisect `check`: the entry on its lane with this release, judged by `Failure.same_as`
    against `want` (the reproducer's own failure at the current release, `own_failure`; default:
    `recorded_failure(entry, failing)`). STILL_FAILING: the same failure; FIXED: passes;
    NOT_RUNNABLE/UNREADABLE (cannot tell, said in `detail`): fails another way, no such lane here,
    or the reproducer does not parse. A release that cannot parse it is tried again on its generic
    form (`reprint.reprinted`), printed by `printer()` (default: the pinned wheels); a verdict taken
    so says GENERIC_FORM."""

    def check(entry: CorpusEntry, toolchain: Toolchain) -> ReplayResult:
        target = want or recorded_failure(entry, failing)
        result = _judged(entry, toolchain, target)
        if result.outcome != ReplayOutcome.UNREADABLE or not result.detail.startswith(_UNPARSED):
            return result
        writer = _printer(printer)
        if writer is None or writer.compile_bin == toolchain.compile_bin:
            return result
        from shapefuzz.invoke.reprint import reprinted

        again = reprinted(entry.mlir, writer, toolchain)
        if again.text is None:
            return replace(result, detail=f"{result.detail}; {again.why}")
        retried = _judged(replace(entry, mlir=again.text), toolchain, target)
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


def _lane_result(entry: CorpusEntry, toolchain: Toolchain) -> tuple[ReplayResult, Any]:
    """The entry checked on its lane with this release: a NOT_RUNNABLE or UNREADABLE result saying
    why it cannot tell, with None; or the bare result (its timing) with the lane's failing result
    (a judge result: stage, status, detail) or None when it passes."""
    started = time.monotonic()
    sig = entry.signature
    base = ReplayResult(entry.id, entry.path, ReplayOutcome.NOT_RUNNABLE, entry.expected_state, sig)
    why = not_runnable_here(sig, toolchain)
    if why:
        return replace(base, detail=why), None
    probe = toolchain.probe
    lanes = [sig.backend]
    if sig.stage == Stage.COMPARE and entry.expected is None and entry.case is None:  # judged by vote
        lanes += [b for b in entry.backends if b != sig.backend and b in BACKENDS and BACKENDS[b].executes(probe)]
    try:
        report = check_entry(entry, toolchain, lanes, confirm=False)
    except ShapefuzzError as error:
        return replace(base, outcome=ReplayOutcome.UNREADABLE, detail=str(error).splitlines()[0][:200]), None
    seconds = time.monotonic() - started
    if report.verdict == Verdict.INVALID:
        first = (report.verify_error.strip().splitlines() or ["?"])[0]
        first = re.sub(r"^\S*?:\d+:\d+:\s*(?:error:\s*)?", "", first)[:160]  # no temporary file's path
        return replace(base, outcome=ReplayOutcome.UNREADABLE, seconds=seconds, detail=f"{_UNPARSED} ({first})"), None
    result = next((r for r in report.results if r.backend == sig.backend), None)
    if result is None or result.status.value in ("skipped", "unsupported"):
        return replace(base, seconds=seconds, detail=f"no verdict on {sig.backend}"
                       + (f" ({result.status.value})" if result else "")), None
    if result.failed:
        return replace(base, now=result.signature, seconds=seconds), result
    if sig.stage.rank > result.stage.rank:
        return replace(base, seconds=seconds, detail=f"passes {result.stage.value}; cannot reach {sig.stage.value}"), None
    return replace(base, outcome=ReplayOutcome.FIXED, seconds=seconds, detail=f"passes {result.stage.value}"), None


def _judged(entry: CorpusEntry, toolchain: Toolchain, want: Failure) -> ReplayResult:
    """One release's verdict on the entry as written (see `same_failure_check`)."""
    base, failed = _lane_result(entry, toolchain)
    if failed is None:
        return base
    now = observed_failure(failed)
    if want.same_as(now):
        if not want.same_message(now):
            # fails, in the same pass, but not with the same words: said so, never "the same failure"
            # (an audit found 3.0.0's "failed to legalize 'vector.insert'" read as the same i64-emulation
            # failure as 3.13's 'vector.broadcast')
            return replace(base, outcome=ReplayOutcome.CHANGED,
                           detail=f"fails in the same pass with another message ({now.error[:160]})")
        return replace(base, outcome=ReplayOutcome.STILL_FAILING, detail=f"the same failure ({now})")
    return replace(base, detail=f"fails another way ({now}, not {want}): cannot tell")


OWN_FAILURE = "the failure this reproducer shows"  # in the current release's probe detail


def own_failure(entry: CorpusEntry, toolchain: Toolchain, failing: str = "") -> tuple[Failure, ReplayResult | None]:
    """What the other releases are judged against: the reproducer's own failure at the current
    release (`toolchain`), read from its output as theirs are (its pass, never one a cause took from
    another, unshrunk example: a shrink may move a failure to another pass), with that release's
    verdict. A compile error or crash only (elsewhere no output names a pass, and an out-of-memory
    or a timeout costs its full cap again): for the rest, or when the reproducer does not fail here
    at its recorded stage and status, `recorded_failure` with None."""
    recorded = recorded_failure(entry, failing)
    if entry.signature.stage != Stage.COMPILE or entry.signature.status.value not in ("error", "crash"):
        return recorded, None
    base, failed = _lane_result(entry, toolchain)
    if failed is None:
        return recorded, None
    now = observed_failure(failed)
    if (now.stage, now.status) != (recorded.stage, recorded.status):
        return recorded, None
    return now, replace(base, outcome=ReplayOutcome.STILL_FAILING, detail=f"{OWN_FAILURE} ({now})")


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
    `check`, the reproducer is first compiled at the current release (the newest it was saved with,
    else the newest of `versions`) and each other release is judged by the failure it shows there
    (`own_failure`; `failing`, the cause's pass, only where it shows none). `trust_seen`: the
    releases the entry was saved with fail without a compile where that did not tell (a
    campaign's own entry, on the toolchain that just found it). Every release is tried up to
    EXHAUSTIVE of them; past that they are bisected and the text names the ones left untried."""
    versions = sorted(dict.fromkeys(versions), key=version_key)
    installer = installer or local_installer
    seen = {v.split("rc")[0] for v in entry.toolchain_versions}
    known: dict[str, ReplayResult] = {}
    stand_in, entry_lane = "", entry.signature.backend
    if check is None:
        current = next((v for v in reversed(versions) if v in seen), versions[-1] if versions else "")
        want, here = _reference(entry, current, installer, failing)
        moved = _on_stand_in(entry, current, installer, want)
        if moved is not None:  # ranged on a lane older releases have (its steps compile for it too, where a variant)
            entry, here = moved
            stand_in = entry.signature.backend
            seen = set()  # the releases it was saved with saw its own lane, not this one
        if here is not None:
            known[current] = here
            say(f"  {current}: {here.detail}")
        check = same_failure_check(want=want)
    if trust_seen:
        for version in (v for v in versions if v in seen and v not in known):
            known[version] = ReplayResult(entry.id, entry.path, ReplayOutcome.STILL_FAILING, entry.expected_state,
                                          entry.signature, detail="the failure the campaign saw")
    result = bisect_entry(entry, versions, say, check, installer, known=known, exhaustive=len(versions) <= EXHAUSTIVE)
    runs = history(result.probes)
    probes = {p.version: p for p in result.probes}
    tried = [v for v in versions if v in probes and probes[v].verdict is not None]
    stepped = [probes[v] for v in versions if v in probes and probes[v].verdict is None]
    untried = [v for v in versions if v not in probes]
    text, said = _range_text(result, versions, tried, runs)
    if untried and set(untried) - said:  # bisected: these were assumed to read as their neighbours
        text += f"; {_spans([v for v in untried if v not in said], versions)} not tried (bisected)"
    if result.first_fixed and result.first_fixed not in text:  # (said once: "fails up to X, which passes")
        text += f"; fixed in {result.first_fixed}"
    generic = [v for v in tried if GENERIC_FORM in getattr(probes[v].result, "detail", "")]
    if generic and tried:
        text += f"; {', '.join(generic)} judged {GENERIC_FORM} (the reproducer's syntax is newer)"
    if stand_in:
        flags = " or its flags" if entry_lane in BACKENDS and BACKENDS[entry_lane].variant_of else ""
        text += f" (taken on {stand_in}, where this reproducer fails the same way; older releases may lack {entry_lane}{flags})"
    return {"text": text, "entry": entry.id, "reproducer": reproducer_digest(entry.mlir), "lane": stand_in,
            "first_failing": result.first_failing or "",
            "last_passing": result.last_passing or "", "first_fixed": result.first_fixed or "",
            "tried": ", ".join(tried), "history": history_text(runs), "note": result.note, "generic_form": ", ".join(generic),
            "releases": "; ".join(f"{v} {_verdict_word(probes.get(v))}" for v in versions),
            "stepped_over": "; ".join(f"{p.version}: {p.describe()}" for p in stepped)[:1500]}


def _stand_ins(entry: CorpusEntry) -> list[str]:
    """Lanes a range may be taken on instead of the entry's own, older releases lacking it, in this
    order: its variant lane's plain lane (llvm-cpu for llvm-cpu-o3); llvm-cpu for a bug placed before
    codegen (a frontend's conversion: the target is no part of it, and 3.0.0 has no vulkan-llvmpipe);
    its target's older stand-in (vulkan-spirv for vulkan-llvmpipe: audit D's ab1aa7cfd1, "could not
    tell" at 3.6.0, fails the same way there on vulkan-spirv)."""
    from shapefuzz.triage.component import target_independent

    lane = entry.signature.backend
    out = [BACKENDS[lane].variant_of or ""] if lane in BACKENDS else []
    bug = entry.meta.get("bug") if isinstance(entry.meta.get("bug"), dict) else {}
    if target_independent(str((bug or {}).get("component") or "")):
        out.append("llvm-cpu")  # (first: the target is no part of it)
    out += [BACKENDS[lane].older_stand_in or ""] if lane in BACKENDS else []
    return [other for other in dict.fromkeys(out) if other and other != lane and other in BACKENDS]


def _on_stand_in(entry: CorpusEntry, current: str, installer: Callable[[str], Toolchain],
                 want: Failure) -> tuple[CorpusEntry, ReplayResult] | None:
    """The entry on a stand-in lane (`_stand_ins`), with the current release's verdict there, when
    it fails the same way there: a range taken on its own lane could not tell at a release without
    the lane or its flags (audit A: 3.0.0 has no --iree-opt-level, and a wrong value the plain lane
    shows there too was ranged "3.6.0-3.13.0"; audit B and E: torch-mlir and StableHLO bugs found on
    vulkan-llvmpipe were ranged from 3.12.0, and 3.0.0 fails the same way on llvm-cpu)."""
    from shapefuzz.errors import ToolchainError

    if not current:
        return None
    for lane in _stand_ins(entry):
        moved = replace(entry, meta={**entry.meta, "signature": {**entry.meta["signature"], "backend": lane}})
        try:
            result = _judged(moved, installer(current), want)
        except (ToolchainError, UsageError, OSError, subprocess.SubprocessError):
            continue
        if result.outcome == ReplayOutcome.STILL_FAILING:
            return moved, result
    return None


def _reference(entry: CorpusEntry, current: str, installer: Callable[[str], Toolchain],
               failing: str) -> tuple[Failure, ReplayResult | None]:
    """`own_failure` at the `current` release, or the recorded failure when that release is not here."""
    from shapefuzz.errors import ToolchainError

    if not current:
        return recorded_failure(entry, failing), None
    try:
        return own_failure(entry, installer(current), failing)
    except (ToolchainError, UsageError, OSError, subprocess.SubprocessError):
        return recorded_failure(entry, failing), None


def _range_text(result: BisectResult, versions: Sequence[str], tried: Sequence[str],
                runs: Sequence[tuple[bool, Sequence[str]]]) -> tuple[str, set[str]]:
    """The range's sentence, claiming nothing of a release that was not tried or could not tell,
    and the untried releases it names."""
    if not tried:
        return "no range: no release could tell (each was stepped over)", set()
    if not_monotone(runs):  # shown as it is, never folded into one range
        return f"{history_text(runs)}: " + ("a regression of a fixed bug" if runs[-1][0] else
                                            "fixed, broken again and fixed again"), set()
    first = result.first_failing
    if first is None:
        return f"fails in none of the releases tried ({', '.join(tried)})", set()
    if len(tried) == 1:
        return f"no range: only {tried[0]} could tell (the other releases were stepped over)", set()
    span = f"{tried[0]}–{tried[-1]}"
    verdicts = {p.version: p.verdict for p in result.probes}
    passing = [v for v in tried if verdicts[v] is False and version_key(v) < version_key(first)]
    if not passing:  # (first == tried[0]: the history is monotone)
        return (f"present in every release tried ({span})" if not result.first_fixed else
                f"fails up to {result.first_fixed}, which passes (tried {', '.join(tried)})"), set()
    below = passing[-1]
    between = versions[versions.index(below) + 1:versions.index(first)]
    if not between:
        return f"fails since {first}, passes in {below}", set()
    untried = [v for v in between if v not in verdicts]
    unknown = [v for v in between if v in verdicts]
    gaps = ([f"{_spans(untried, versions)} not tried"] if untried else []) + \
        ([f"{_spans(unknown, versions)} could not tell"] if unknown else [])
    return f"fails since {first} or earlier, passes in {below} ({'; '.join(gaps)})", set(untried)


def _spans(chosen: Sequence[str], versions: Sequence[str]) -> str:
    """`3.2.0–3.4.0, 3.12.0`: the chosen releases, each run of neighbours in `versions` as one span."""
    runs: list[list[str]] = []
    for version in sorted(chosen, key=versions.index):
        if runs and versions.index(version) == versions.index(runs[-1][-1]) + 1:
            runs[-1].append(version)
        else:
            runs.append([version])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}–{run[-1]}" for run in runs)


def _verdict_word(probe: Probe | None) -> str:
    """A release's verdict in the record's `releases` list: what each release said."""
    if probe is None:
        return "not tried"
    if probe.result is not None and probe.result.outcome == ReplayOutcome.CHANGED:
        return "fails with another message"
    return {True: "fails", False: "passes", None: "could not tell"}[probe.verdict]


def range_into_entry(path: Path, versions: Sequence[str], say: Callable[[str], None] = lambda _: None) -> str:
    """A corpus entry's regression range over `versions` (judged by the failure its reproducer shows
    at the current release, else the failing or localized pass its `bug` record names), written into
    that record (`corpus rederive --bisect`); returns its text."""
    from shapefuzz.corpus import load_entry, update_meta

    entry = load_entry(path)
    bug = dict(entry.meta.get("bug") or {})
    record = regression_range(entry, versions, say, failing=str(bug.get("failing_pass") or ""))
    update_meta(path, bug={**bug, "regression": record})
    return record["text"]


__all__ = ["Failure", "GENERIC_FORM", "local_installer", "local_releases", "pass_key", "range_into_entry",
           "recorded_failure", "same_pass_key",
           "regression_range", "releases_to_try", "same_failure_check"]
