"""Finds the IREE toolchain and probes what it can do.

By default the pinned wheels, calling the real binaries inside the packages (not the Python
wrappers on PATH, which cost about 0.1 s a call). Or a folder holding `iree-compile`, `iree-opt`
and `iree-run-module` from a user's own build or another release (`--iree-bin DIR` or the
SHAPEFUZZ_IREE_BIN environment variable). Flags and devices are probed, not assumed, and the
probe is cached per binary (path, size, mtime) so parallel workers do not repeat it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from shapefuzz.process.cleanup import temp_dir
from shapefuzz.errors import ToolchainError
from shapefuzz.process.sandbox import Limits, run_sandboxed

ENV_IREE_BIN = "SHAPEFUZZ_IREE_BIN"
_PROBE_LIMITS = Limits(timeout=60.0, output_bytes=16 << 20)  # --help-hidden is large
_PROBE_FORMAT = 5  # bump when the probe's contents change


@dataclass(frozen=True)
class Toolchain:
    compile_bin: Path
    opt_bin: Path | None  # some release folders lack iree-opt; verification then uses iree-compile
    run_bin: Path | None  # compile-only toolchains are allowed
    source: str  # "wheels" or the folder it came from

    @property
    def probe(self) -> "ToolchainProbe":
        return probe_toolchain(self)


@dataclass(frozen=True)
class ToolchainProbe:
    version: str  # e.g. "3.13.0rc20261016"
    release: tuple[int, int]  # (3, 13); (0, 0) when unknown (a dev build)
    compile_flags: frozenset[str]  # every --iree-* flag iree-compile accepts
    devices: tuple[str, ...]  # runtime device URIs, e.g. "local-task://", "vulkan://..."
    llvmpipe_target: bool  # --iree-vulkan-target=llvmpipe compiles here
    passes: frozenset[str] = frozenset()  # pass names iree-opt lists (empty without iree-opt)
    # Where a CUDA device is listed: its own arch ("sm_90", from nvidia-smi; None when unknown),
    # the targets whose code was compiled and ran right on it (best first), and what was found.
    cuda_arch: str | None = None
    cuda_runs: tuple[str, ...] = ()
    cuda_note: str = ""
    # Where a HIP (AMD GPU) device is listed: the ROCm chips whose code compiled and ran right on it.
    hip_runs: tuple[str, ...] = ()
    hip_note: str = ""
    cpu_flags: frozenset[str] = frozenset()  # the host CPU's features (/proc/cpuinfo), for code built for a named CPU

    def has_flag(self, flag: str) -> bool:
        return flag in self.compile_flags

    def has_pass(self, name: str) -> bool:
        return name in self.passes

    def has_device(self, driver: str) -> bool:
        return any(d.split("://", 1)[0] == driver for d in self.devices)

    def runs_on(self, driver: str, target: str | None = None) -> bool:
        """A device of this driver is listed and code compiled here runs on it: for CUDA and HIP,
        code for `target` ran right in the probe's trial (a listed GPU is not enough)."""
        trials = {"cuda": self.cuda_runs, "hip": self.hip_runs}
        return self.has_device(driver) and (driver not in trials or target in trials[driver])

    def device_note(self, driver: str) -> str:
        return {"cuda": self.cuda_note, "hip": self.hip_note}.get(driver, "")

    @property
    def cuda_target(self) -> str | None:
        """The target picked for the CUDA device here (the best that ran), or None."""
        return self.cuda_runs[0] if self.cuda_runs else None

    def to_json(self) -> dict:
        return {
            "version": self.version,
            "release": list(self.release),
            "compile_flags": sorted(self.compile_flags),
            "devices": list(self.devices),
            "llvmpipe_target": self.llvmpipe_target,
            "passes": sorted(self.passes),
            "cuda_arch": self.cuda_arch,
            "cuda_runs": list(self.cuda_runs),
            "cuda_note": self.cuda_note,
            "hip_runs": list(self.hip_runs),
            "hip_note": self.hip_note,
            "cpu_flags": sorted(self.cpu_flags),
        }

    @staticmethod
    def from_json(data: dict) -> "ToolchainProbe":
        return ToolchainProbe(
            version=data["version"],
            release=tuple(data["release"]),
            compile_flags=frozenset(data["compile_flags"]),
            devices=tuple(data["devices"]),
            llvmpipe_target=data["llvmpipe_target"],
            passes=frozenset(data["passes"]),
            cuda_arch=data["cuda_arch"],
            cuda_runs=tuple(data["cuda_runs"]),
            cuda_note=data["cuda_note"],
            hip_runs=tuple(data.get("hip_runs", ())),
            hip_note=data.get("hip_note", ""),
            cpu_flags=frozenset(data.get("cpu_flags", ())),
        )


def _wheel_dir(module: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0])


def _executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def find_toolchain(iree_bin: str | os.PathLike | None = None) -> Toolchain:
    """The toolchain named by `iree_bin`, else $SHAPEFUZZ_IREE_BIN, else the pinned wheels."""
    folder = iree_bin if iree_bin is not None else os.environ.get(ENV_IREE_BIN) or None
    if folder is not None:
        return _toolchain_from_folder(Path(folder))
    compiler = _wheel_dir("iree.compiler")
    runtime = _wheel_dir("iree._runtime_libs")
    if compiler is None:
        raise ToolchainError(
            "the iree-base-compiler wheel is not installed; install it or pass --iree-bin DIR"
        )
    libs = compiler / "_mlir_libs"
    compile_bin = libs / "iree-compile"
    if not _executable(compile_bin):
        raise ToolchainError(f"no iree-compile binary inside the installed wheel at {libs}")
    run_bin = runtime / "iree-run-module" if runtime is not None else None
    return Toolchain(
        compile_bin=compile_bin,
        opt_bin=libs / "iree-opt" if _executable(libs / "iree-opt") else None,
        run_bin=run_bin if run_bin is not None and _executable(run_bin) else None,
        source="wheels",
    )


def _toolchain_from_folder(folder: Path) -> Toolchain:
    if not folder.is_dir():
        raise ToolchainError(f"--iree-bin {folder}: no such folder")
    compile_bin = folder / "iree-compile"
    if not _executable(compile_bin):
        raise ToolchainError(
            f"--iree-bin {folder}: no executable iree-compile there (expected iree-compile, "
            "iree-opt and iree-run-module from an IREE build's bin/ folder)"
        )
    opt_bin, run_bin = folder / "iree-opt", folder / "iree-run-module"
    return Toolchain(
        compile_bin=compile_bin.resolve(),
        opt_bin=opt_bin.resolve() if _executable(opt_bin) else None,
        run_bin=run_bin.resolve() if _executable(run_bin) else None,
        source=str(folder),
    )


def cache_root() -> Path:
    """~/.cache/shapefuzz ($XDG_CACHE_HOME respected): probes, toolchains, Hypothesis's files."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "shapefuzz"


def _cache_dir() -> Path:
    return cache_root() / "probes"


def _cached_probe(path: Path) -> ToolchainProbe | None:
    """A probe cached by an earlier run, or None for anything else found there (missing, a FIFO,
    deep or wrong-shaped JSON): the toolchain is probed again and the cache rewritten."""
    from shapefuzz.files import read_bytes
    from shapefuzz.schema import SchemaError, load_json

    try:
        data = load_json(read_bytes(path).decode("utf-8"), str(path))
        strings = lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v)  # noqa: E731
        if not (isinstance(data, dict) and isinstance(data.get("version"), str)
                and isinstance(data.get("release"), list) and len(data["release"]) == 2
                and all(type(x) is int for x in data["release"])
                and all(strings(data.get(k)) for k in ("compile_flags", "devices", "passes", "cuda_runs"))
                and strings(data.get("cpu_flags", []))
                and isinstance(data.get("llvmpipe_target"), bool) and isinstance(data.get("cuda_note"), str)
                and (data.get("cuda_arch") is None or isinstance(data.get("cuda_arch"), str))):
            return None
        return ToolchainProbe.from_json(data)
    except (OSError, UnicodeDecodeError, SchemaError, KeyError, TypeError, ValueError):
        return None


def _cache_key(toolchain: Toolchain) -> str:
    parts = [str(_PROBE_FORMAT)]
    for path in (toolchain.compile_bin, toolchain.run_bin):
        if path is not None:
            stat = path.stat()
            parts.append(f"{path}:{stat.st_size}:{stat.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:20]


def parse_version(text: str) -> tuple[str, tuple[int, int]]:
    match = re.search(r"IREE compiler version (\S+)", text)
    if not match:
        return "unknown", (0, 0)
    version = match.group(1)
    numbers = re.match(r"(\d+)\.(\d+)", version)
    release = (int(numbers.group(1)), int(numbers.group(2))) if numbers else (0, 0)
    return version, release


_TRIVIAL_MODULE = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
# A module with one real dispatch: a GPU target that cannot build kernels fails on it, and its
# answer on a device shows whether code for a target runs there.
_CUDA_TRIAL_MODULE = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
_CUDA_TRIAL_INPUT, _CUDA_TRIAL_OUTPUT = "4xf32=1 2 3 4", "4xf32=2 4 6 8"
CUDA_FALLBACK_TARGET = "sm_80"  # IREE embeds PTX, which the driver JIT-compiles for newer GPUs


def _listed_devices(toolchain: Toolchain) -> list[str]:
    if toolchain.run_bin is None:
        return []
    listing = run_sandboxed([str(toolchain.run_bin), "--list_devices"], _PROBE_LIMITS)
    devices = [line.strip() for line in listing.stdout.splitlines() if "://" in line]
    if not any(d.startswith("vulkan://") for d in devices):
        # Old runtimes (3.4/3.5) list the software Vulkan device only when asked by driver.
        listing = run_sandboxed([str(toolchain.run_bin), "--list_devices=vulkan"], _PROBE_LIMITS)
        devices += [line.strip() for line in listing.stdout.splitlines() if line.strip().startswith("vulkan://")]
    return devices


def cuda_arch_from_smi(text: str) -> str | None:
    """`nvidia-smi --query-gpu=compute_cap --format=csv,noheader` ("9.0") -> "sm_90" (first GPU)."""
    match = re.search(r"^\s*(\d+)\.(\d+)\s*$", text, re.MULTILINE)
    return f"sm_{match.group(1)}{match.group(2)}" if match else None


def _cuda_arch() -> str | None:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    result = run_sandboxed([smi, "--query-gpu=compute_cap", "--format=csv,noheader"], _PROBE_LIMITS)
    return cuda_arch_from_smi(result.stdout) if result.ok else None


def _first_error(text: str) -> str:
    lines = [line for line in text.splitlines() if "error" in line.lower()] or text.strip().splitlines() or [""]
    return re.sub(r"^\S*:\d+:\d+: ", "", lines[0].strip())[:160]


def _trial(toolchain: Toolchain, work: str, target: str, flags: list[str], device: str) -> tuple[bool, str]:
    """Compile the trial module with `flags` and run it on `device`: (it ran right, why not)."""
    source, vmfb = os.path.join(work, "trial.mlir"), os.path.join(work, f"{target}.vmfb")
    Path(source).write_text(_CUDA_TRIAL_MODULE)
    built = run_sandboxed([str(toolchain.compile_bin), source, *flags, "-o", vmfb], _PROBE_LIMITS)
    if not built.ok:
        return False, f"rejected by this compiler ({_first_error(built.stderr + built.stdout)})"
    ran = run_sandboxed([str(toolchain.run_bin), f"--module={vmfb}", f"--device={device}", "--function=main",
                         f"--input={_CUDA_TRIAL_INPUT}"], _PROBE_LIMITS)
    if ran.ok and _CUDA_TRIAL_OUTPUT in ran.stdout:
        return True, ""
    return False, f"compiled but did not run right ({_first_error(ran.stderr + ran.stdout)})"


def _probe_cuda(toolchain: Toolchain) -> tuple[str | None, tuple[str, ...], str]:
    """Which targets compile and run on the CUDA device here: the GPU's own arch first, then
    sm_80. In 3.13 sm_90, sm_90a and sm_100 fail every input with "missing GPU target"; the note
    says so, and sm_80's PTX (JIT-compiled by the driver) is what runs there."""
    arch = _cuda_arch()
    candidates = list(dict.fromkeys([a for a in (arch, CUDA_FALLBACK_TARGET) if a]))
    runs: list[str] = []
    notes: list[str] = []
    with temp_dir("probe") as work:
        for target in candidates:
            ok, why = _trial(toolchain, work, target, ["--iree-hal-target-device=cuda", f"--iree-cuda-target={target}"],
                             "cuda")
            if ok:
                runs.append(target)
                notes.append(f"{target}: runs here" + (" (PTX JIT-compiled by the driver)" if target != arch else ""))
            else:
                notes.append(f"{target}: {why}")
    label = f"GPU {arch}" if arch else "GPU of unknown arch (no nvidia-smi)"
    return arch, tuple(runs), f"{label}; " + "; ".join(notes)


def host_cpu_flags(cpuinfo: str = "/proc/cpuinfo") -> frozenset[str]:
    """The host CPU's feature flags as Linux lists them (x86 `flags`, Arm `Features`); empty
    when they cannot be read."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


HIP_TRIAL_TARGETS = ("gfx942", "gfx90a", "gfx1100")  # the chips of the rocm lanes


def _probe_hip(toolchain: Toolchain, flags: frozenset[str]) -> tuple[tuple[str, ...], str]:
    """Which ROCm chips' code runs on the HIP device here (code for another chip does not load)."""
    flag = "--iree-rocm-target" if "--iree-rocm-target" in flags else "--iree-hip-target"
    runs: list[str] = []
    with temp_dir("probe") as work:
        for chip in HIP_TRIAL_TARGETS:
            ok, _ = _trial(toolchain, work, chip, ["--iree-hal-target-device=hip", f"{flag}={chip}"], "hip")
            runs += [chip] if ok else []
    note = f"{', '.join(runs)} run here" if runs else f"none of {', '.join(HIP_TRIAL_TARGETS)} ran on the HIP device here"
    return tuple(runs), note


def _probe_uncached(toolchain: Toolchain) -> ToolchainProbe:
    result = run_sandboxed([str(toolchain.compile_bin), "--version"], _PROBE_LIMITS)
    if not result.ok:
        raise ToolchainError(f"{toolchain.compile_bin} --version failed: {result.stderr.strip()[:200]}")
    version, release = parse_version(result.stdout + result.stderr)
    help_text = run_sandboxed([str(toolchain.compile_bin), "--help-hidden"], _PROBE_LIMITS).stdout
    flags = frozenset(re.findall(r"^\s+(--iree-[\w-]+)", help_text, re.MULTILINE))
    passes: frozenset[str] = frozenset()
    if toolchain.opt_bin is not None:  # iree-opt's --help lists every registered pass
        opt_help = run_sandboxed([str(toolchain.opt_bin), "--help"], _PROBE_LIMITS).stdout
        passes = frozenset(re.findall(r"^\s+--([\w-]+)", opt_help, re.MULTILINE))
    devices = _listed_devices(toolchain)
    llvmpipe = False
    if "--iree-vulkan-target" in flags:
        trial = run_sandboxed(
            [str(toolchain.compile_bin), "-", "--iree-hal-target-device=vulkan",
             "--iree-vulkan-target=llvmpipe", "-o", os.devnull],
            _PROBE_LIMITS,
            stdin_text=_TRIVIAL_MODULE,
        )
        llvmpipe = trial.ok
    cuda_runs: tuple[str, ...]
    hip_runs: tuple[str, ...]
    cuda_arch, cuda_runs, cuda_note = None, (), ""
    if any(d.startswith("cuda://") for d in devices) and "--iree-cuda-target" in flags:
        cuda_arch, cuda_runs, cuda_note = _probe_cuda(toolchain)
    hip_runs, hip_note = (), ""
    if any(d.startswith("hip://") for d in devices) and flags & {"--iree-rocm-target", "--iree-hip-target"}:
        hip_runs, hip_note = _probe_hip(toolchain, flags)
    return ToolchainProbe(version, release, flags, tuple(devices), llvmpipe, passes, cuda_arch, cuda_runs, cuda_note,
                          hip_runs, hip_note, host_cpu_flags())


@functools.cache
def probe_toolchain(toolchain: Toolchain) -> ToolchainProbe:
    cache_file = _cache_dir() / f"{_cache_key(toolchain)}.json"
    cached = _cached_probe(cache_file)
    if cached is not None:
        return cached
    probe = _probe_uncached(toolchain)
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache_file.with_suffix(f".tmp{os.getpid()}")
        tmp.write_text(json.dumps(probe.to_json()))
        os.replace(tmp, cache_file)  # atomic: parallel workers never read half a file
    except OSError:
        pass  # a read-only home only costs a re-probe
    return probe
