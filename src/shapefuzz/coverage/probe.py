"""Whether a compiler writes the action log coverage is read from (`--log-actions-to`, in every
MLIR-based iree-compile of recent years; a user's own build may lack it or crash with it)."""

from __future__ import annotations

from shapefuzz.coverage.actionlog import LOG_FLAG
from shapefuzz.process.sandbox import Limits, run_sandboxed
from shapefuzz.iree.toolchain import Toolchain

_CACHE: dict[str, str] = {}


def action_log_support(toolchain: Toolchain) -> str:
    """"" when `iree-compile --help` lists the action-log flag, else one line saying why not."""
    binary = str(toolchain.compile_bin)
    if binary not in _CACHE:
        result = run_sandboxed([binary, "--help"], Limits(timeout=60.0))  # ~90 KB; --help-list-hidden passes the output cap
        if LOG_FLAG in result.stdout:
            _CACHE[binary] = ""
        elif not result.ok:
            _CACHE[binary] = f"{binary} --help failed (exit {result.returncode}), so {LOG_FLAG} cannot be checked"
        else:
            _CACHE[binary] = f"this iree-compile has no {LOG_FLAG} (needed to see which passes a compile ran)"
    return _CACHE[binary]
