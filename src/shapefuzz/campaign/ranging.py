"""Regression ranges taken while the campaign runs, not only after it: a daemon thread in the head
that, once the background fetch of older releases has ended (`release_fetch.py`), takes each
compiler-bug cause's range as soon as the cause has its example to bisect (its shrunk corpus
entry, or any entry once no shrink of it is pending), one release at a time.

Bounded: one compile at a time, run at a lower CPU priority than the workers (niceness is per
thread on Linux and each compile it starts inherits it), each range kept in the store at once (a
stopped campaign resumes with what it has), and stopped between two releases when asked. It never
blocks the campaign: the engine does not wait for it, and what it has not reached is left to the
regression phase after the budget (`run._regression_phase`). The thread reads and writes the store
through its own connection (SQLite in WAL mode; a connection belongs to its thread)."""

from __future__ import annotations

import collections
import os
import signal
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from shapefuzz.process import interrupts
from shapefuzz.campaign.causes.cause_facts import ranged_entries, set_regression, smallest_first
from shapefuzz.campaign.database import BucketRow, CampaignStore
from shapefuzz.campaign.outcomes import BucketState, ShrinkState, Triage
from shapefuzz.campaign.causes.verdicts import bucket_triage, cause_triage

NICENESS = 5  # a bisect compile yields the CPU to the campaign's workers
POLL_SECONDS = 10.0  # how often the store is read for causes that became ready


class Stopped(Exception):
    """Raised inside a range when the worker is asked to stop (between two releases)."""


@dataclass(frozen=True)
class Due:
    """A cause ready for its range: its name in the store, the entry to bisect and its failing pass."""

    cause: str
    entry: str  # the corpus entry folder
    failing_pass: str


def due_causes(rows: Sequence[BucketRow], corpus: Path | None, ranged: Mapping[str, set[str]],
               final: bool = False) -> list[Due]:
    """The compiler-bug causes (by the store's cause names) ready for a range, oldest first: each
    bucket confirmed, an entry saved, and its shrink done or none pending (`final`: pending ones
    too, the campaign is over). The entry is the cause's smallest saved one (a shrunk example where
    there is one): the one its issue text shows. A cause is due again whenever that entry, or its
    reproducer, is not the one its range was taken on (`ranged`: entry id -> the reproducer digests
    ranged, `cause_facts.ranged_entries`): a shrink that ends after a range, or a smaller example,
    is ranged anew, never left with a range of a text the issue does not show."""
    from shapefuzz.campaign.causes.merging import entry_reproducer
    from shapefuzz.campaign.report.stored_entries import stored_entry
    from shapefuzz.recheck.regression import reproducer_digest
    from shapefuzz.triage.identity import identity_of

    groups: dict[str, list[BucketRow]] = collections.defaultdict(list)
    for b in rows:
        groups[b.cause or b.sig].append(b)
    out = []
    for name, members in sorted(groups.items(), key=lambda kv: min(b.first_seen for b in kv[1])):
        if cause_triage(members) != Triage.COMPILER_BUG:
            continue
        if any(b.state == BucketState.PENDING for b in members):
            continue  # not confirmed yet: its verdict may change
        if not final and any(b.shrink == ShrinkState.PENDING for b in members) \
                and not any(b.shrink == ShrinkState.DONE for b in members):
            continue  # a shrunk example is coming: bisecting it costs less
        saved = [(b, stored_entry(b.corpus_entry, corpus)) for b in members if bucket_triage(b) == Triage.COMPILER_BUG]
        saved = [(b, e) for b, e in saved if e]
        if not saved:
            continue
        saved.sort(key=lambda pair: pair[0].shrunk_size or pair[0].repro_size or 10**12)
        entry = smallest_first(e for _, e in saved)[0]  # the one its issue text shows (report.summary)
        text, done = entry_reproducer(entry), ranged.get(Path(entry).name)
        if done is not None and (text is None or "" in done or reproducer_digest(text) in done):
            continue  # ranged on this text ("": a range from before digests; none readable: as ranged)
        best = next(b for b, e in saved if e == entry)
        idents = (identity_of(b.stage, b.status, b.message, b.detail) for b in [best, *members])
        out.append(Due(name, entry, next((i.failing_pass for i in idents if i.failing_pass), "")))
    return out


class RangeWorker:
    """The thread (see the module doc). `releases()` lists the releases to bisect over once the
    fetch is over (`ready()` True); `ranger(entry_path, versions, failing, check_stop)` takes one
    range as a store record."""

    def __init__(self, folder: Path, corpus: Path | None, ready: Callable[[], bool],
                 releases: Callable[[], list[str]], say: Callable[[str], None] = lambda _: None,
                 ranger: Callable[..., dict[str, Any]] | None = None, poll: float = POLL_SECONDS,
                 niceness: int = NICENESS) -> None:
        self.folder, self.corpus, self.ready, self.releases, self.say = folder, corpus, ready, releases, say
        self.ranger = ranger or take_range
        self.poll, self.niceness = poll, niceness
        self.taken = 0  # ranges kept in the store by this thread
        self.seconds = 0.0  # spent taking them
        self._stop = threading.Event()
        self._final = threading.Event()  # the campaign's budget is spent: no shrink will come now
        self._wake = threading.Event()  # ends the wait between two reads of the store
        self._thread: threading.Thread | None = None

    def start(self) -> "RangeWorker":
        self._thread = threading.Thread(target=self._run, name="regression-ranges", daemon=True)
        self._thread.start()
        return self

    def budget_spent(self) -> None:
        """The fuzzing is over (localization may still run): causes whose shrink is still pending
        are ranged from the example they have."""
        self._final.set()
        self._wake.set()

    def stop(self, wait: float = 30.0) -> bool:
        """Asks it to stop (between two releases) and waits at most `wait` seconds; True once ended."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(wait)
            return not self._thread.is_alive()
        return True

    def _check_stop(self) -> None:
        if self._stop.is_set():
            raise Stopped()

    def _run(self) -> None:
        # Ctrl-C, SIGTERM and SIGHUP are the main thread's: one the kernel handed this thread was
        # not seen by the campaign until it ended (Python runs handlers in the main thread only)
        signal.pthread_sigmask(signal.SIG_BLOCK, interrupts.SIGNALS)
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), self.niceness)  # this thread only
        except (AttributeError, OSError):
            pass
        try:
            while not self.ready():
                if self._stop.wait(1.0):
                    return
            versions = self.releases()
            if len(versions) < 2:
                return  # the regression phase says why
            store = CampaignStore.attach(self.folder)
            try:
                self._loop(store, versions)
            finally:
                store.db.close()
        except Stopped:
            pass
        except Exception as error:  # noqa: BLE001 - the thread's own fault must not end the campaign
            self.say(f"regression ranges during the campaign stopped ({str(error).splitlines()[0][:200] if str(error) else error!r}); "
                     "the phase after the budget takes the rest")

    def _loop(self, store: CampaignStore, versions: list[str]) -> None:
        self.say(f"regression ranges: taken during the campaign over {', '.join(versions)}")
        while not self._stop.is_set():
            for due in due_causes(store.buckets(), self.corpus, ranged_entries(store), final=self._final.is_set()):
                self._check_stop()
                started = time.monotonic()
                record = self.ranger(due.entry, versions, due.failing_pass, self._check_stop)
                self.seconds += time.monotonic() - started
                set_regression(store, due.cause, record)
                self.taken += 1
                self.say(f"regression range of {due.cause}: {record['text']} ({time.monotonic() - started:.0f} s)")
            self._wake.wait(self.poll)
            self._wake.clear()


def take_range(entry_path: str, versions: Sequence[str], failing: str, check_stop: Callable[[], None]) -> dict[str, Any]:
    """One cause's range over `versions` (`regression.regression_range`: judged by the failure the
    entry's reproducer shows at the current release, `failing` only where it names no pass), the
    releases the entry was saved with trusted where that run does not tell; `check_stop` runs
    before each release's compile."""
    from shapefuzz.corpus import load_entry
    from shapefuzz.recheck.regression import local_installer, regression_range

    entry = load_entry(Path(entry_path))

    def installer(version: str):
        check_stop()
        return local_installer(version)

    return regression_range(entry, versions, installer=installer, failing=failing, trust_seen=True)


__all__ = ["Due", "RangeWorker", "Stopped", "due_causes", "take_range"]
