"""Signals and processes, hostile (issue 36, defects 8-13 and the stray SIGKILL): every long
command that stops on SIGINT or SIGTERM stops promptly, keeps what it finished and still exits 130
or 143; a SIGKILL shapefuzz did not send is never a crash finding unconfirmed, and no kill of
ours reaches a process group or session whose number was given to someone else (pid reuse).
The compilers are fakes where a test is about fault handling; Ray tests start their own head."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.hostile import PLAIN_MLIR, SHAPEFUZZ, hostile_entry, alive, one_line  # noqa: F401

PY = sys.executable


def _wait_for(predicate, seconds: float = 60.0, what: str = "") -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not predicate():
        time.sleep(0.05)
    assert predicate(), f"timed out waiting for {what}"


def _compile_log(path: Path) -> bool:
    return path.exists() and path.stat().st_size > 0


# ----------------------------------------------------------------------------- the stray SIGKILL


def _sleeper() -> subprocess.Popen:
    return subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True)


def _given_the_number(pid: int) -> subprocess.Popen | None:
    """A new group leader that gets the number `pid` again: a real reuse, arranged by setting the
    kernel's last pid (/proc/sys/kernel/ns_last_pid, where this user may); None where it cannot be."""
    for _ in range(20):  # another process on the machine may take the number first
        try:
            Path("/proc/sys/kernel/ns_last_pid").write_text(str(pid - 1))
        except OSError:
            return None
        proc = _sleeper()
        if proc.pid == pid:
            return proc
        proc.kill()
        proc.wait()
    return None


def test_the_guardian_leaves_a_group_whose_number_was_reused():
    """The root of the stray SIGKILL: a group number the guardian kept (a `+PGID` never withdrawn)
    is given to another process once pid_max (32768 here) comes round; at its command's exit the
    guardian killed that stranger's group (another shapefuzz's `iree-run-module`, reported as a
    crash: SIGKILL). Each group is now kept with its leader's start time and left alone when the
    number names another process."""
    from shapefuzz.process import guardian
    gone = _sleeper()  # a compiler of ours, announced to the guardian and never withdrawn
    recorded = guardian.start_time(gone.pid)
    gone.kill()
    gone.wait()
    # start times are in clock ticks (10 ms): a number given again within the same tick would name
    # "the same process" (as no real reuse after pid_max comes round can), so let a few ticks pass
    time.sleep(0.1)
    stranger = _given_the_number(gone.pid)
    if stranger is None:  # no way to reuse a number here: the same record, made by hand
        stranger = _sleeper()
        recorded = guardian.start_time(stranger.pid) - 100
    ours = _sleeper()
    try:
        owner = subprocess.Popen([PY, "-c", "pass"])  # the command
        keeper = subprocess.Popen([PY, "-I", "-S", guardian.__file__, str(owner.pid)], stdin=subprocess.PIPE, text=True)
        owner.wait()  # it was killed: its guardian's pipe closes
        keeper.communicate(f"+{stranger.pid}:{recorded}\n+{ours.pid}:{guardian.start_time(ours.pid)}\n", timeout=30)
        assert ours.wait(timeout=10) == -signal.SIGKILL  # a group still ours is killed
        assert stranger.poll() is None, "the guardian killed a group whose number had been reused"
    finally:
        for proc in (stranger, ours):
            proc.kill()
            proc.wait()


def test_a_stale_session_number_never_makes_a_child_a_stray():
    """The sandbox remembers its children's sessions to catch a compiler's orphans; a number kept
    after its session ended, now a new child's session (pid reuse), is not one of them."""
    from shapefuzz.process import guardian, sandbox
    child = subprocess.Popen([PY, "-c", "import time; time.sleep(60)"], start_new_session=True)
    try:
        started = guardian.start_time(child.pid)
        sandbox.become_subreaper()
        sandbox._sessions[child.pid] = started - 100  # an earlier sandbox child that had this number
        assert sandbox.kill_strays(patience=1.0) == 0 and child.poll() is None
        sandbox._sessions[child.pid] = started  # the same process: one of a compiler's strays
        assert sandbox.kill_strays(patience=1.0) == 1 and not alive(child.pid)  # (killed and reaped)
    finally:
        sandbox._sessions.pop(child.pid, None)
        if child.poll() is None:
            child.kill()
            child.wait()


def test_a_child_started_by_another_thread_is_never_taken_for_a_stray(monkeypatch):
    """kill_strays in one thread read the live children, let go of the lock, then listed the
    process's children: a compile another thread started in between carried the sandbox mark and
    was killed as a stray (onnx-suite, replay and shrink run sandboxed calls on threads). Here the
    listing waits for that other thread's next compile, which the fixed sandbox holds back."""
    from shapefuzz.process import sandbox
    listing = sandbox._children

    def listing_once_another_child_started() -> list[int]:
        if threading.current_thread() is not threading.main_thread():
            return listing()  # (the compiling thread's own sweeps)
        before = set(sandbox._live)
        deadline = time.monotonic() + 2.0
        while time.monotonic() < deadline and not set(sandbox._live) - before:
            time.sleep(0.01)
        return listing()

    results, stop = [], threading.Event()

    def compiles() -> None:
        while not stop.is_set():
            results.append(sandbox.run_sandboxed([PY, "-c", "import time; time.sleep(0.3)"]))

    thread = threading.Thread(target=compiles)
    thread.start()
    try:
        _wait_for(lambda: bool(sandbox._live), 30, "the other thread's first compile")
        monkeypatch.setattr(sandbox, "_children", listing_once_another_child_started)
        killed = sandbox.kill_strays(patience=3.0)
        monkeypatch.setattr(sandbox, "_children", listing)
    finally:
        stop.set()
        thread.join(30)
    assert killed == 0 and all(r.returncode == 0 for r in results), (killed, [r.signal for r in results])


def test_a_forked_child_does_not_write_into_its_parents_guardian():
    from shapefuzz.process import sandbox
    saved = list(sandbox._guardian)
    sandbox._guardian[:] = [object(), True]
    try:
        pid = os.fork()
        if pid == 0:
            os._exit(0 if sandbox._guardian == [None, False] else 1)
        assert os.waitpid(pid, 0)[1] == 0
    finally:
        sandbox._guardian[:] = saved


def _kill_once(folder: Path, mark: Path, always: bool = False) -> Path:
    """The fake toolchain, its compiler killed by SIGKILL from outside on its first compile (or on
    every one): what the OOM killer or a stray kill does to a compiler that did nothing wrong."""
    make_fake_iree(folder)
    real = folder / "iree-compile.real"
    (folder / "iree-compile").rename(real)
    gate = "" if always else f'[ -e "{mark}" ] && exec "{real}" "$@"\n'
    (folder / "iree-compile").write_text(
        f'#!/bin/sh\ncase "$1" in --version|--help*) exec "{real}" "$@" ;; esac\n'
        f'case "$*" in *" -o "*) ;; *) exec "{real}" "$@" ;; esac\n'
        f'{gate}touch "{mark}"\nkill -KILL $$\n')
    (folder / "iree-compile").chmod(0o755)
    return folder


@pytest.mark.parametrize("always", [False, True])
def test_a_sigkill_from_outside_is_not_a_crash_finding_unconfirmed(tmp_path, always):
    """No program crashes with SIGKILL: killed once, the compile runs again and its own end is the
    result (check passes); killed again, the crash stands (confirmed)."""
    source = tmp_path / "in.mlir"
    source.write_text(PLAIN_MLIR)
    folder = _kill_once(tmp_path / "bin", tmp_path / "killed-once", always)
    result = subprocess.run([SHAPEFUZZ, "--iree-bin", str(folder), "check", str(source), "--backends", "rocm-gfx942"],
                            capture_output=True, text=True, timeout=120, env=fake_env(tmp_path, "ok"), cwd=tmp_path)
    assert (tmp_path / "killed-once").exists(), "the fake never killed a compile"
    if always:
        assert result.returncode == 1 and "SIGKILL" in result.stdout + result.stderr, result.stdout + result.stderr
    else:
        assert result.returncode == 0, result.stdout + result.stderr


# ----------------------------------------------------------------------------- exit codes (12)


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_campaign_writes_its_summary_and_exits_130_or_143(tmp_path, sig, code):
    """A graceful stop (summary, report, store intact, resumable) that CI cannot read as success."""
    camp, log = tmp_path / "camp", tmp_path / "compiles.log"
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz", "--count", "2", "--ops", "topk",
            "--backends", "rocm-gfx942", "--no-shrink", "--jobs", "1", "--campaign", str(camp),
            "--corpus", str(tmp_path / "corpus"), "--plain"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=fake_env(tmp_path, "hang", FAKE_IREE_LOG=str(log)))
    try:
        _wait_for(lambda: _compile_log(log) or proc.poll() is not None, what="the first compile")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code and "Traceback" not in err, (proc.returncode, err)
    assert f"campaign {camp}: interrupted" in out and (camp / "report.md").exists(), out
    con = sqlite3.connect(camp / "campaign.sqlite")  # intact, and released: the same command resumes it
    try:
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT value FROM meta WHERE key = 'stopped'").fetchone()[0] == "interrupted"
    finally:
        con.close()


# ----------------------------------------------------------------------------- onnx-suite, replay (8)


def _hanging_toolchain(tmp: Path) -> Path:
    """A compiler that hangs (and says so in FAKE_PIDFILE), beside the real iree-opt and runtime."""
    from support.fakes import make_fake_toolchain

    return make_fake_toolchain(tmp / "bin", "hang")


@pytest.mark.parametrize("sig,code,word", [(signal.SIGTERM, 143, "terminated")])  # (SIGINT: the same path)
def test_onnx_suite_stops_at_once_on_a_signal(tmp_path, sig, code, word):
    """The executor used to wait for every queued node test (ten minutes for the real suite)."""
    pidfile = tmp_path / "compiler.pid"
    argv = [SHAPEFUZZ, "--iree-bin", str(_hanging_toolchain(tmp_path)), "onnx-suite", "--ops", "TopK",
            "--backends", "llvm-cpu", "--jobs", "2", "--no-confirm"]
    env = dict(fake_env(tmp_path, "ok"), FAKE_PIDFILE=str(pidfile))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env)
    try:
        _wait_for(lambda: _compile_log(pidfile) or proc.poll() is not None, 120, "the first compile")
        compiler = [int(p) for p in pidfile.read_text().split()]
        start = time.monotonic()
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code and "Traceback" not in err, (proc.returncode, err)
    assert took < 20 and f"shapefuzz: {word}: 0 of " in err, (took, err)
    assert "pass/fail/unsupported per op and lane" in out
    assert not [p for p in compiler if alive(p)], "a compiler outlived onnx-suite"


def test_replay_stops_at_once_on_sigterm(tmp_path):
    corpus = tmp_path / "corpus"
    for n in range(3):
        hostile_entry(corpus, f"boom {n}")
    log = tmp_path / "compiles.log"
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "replay", str(corpus), "--jobs", "2"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=fake_env(tmp_path, "hang", FAKE_IREE_LOG=str(log)))
    try:
        _wait_for(lambda: _compile_log(log) or proc.poll() is not None, what="the first compile")
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and time.monotonic() - start < 20, (proc.returncode, err)
    assert "shapefuzz: terminated: only the 0 entries above were replayed" in err and "Traceback" not in err, err


def test_shrink_stopped_keeps_its_best_and_exits_143(tmp_path):
    """Its trials on other threads are killed, not waited for; the best so far is written."""
    from support.hostile import generated_case  # noqa: F401

    out = tmp_path / "out.mlir"
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "shrink", str(generated_case(tmp_path)),
            "--backends", "rocm-gfx942", "--jobs", "2", "--plain", "-o", str(out)]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                            env=fake_env(tmp_path, "words", FAKE_IREE_DELAY="0.5"))
    try:
        for line in proc.stderr:
            if "trial compile timeout" in line:  # the passes begin
                break
        time.sleep(1.0)
        start = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        stdout, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 143 and time.monotonic() - start < 20 and "Traceback" not in err, (proc.returncode, err)
    assert "(stopped: interrupted)" in stdout and out.exists(), stdout


# ----------------------------------------------------------------------------- --cluster (9-11, 13)


def test_a_cluster_port_of_5000_digits_is_one_line(tmp_path):
    for address in ("127.0.0.1:" + "9" * 5000, "ray://host:65536"):
        result = subprocess.run([SHAPEFUZZ, "fuzz", "--cluster", address, "--count", "1", "--campaign",
                                 str(tmp_path / "c")], capture_output=True, text=True, timeout=60, cwd=tmp_path)
        line = one_line(result, 2, "--cluster", "the port from 1 to 65535")
        assert len(line) < 400, line
    assert not (tmp_path / "c").exists()


NODE = {"num_cpus": 2, "object_store_memory": 80 << 20, "include_dashboard": False}


@pytest.fixture(scope="module")
def head(tmp_path_factory):
    """A one-node cluster of our own (its head is killed by the last test), its workers'
    temporary folders in a folder the tests can watch."""
    from shapefuzz.campaign.cluster.local import keep_on_this_machine, node_args

    keep_on_this_machine()  # before Ray is imported: the node and its drivers stay on 127.0.0.1
    pytest.importorskip("ray", reason="the ray extra (pip install 'shapefuzz[ray]') is not installed")
    from ray.cluster_utils import Cluster as RayCluster

    temp = tmp_path_factory.mktemp("node-tmp")
    rc = RayCluster(initialize_head=True, head_node_args=node_args(**NODE, env_vars={"TMPDIR": str(temp)}))
    yield rc, temp
    try:
        rc.shutdown()
    except Exception:  # noqa: BLE001 - its head may be dead already
        pass


def _cluster_campaign(rc, tmp: Path, **popen) -> tuple[list[str], subprocess.Popen]:
    camp = tmp / "camp"
    argv = [SHAPEFUZZ, "fuzz", "--cluster", rc.address, "--ops", "conv", "--backends", "llvm-cpu", "--count", "200",
            "--jobs", "2", "--no-shrink", "--campaign", str(camp), "--corpus", str(tmp / "corpus"), "--plain"]
    return argv, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp, **popen)


def _started(camp: Path, temp: Path | None = None):
    def check() -> bool:
        if temp is not None:
            return any(p.name.startswith("shapefuzz-check-") for p in temp.iterdir())
        return (camp / "campaign.sqlite").exists()
    return check


@pytest.mark.ray
def test_ray_init_leaves_our_signal_handlers_in_place(head):
    """ray.init puts its own SIGTERM handler (a bare exit, Ray's stack dump, exit 1) over ours."""
    rc, _ = head
    code = ("from shapefuzz.process import interrupts; interrupts.install(); from shapefuzz.campaign.cluster.connect import connect; "
            f"connect({rc.address!r}); import signal; "
            "print(all(signal.getsignal(s) is interrupts.handler for s in interrupts.SIGNALS))")
    result = subprocess.run([PY, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.stdout.strip().endswith("True"), result.stdout + result.stderr


@pytest.mark.ray
@pytest.mark.iree
@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_stopped_cluster_campaign_exits_130_or_143_and_leaves_no_temporary_on_the_node(head, tmp_path, sig, code):
    rc, temp = head
    argv, proc = _cluster_campaign(rc, tmp_path)
    try:
        _wait_for(_started(tmp_path / "camp", temp), 120, "a check on the node")
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == code and "Traceback" not in err, (proc.returncode, err)
    assert f"campaign {tmp_path / 'camp'}: interrupted" in out, out
    # the node's tasks unwound there: their compilers killed, their folders removed (no later sweep)
    _wait_for(lambda: not list(temp.glob("shapefuzz-*")), 10, f"the node's temporary folders: {list(temp.iterdir())}")


@pytest.mark.ray
@pytest.mark.iree
def test_the_ray_head_going_away_is_one_line_a_report_and_exit_75(head, tmp_path):
    """Ray stalled for a minute, then ended the process (exit 1, no report). Runs last: it kills
    the module's head."""
    rc, temp = head
    argv, proc = _cluster_campaign(rc, tmp_path)
    try:
        _wait_for(_started(tmp_path / "camp", temp), 120, "a check on the node")
        rc.remove_node(rc.head_node, allow_graceful=False)  # SIGKILL: the head machine is gone
        start = time.monotonic()
        out, err = proc.communicate(timeout=120)
        took = time.monotonic() - start
    finally:
        if proc.poll() is None:
            proc.kill()
    line = one_line(subprocess.CompletedProcess(argv, proc.returncode, out, err), 75, "the Ray head ",
                    "the store is intact", "resume with the same command")
    # a lost connection, or (on a loaded machine, the call in flight) no answer within its wait
    assert "the Ray head went away" in line or "the Ray head did not answer within" in line, line
    assert took < 30, took
    assert (tmp_path / "camp" / "report.md").exists(), line
