"""The IREE calls: verify MLIR, compile it for a backend, run a module on a device. Each goes
through the sandbox and returns data; nothing here decides what is a bug (that is oracle.py)."""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Sequence

import numpy as np

from shapefuzz.errors import EnvironmentFault
from shapefuzz.process.cleanup import temp_dir
from shapefuzz.files import write_text
from shapefuzz.iree.backends import Backend
from shapefuzz.model import ProcessResult
from shapefuzz.schema import SchemaError, load_npy
from shapefuzz.process.sandbox import Limits
from shapefuzz.process.sandbox import run_sandboxed as _sandboxed
from shapefuzz.iree.toolchain import Toolchain, find_toolchain
from shapefuzz.triage.environment import environment_fault
from shapefuzz.triage.failing_pass import PRINT_IR_AFTER_FAILURE, clean_output
from shapefuzz.triage.paths import fold_paths, own_folders
from shapefuzz.process.worktime import add_untimed, timed

SPLIT_MARKER = "// -----"
_LOCATED_ERROR = re.compile(r"^[^\n:]*\.mlir:(\d+):\d+: error: (.*)$", re.MULTILINE)


@dataclass(frozen=True)
class Budget:
    """Limits for each kind of call; compile and run timeouts are separate knobs."""

    verify: Limits = Limits(timeout=60.0)
    compile: Limits = Limits(timeout=120.0)
    run: Limits = Limits(timeout=60.0)


DEFAULT_BUDGET = Budget()
# A compile past its timeout is sent SIGABRT first and given this long to print its stack (where it
# hangs: the pass, as a crash names it) before it is killed.
COMPILE_ABORT_GRACE = 2.0

_TOOL_SECONDS = [0.0]


def tool_seconds() -> float:
    """Wall seconds this process has spent in compiler and runtime children (every call made
    through this module). Callers take the difference around a piece of work."""
    return _TOOL_SECONDS[0]


def run_sandboxed(argv: Sequence[str], limits: Limits, **kwargs) -> ProcessResult:
    """One sandboxed call. A failure of our environment (a full disk, an I/O error, a file of ours
    gone) is an `EnvironmentFault`, never a result a caller could take for the compiler's."""
    start = time.perf_counter()
    try:
        result = _sandboxed(list(argv), limits, **kwargs)
    except OSError as error:  # no room to start it, no temporary file for its output
        raise EnvironmentFault(f"{Path(argv[0]).name}: {error.strerror or error} (our environment, not the "
                               "compiler: check free space in TMPDIR and retry)") from None
    _TOOL_SECONDS[0] += result.seconds
    # the sandbox's own work around the process (its environment, pipes, reaping), or a first run
    # that died of a SIGKILL we did not send (see sandbox.run_sandboxed)
    add_untimed("processes", max(0.0, time.perf_counter() - start - result.seconds))
    if result.returncode != 0 and not result.timed_out:
        fault = environment_fault(result.stderr + "\n" + result.stdout, _own_paths(argv))
        if fault is not None:
            raise EnvironmentFault(f"{Path(argv[0]).name}: {fault} (our environment, not the compiler: "
                                   "check free space in TMPDIR and retry)")
    return result


def _own_paths(argv: Sequence[str]) -> list[str]:
    """The files a call reads or writes for us (absolute paths in its arguments, `--x=@path` too)."""
    paths = []
    for arg in argv[1:]:
        value = arg.split("=", 1)[-1].lstrip("@")
        if value.startswith("/"):
            paths.append(value)
    return paths


def verify_argv(toolchain: Toolchain, path: str, split: bool) -> list[str]:
    """The command that parses and verifies the module at `path` (`split`: a file of several
    modules, `--split-input-file`): what `verify` runs under the sandbox, and what
    bench/bench_campaign.py's bare loop runs without it."""
    if toolchain.opt_bin is not None:
        argv = [str(toolchain.opt_bin), path, "-o", os.devnull]
    else:  # no iree-opt in this folder: parsing and verifying is the first thing iree-compile does
        argv = [str(toolchain.compile_bin), path, "--compile-to=input", "-o", os.devnull]
    if split:
        argv.append("--split-input-file")
    return argv


def verify(text: str, toolchain: Toolchain | None = None, limits: Limits = DEFAULT_BUDGET.verify) -> str | None:
    """None when `text` parses and verifies, else the error output."""
    return verify_many([text], toolchain, limits)[0]


def verify_many(
    texts: Sequence[str], toolchain: Toolchain | None = None, limits: Limits = DEFAULT_BUDGET.verify
) -> list[str | None]:
    """Verify many modules in one `--split-input-file` call: None for each that verifies, else
    its error text. Costs one process instead of one per module."""
    toolchain = toolchain or find_toolchain()
    if not texts:
        return []
    if len(texts) > 1 and any(SPLIT_MARKER in text for text in texts):
        # A module holding the marker would break the split: verify each on its own.
        return [_verify_one(text, toolchain, limits) for text in texts]
    if len(texts) == 1:
        return [_verify_one(texts[0], toolchain, limits)]
    return _verify_batch(texts, toolchain, limits)


def _verify_one(text: str, toolchain: Toolchain, limits: Limits) -> str | None:
    with temp_dir("verify", part="files") as folder:
        path = os.path.join(folder, "module.mlir")
        with timed("files"):
            write_text(path, text)
        result = run_sandboxed(verify_argv(toolchain, path, split=False), limits)
    if result.ok:
        return None
    if result.timed_out:
        return "verifier timed out"
    return result.stderr.strip() or result.stdout.strip() or f"verifier exited {result.returncode}"


def _verify_batch(texts: Sequence[str], toolchain: Toolchain, limits: Limits) -> list[str | None]:
    starts, line, pieces = [], 1, []
    for text in texts:
        body = text if text.endswith("\n") else text + "\n"
        starts.append(line)
        pieces.append(body)
        line += body.count("\n") + 1  # +1 for the marker line
    with temp_dir("verify") as tmp:
        path = os.path.join(tmp, "batch.mlir")
        write_text(path, "".join(p + SPLIT_MARKER + "\n" for p in pieces[:-1]) + pieces[-1])
        # Errors are attributed to modules by their line in the batch file, so stderr is kept whole.
        batch_limits = Limits(limits.timeout, limits.memory_bytes, max(limits.output_bytes, 64 << 20))
        result = run_sandboxed(verify_argv(toolchain, path, split=True), batch_limits)
    if result.ok:
        return [None] * len(texts)
    errors: list[list[str]] = [[] for _ in texts]
    all_errors = re.findall(r"error: ", result.stderr)
    located = list(_LOCATED_ERROR.finditer(result.stderr))
    for match in located:
        line_no = int(match.group(1))
        index = max(i for i, start in enumerate(starts) if start <= line_no)
        errors[index].append(match.group(2))
    if result.timed_out or result.signal is not None or len(located) < len(all_errors) or not located:
        # A crash, a timeout, or an error without a location: find the culprits one by one.
        return [_verify_one(text, toolchain, limits) for text in texts]
    return ["\n".join(found) if found else None for found in errors]


def compile_module(
    toolchain: Toolchain,
    backend: Backend,
    mlir_path: str,
    vmfb_path: str,
    limits: Limits = DEFAULT_BUDGET.compile,
    extra_flags: Sequence[str] = (),
) -> ProcessResult:
    flags = backend.compile_flags(toolchain.probe)
    assert flags is not None, f"{backend.name} does not compile with this toolchain"
    # The dump flag names the failing pass in the compiler's own words; it costs nothing on a
    # compile that passes, and the dumped IR itself is dropped (only each dump's header is kept).
    # Users' commands (`compile_command`) never carry it.
    argv = [str(toolchain.compile_bin), mlir_path, *flags, *extra_flags, PRINT_IR_AFTER_FAILURE, "-o", vmfb_path]
    result = run_sandboxed(argv, limits if limits.abort_grace else replace(limits, abort_grace=COMPILE_ABORT_GRACE))
    if result.returncode == 0:
        return result
    folds = own_folders(argv)
    return replace(result, stderr=clean_output(result.stderr, folds), stdout=fold_paths(result.stdout, folds))


def compile_command(toolchain: Toolchain, backend: Backend, mlir_name: str, vmfb_name: str) -> list[str]:
    """The plain command a user can paste to see the compile (without our sandbox)."""
    flags = backend.compile_flags(toolchain.probe) or ()
    return ["iree-compile", mlir_name, *flags, "-o", vmfb_name]


def run_module(
    toolchain: Toolchain,
    backend: Backend,
    vmfb_path: str,
    inputs: Sequence[np.ndarray],
    num_results: int,
    workdir: str,
    function: str = "main",
    limits: Limits = DEFAULT_BUDGET.run,
) -> tuple[ProcessResult, list[np.ndarray] | None]:
    """Run `function` with the given inputs; returns the process result and the outputs read back
    from .npy files (None when the run failed or an output is missing)."""
    assert toolchain.run_bin is not None and backend.driver is not None
    argv = [str(toolchain.run_bin), f"--module={vmfb_path}", f"--device={backend.driver}", f"--function={function}"]
    with timed("inputs"):
        for i, array in enumerate(inputs):
            path = os.path.join(workdir, f"input{i}.npy")
            np.save(path, np.require(array, requirements="C"))
            argv.append(f"--input=@{path}")
    output_paths = [os.path.join(workdir, f"{backend.name}-output{i}.npy") for i in range(num_results)]
    argv += [f"--output=@{p}" for p in output_paths]
    result = run_sandboxed(argv, limits)
    if not result.ok:  # its paths folded, as a compile's are (triage.paths)
        folds = own_folders(argv)
        return replace(result, stderr=fold_paths(result.stderr, folds), stdout=fold_paths(result.stdout, folds)), None
    try:
        # Each output's header is read first: a wrong or hostile runtime writing a huge or
        # truncated file is refused before anything is allocated (the array cap).
        with timed("inputs"):
            return result, [load_npy(Path(p), os.path.basename(p)) for p in output_paths]
    except (OSError, SchemaError):
        return result, None
