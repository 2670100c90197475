"""Our environment is never a finding: a compile or run that failed because the machine ran out of
disk, hit an I/O error, or lost a file of ours (a temporary folder cleaned under it) says nothing
about the compiler. `environment_fault` tells such output apart; the execution layer raises
`EnvironmentFault` for it (a tool error: one line and exit 2 for `check`; a campaign retries the
candidate later and reports the condition). `may_be_environment` is the wider doubt for output
already cleared: a campaign believes a compile error without a re-run only where it holds none."""

from __future__ import annotations

import re
from typing import Iterable

_ANYWHERE = re.compile(r"No space left on device|Disk quota exceeded|Input/output error|Read-only file system|"
                       r"Too many open files|\bENOSPC\b|\bEIO\b")
_OWN_FILE = re.compile(r"(No such file or directory|Permission denied)")


def environment_fault(output: str, own_paths: Iterable[str] = ()) -> str | None:
    """The condition (one line) when `output` shows a failure of our environment, else None: a full
    disk or an I/O error anywhere, or a missing/unreadable file when the line names one of ours."""
    found = _ANYWHERE.search(output)
    if found:
        return found.group(0)
    own = [p for p in own_paths if p]
    for line in output.splitlines():
        missing = _OWN_FILE.search(line)
        if missing and any(p in line or p.rsplit("/", 1)[-1] in line for p in own):
            return f"{missing.group(1)}: {line.strip()[:200]}"
    return None


# Any file that could not be opened, written or found, ours or not (a compile error naming one is
# not believed without a re-run; none of 1,205 stored compile failures names one)
_ANY_FILE = re.compile(r"No such file or directory|Permission denied|(?i:"
                       r"\b(cannot|could not|couldn't|failed to|unable to) (open|create|write|read|rename|remove)\b)")


def may_be_environment(output: str) -> bool:
    """Whether `output` could be our environment's doing though `environment_fault` cleared it (it
    knew the call's own files; this does not): a full disk, an I/O error, or any file that could
    not be opened, written or found."""
    return environment_fault(output) is not None or _ANY_FILE.search(output) is not None


__all__ = ["environment_fault", "may_be_environment"]
