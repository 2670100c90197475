"""Which IREE release introduced a corpus entry's bug, and which fixed it.

Released `iree-base-compiler`/`iree-base-runtime` wheels are installed side by side into a user
cache folder, `~/.cache/shapefuzz/toolchains/<version>/` (`$XDG_CACHE_HOME` respected), with
`python -m pip install --target ... --no-deps`, and reused on later runs; nothing touches the
user's environment. The binaries live inside the installed packages, so each cached release gets a
`bin/` folder of symlinks that `find_toolchain` reads like any `--iree-bin` folder. The search is a
binary search over the releases `pip index versions` lists in the range: first for a release where
the entry fails, then the first failing release before it and the first passing one after it.
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from shapefuzz.corpus import CorpusEntry
from shapefuzz.errors import ToolchainError, UsageError
from shapefuzz.replay import Outcome, ReplayResult, replay_entry
from shapefuzz.toolchain import Toolchain, find_toolchain

PACKAGES = ("iree-base-compiler", "iree-base-runtime")
_BINARIES = {"iree-compile": "compiler", "iree-opt": "compiler", "iree-run-module": "_runtime_libs"}
_VERSION = re.compile(r"^\d+(?:\.\d+)*$")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shapefuzz" / "toolchains"


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("rc")[0]))


def _pip(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=timeout)


def available_versions(package: str = PACKAGES[0]) -> list[str]:
    """Stable releases on the package index, oldest first (`pip index versions`)."""
    result = _pip("index", "versions", package, timeout=120)
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    if result.returncode != 0 or not match:
        reason = (result.stderr.strip().splitlines() or ["no answer"])[-1]
        raise ToolchainError(f"cannot list {package} releases with pip ({reason[:200]})")
    versions = [v.strip() for v in match.group(1).split(",") if _VERSION.match(v.strip())]
    return sorted(versions, key=version_key)


def select_versions(spec: str, available: Sequence[str]) -> list[str]:
    """`3.1.0..3.13.0` (inclusive, either end may be empty) or `3.11.0,3.13.0`, against what exists."""
    if ".." in spec:
        low, _, high = spec.partition("..")
        lo_key = version_key(low) if low.strip() else (0,)
        hi_key = version_key(high) if high.strip() else (10**9,)
        chosen = [v for v in available if lo_key <= version_key(v) <= hi_key]
    else:
        wanted = [v.strip() for v in spec.split(",") if v.strip()]
        missing = [v for v in wanted if v not in available]
        if missing:
            raise UsageError(f"--versions: {', '.join(missing)} not on the package index "
                             f"(available: {', '.join(available[-6:])}, ...)")
        chosen = sorted(wanted, key=version_key)
    if not chosen:
        raise UsageError(f"--versions {spec!r} matches no released version (available: {', '.join(available)})")
    return chosen


def _installed_version() -> str | None:
    try:
        compiler = importlib.metadata.version(PACKAGES[0])
        runtime = importlib.metadata.version(PACKAGES[1])
    except importlib.metadata.PackageNotFoundError:
        return None
    return compiler if compiler == runtime else None


def _link_binaries(folder: Path) -> Path:
    """`folder/bin/` with symlinks to the real binaries inside the installed packages."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in _BINARIES:
        found = [p for p in (folder / "iree").rglob(name) if p.is_file() and os.access(p, os.X_OK)
                 and p.suffix == "" and "__pycache__" not in p.parts]
        if found:
            link = bin_dir / name
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.path.relpath(found[0], bin_dir))
    return bin_dir


def install(version: str, say: Callable[[str], None] = lambda _: None) -> Toolchain:
    """The toolchain of one release: the pinned wheels when they are that release, else the cached
    copy, installed on first use."""
    if _installed_version() == version:
        return find_toolchain(None) if not os.environ.get("SHAPEFUZZ_IREE_BIN") else _cached(version, say)
    return _cached(version, say)


def _cached(version: str, say: Callable[[str], None]) -> Toolchain:
    folder = cache_root() / version
    if not (folder / ".complete").exists():
        folder.parent.mkdir(parents=True, exist_ok=True)
        staging = folder.parent / f".{version}.{uuid.uuid4().hex[:8]}"
        say(f"installing IREE {version} into {folder} (about 100 MB to download, 350 MB on disk, once)")
        pins = [f"{p}=={version}" for p in PACKAGES]
        result = _pip("install", "--quiet", "--no-deps", "--only-binary=:all:", "--target", str(staging), *pins)
        if result.returncode != 0:
            # The binaries do not depend on the Python ABI: take another Python's wheels.
            for python in ("3.11", "3.12", "3.10", "3.9"):
                shutil.rmtree(staging, ignore_errors=True)
                result = _pip("install", "--quiet", "--no-deps", "--only-binary=:all:", "--python-version", python,
                              "--target", str(staging), *pins)
                if result.returncode == 0:
                    break
        if result.returncode != 0:
            shutil.rmtree(staging, ignore_errors=True)
            reason = [line for line in result.stderr.strip().splitlines() if "ERROR" in line] or ["pip failed"]
            raise ToolchainError(f"cannot install IREE {version}: {reason[0][:200]}")
        _link_binaries(staging)
        (staging / ".complete").write_text(version + "\n")
        if folder.exists():  # a half-installed leftover without .complete
            shutil.rmtree(folder, ignore_errors=True)
        try:
            os.rename(staging, folder)
        except OSError:  # another process finished first: use theirs
            shutil.rmtree(staging, ignore_errors=True)
    return find_toolchain(_link_binaries(folder))


@dataclass(frozen=True)
class Probe:
    version: str
    result: ReplayResult | None  # None when the release could not be installed
    error: str = ""

    @property
    def verdict(self) -> bool | None:
        """True: fails (the same or another way); False: passes; None: cannot tell here."""
        if self.result is None:
            return None
        if self.result.outcome in (Outcome.STILL_FAILING, Outcome.CHANGED):
            return True
        if self.result.outcome == Outcome.FIXED:
            return False
        return None

    def describe(self) -> str:
        if self.result is None:
            return f"unavailable ({self.error})"
        r = self.result
        if r.outcome == Outcome.CHANGED:
            return f"fails differently: {r.now}" if r.now else f"fails differently ({r.detail})"
        if r.outcome == Outcome.STILL_FAILING:
            return "fails (same signature)"
        if r.outcome == Outcome.FIXED:
            return "passes"
        return f"{r.outcome.value}: {r.detail}"


@dataclass(frozen=True)
class BisectResult:
    entry_id: str
    versions: tuple[str, ...]
    probes: tuple[Probe, ...]  # in the order tested
    first_failing: str | None
    first_fixed: str | None  # first passing release after the failing ones
    note: str = ""

    def lines(self) -> list[str]:
        out = [f"entry: {self.entry_id}", f"releases in range: {', '.join(self.versions)}"]
        for probe in sorted(self.probes, key=lambda p: version_key(p.version)):
            out.append(f"  {probe.version:<9} {probe.describe()}")
        out.append(f"first failing release: {self.first_failing or 'none in range'}")
        out.append(f"first fixed release:   {self.first_fixed or ('none in range' if self.first_failing else '-')}")
        if self.note:
            out.append(f"note: {self.note}")
        return out

    def to_json(self) -> dict:
        return {"id": self.entry_id, "versions": list(self.versions), "first_failing": self.first_failing,
                "first_fixed": self.first_fixed, "note": self.note,
                "tested": {p.version: p.describe() for p in self.probes}}


def bisect_entry(entry: CorpusEntry, versions: Sequence[str], say: Callable[[str], None] = lambda _: None,
                 check: Callable[[CorpusEntry, Toolchain], ReplayResult] | None = None,
                 installer: Callable[[str], Toolchain] | None = None) -> BisectResult:
    """Binary search for the first failing and first fixed release among `versions` (oldest first).
    Assumes the bug appears once and goes away once; releases that cannot tell are stepped over."""
    versions = sorted(versions, key=version_key)
    check = check or (lambda e, t: replay_entry(e, t, confirm=False))
    installer = installer or (lambda v: install(v, say))
    probes: dict[str, Probe] = {}

    def probe(index: int) -> bool | None:
        version = versions[index]
        if version not in probes:
            try:
                toolchain = installer(version)
                result = check(entry, toolchain)
                probes[version] = Probe(version, result)
            except (ToolchainError, UsageError, OSError, subprocess.SubprocessError) as error:
                probes[version] = Probe(version, None, str(error).splitlines()[0][:200] if str(error) else "error")
            say(f"  {version}: {probes[version].describe()}")
        return probes[version].verdict

    notes: list[str] = []

    def first(lo: int, hi: int, want: bool) -> int:
        """The first index in [lo, hi] whose verdict is `want`, given that hi has it (monotone)."""
        while lo < hi:
            mid = (lo + hi) // 2
            step, verdict = mid, probe(mid)
            while verdict is None and step + 1 < hi:  # step over releases that cannot tell
                step += 1
                verdict = probe(step)
            if verdict is None:  # nothing decidable in [mid, hi): look below mid
                step = mid - 1
                while step >= lo and probe(step) is None:
                    step -= 1
                if step < lo or probe(step) != want:
                    notes.append(f"{', '.join(versions[mid:hi])} cannot tell; the change may be in any of them")
                    return hi
                verdict = want
            if verdict == want:
                hi = step
            else:
                lo = step + 1
        return hi

    # A release where it fails: the ones it was seen with first, then from the newest down.
    seen = [versions.index(v.split("rc")[0]) for v in entry.toolchain_versions if v.split("rc")[0] in versions]
    failing = next((i for i in dict.fromkeys(seen + list(range(len(versions) - 1, -1, -1))) if probe(i)), None)
    if failing is None:
        return BisectResult(entry.id, tuple(versions), tuple(probes.values()), None, None,
                            "no release in the range fails (or none could tell)")
    first_fail = first(0, failing, True) if failing > 0 else 0
    first_fixed = None
    last = len(versions) - 1
    if failing < last:
        end = probe(last)
        if end is False:
            first_fixed = versions[first(failing + 1, last, False)]
        elif end is None:
            notes.append(f"{versions[last]} cannot tell; the first fixed release was not searched")
    if first_fail == 0:
        notes.append("it fails in the oldest release of the range already")
    note = "; ".join(notes)
    return BisectResult(entry.id, tuple(versions), tuple(probes.values()), versions[first_fail], first_fixed, note)
