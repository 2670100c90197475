"""The live terminal view as a person sees it: a real short campaign run inside tmux (a real
pseudo-terminal), its screen read while it runs and when it ends; then `--plain` on the same
terminal, which keeps to plain lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")
TMUX = shutil.which("tmux")
BAR = "━"


def _tmux(*argv: str) -> str:
    return subprocess.run([TMUX, *argv], capture_output=True, text=True, timeout=30, check=True).stdout


def _screens(session: str, command: str, cwd: Path, timeout: float = 180) -> list[str]:
    """Every distinct screen of `command` run in a 110x30 terminal until it exits."""
    done = cwd / f"{session}.done"
    shell = f"cd {cwd} && {command}; echo $? > {done}; sleep 60"
    _tmux("new-session", "-d", "-s", session, "-x", "110", "-y", "48", "-e", "TERM=xterm-256color", shell)
    screens: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = _tmux("capture-pane", "-p", "-t", session)
            if not screens or screen != screens[-1]:
                screens.append(screen)
            if done.exists():
                screens.append(_tmux("capture-pane", "-p", "-t", session))
                break
            time.sleep(0.2)
    finally:
        subprocess.run([TMUX, "kill-session", "-t", session], capture_output=True, timeout=30)
    assert done.exists(), "the command did not finish:\n" + (screens[-1] if screens else "")
    assert done.read_text().strip() == "0", screens[-1]
    return screens


@pytest.mark.iree
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (scripts/bootstrap.sh installs it when run as root)")
def test_live_view_in_a_terminal(tmp_path):
    name = f"sfz-live-{os.getpid()}"
    fuzz = (f"{SHAPEFUZZ} fuzz --ops topk --backends llvm-cpu --jobs 2 --seed 0 --no-shrink "
            "--campaign camp --corpus corpus")
    screens = _screens(name, f"{fuzz} --count 3", tmp_path)
    running = [s for s in screens if "budget" in s and "campaign camp: budget spent" not in s]
    assert running, screens[-1]
    # While it runs: a bar against the count budget with an ETA, the rate, the workers busy.
    live = running[0]
    assert BAR in live and "/ 3 candidates" in live and "ETA" in live and "/min" in live, live
    assert "workers" in live and "/2 busy" in live, live
    # The view is redrawn in place: never two copies of it on one screen.
    twice = [s for s in screens if sum(line.startswith("budget ") for line in s.splitlines()) > 1]
    assert not twice, twice[0]
    final = screens[-1]
    # At the end: the whole budget, the cause by its triage verdict, the newest cause, then the summary.
    assert "3 / 3 candidates" in final, final
    assert "compiler bug 1" in final and "newest" in final and "cause-" in final, final
    assert "findings: 1 compiler-bug cause(s)" in final
    assert final.index("newest") < final.index("campaign camp: budget spent")

    # --plain on the same terminal (resuming the spent campaign): plain lines, no bar, no view.
    plain = _screens(name + "-plain", f"{fuzz} --count 3 --plain", tmp_path)
    assert not any(BAR in s or "ETA" in s for s in plain), plain[-1]
    assert "resuming after 3 candidates" in plain[-1] and "3 candidates in" in plain[-1], plain[-1]
