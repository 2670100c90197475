"""Causes as bugs: each cause's failing pass, component, scope (the lanes where it reproduces and
the non-default flags it needs), severity, whether it is already known (an entry of it marked
reported upstream) and its regression range. Computed from the store's buckets and the corpus,
written back into every corpus entry of the cause (meta.json `bug`), so one truth holds: a
campaign's entry names its cause, its triage verdict and these fields."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from shapefuzz.campaign.causes.cause import Cause
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.model import Status
from shapefuzz.triage.failing_pass import crash_frames
from shapefuzz.size import Size, measure, size_of
from shapefuzz.process.time_bounds import time_bound
from shapefuzz.triage.component import component_of, scope_of
from shapefuzz.triage.identity import identity_of
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.record import as_json_value, placed
from shapefuzz.triage.severity import Severity, severity_of

REGRESSION_META = "regression:"  # store meta key prefix: regression:<cause> -> JSON range


def lead_fields(members: list[BucketRow], action_passes: dict[str, str] | None = None,
                localized: Localization | None = None) -> dict[str, Any]:
    """Pass, component, scope, lanes and severity of a cause from its buckets (`Cause`'s keywords). The failing pass is
    read from the compiler's output kept with each bucket, else from the action log of an
    instrumented compile (`action_passes`: bucket -> pass, the coverage tables); for a wrong value
    or run-time failure, from where it was `localized` (the pass, the component and the identity)."""
    lanes = sorted({b.backend for b in members})
    lead = members[0]
    ident = identity_of(lead.stage, lead.status, lead.message, lead.detail)
    passes = [identity_of(b.stage, b.status, b.message, b.detail) for b in members]
    logged = action_passes or {}
    failing = next((i.failing_pass for i in [ident, *passes] if i.failing_pass), "") or \
        next((logged[b.sig] for b in members if logged.get(b.sig)), "")
    frames = next((tuple(crash_frames(b.detail, 64)) for b in members if b.status == Status.CRASH), ())
    component = component_of(lead.stage, lead.status, failing, frames, lanes,
                             f"{lead.message}\n{lead.detail}")
    ident, failing, component = placed(ident, failing, component, localized, lead.stage, lanes)
    severity = min((severity_of(b.stage, b.status, b.message, b.detail,
                                measure(b.repro_text).elements if b.repro_text else None)
                    for b in members), default=Severity.COMPILE_ERROR)
    return {
        "identity": ident.key, "failing_pass": failing, "component": component,
        "scope": scope_of(lanes, component), "lanes": tuple(lanes), "severity": severity, "localized": localized,
    }


def reported_entries(corpus_dir: Path | None) -> dict[str, str]:
    """Corpus entries marked reported upstream: {entry id or bug identity: URL}."""
    from shapefuzz.corpus import UnreadableEntry, list_entries

    known: dict[str, str] = {}
    if corpus_dir is None or not Path(corpus_dir).is_dir():
        return known
    for entry in list_entries(Path(corpus_dir)):
        if isinstance(entry, UnreadableEntry) or not entry.meta.get("reported"):
            continue
        known[entry.id] = entry.meta["reported"]
        identity = (entry.meta.get("bug") or {}).get("identity")
        if identity:
            known[identity] = entry.meta["reported"]
    return known


def reported_url(members: list[BucketRow], identity: str, known: dict[str, str]) -> str:
    for b in members:
        if b.corpus_entry and Path(b.corpus_entry).name in known:
            return known[Path(b.corpus_entry).name]
    return known.get(identity, "")


def regression_of(store: CampaignStore, cause: str) -> dict[str, Any] | None:
    return store.meta_object(REGRESSION_META + cause)


def set_regression(store: CampaignStore, cause: str, record: dict[str, Any]) -> None:
    store.set_meta(REGRESSION_META + cause, json.dumps(record, sort_keys=True))


def regressions(store: CampaignStore) -> dict[str, dict[str, Any]]:
    """Every range kept in the store, by the cause name it was taken under."""
    rows = store.db.execute("SELECT key FROM meta WHERE key LIKE ?", (REGRESSION_META + "%",)).fetchall()
    return {key[len(REGRESSION_META):]: r for (key,) in rows if (r := store.meta_object(key))}


def finished(record: Mapping[str, Any] | None) -> bool:
    """A range that was taken (not a "no range: ..." left by a phase that could not finish)."""
    return bool(record and not record.get("unfinished"))


def ranged_entries(store: CampaignStore) -> dict[str, set[str]]:
    """Each corpus entry id with a finished range, with the digests of the reproducers it was taken
    on (`regression.reproducer_digest`; "" for a range recorded before they were)."""
    done: dict[str, set[str]] = {}
    for record in regressions(store).values():
        if finished(record) and record.get("entry"):
            done.setdefault(str(record["entry"]), set()).add(str(record.get("reproducer") or ""))
    return done


def mark_unranged(store: CampaignStore, causes: Iterable[Cause], why: str) -> int:
    """`no range: <why>` kept for each new compiler-bug cause still without a range on the
    reproducer its issue shows (marked unfinished, so `triage --bisect` takes it later); returns how many."""
    marked = 0
    for cause in causes:
        on_shown = cause.regression is not None and cause.regression.shown
        if not cause.is_finding or not cause.new or (cause.range_taken and on_shown) or not cause.corpus_entries:
            continue  # (a range of another reproducer than the is no range of it)
        set_regression(store, cause.name, {"text": f"no range: {why}", "unfinished": True,
                                           "entry": Path(cause.corpus_entries[0]).name})
        marked += 1
    return marked


def smallest_first(entries: Iterable[str]) -> tuple[str, ...]:
    """A cause's corpus entries: one saved on a default-pipeline lane before one a pipeline variant
    needs (a bug the default pipeline has is shown with default flags: a merged aggressive-fusion
    entry had become a sort bug's shown reproducer), then the reproducer with the fewest ops, then
    the smallest (`size.size_of`; ties and entries whose reproducer cannot be read keep their order,
    the unreadable last). The first is the one its issue text shows and a regression range is taken
    from (`bisect_causes`): a reader counts ops (audit D of the fresh campaign: a 62-line unshrunk
    sibling over 24 elements was shown before the 13-line shrunk one over 206)."""
    from shapefuzz.campaign.causes.merging import entry_meta, entry_reproducer

    def key(pair: tuple[int, str]) -> tuple[bool, bool, tuple[int, Size] | None, int]:
        text = entry_reproducer(pair[1])
        size = size_of(text) if text is not None else None
        lane = BACKENDS.get(str(entry_meta(pair[1]).get("backend") or ""))
        return text is None, lane is not None and bool(lane.variant_of), (size.ops, size) if size is not None else None, \
            pair[0]

    return tuple(path for _, path in sorted(enumerate(entries), key=key))


def bisect_causes(store: CampaignStore, causes: Iterable[Cause], seconds: float | None,
                  versions: Sequence[str], say: Callable[[str], None] = lambda text: None,
                  only_new: bool = True, again_without_range: bool = False, **bisect_kwargs: Any) -> int:
    """A regression range for each compiler-bug cause (new ones only, unless `only_new` is False)
    that has none yet, or one taken on another reproducer than the one its issue shows (with
    `again_without_range`, also one whose range said "no range: ..." or was taken by an older
    shapefuzz, as `triage --bisect` asks: the cache or the checks may tell more now), from its
    smallest corpus entry, within `seconds` (None: no limit). Each range is kept in the store at once, so a stopped
    phase resumes (summarize again to see them). Returns how many were taken."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.recheck.regression import regression_range

    done, current = 0, ""
    # the bound holds for every compile too (each one's timeout clipped to what is left): a release
    # whose compile hangs for its full 120 s no longer carries the phase past `seconds`
    with time_bound(seconds) as bound:
        for cause in causes:
            if not cause.is_finding or (only_new and not cause.new):
                continue
            on_shown = cause.regression is not None and cause.regression.shown  # else retaken on the shown one
            # asked again: a "no range", or a range an older shapefuzz took (no digest: judged the old way)
            again = again_without_range and cause.regression is not None and (
                cause.regression_text.startswith("no range") or not cause.regression.to_json().get("reproducer"))
            if cause.range_taken and on_shown and not again:
                continue
            current = cause.name
            if seconds is not None and bound.left() <= 0:
                bound.ran_out = True
                break
            entry = None
            for path in smallest_first(cause.corpus_entries):  # the entry its issue text shows
                try:
                    entry = load_entry(Path(path))
                    break
                except Exception:  # noqa: BLE001 - an unreadable entry cannot be bisected
                    continue
            if entry is None:
                continue
            say(f"regression range of {cause.name} ({entry.id}) over {', '.join(versions)}")
            record = regression_range(entry, versions, say, **{"failing": cause.failing_pass, "trust_seen": True,
                                                               **bisect_kwargs})
            set_regression(store, cause.name, record)
            say(f"  {cause.name}: {record['text']}")
            done += 1
    if bound.ran_out:  # (a range cut short is not kept: the next --bisect takes it whole)
        say(f"regression ranges: time is up; {current} and later ones are left for "
            "`shapefuzz triage CAMPAIGN --bisect`")
    return done


def annotate_corpus(store: CampaignStore, causes: Iterable[Cause], say=lambda text: None) -> int:
    """Writes each cause's bug fields into its corpus entries' meta.json; returns how many."""
    from shapefuzz.corpus import load_entry, update_meta
    from shapefuzz.files import safe_name

    written = 0
    for cause in causes:
        for entry in cause.corpus_entries:  # inside the corpus (report.stored_entry)
            try:
                safe_name(cause.name, "cause")  # the store's text is copied into meta.json only when a plain name
                loaded = load_entry(Path(entry))
                old = loaded.meta.get("bug") or {}
                record = {**old, "component": cause.component, "scope": cause.scope, "lanes": list(cause.lanes),
                          "severity": cause.severity.label}
                if cause.failing_pass:
                    record["failing_pass"] = cause.failing_pass
                if cause.localized is not None:
                    record["localized"] = cause.localized.to_json()
                else:  # none now (a target limit, or a merge since): an older one would be another cause's
                    record.pop("localized", None)
                # a range only in the entry it was taken on (each release's reason is that entry's
                # lane's and reproducer's), and none kept that another entry or text gave
                if cause.regression and _ranged_on(cause.regression.to_json(), loaded.id, loaded.mlir):
                    record["regression"] = cause.regression.to_json()
                elif not _ranged_on(record.get("regression"), loaded.id, loaded.mlir):
                    record.pop("regression", None)
                if len(cause.symptoms) > 1:  # one bug seen several ways (campaign.causes.merging)
                    record["symptoms"] = [s.text for s in cause.symptoms]
                record = as_json_value(record)  # JSON values all through, never a value's repr
                if record != old or load_entry(Path(entry)).meta.get("cause") != cause.name:
                    update_meta(entry, bug=record, cause=cause.name, triage=cause.triage.value)
                    written += 1
            except Exception as error:  # noqa: BLE001 - one broken entry must not hide the rest
                say(f"could not annotate {entry}: {error}")
    return written


def _ranged_on(record: Any, entry_id: str, mlir: str) -> bool:
    """Whether a range record was taken on this entry's reproducer as it reads now (one that names
    no entry, as none this version writes, is taken as the cause's)."""
    from shapefuzz.recheck.regression import reproducer_digest

    if not isinstance(record, Mapping) or record.get("entry", entry_id) != entry_id:
        return False
    return not record.get("reproducer") or record["reproducer"] == reproducer_digest(mlir)


__all__ = ["annotate_corpus", "bisect_causes", "smallest_first", "finished", "mark_unranged", "ranged_entries", "regressions", "lead_fields", "regression_of", "reported_entries", "reported_url", "set_regression"]
