"""Released IREE toolchains by version number, installed once into a user cache and reused.

`iree-base-compiler` and `iree-base-runtime` of one release are installed together (a module from
one release does not load in another's runtime) into `~/.cache/shapefuzz/toolchains/<version>/`
(`$XDG_CACHE_HOME` respected) with `python -m pip install --target ... --no-deps`; nothing touches
the user's environment. The binaries live inside the installed packages, so each cached release
gets a `bin/` folder of symlinks that `find_toolchain` reads like any `--iree-bin` folder. A release
already in the cache is used without the network. `shapefuzz bisect` and `--iree-version` share it.

A cached folder is believed only when its name is a release number and its own iree-compile says
it is that release (`trust_problem`); the answer is kept in the folder (`.verified`, keyed on the
binary's path and stat) so it is asked once. Any other folder is skipped with one line saying why.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Callable

from shapefuzz.errors import ShapefuzzError, ToolchainError, UsageError
from shapefuzz.files import atomic_write, read_bytes
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.schema import SchemaError, load_json
from shapefuzz.iree.toolchain import ENV_IREE_BIN, Toolchain, find_toolchain, parse_version

PACKAGES = ("iree-base-compiler", "iree-base-runtime")
_BINARIES = ("iree-compile", "iree-opt", "iree-run-module")
_VERSION = re.compile(r"\d{1,4}\.\d{1,4}\.\d{1,4}")  # fullmatch: `$` would let "3.13.0\n" through
_COMPLETE = ".complete"
_VERIFIED = ".verified"  # what the folder's iree-compile said it is, for the binary's stat (trust_problem)
_ASK_LIMITS = Limits(timeout=30.0, output_bytes=64 << 10)  # `iree-compile --version` takes about 15 ms
_noted: set[tuple[str, str]] = set()  # (folder, why) already said in this process
_QUIET = ("--quiet", "--no-deps", "--only-binary=:all:", "--retries", "2", "--timeout", "30")


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shapefuzz" / "toolchains"


def is_release_version(text: object) -> bool:
    """`3.13.0` exactly: three small numbers, nothing before or after (not even a newline)."""
    return isinstance(text, str) and _VERSION.fullmatch(text) is not None


def check_version_spec(spec: str) -> str:
    """`bisect --versions` before anything is looked up: each named end or item a release number."""
    for part in (p.strip() for p in spec.replace("..", ",").split(",")):
        if part and not is_release_version(part):
            raise UsageError(f"--versions: {part[:20]!r}{'...' if len(part) > 20 else ''} is not a release "
                             "number such as 3.13.0")
    return spec


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part[:9]) for part in re.findall(r"\d+", version.split("rc")[0]))  # 5,000 digits: no int()


def pip(*args: str, timeout: float = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pip", *args, "--disable-pip-version-check"],
                          capture_output=True, text=True, timeout=timeout)


def available_versions(package: str = PACKAGES[0]) -> list[str]:
    """Stable releases on the package index, oldest first (`pip index versions`)."""
    try:
        result = pip("index", "versions", package, timeout=120)
    except (OSError, subprocess.SubprocessError) as error:
        raise ToolchainError(f"cannot list {package} releases with pip ({error})") from None
    match = re.search(r"Available versions:\s*(.+)", result.stdout)
    if result.returncode != 0 or not match:
        reason = (result.stderr.strip().splitlines() or ["no answer"])[-1]
        raise ToolchainError(f"cannot list {package} releases with pip ({reason[:200]})")
    versions = [v.strip() for v in match.group(1).split(",") if _VERSION.fullmatch(v.strip())]
    return sorted(versions, key=version_key)


def installed_version() -> str | None:
    """The release of the pinned wheels in this environment, when compiler and runtime match."""
    try:
        compiler = importlib.metadata.version(PACKAGES[0])
        runtime = importlib.metadata.version(PACKAGES[1])
    except importlib.metadata.PackageNotFoundError:
        return None
    return compiler if compiler == runtime else None


def _say_note(line: str) -> None:
    print(f"note: {line}", file=sys.stderr, flush=True)


def cached_versions(say: Callable[[str], None] | None = None) -> list[str]:
    """The releases in the toolchain cache that can be believed (`trust_problem`), oldest first.
    A folder marked complete that cannot is skipped with one line to `say` (default: stderr),
    once per process; hidden staging folders and half-installed ones (no `.complete`) silently."""
    root = cache_root()
    if not root.is_dir():
        return []
    found = []
    for folder in sorted(root.iterdir()):
        if folder.name.startswith(".") or not (folder / _COMPLETE).exists():
            continue
        why = trust_problem(folder)
        if why is None:
            found.append(folder.name)
        elif (str(folder), why) not in _noted:
            _noted.add((str(folder), why))
            (say or _say_note)(f"toolchain cache: {_shown(folder)} skipped: {why}")
    return sorted(found, key=version_key)


def _shown(folder: Path) -> str:
    """A folder's path for one line: a name with control characters or of any length stays one line."""
    text = str(folder)
    return text if text.isprintable() and len(text) <= 300 else ascii(text[:300])


def trust_problem(folder: Path) -> str | None:
    """Why a cached toolchain folder cannot be taken for release `folder.name`, or None when it
    can: the name is a release number and the folder's own iree-compile says it is that release
    (its `--version`: "IREE compiler version 3.13.0rc20261016" is release 3.13.0)."""
    if not is_release_version(folder.name):
        return "its name is not a release number such as 3.13.0"
    compiler = cached_compiler(folder)
    if compiler is None:
        return "it holds no executable iree-compile"
    says = _compiler_says(folder, compiler)
    if not says:
        return f"its iree-compile ({compiler}) does not say which release it is"
    release = re.match(r"\d+\.\d+\.\d+", says)
    if release is None or release.group(0) != folder.name:
        return f"its iree-compile says it is IREE {says[:60]}, not {folder.name}"
    return None


def _found_binary(folder: Path, name: str) -> Path | None:
    """`name` inside a cached release's installed packages (`folder/iree/...`), or None."""
    found = [p for p in (folder / "iree").rglob(name) if p.is_file() and os.access(p, os.X_OK)
             and p.suffix == "" and "__pycache__" not in p.parts]
    return found[0] if found else None


def cached_compiler(folder: Path) -> Path | None:
    """The iree-compile the cached release's toolchain runs (`_link_binaries` links the one inside
    its packages, else keeps `bin/iree-compile`), resolved; None when there is none."""
    binary = _found_binary(folder, "iree-compile")
    link = folder / "bin" / "iree-compile"
    if binary is None and link.is_file() and os.access(link, os.X_OK):
        binary = link
    return binary.resolve() if binary is not None else None


def _compiler_says(folder: Path, compiler: Path) -> str:
    """The version `compiler --version` prints ("" when it prints none), asked once per binary:
    the answer is kept in `folder/.verified` with the binary's path and stat, written atomically;
    a binary replaced or touched since is asked again. An answer cut short (a timeout, a signal)
    is not kept."""
    try:
        st = compiler.stat()
    except OSError:
        return ""
    key = {"binary": str(compiler), "size": st.st_size, "mtime_ns": st.st_mtime_ns, "inode": st.st_ino,
           "device": st.st_dev}
    try:
        kept = load_json(read_bytes(folder / _VERIFIED).decode("utf-8"), str(folder / _VERIFIED))
        if isinstance(kept, dict) and kept.get("key") == key and isinstance(kept.get("says"), str):
            return kept["says"]
    except (OSError, UnicodeDecodeError, SchemaError):
        pass  # none yet, or not ours: ask the compiler
    result = run_sandboxed([str(compiler), "--version"], _ASK_LIMITS)
    version, _ = parse_version(result.stdout + result.stderr)
    says = "" if version == "unknown" or not result.ok else version
    if result.returncode is not None and not result.timed_out:
        try:
            atomic_write(folder / _VERIFIED, json.dumps({"key": key, "says": says}).encode())
        except (OSError, ShapefuzzError):
            pass  # a read-only cache only costs asking again
    return says


def _link_binaries(folder: Path) -> Path:
    """`folder/bin/` with symlinks to the real binaries inside the installed packages."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    for name in _BINARIES:
        found = _found_binary(folder, name)
        link = bin_dir / name
        if found and not (link.exists() and link.resolve() == found.resolve()):
            if link.is_symlink() or link.exists():
                link.unlink()
            link.symlink_to(os.path.relpath(found, bin_dir))
    return bin_dir


def install(version: str, say: Callable[[str], None] = lambda _: None, timeout: float = 1800) -> Toolchain:
    """The toolchain of one release: the cached copy when there is one (no network), else the
    pinned wheels when they are that release, else installed into the cache first (each pip call
    within `timeout` seconds)."""
    folder = cache_root() / version
    complete = (folder / _COMPLETE).exists()
    why = trust_problem(folder) if complete else None
    if complete and why is None:
        return find_toolchain(_link_binaries(folder))
    if installed_version() == version and not os.environ.get(ENV_IREE_BIN):
        return find_toolchain(None)
    if why is not None:  # not replaced behind the user's back: it may be their own folder
        raise ToolchainError(f"IREE {version}: the toolchain cache's {_shown(folder)} cannot be believed ({why}); "
                             "move it aside to install the release there again")
    _download(version, folder, say, timeout)
    return find_toolchain(_link_binaries(folder))


def _check_released(version: str) -> bool:
    """One clear line for a release that does not exist or has no runtime wheel, before any
    download. False when the index cannot be listed (offline): the install then says why."""
    for package in PACKAGES:
        try:
            known = available_versions(package)
        except ToolchainError:
            return False
        if version not in known:
            if package == PACKAGES[0]:
                raise ToolchainError(f"IREE {version} is not a release of {package} "
                                     f"(the package index has {known[0]} ... {known[-1]})")
            raise ToolchainError(f"IREE {version} has no {package} wheel (a compiler-only release), so its "
                                 "modules cannot run; choose another release")
    return True


def remove_stale_staging(older_than: float) -> int:
    """Half-installed `.X.Y.Z.<id>` folders an install left behind (its process killed) more than
    `older_than` seconds ago; returns how many were removed."""
    root = cache_root()
    removed = 0
    for path in root.glob(".*.*.*.*") if root.is_dir() else ():
        try:
            stale = path.is_dir() and not path.is_symlink() and time.time() - path.stat().st_mtime > older_than
        except OSError:
            continue
        if stale:
            shutil.rmtree(path, ignore_errors=True)
            removed += 1
    return removed


def _download(version: str, folder: Path, say: Callable[[str], None], timeout: float = 1800) -> None:
    reachable = _check_released(version)
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.parent / f".{version}.{uuid.uuid4().hex[:8]}"
    say(f"installing IREE {version} into {folder} (about 100 MB to download, 350 MB on disk, once)")
    pins = [f"{p}=={version}" for p in PACKAGES]
    try:
        result = pip("install", *_QUIET, "--target", str(staging), *pins, timeout=timeout)
        if result.returncode != 0 and reachable and "No matching distribution" in result.stderr:
            # The binaries do not depend on the Python ABI: take another Python's wheels.
            for python in ("3.11", "3.12", "3.10", "3.9"):
                shutil.rmtree(staging, ignore_errors=True)
                result = pip("install", *_QUIET, "--python-version", python, "--target", str(staging), *pins,
                             timeout=timeout)
                if result.returncode == 0:
                    break
    except subprocess.TimeoutExpired:
        shutil.rmtree(staging, ignore_errors=True)
        raise ToolchainError(f"cannot install IREE {version}: pip did not finish within {timeout:.0f} s") from None
    except (OSError, subprocess.SubprocessError) as error:
        shutil.rmtree(staging, ignore_errors=True)
        raise ToolchainError(f"cannot install IREE {version}: {error}") from None
    if result.returncode != 0:
        shutil.rmtree(staging, ignore_errors=True)
        missing = re.search(r"No matching distribution found for (iree-base-\w+)", result.stderr)
        if missing:
            where = "for this platform" if reachable else "(the package index cannot be reached)"
            raise ToolchainError(f"cannot install IREE {version}: pip found no {missing.group(1)} {version} wheel "
                                 + where)
        reason = [line for line in result.stderr.strip().splitlines() if "ERROR" in line] or ["pip failed"]
        raise ToolchainError(f"cannot install IREE {version}: {reason[0][:200]}")
    _link_binaries(staging)
    (staging / _COMPLETE).write_text(version + "\n")
    if folder.exists():  # a half-installed leftover without .complete
        shutil.rmtree(folder, ignore_errors=True)
    try:
        os.rename(staging, folder)
    except OSError:  # another process finished first: use theirs
        shutil.rmtree(staging, ignore_errors=True)


def release_toolchain(version: str, say: Callable[[str], None] = lambda _: None) -> Toolchain:
    """`--iree-version X.Y.Z`: that release's matched compiler and runtime, installed if need be
    and probed. Every way it can fail is one ToolchainError/UsageError line."""
    if not is_release_version(version):
        raise UsageError(f"--iree-version {version[:40]!r}: give a release number such as 3.13.0")
    toolchain = install(version, say)
    if toolchain.run_bin is None:
        raise ToolchainError(f"--iree-version {version}: the release has no iree-run-module "
                             f"(no runtime wheel installed in {cache_root() / version})")
    try:
        probe = toolchain.probe
    except (ToolchainError, OSError) as error:
        raise ToolchainError(f"--iree-version {version}: cannot probe its iree-compile ({error})") from None
    if probe.release != version_key(version)[:2]:
        raise ToolchainError(f"--iree-version {version}: its iree-compile says version {probe.version}")
    return toolchain
