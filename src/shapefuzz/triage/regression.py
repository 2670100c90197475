"""A cause's regression range: its reproducer (a corpus entry, shrunk where it could be) checked on
the releases already in the toolchain cache, with the `bisect` machinery; nothing is downloaded
(`shapefuzz bisect ENTRY` fills the cache). The result is one record: "fails since X, passes in
Y", or "fails in every release tried", with the releases tried."""

from __future__ import annotations

from typing import Any, Callable, Sequence

from shapefuzz.bisect import bisect_entry
from shapefuzz.corpus import CorpusEntry
from shapefuzz.errors import UsageError
from shapefuzz.releases import cached_versions, installed_version, version_key
from shapefuzz.replay import ReplayResult
from shapefuzz.toolchain import Toolchain


def local_releases(current: str | None = None) -> list[str]:
    """Releases runnable without the network: the cache's and the pinned wheels' (oldest first)."""
    found = set(cached_versions())
    for version in (installed_version(), current):
        if version and "rc" not in version and "dev" not in version:
            found.add(version)
    return sorted(found, key=version_key)


def releases_to_try(current: str | None = None) -> list[str]:
    """The releases a regression range is taken over; at least two, else a one-line UsageError."""
    versions = local_releases(current)
    if len(versions) < 2:
        have = ", ".join(versions) or "none"
        raise UsageError(f"no other release in the toolchain cache (have: {have}); fill it once with "
                         "`shapefuzz bisect ENTRY --versions 3.8.0..` or `--iree-version X.Y.Z`")
    return versions


def local_installer(version: str) -> Toolchain:
    """A cached release's toolchain, or the pinned wheels' when they are that release; never a
    download (a release not here cannot tell, and bisect steps over it)."""
    from shapefuzz.errors import ToolchainError
    from shapefuzz.releases import install
    from shapefuzz.toolchain import find_toolchain

    if version in cached_versions():
        return install(version)
    if version == installed_version():
        return find_toolchain(None)
    raise ToolchainError(f"IREE {version} is not in the toolchain cache")


def regression_range(entry: CorpusEntry, versions: Sequence[str], say: Callable[[str], None] = lambda _: None,
                     check: Callable[[CorpusEntry, Toolchain], ReplayResult] | None = None,
                     installer: Callable[[str], Toolchain] | None = None) -> dict[str, Any]:
    """The range over `versions` (see module doc) as a JSON-able record with a `text`."""
    result = bisect_entry(entry, versions, say, check, installer or local_installer)
    tried = sorted((p.version for p in result.probes if p.verdict is not None), key=version_key)
    if result.first_failing is None:
        text = f"fails in none of the releases tried ({', '.join(tried) or 'none could tell'})"
    elif result.last_passing is None and result.first_failing == result.versions[0]:
        text = f"fails in every release tried ({', '.join(tried)})" if not result.first_fixed else \
            f"fails up to {result.first_fixed}, which passes (tried {', '.join(tried)})"
    elif result.last_passing is not None:
        text = f"fails since {result.first_failing}, passes in {result.last_passing}"
    else:
        text = f"fails since {result.first_failing} or earlier (the release before could not tell)"
    if result.first_fixed and "passes" not in text.split(",")[-1]:
        text += f"; fixed in {result.first_fixed}"
    return {"text": text, "entry": entry.id, "first_failing": result.first_failing or "",
            "last_passing": result.last_passing or "", "first_fixed": result.first_fixed or "",
            "tried": ", ".join(tried), "note": result.note}


__all__ = ["local_installer", "local_releases", "regression_range", "releases_to_try"]
