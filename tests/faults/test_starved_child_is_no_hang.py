"""A compile that only waited for a CPU is no hang: on a loaded machine (more runnable threads than
cores) a child's timeout is moved on by the time it spent runnable but not running, up to
`STARVED_ALLOWANCE` times the timeout; a child that sleeps or blocks gets nothing back. The audit
of a campaign on a machine at load 12 found a "hang" that was a 44-CPU-second compile."""

import os
import subprocess
import sys
import time

import pytest

from shapefuzz.process.sandbox import STARVED_ALLOWANCE, Limits, run_sandboxed, starved_seconds

# Burns `n` seconds of its own CPU time on CPU 0, then exits 0.
BURN = ("import os, time; os.sched_setaffinity(0, {0}); t = time.process_time()\n"
        "while time.process_time() - t < %s: pass\n")

pytestmark = pytest.mark.skipif(not hasattr(os, "sched_setaffinity") or not os.path.exists("/proc/self/schedstat"),
                                reason="needs Linux's sched_setaffinity and /proc/PID/schedstat")


@pytest.fixture
def hogs():
    """Two busy loops on CPU 0: a child pinned there gets about a third of it."""
    # each in its own session, as the sandboxed child is: with autogrouping a session is one scheduling group,
    # so two hogs in one session would take half of CPU 0 between them, not two thirds
    procs = [subprocess.Popen([sys.executable, "-c", BURN % 60], start_new_session=True) for _ in range(2)]
    time.sleep(1.0)  # both started and pinned before the child is
    yield
    for p in procs:
        p.kill()
        p.wait()


def test_a_child_starved_of_the_cpu_is_given_that_time_back(hogs):
    # 0.6 s of CPU beside two hogs on CPU 0, each in its own session (scheduling group) as the child is,
    # takes about 1.8 s of wall clock, more on a loaded machine: past its 1 s timeout, so it finishes only
    # on time given back. (With both hogs in one session the child got half of CPU 0: 1.35 s idle, and
    # under load once 0.98 s, inside its timeout.) How much it waits
    # depends on what else runs on CPU 0 (a CI machine's other test worker may run a compile there):
    # starved past the allowance, it is stopped at the bound, 3 s, and never at its bare timeout.
    result = run_sandboxed([sys.executable, "-c", BURN % 0.6], Limits(timeout=1.0, memory_bytes=None))
    assert result.seconds > 1.2  # it ran past its timeout, on time it had waited for
    if result.timed_out:
        assert result.seconds >= 1.0 * (1 + STARVED_ALLOWANCE) - 0.05  # all the time back was given
    else:
        assert result.returncode == 0


def test_the_time_back_is_bounded(hogs):
    result = run_sandboxed([sys.executable, "-c", BURN % 30], Limits(timeout=1.0, memory_bytes=None))
    assert result.timed_out
    assert result.seconds < 1.0 * 3 + 2.0  # the timeout plus at most twice it, and the kill


def test_a_sleeping_child_gets_no_time_back():
    result = run_sandboxed(["sleep", "30"], Limits(timeout=1.0, memory_bytes=None))
    assert result.timed_out and result.seconds < 2.5


def test_starved_seconds_reads_the_run_delay(hogs):
    child = subprocess.Popen([sys.executable, "-c", BURN % 1.5])
    try:
        child.wait(timeout=30)
        assert starved_seconds(child.pid) == 0.0  # gone: the kernel no longer says
    finally:
        child.kill()
    assert starved_seconds(os.getpid()) >= 0.0
