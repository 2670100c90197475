"""Cross-triggering: the evidence that two causes placed at one pass are one bug. After the
localization step, for each two causes that name one pass (`merging.cross_pairs`), each one's
minimized reproducer (its smallest corpus entry breaking there) is run on the other's lane, with its
own inputs and reference. It *cross-triggers* when it gives the other's failure there (the same
identity for a compile failure or crash; wrong values, or the same run-time failure, for one that
fails at run time), or when it fails in the other's pass with the other's own message (folded; on the
same op where both name one), or, against a wrong value, in its pass on a compute op both reproducers
hold (plumbing every program has, `linalg.generic`, fills, reshapes, casts, never counts). A sizing bug that names
no size (a run-time out-of-memory) is run on the lane of a cause sized from the dynamic-dim bound
(`merging.bound_pairs`): a size made from the bound there is the same bug. Each run is kept in the
store (meta `crossings`), so a stopped step resumes and `report` merges by it
(`merging.merge_causes(crossed=...)`); the step is bounded in time, each compile by its own limit."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any, Callable, Iterable

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.causes.crossings import CANNOT_TELL, NO, SAME_FAILURE, SAME_PASS_AND_OP, Crossing, crossings, keep
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.model import Stage
from shapefuzz.campaign.outcomes import Triage
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.triage.identity import anchor_op

DEFAULT_CROSS_SECONDS = 60.0  # the whole step, inside the localization step's after-budget time
COMPILE_SECONDS = 30.0  # one run's compile limit: a minimized reproducer compiles in seconds
_TRIAGES = (Triage.COMPILER_BUG, Triage.SUSPECTED_DRIVER)
# compute ops of a reproducer (linalg, LinalgExt, torch, ONNX); plumbing that every program has is left out
_OP = re.compile(r"\b((?:linalg|iree_linalg_ext|torch\.aten)\.[\w.]+|onnx\.\w+)")
_RANK = {"verify": 0, "compile": 1, "run": 2, "compare": 3}
# ops nearly every program holds (the generic a conv, a scatter and a flip all lower to, fills, empties,
# reshapes, casts): sharing one says nothing of two reproducers (the #43 audit's b97e42ec0f absorbed two
# scatter causes because both held a `linalg.generic`)
_PLUMBING = re.compile(
    r"(?:linalg\.(?:generic|yield|index|fill|copy|broadcast|transpose)|iree_linalg_ext\.yield"
    r"|torch\.aten\.(?:empty|new_empty|zeros|ones|full|fill|reshape|view|flatten|unflatten|unsqueeze|squeeze"
    r"|expand|to|_to_copy|type_as|clone|contiguous|copy|detach)(?:[._]\w+)?"
    r"|onnx\.(?:Reshape|Cast|CastLike|Constant|ConstantOfShape|Unsqueeze|Squeeze|Flatten|Expand|Identity))")


def compute_ops(text: str) -> frozenset[str]:
    """The compute ops a reproducer names (`linalg.pooling_nchw_max`, `iree_linalg_ext.scatter`, ...),
    plumbing left out (`_PLUMBING`)."""
    return frozenset(op for op in _OP.findall(text) if not _PLUMBING.fullmatch(op))


def judge(result, target: BucketRow, where: Iterable[str], source_text: str, target_text: str) -> tuple[str, str]:
    """(verdict, what it did) for one run's `BackendResult` against the `target` bucket, which
    breaks in the pass named `where` (its failing pass, or where it was localized)."""
    from shapefuzz.campaign.causes.merging import dispatch_kind
    from shapefuzz.triage.identity import fold_message, identity_of
    from shapefuzz.recheck.regression import Failure
    from shapefuzz.triage.severity import Severity, from_dynamic_dim_bound, severity_of

    if result is None or result.status.value in ("skipped", "unsupported"):
        return CANNOT_TELL, f"no verdict on {target.backend}" + (f" ({result.status.value})" if result else "")
    if not result.failed or result.signature is None:
        if _RANK[target.stage] > _RANK.get(result.stage.value, 0):
            return CANNOT_TELL, f"passes {result.stage.value}; cannot reach {target.stage.value} here"
        return NO, f"passes {result.stage.value}"
    message = result.signature.message
    got = identity_of(result.stage.value, result.status.value, message, result.detail)
    want = identity_of(target.stage, target.status, target.message, target.detail)
    said = f"{got.stage}/{got.status}" + (f" in {got.failing_pass}" if got.failing_pass else "") + f": {message[:120]}"
    if from_dynamic_dim_bound(f"{target.message}\n{target.detail}") and \
            from_dynamic_dim_bound(f"{message}\n{result.detail}"):
        return SAME_FAILURE, said  # a size made from the dynamic-dim bound there too, whatever the words
    if severity_of(target.stage, target.status, target.message, target.detail) == Severity.RESOURCE_LIMIT:
        # a real size past a limit reads alike from any program big enough (an audited ROCm conv_transpose's
        # 806,912 bytes of shared memory, run on CUDA, "gave" a top-k's dead-result scratch of 196,500)
        return NO, f"{said} (a size past a limit: any program big enough fails so)"
    kinds = dispatch_kind(message, result.detail), dispatch_kind(target.message, target.detail)
    if all(kinds) and kinds[0] != kinds[1]:
        # a diagnostic on the whole function says what failed only through the dispatch's name: an
        # argmax that "failed to distribute" on the attention's lane is the argmax's bug seen there
        return NO, f"{said} (dispatch kind {kinds[0]}, not {kinds[1]})"
    if (got.stage, got.status) == (want.stage, want.status):
        if target.stage == Stage.COMPARE:
            # wrong values there too, of the same kind and the same family, or on a compute op both
            # reproducers hold: an AveragePool's wrong count on the norm's lane is the pool's bug seen
            # there (a fresh campaign merged the two by it, both placed in ConvertTorchOnnxToTorch)
            same_kind = message.split(" in ", 1)[0] == target.message.split(" in ", 1)[0]
            if same_kind and (message == target.message or compute_ops(source_text) & compute_ops(target_text)):
                return SAME_FAILURE, said
            return NO, f"{said} (wrong values of another op)"
        if got.key == want.key or (target.stage == Stage.RUN and got.message == want.message):
            return SAME_FAILURE, said
    if got.failing_pass and any(Failure("compile", "x", got.failing_pass).same_as(Failure("compile", "x", name))
                                for name in where):
        if target.stage in (Stage.COMPILE, Stage.VERIFY):
            # the target's own diagnostic, its words folded, and its op where both name one: failing in
            # that pass with the source's own message is the source's bug seen there, not the target's
            if fold_message(message, True) != fold_message(target.message, True):
                return NO, f"{said} (in the pass, not with its message)"
            ops = anchor_op(message), anchor_op(target.message)
            return (SAME_PASS_AND_OP, said) if not all(ops) or ops[0] == ops[1] else (NO, f"{said} (on {ops[0]})")
        # a wrong value or run failure has no diagnostic to match: a compute op both reproducers hold
        if compute_ops(source_text) & compute_ops(target_text):
            return SAME_PASS_AND_OP, said
    return NO, said


def cross_trigger(store: CampaignStore, causes: Iterable[Cause], toolchain, seconds: float,
                  say: Callable[[str], None] = lambda text: None,
                  run: Callable[[Any, str], Any] | None = None) -> int:
    """Runs each new pair's reproducers on each other's lanes (module doc), within `seconds` in all;
    each run is kept at once. `causes`: the summary's; `run(entry, lane)` -> a `BackendResult` (None:
    the real compiler). Returns how many runs were made."""
    from shapefuzz.campaign.report.coverage_summary import failing_passes
    from shapefuzz.campaign.localizing import localizations
    from shapefuzz.campaign.causes.merging import bound_pairs, cross_pairs

    end = time.monotonic() + seconds
    rows = {b.sig: b for b in store.buckets()}
    groups = {c.name: [rows[s] for s in c.buckets if s in rows] for c in causes if c.triage in _TRIAGES}
    groups = {name: members for name, members in groups.items() if members}
    entries = _entries_by_bucket(causes)
    done_before = {(c.source, c.target) for c in crossings(store)}
    run = run or _runner(toolchain)
    done = 0
    pairs = [([(xs, ys), (ys, xs)], where) for xs, ys, where in
             cross_pairs(groups, localizations(store, rows.values()), failing_passes(store))]
    pairs += [([(xs, ys)], frozenset()) for xs, ys in bound_pairs(groups)]  # one way: onto the bound's lane
    for ways, where in pairs:
        for sources, targets in ways:
            source = _smallest(sources, entries)
            if source is None:
                continue
            entry, bucket = source
            target = targets[0]
            if (bucket.sig, target.sig) in done_before:
                continue
            if end - time.monotonic() <= 1.0:
                say("cross-triggering: time is up; the rest are left for `shapefuzz triage CAMPAIGN --localize`")
                return done
            started = time.monotonic()
            with time_bound(end - started) as bound:  # its compile and run end with the step's time
                try:
                    result = run(entry, target.backend)
                    verdict, got = judge(result, target, where, entry.mlir,
                                         entries[target.sig].mlir if target.sig in entries else target.repro_text)
                except Exception as error:  # noqa: BLE001 - one entry that cannot run must not stop the rest
                    verdict, got = CANNOT_TELL, f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}"
            if bound.ran_out:  # cut by the step's time: no verdict kept, the next --localize runs it
                say("cross-triggering: time is up; the rest are left for `shapefuzz triage CAMPAIGN --localize`")
                return done
            crossing = Crossing(bucket.sig, target.sig, target.backend, verdict, got, round(time.monotonic() - started, 1))
            keep(store, crossing)
            done_before.add((bucket.sig, target.sig))
            done += 1
            say(f"cross-trigger {entry.id} on {target.backend}: {verdict} ({got[:100]})")
    return done


def _entries_by_bucket(causes: Iterable[Cause]) -> dict[str, Any]:
    """bucket signature -> its readable corpus entry, from the causes' entries."""
    from shapefuzz.corpus import load_entry

    out = {}
    for cause in causes:
        for path in cause.corpus_entries:
            try:
                entry = load_entry(Path(path))
            except Exception:  # noqa: BLE001 - an unreadable entry has no reproducer to run
                continue
            out[str(entry.signature)] = entry
    return out


def _smallest(buckets: list[BucketRow], entries: dict[str, Any]) -> tuple[Any, BucketRow] | None:
    """The smallest saved reproducer among `buckets` (shrunk where it was) and its bucket."""
    from shapefuzz.size import size_of

    found = [(size_of(entries[b.sig].mlir), i, entries[b.sig], b) for i, b in enumerate(buckets) if b.sig in entries]
    return min(found, key=lambda t: t[:2])[2:] if found else None


def _runner(toolchain) -> Callable[[Any, str], Any]:
    from shapefuzz.campaign.iree import CAMPAIGN_MEMORY_CAP, capped
    from shapefuzz.recheck.replay import budget_with, check_entry

    budget = capped(budget_with(COMPILE_SECONDS), CAMPAIGN_MEMORY_CAP)  # a blow-up stops at the campaign's cap

    def run(entry, lane: str):
        report = check_entry(entry, toolchain, [lane], budget, confirm=False)
        return next((r for r in report.results if r.backend == lane), None)

    return run


__all__ = ["DEFAULT_CROSS_SECONDS", "compute_ops", "cross_trigger", "judge"]
