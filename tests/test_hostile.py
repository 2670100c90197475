"""Hostile input, full disks and kills (issue 12): each probe gets one line on stderr, the promised
exit code (2 for bad input and our own files failing, 3 for unreadable corpus entries, never 1,
which means a finding), no traceback, nothing written outside the working folder and nothing left
running. The compilers here are fakes: these tests are about faults, not about IREE."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from campaign_fakes import fake_env, make_fake_iree  # noqa: E402

SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")
PY = sys.executable


def run(tmp: Path, *args: str, fake: bool = True, env_extra: dict | None = None, timeout: float = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    argv = [SHAPEFUZZ]
    if fake:
        argv += ["--iree-bin", str(make_fake_iree(tmp / "bin"))]
    env = fake_env(tmp, "ok", **(env_extra or {}))
    return subprocess.run(argv + list(args), capture_output=True, text=True, timeout=timeout, env=env,
                          cwd=cwd or tmp)


def one_line(result: subprocess.CompletedProcess, code: int, *needles: str) -> str:
    """The promise: exit `code`, one line on stderr, no traceback; returns the line."""
    err = result.stderr.strip()
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    assert result.returncode == code, (result.returncode, result.stdout, result.stderr)
    assert len(err.splitlines()) == 1, err
    for needle in needles:
        assert needle in err, err
    return err


def snapshot(folder: Path) -> dict[str, tuple[int, int]]:
    """Every path under `folder` with its size and mtime: to show nothing outside changed."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            path = Path(root) / name
            st = path.lstat()
            out[str(path)] = (st.st_size, st.st_mtime_ns)
    return out


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


# ----------------------------------------------------------------------------- kill -9 of a campaign

SETSID_COMPILER = textwrap.dedent("""\
    #!{py}
    # A compiler whose child calls setsid (leaves the process group and session) and lives on.
    import os, sys, time
    argv = sys.argv[1:]
    if '--version' in argv:
        print('IREE compiler version 3.13.0'); sys.exit(0)
    if any(a.startswith('--help') for a in argv):
        print({help!r}); sys.exit(0)
    if '-' in argv:
        sys.exit(0)
    piddir = os.environ['FAKE_PIDDIR']
    if os.fork() == 0:
        os.setsid()
        open(os.path.join(piddir, f'escaped-{{os.getpid()}}'), 'w').close()
        time.sleep(300)
        os._exit(0)
    open(os.path.join(piddir, f'compiler-{{os.getpid()}}'), 'w').close()
    slow = os.path.exists(os.path.join(piddir, 'slow'))
    time.sleep(30 if slow else float(os.environ.get('FAKE_SLEEP', '0.3')))
    sys.stderr.write(argv[0] + ':3:5: error: fake failure\\n')
    sys.exit(1)
    """)


def _setsid_toolchain(tmp: Path) -> Path:
    from campaign_fakes import HELP

    folder = make_fake_iree(tmp / "bin")
    compiler = folder / "iree-compile"
    compiler.write_text(SETSID_COMPILER.format(py=PY, help=HELP))
    compiler.chmod(compiler.stat().st_mode | stat.S_IXUSR)
    return folder


def _pids(piddir: Path, kind: str) -> list[int]:
    return [int(p.name.split("-")[1]) for p in piddir.glob(f"{kind}-*")]


def _descendants(root: int) -> set[int]:
    found, frontier = set(), [root]
    while frontier:
        pid = frontier.pop()
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    kids = [int(k) for k in handle.read().split()]
                found.update(kids)
                frontier += kids
        except OSError:
            continue
    return found


def _in_session(sid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                fields = open(f"/proc/{name}/stat").read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[3]) == sid and fields[0] != "Z":
                out.append(int(name))
    return out


def test_kill_9_of_a_campaign_leaves_nothing_running_and_writes_nothing(tmp_path):
    piddir = tmp_path / "pids"
    piddir.mkdir()
    camp = tmp_path / "camp"
    argv = [SHAPEFUZZ, "--iree-bin", str(_setsid_toolchain(tmp_path)), "fuzz", "--campaign", str(camp),
            "--count", "200", "--ops", "topk,scatter", "--backends", "rocm-gfx942,rocm-gfx90a", "--jobs", "2"]
    env = fake_env(tmp_path, "ok", FAKE_PIDDIR=str(piddir), FAKE_SLEEP="1")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        deadline = time.time() + 90
        while time.time() < deadline and len(_pids(piddir, "escaped")) < 3:
            time.sleep(0.1)
        assert len(_pids(piddir, "escaped")) >= 3, "the fake compiler never ran"
        (piddir / "slow").touch()  # from now on each compile takes 30 s: a worker would sit in one
        family = _descendants(proc.pid)
        assert family, "no workers seen"
        os.kill(proc.pid, signal.SIGKILL)  # the campaign alone, as a crash or the OOM killer would
        proc.wait()
        time.sleep(1.5)
        left = [p for p in family | set(_pids(piddir, "escaped")) | set(_pids(piddir, "compiler")) if alive(p)]
        assert not left, f"still running 1.5 s after kill -9: {left}"
        corpus_before = snapshot(camp / "corpus") if (camp / "corpus").exists() else {}
        escaped, compilers = _pids(piddir, "escaped"), _pids(piddir, "compiler")
        time.sleep(3.0)  # a worker finishing its task would start a new compile or save by now
        left = [p for p in family | set(escaped) | set(compilers) if alive(p)]
        assert not left, f"still running after kill -9: {left}"
        assert not [p for p in _in_session(proc.pid) if alive(p)]
        assert _pids(piddir, "compiler") == compilers or set(_pids(piddir, "compiler")) == set(compilers)
        after = snapshot(camp / "corpus") if (camp / "corpus").exists() else {}
        assert after == corpus_before, "the corpus was written after the kill"
    finally:
        for pid in _pids(piddir, "escaped") + _pids(piddir, "compiler"):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass


def test_setsid_grandchild_of_a_sandboxed_call_is_killed(tmp_path):
    from shapefuzz.sandbox import Limits, run_sandboxed

    pidfile = tmp_path / "pid"
    code = textwrap.dedent(f"""\
        import os, time
        if os.fork() == 0:
            os.setsid()
            open({str(pidfile)!r}, 'w').write(str(os.getpid()))
            time.sleep(300)
            os._exit(0)
        time.sleep(0.3)
        """)
    result = run_sandboxed([PY, "-c", code], Limits(timeout=30))
    assert result.ok
    pid = int(pidfile.read_text())
    time.sleep(0.2)
    assert not alive(pid)


def test_output_is_capped_while_the_child_runs(tmp_path):
    """2 GB of stderr would have gone to a temporary file; now it is read and dropped as it comes."""
    from shapefuzz.sandbox import Limits, run_sandboxed

    code = "import sys\nblock = 'e' * (1 << 20)\nfor _ in range(300): sys.stderr.write(block)\nprint('done')"
    result = run_sandboxed([PY, "-c", code], Limits(timeout=60, output_bytes=4096), cwd=str(tmp_path))
    assert result.ok and result.stdout.strip() == "done"
    assert len(result.stderr) < 4096 + 100 and "bytes cut" in result.stderr
    assert not list(tmp_path.iterdir())
