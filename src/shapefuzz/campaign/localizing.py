"""The campaign's localization step: each new wrong-value or run-time bucket of a compiler bug (or
a suspected driver), each compile error in a pass that runs in every phase (canonicalize, cse:
placed by its phase), and each compile error in a checker that refuses a buffer (placed at the pass
that made it: `triage.culprit`), is localized once (`shapefuzz.judge.localize_probe`) from its corpus entry, within a budget,
after the fuzzing budget; the result is kept in the store (meta `localize:<bucket>`), so a stopped
step resumes and `report` shows it. A cause's buckets localized to different places are different
bugs (report `_causes` splits them); the component and the identity follow where it breaks."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Callable, Iterable

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.causes.cause_ties import split_cause
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.limits_apart import split_target_limits
from shapefuzz.campaign.causes.merging import split_by_dispatch_kind, split_real_limits
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.triage.component import component_of_place
from shapefuzz.schema import SchemaError, load_json
from shapefuzz.triage.localize import CODEGEN, Localization

LOCALIZE_META = "localize:"
DEFAULT_LOCALIZE_SECONDS = 180.0  # the whole step (--localize-time)
PER_BUCKET_SECONDS = 60.0
LOCALIZED_STAGES = ("compare", "run")
_STRATEGY = re.compile(r"-select-lowering-strategy$")  # a target's strategy-selection pass, by its argument
_TRIAGES = (Triage.COMPILER_BUG, Triage.SUSPECTED_DRIVER)


def localization_of(store: CampaignStore, sig: str) -> Localization | None:
    """The localization kept for bucket `sig` (None: none, or a record that does not read back,
    bounded in size and depth: a hostile store's 200,000-deep one was a RecursionError). A record of an
    older version that named the pass choosing a pipeline another pipeline computes right (`stale`) is
    read as placed in codegen without a pass, as `triage.codegen_pass` places it now."""
    loc = _kept(store, sig)
    if loc is None or not (loc.phase == CODEGEN and _STRATEGY.search(loc.pass_name)):
        return loc
    return replace(loc, pass_name="", pass_class="", evidence=f"{loc.evidence}; {loc.pass_class or loc.pass_name} only "
                   "chose that pipeline: it is not where the bad IR is made, and no pass is named")


# what older versions kept for a torch-mlir conversion's refusal of an op it emits itself, now placed there
_OLD_REFUSAL_ANSWER = "not localized: no pass's output holds a broadcasting torch op"


# what older versions said of a GPU dispatch right with one invocation a workgroup, without keeping it as a fact
_OLD_SERIALIZED = "with `workgroup_size = [1"


def stale(loc: Localization) -> bool:
    """A kept record an older version answered worse: a codegen localization naming a target's
    strategy-selection pass, or a torch-mlir conversion's refusal left unplaced where the conversion
    made the op itself, or a dispatch found right with one invocation a workgroup kept only in words. It is
    localized again when a campaign or `triage --localize` next has time."""
    return loc.phase == CODEGEN and bool(_STRATEGY.search(loc.pass_name)) or \
        not loc.localized and loc.evidence.startswith(_OLD_REFUSAL_ANSWER) or \
        loc.phase == CODEGEN and not loc.serialized and _OLD_SERIALIZED in loc.evidence


def cut_short(loc: Localization) -> bool:
    """A kept record its budget cut short: it had no time, which is no answer, so it is localized again
    when a campaign or `triage --localize` next has time (as the step's "the rest are left" says)."""
    return not loc.localized and "budget ran out" in loc.evidence


def _kept(store: CampaignStore, sig: str) -> Localization | None:
    text = store.get_meta(LOCALIZE_META + sig)
    if not text:
        return None
    try:
        return Localization.from_json(load_json(text, "a localization record"))
    except (SchemaError, TypeError, ValueError):
        return None


def localizations(store: CampaignStore | None, rows: Iterable[BucketRow]) -> dict[str, Localization]:
    """bucket signature -> its localization, for the buckets that have one (a wrong value or run-time
    failure; a compile error in a pass that runs in every phase, placed by its phase)."""
    if store is None:
        return {}
    found = {b.sig: localization_of(store, b.sig) for b in rows if b.stage in LOCALIZED_STAGES or b.stage == "compile"}
    return {sig: loc for sig, loc in found.items() if loc is not None}


def component_of_localization(loc: Localization, lanes: Iterable[str]) -> str:
    """Where it breaks, never the lane (triage.component.component_of_place)."""
    return component_of_place(loc, lanes)


def driver_cleared(loc: Localization | None, lanes: Iterable[str]) -> str:
    """Evidence that a wrong value blamed on the Vulkan driver is IREE's, or "": the failing lane's
    IR after its last target-independent phase was finished by another target on the same driver
    and came out right, so that device computes the program right and the bug is in the failing
    lane's codegen (the confirming re-run judged the two targets' own compiles, both wrong)."""
    from shapefuzz.iree.backends import BACKENDS

    if loc is not None and loc.serialized and loc.serialized in lanes:
        # (an audit found the set-apart cause-35048098b9 a race: a workgroup-memory temp written and read under three
        # thread mappings, and no barrier in the whole compile)
        return (f"{loc.serialized}'s own code computes the right values on the same device with one invocation a "
                "workgroup, wrong with more: the device runs the program right when nothing runs beside it, so "
                f"the wrong values are a race in the code IREE generates (a missing barrier), not the driver")
    finisher = BACKENDS.get(loc.finished_by) if loc is not None and loc.certain and loc.phase == CODEGEN else None
    if finisher is None or finisher.driver is None:
        return ""
    same = sorted(lane for lane in lanes if lane in BACKENDS and BACKENDS[lane].driver == finisher.driver
                  and lane != finisher.name)
    if not same:
        return ""
    return (f"{', '.join(same)}'s IR after its last target-independent phase, finished by {finisher.name} on the "
            f"same {finisher.driver} device, computes the right values: the device runs this program right, so "
            f"the bug is in {', '.join(same)}'s codegen (IREE's), not the driver")


def generic_failing_pass(b: BucketRow) -> str:
    """A compile error's failing pass when it is one that runs in every phase (canonicalize, cse),
    else "": such a failure is placed by its phase (`localize_probe.place_compile_failure`)."""
    from shapefuzz.triage.failing_pass import is_generic_pass

    if b.stage != "compile" or b.status in ("timeout", "oom"):
        return ""
    name = _failing_pass(b)
    return name if name and is_generic_pass(name) else ""


def checker_failing_pass(b: BucketRow) -> str:
    """A compile error's failing pass when it is a checker that refuses a buffer an earlier pass made,
    or any pass that reports an op left for it (`triage.culprit.left_op_of`), else "": such a failure
    is placed at the pass that made the buffer or the op."""
    from shapefuzz.triage.culprit import is_checker, left_op_of, offence_of

    if b.stage != "compile" or b.status != "error":
        return ""
    name, output = _failing_pass(b), b.detail or b.sig_json.get("message", "")
    # a checker's refusal of a buffer, or any pass's of an op it says was left for it
    return name if name and (is_checker(name) and offence_of(output) or left_op_of(output)) else ""


def latent_failing_pass(b: BucketRow) -> str:
    """A compile error's failing pass when the IR it fails on may have been made wrong before it, else
    "": a pass that finds no lowering configuration left, a conversion that names an op left unlowered
    (`triage.culprit.unlowered_op_of`), or a pass that
    only folds (a canonicalizer, cse: it makes no new structure). Such a failure is first looked for
    at the pass that made its IR (`localize_probe.place_latent_failure`)."""
    from shapefuzz.triage.culprit import config_lost, is_folding_pass, unlowered_op_of

    if b.stage != "compile" or b.status != "error":
        return ""
    name, output = _failing_pass(b), b.detail or b.sig_json.get("message", "")
    return name if name and (is_folding_pass(name) or unlowered_op_of(output) or config_lost(output)) else ""


def frontend_refusal_pass(b: BucketRow) -> str:
    """A compile error's failing pass when it is a torch-mlir conversion whose output fails an op's
    verifier (`triage.frontend_offence`), else "": such a failure is placed at the pass that made the
    ill-typed op the conversion refused, where one did."""
    from shapefuzz.triage.frontend_offence import refused_by_conversion

    if b.stage != "compile" or b.status != "error":
        return ""
    name = _failing_pass(b)
    return name if name and refused_by_conversion(name, b.sig_json.get("message", "")) else ""


def compile_failure(b: BucketRow) -> bool:
    """A compile error or crash: of a frontend-spelled case, the conversion's output may be what fails
    (`judge.frontend_probe.conversion_made_failure`, tried first)."""
    return b.stage == "compile" and b.status in ("error", "crash")


def _case_text(entry) -> str | None:
    """The generated case an entry is or was cut from (its `case.mlir`), as text; None for neither."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.corpus.entry import CASE_FORM

    if case_from_mlir(entry.mlir) is not None:
        return entry.mlir
    try:
        return (entry.path / CASE_FORM).read_text() if entry.cut_from is not None else None
    except OSError:
        return None


def _failing_pass(b: BucketRow) -> str:
    """The pass a bucket's signature names, else the one its kept output names ("" for none)."""
    from shapefuzz.triage.identity import identity_of

    return b.sig_json.get("failing_pass") or \
        identity_of(b.stage, b.status, b.sig_json.get("message", ""), b.detail).failing_pass


def crash_without_pass(b: BucketRow) -> bool:
    """A compile crash whose output names no pass (no pass frame in its stack: a use-after-free ends at
    a garbage address): placed at the pass that was running (`judge.crash_probe`; an action log loses
    a crash's last block, so it may name an earlier pass)."""
    return b.stage == "compile" and b.status == "crash" and not _failing_pass(b)


def run_oom(b: BucketRow) -> bool:
    """A run that ran out of memory: placed by the compile's dumps (no run: it would hit the cap again)."""
    return b.stage == "run" and b.status == "oom"


def _wanted(b: BucketRow) -> bool:
    """A wrong value or a run-time failure of a compiler bug (or a suspected driver's), not a hang or
    a blow-up (each finished compile would run into the time or memory limit), or a compile error
    placed by its phase or its maker, or any compile error or crash (of a frontend-spelled case, its
    conversion's output may be what fails), with a corpus entry."""
    placed = bool(generic_failing_pass(b) or checker_failing_pass(b) or frontend_refusal_pass(b)
                  or latent_failing_pass(b)) or run_oom(b) or compile_failure(b)
    return ((b.stage in LOCALIZED_STAGES and b.status not in ("timeout", "oom") or placed)
            and bool(b.corpus_entry) and (b.triage or Triage.COMPILER_BUG) in _TRIAGES)


def localize_causes(store: CampaignStore, causes: Iterable[Cause], toolchain, seconds: float,
                    say: Callable[[str], None] = lambda text: None, only_new: bool = True) -> int:
    """Localizes the wrong-value and run-time buckets of the (new) causes that have no record yet,
    within `seconds` in all; each record is kept at once. Returns how many were taken. The compile
    errors placed by their phase or maker go first: a second or two each, where a wrong value's
    replays take up to PER_BUCKET_SECONDS (a fresh campaign's 180 s ran out on wrong values, and
    every checker's failure kept the checker's name)."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.judge.crash_probe import place_crash
    from shapefuzz.judge.frontend_probe import conversion_made_failure
    from shapefuzz.judge.localize_probe import (localize_entry, place_checked_failure, place_compile_failure,
                                                place_frontend_refusal, place_latent_failure, place_run_oom)

    end = time.monotonic() + seconds
    done = 0
    wanted: list[tuple[str, BucketRow, str, str, str, str]] = []
    nth: dict[str, int] = {}  # a bucket's place among its cause's buckets still to localize
    for cause in causes:
        if only_new and not cause.new or cause.triage not in _TRIAGES:
            continue  # (a cause's verdict as its text states it: a bucket's recorded one may be of the candidate)
        shown = Path(cause.corpus_entries[0]).name if cause.corpus_entries else ""
        buckets = [store.bucket(sig) for sig in cause.buckets]
        # the bucket of the entry the issue text shows first: its place goes with that reproducer
        for bucket in sorted((b for b in buckets if b is not None),
                             key=lambda b: bool(shown) and Path(b.corpus_entry).name != shown):
            sig = bucket.sig
            kept = _kept(store, sig)
            if not _wanted(bucket) or kept is not None and not (stale(kept) or cut_short(kept)):
                continue
            nth[sig] = sum(1 for other, *_ in wanted if other in cause.buckets)
            wanted.append((sig, bucket, generic_failing_pass(bucket), checker_failing_pass(bucket),
                           frontend_refusal_pass(bucket), latent_failing_pass(bucket)))
    # the quick placements first; then every cause's first bucket before any cause's second (one
    # cause's nine Vulkan wrong values took the step's time from the last cause, left with 2 s)
    wanted.sort(key=lambda item: (not (any(item[2:]) or run_oom(item[1]) or crash_without_pass(item[1])),
                                  nth[item[0]]))  # (stable)
    for sig, bucket, generic, checker, refusing, latent in wanted:
        left = end - time.monotonic()
        if left <= 1.0:
            say("localization: time is up; the rest are left for `shapefuzz triage CAMPAIGN`")
            return done
        row = store.candidate(bucket.repro_key)
        passed = [lane for lane, (status, *_rest) in (row.outcome if row else {}).items() if status == "ok"]
        try:
            entry = load_entry(Path(bucket.corpus_entry))
        except Exception as error:  # noqa: BLE001 - an unreadable entry cannot be localized
            say(f"localization of {sig}: the entry does not load ({error})")
            continue
        budget = min(PER_BUCKET_SECONDS, left)
        # a frontend conversion's wrong output first (a compile failure of a frontend-spelled case)
        case_text = _case_text(entry) if compile_failure(bucket) and toolchain is not None else None
        loc = conversion_made_failure(case_text, bucket.backend, toolchain, budget) if case_text else None
        if loc is None and crash_without_pass(bucket) and toolchain is not None:
            loc = place_crash(entry.mlir, bucket.backend, toolchain, budget)
        elif loc is None and compile_failure(bucket) and not (generic or checker or refusing or latent):
            continue  # nothing else places it: no record, as before
        # then at the pass that made the IR it fails on; where none shows, placed as before
        if loc is None and latent:
            loc = place_latent_failure(entry.mlir, bucket.backend, toolchain, latent, bucket.detail, budget)
        if loc is None or not loc.localized and (generic or checker or refusing):
            budget = max(1.0, budget - (loc.seconds if loc is not None else 0.0))
            if generic:
                loc = place_compile_failure(entry.mlir, bucket.backend, toolchain, generic, budget)
            elif checker:
                loc = place_checked_failure(entry.mlir, bucket.backend, toolchain, checker, bucket.detail, budget)
            elif refusing:
                loc = place_frontend_refusal(entry.mlir, bucket.backend, toolchain, refusing, budget,
                                             bucket.sig_json.get("message", ""))
            elif run_oom(bucket):
                loc = place_run_oom(entry.mlir, bucket.backend, toolchain, budget)
            else:
                loc = localize_entry(entry, toolchain, bucket.backend, passed, budget)
        store.set_meta(LOCALIZE_META + sig, json.dumps(loc.to_json(), sort_keys=True))
        say(f"localized {sig}: {loc.where or loc.evidence} ({loc.seconds:.0f}s)")
        done += 1
    return done


def place_of(loc: Localization | None, lane: str) -> str:
    """Where a bucket was localized, as causes are split and merged by it ("" when not): a codegen
    placement without a pass is its target's codegen ("codegen: codegen for llvm-cpu"), so an llvm-cpu
    miscompile and a SPIR-V one with one message stay two bugs (audit A: the strided gather on llvm-cpu
    and the i8 words on Vulkan), while one SPIR-V bug seen on both Vulkan lanes stays one."""
    if loc is None or not loc.localized:
        return ""
    if loc.phase != CODEGEN or loc.pass_name:
        return loc.where
    target = re.sub(r" \(.*\)$", "", component_of_place(loc, [lane]))
    return f"{loc.where}: {target}"


def split_by_localization(groups: dict[str, list[BucketRow]],
                          located: dict[str, Localization]) -> dict[str, list[BucketRow]]:
    """Causes whose buckets were localized to different places become one cause per place (the
    first keeps the name, the others get `.2`, `.3`); a bucket not localized stays with the
    cause's first place, and a suspected place ("needs X": no lane computed it right to compare
    with) that another of its buckets has for certain is that place (audit A: a variant lane's
    "needs FusionPreprocessingPass" beside the plain lane's certain one was split off as `.2`, one
    bug). Then causes localized to one place with one symptom are merged."""
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        certain = {place_of(located[b.sig], b.backend) for b in members if b.sig in located and located[b.sig].certain}
        # a frontend's pass where one of its buckets was placed at one: a bucket placed only in that
        # phase's frontend conversion (no pass named: its replay ran out or could not tell) is there too
        # (a fresh campaign's ONNX instance norm: DecomposeComplexOps on vulkan-spirv, "the torch-mlir
        # conversion (input)" on llvm-cpu-split-reduction, split into two causes of one bug)
        frontend_pass = {loc.phase: place_of(loc, b.backend) for b in reversed(members)
                         if (loc := located.get(b.sig)) is not None and loc.certain and loc.frontend and loc.pass_name}

        def place(b: BucketRow) -> str:
            loc = located.get(b.sig)
            if loc is not None and loc.certain and loc.frontend and not loc.pass_name and loc.phase in frontend_pass:
                return frontend_pass[loc.phase]
            where = place_of(loc, b.backend)
            return where.removeprefix("needs ") if where.removeprefix("needs ") in certain else where

        out.update(split_cause(name, members, place, lambda i, where: f".{i + 1}"))
    return _merge_same_place(out, located)


def split_as_reported(groups: dict[str, list[BucketRow]],
                      located: dict[str, Localization]) -> dict[str, list[BucketRow]]:
    """The engine's causes split as the report splits them before merging: target limits apart from
    bugs (campaign.limits_apart), by localized place, then
    real limits apart from the dynamic-dim bound, then a function-level diagnostic by dispatch kind.
    The report's causes are these (some merged after), and the shrink plan shrinks one bucket of
    each, so every cause the report shows has its own shrunk example."""
    return split_by_dispatch_kind(split_real_limits(split_by_localization(split_target_limits(groups), located)))


def _merge_same_place(groups: dict[str, list[BucketRow]],
                      located: dict[str, Localization]) -> dict[str, list[BucketRow]]:
    """Causes whose buckets were all localized, for certain, to the same place with the same symptom
    (stage, status, message) are one cause: their identity names where it breaks, as a failing
    pass does for a compile error (the first cause's name is kept)."""
    first: dict[tuple[str, ...], str] = {}
    out: dict[str, list[BucketRow]] = {}
    for name, members in groups.items():
        places = {place_of(located[b.sig], b.backend) if b.sig in located and located[b.sig].certain else ""
                  for b in members}
        lead = members[0]
        key = (places.pop(), lead.stage, lead.status, lead.sig_json.get("message", "")) if len(places) == 1 else ()
        if key and key[0] and key in first:
            out[first[key]] = sorted(out[first[key]] + members, key=lambda b: b.first_seen)
            continue
        if key and key[0]:
            first[key] = name
        out[name] = members
    return out


__all__ = ["DEFAULT_LOCALIZE_SECONDS", "LOCALIZE_META", "component_of_localization", "localization_of", "place_of", "stale",
           "localizations", "localize_causes", "split_as_reported", "split_by_localization"]
