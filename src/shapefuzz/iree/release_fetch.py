"""Older IREE releases fetched into the toolchain cache in the background while a campaign runs, so
its regression-range phase has releases to bisect over on a fresh machine.

A `ReleaseFetcher` picks a spread of releases (the oldest it can use, one in the middle, the one
before the pinned release), reuses the ones already cached and downloads the others one at a time
in a daemon thread, within bounds: how many releases, how many bytes on disk it may add, how long
one download may take. A release that cannot be fetched is one line and the next one is tried; the
campaign never waits for a download except in its regression phase, and then only so long.
The release source is a small protocol, so the scheduler is tested without the network.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol, Sequence

from shapefuzz.errors import ShapefuzzError
from shapefuzz.iree.releases import version_key

GB = 10**9
ESTIMATED_BYTES = 350 * 10**6  # one release on disk (compiler + runtime); about 100 MB to download
OLDEST_USABLE = "3.0.0"  # the 3.x line: older releases rarely parse today's reproducers
DEFAULT_RELEASES = 3
DEFAULT_DISK = int(1.5 * GB)
DEFAULT_SECONDS = 600.0  # one release's download and install at most


@dataclass(frozen=True)
class FetchKnobs:
    releases: int = DEFAULT_RELEASES  # releases in the spread (cached ones included); 0: none fetched
    disk_bytes: int = DEFAULT_DISK  # the most the downloads may add to the cache
    seconds: float = DEFAULT_SECONDS  # the most one download may take


class ReleaseSource(Protocol):
    def available(self) -> list[str]:
        """Releases with both a compiler and a runtime wheel, oldest first (may raise ShapefuzzError)."""

    def cached(self) -> list[str]:
        """Releases already in the toolchain cache."""

    def fetch(self, version: str, timeout: float) -> int:
        """Installs `version` into the cache; its bytes on disk (raises ShapefuzzError with one line)."""

    def free_bytes(self) -> int:
        """Room left on the cache's disk."""


def choose_releases(available: Sequence[str], pinned: str | None, count: int, cached: Sequence[str] = (),
                    oldest: str = OLDEST_USABLE) -> list[str]:
    """A spread of `count` releases older than `pinned`: the oldest usable, the one just before
    `pinned`, and the rest evenly between (oldest first). A cached release stands in for a pick
    other than the newest when it lies nearer to that pick than to any other (no download)."""
    usable = sorted((v for v in available if version_key(v) >= version_key(oldest)
                     and (pinned is None or version_key(v) < version_key(pinned))), key=version_key)
    if count <= 0 or not usable:
        return []
    if count >= len(usable):
        return usable
    if count == 1:
        return [usable[-1]]
    step = (len(usable) - 1) / (count - 1)
    targets = [round(i * step) for i in range(count)]
    have = {usable.index(v) for v in cached if v in usable}
    picks = []
    for n, target in enumerate(targets):
        low = (targets[n - 1] + target) / 2 if n else -1
        high = (target + targets[n + 1]) / 2 if n + 1 < len(targets) else len(usable)
        near = sorted((i for i in have if low < i < high), key=lambda i: (abs(i - target), i))
        picks.append(usable[near[0]] if near and n + 1 < len(targets) and target not in have else usable[target])
    return sorted(dict.fromkeys(picks), key=version_key)


@dataclass
class FetchLog:
    """What the fetcher did, for the campaign's messages and report."""

    wanted: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)
    fetched: dict[str, tuple[int, float]] = field(default_factory=dict)  # version -> (bytes, seconds)
    failed: dict[str, str] = field(default_factory=dict)  # version -> why, one line

    @property
    def ready(self) -> list[str]:
        return sorted([*self.reused, *self.fetched], key=version_key)


class ReleaseFetcher:
    """Fetches a spread of releases in a daemon thread (see the module doc)."""

    def __init__(self, source: ReleaseSource, pinned: str | None, knobs: FetchKnobs = FetchKnobs(),
                 say: Callable[[str], None] = lambda _: None) -> None:
        self.source, self.pinned, self.knobs, self.say = source, pinned, knobs, say
        self.log = FetchLog()
        self._done = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> "ReleaseFetcher":
        self._thread = threading.Thread(target=self.run, name="release-fetch", daemon=True)
        self._thread.start()
        return self

    def wait(self, seconds: float | None) -> bool:
        """Waits for the fetches to end, at most `seconds`; True when they have."""
        return self._done.wait(seconds)

    def stop(self) -> None:
        """No download is started after this (one under way runs to its own time limit)."""
        self._stop.set()

    @property
    def done(self) -> bool:
        return self._done.is_set()

    def run(self) -> FetchLog:
        try:
            self._run()
        except Exception as error:  # noqa: BLE001 - a fetcher's own fault must not end the campaign
            self.say(f"releases: fetching stopped ({str(error).splitlines()[0][:200] if str(error) else error!r})")
        finally:
            self._done.set()
        return self.log

    def _run(self) -> None:
        try:
            available = self.source.available()
        except ShapefuzzError as error:
            self.say(f"releases: cannot list the releases to fetch ({str(error)[:200]}); bisecting over the cache only")
            return
        cached = set(self.source.cached())
        wanted = choose_releases(available, self.pinned, self.knobs.releases, sorted(cached))
        self.log.wanted = wanted
        self.log.reused = [v for v in wanted if v in cached]
        missing = [v for v in wanted if v not in cached]
        if wanted:
            self.say(f"releases for regression ranges: {', '.join(wanted)}"
                     + (f" ({', '.join(self.log.reused)} already cached)" if self.log.reused else "")
                     + (f"; fetching {', '.join(missing)} in the background" if missing else ""))
        added = 0
        for version in missing:
            if self._stop.is_set():
                self.log.failed[version] = "not fetched: the campaign no longer waits for it"
                continue
            if added + ESTIMATED_BYTES > self.knobs.disk_bytes:
                self._fail(version, f"skipped: it would take the cache past the {self.knobs.disk_bytes / GB:.1f} GB "
                                    f"fetch bound ({added / GB:.2f} GB fetched)")
                continue
            if self.source.free_bytes() < 2 * ESTIMATED_BYTES:
                self._fail(version, "skipped: less than 0.7 GB free on the cache's disk")
                continue
            started = time.monotonic()
            try:
                size = self.source.fetch(version, self.knobs.seconds)
            except (ShapefuzzError, OSError) as error:
                self._fail(version, (str(error).splitlines() or ["failed"])[0][:200])
                continue
            seconds = time.monotonic() - started
            added += size
            self.log.fetched[version] = (size, seconds)
            self.say(f"releases: fetched IREE {version} ({size / 10**6:.0f} MB on disk, {seconds:.0f} s)")

    def _fail(self, version: str, why: str) -> None:
        self.log.failed[version] = why
        self.say(f"releases: IREE {version} cannot be fetched ({why}); the campaign goes on without it")


def _folder_bytes(folder: Path) -> int:
    total = 0
    for root, _dirs, files in os.walk(folder):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
    return total


class PipSource:
    """The real source: `pip index versions` and `releases.install` into the toolchain cache.
    `say`: where a cached folder that cannot be believed is named (`releases.cached_versions`)."""

    def __init__(self, say: Callable[[str], None] | None = None) -> None:
        self.say = say

    def available(self) -> list[str]:
        from shapefuzz.iree.releases import PACKAGES, available_versions

        runtime = set(available_versions(PACKAGES[1]))
        return [v for v in available_versions(PACKAGES[0]) if v in runtime]

    def cached(self) -> list[str]:
        from shapefuzz.iree.releases import cached_versions

        return cached_versions(self.say)

    def fetch(self, version: str, timeout: float) -> int:
        from shapefuzz.iree.releases import cache_root, install, remove_stale_staging

        remove_stale_staging(older_than=2 * timeout)
        install(version, timeout=timeout)
        return _folder_bytes(cache_root() / version)

    def free_bytes(self) -> int:
        from shapefuzz.iree.releases import cache_root

        root = cache_root()
        while not root.exists() and root != root.parent:
            root = root.parent
        return shutil.disk_usage(root).free


__all__ = ["DEFAULT_DISK", "DEFAULT_RELEASES", "FetchKnobs", "FetchLog", "PipSource", "ReleaseFetcher",
           "ReleaseSource", "choose_releases"]
