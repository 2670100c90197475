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


def _tmux(server: str, *argv: str) -> str:
    """One tmux command on the server named `server` (`-L`). Each session gets a server of its own:
    the machine's default server may have been started by another test process or person (its
    sessions would run in that server's environment), and a server whose last session was just
    killed may still be exiting when the next session asks it for one (CI saw `new-session` fail so)."""
    done = subprocess.run([TMUX, "-L", server, *argv], capture_output=True, text=True, timeout=30)
    assert done.returncode == 0, f"tmux {' '.join(argv[:3])} failed ({done.returncode}): {done.stderr.strip()}"
    return done.stdout


def _screens(session: str, command: str, cwd: Path, timeout: float = 180) -> list[str]:
    """Every distinct screen (and what scrolled off it) of `command` run in a 110x48 terminal
    until it exits."""
    done = cwd / f"{session}.done"
    shell = f"cd {cwd} && {command}; echo $? > {done}.tmp; mv {done}.tmp {done}; sleep 60"  # whole when seen
    _tmux(session, "new-session", "-d", "-s", session, "-x", "110", "-y", "48", "-e", "TERM=xterm-256color", shell)
    screens: list[str] = []
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            screen = _tmux(session, "capture-pane", "-p", "-S", "-300", "-t", session)  # with what scrolled off
            if not screens or screen != screens[-1]:
                screens.append(screen)
            if done.exists():
                screens.append(_tmux(session, "capture-pane", "-p", "-S", "-300", "-t", session))
                break
            time.sleep(0.2)
    finally:
        subprocess.run([TMUX, "-L", session, "kill-server"], capture_output=True, timeout=30)
    assert done.exists(), "the command did not finish:\n" + (screens[-1] if screens else "")
    assert done.read_text().strip() == "0", screens[-1]
    return screens


@pytest.mark.iree
@pytest.mark.skipif(TMUX is None, reason="tmux is not installed (scripts/bootstrap.sh installs it when run as root)")
def test_live_view_in_a_terminal(tmp_path):
    name = f"sfz-live-{os.getpid()}"
    # seed 4: the first candidate hits a compiler bug (see test_dashboard's campaign)
    fuzz = (f"{SHAPEFUZZ} fuzz --ops topk --backends llvm-cpu --jobs 2 --seed 4 --no-shrink "
            "--campaign camp --corpus corpus")
    screens = _screens(name, f"{fuzz} --count 2", tmp_path)
    running = [s for s in screens if "budget" in s and "campaign camp: budget spent" not in s]
    assert running, screens[-1]
    # While it runs: a bar against the count budget with an ETA, the rate, the workers busy.
    live = running[0]
    assert BAR in live and "/ 2 candidates" in live and "ETA" in live and "/min" in live, live
    assert "workers" in live and "/2 busy" in live, live
    # The view is redrawn in place: never two copies of it on one screen.
    twice = [s for s in screens if sum(line.startswith("budget ") for line in s.splitlines()) > 1]
    assert not twice, twice[0]
    final = screens[-1]
    # At the end: the whole budget, the cause by its triage verdict, the newest cause, then the summary.
    assert "2 / 2 candidates" in final, final
    assert "compiler bug 1" in final and "newest" in final and "cause-" in final, final
    assert "findings: 1 compiler-bug cause(s)" in final
    assert final.index("newest") < final.index("campaign camp: budget spent")

    # --plain on the same terminal (resuming the spent campaign): plain lines, no bar, no view.
    plain = _screens(name + "-plain", f"{fuzz} --count 2 --plain", tmp_path)
    assert not any(BAR in s or "ETA" in s for s in plain), plain[-1]
    assert "resuming after 2 candidates" in plain[-1] and "2 candidates in" in plain[-1], plain[-1]


def _drawn(renderable) -> str:
    import io

    from rich.console import Console

    out = io.StringIO()
    Console(file=out, width=110, color_system=None).print(renderable)
    return out.getvalue()


def test_views_draw_the_time_budget_and_the_shrink_state():
    """The frames themselves (no compiler): a time budget's bar and ETA, causes by verdict in
    the verdicts' order; a shrink's time budget, steps and sizes before and now."""
    import io

    from shapefuzz.campaign.engine import Snapshot
    from shapefuzz.campaign.report.live import CampaignView, ShrinkView
    from shapefuzz.shrink.engine import Accepted
    from shapefuzz.size import measure

    view = CampaignView("camp", stream=io.StringIO())
    view("tick", Snapshot(done=40, session_done=10, rate_per_min=12.0, buckets=5, causes=4, findings=2, flaky=1,
                          newest="", active=600.0, left=1200.0, count_left=None, in_flight=2, lanes=("a", "b"),
                          jobs=2, seconds_limit=1800.0, by_triage={"target limit": 1, "compiler bug": 2, "ours": 1},
                          newest_causes=("cause-1 (compiler bug) a/compile/error: x",)))
    frame = _drawn(view.render())
    view.close()
    assert "10m00s / 30m00s" in frame and "ETA 20m00s" in frame and "12.0/min" in frame and "workers 2/2 busy" in frame
    assert frame.index("compiler bug 2") < frame.index("target limit 1") < frame.index("ours 1")
    assert "buckets 5 (+1 flaky)" in frame and "cause-1 (compiler bug)" in frame

    text = "func.func @f(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {\n  return %a : tensor<4x4xf32>\n}\n"
    shrink = ShrinkView("big.mlir", text * 3, 600.0, stream=io.StringIO())
    shrink.step(Accepted("drop_ops", 1.0, text), measure(text))
    frame = _drawn(shrink.render())
    shrink.close()
    assert "big.mlir" in frame and "/ 10m00s" in frame and "1 accepted, last by drop_ops" in frame
    assert f"lines {measure(text * 3).lines} -> {measure(text).lines}" in frame
