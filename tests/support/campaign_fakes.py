"""Fake IREE tools for the campaign's fault-injection tests: tiny shell scripts that answer the
toolchain probe like IREE 3.13 and then misbehave as FAKE_IREE_MODE says."""

from __future__ import annotations

import os
import stat
from pathlib import Path

HELP = """  --iree-hal-target-device=<string>
  --iree-hal-local-target-device-backends=<string>
  --iree-llvmcpu-target-cpu=<string>
  --iree-rocm-target=<string>
  --iree-cuda-target=<string>
"""

# mode "mix": the candidate's checksum picks one fault; "words": an ordinary error whose message
# depends on the candidate (a few distinct buckets); others: every candidate the same way.
COMPILE = r"""#!/bin/sh
case "$1" in
  --version) echo "IREE compiler version 3.13.0"; exit 0 ;;
  --help*) cat <<'HELP'
@HELP@HELP
  exit 0 ;;
esac
in="$1"
mode="${FAKE_IREE_MODE:-ok}"
[ -n "$FAKE_IREE_LOG" ] && echo "$(ulimit -v) $*" >> "$FAKE_IREE_LOG"
sum=$(cksum < "$in" | cut -d' ' -f1)
if [ "$mode" = mix ]; then
  case $((sum % 5)) in 0) mode=segv ;; 1) mode=hang ;; 2) mode=oom ;; 3) mode=garbage ;; 4) mode=words ;; esac
fi
[ -n "$FAKE_IREE_DELAY" ] && sleep "$FAKE_IREE_DELAY"
case "$mode" in
  segv) echo "Stack dump:" >&2; kill -SEGV $$ ;;
  hang) exec sleep 60 ;;
  oom) exec python3 -c 'import ctypes, sys
libc = ctypes.CDLL(None); libc.malloc.restype = ctypes.c_void_p
while libc.malloc(1 << 28):  # address space only, never touched
    pass
print("LLVM ERROR: out of memory", file=sys.stderr); sys.exit(1)' ;;
  garbage) head -c 2000 /dev/urandom; head -c 500 /dev/urandom >&2; exit 3 ;;
  enospc) echo "LLVM ERROR: IO failure on output stream: No space left on device" >&2; exit 1 ;;
  words)
    case $((sum % 3)) in 0) w=alpha ;; 1) w=beta ;; 2) w=gamma ;; esac
    echo "$in:3:5: error: fake failure of kind $w" >&2; exit 1 ;;
esac
while [ $# -gt 0 ]; do [ "$1" = -o ] && { shift; echo vmfb > "$1"; }; shift; done
exit 0
"""

OPT = """#!/bin/sh
exit 0
"""

RUN = """#!/bin/sh
case "$1" in --list_devices*) echo "local-task://"; echo "local-sync://"; exit 0 ;; esac
exit 1
"""


def make_fake_iree(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in (("iree-compile", COMPILE.replace("@HELP@", HELP)), ("iree-opt", OPT), ("iree-run-module", RUN)):
        path = folder / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return folder


def fake_env(tmp: Path, mode: str, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update({"XDG_CACHE_HOME": str(tmp / "cache"), "FAKE_IREE_MODE": mode, **extra})
    env.pop("SHAPEFUZZ_IREE_BIN", None)
    return env
