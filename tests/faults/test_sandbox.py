import sys
import time

from shapefuzz.process.sandbox import GIB, Limits, run_sandboxed
from shapefuzz.triage.failing_pass import failing_pass
from shapefuzz.triage.identity import identity_of
from support.fakes import process_alive

PY = sys.executable


def test_normal_exit_captures_output():
    result = run_sandboxed([PY, "-c", "import sys; print('out'); print('err', file=sys.stderr)"])
    assert result.ok and result.stdout.strip() == "out" and result.stderr.strip() == "err"
    assert result.signal is None and not result.timed_out


def test_nonzero_exit_is_not_ok():
    result = run_sandboxed([PY, "-c", "raise SystemExit(3)"])
    assert not result.ok and result.returncode == 3


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "pids"
    code = (
        "import subprocess, sys, time\n"
        f"child = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
        "time.sleep(600)\n"
    )
    start = time.monotonic()
    result = run_sandboxed([PY, "-c", code], Limits(timeout=2.0))
    assert result.timed_out and result.returncode is None
    assert time.monotonic() - start < 10
    grandchild = int(pidfile.read_text())
    time.sleep(0.2)
    assert not process_alive(grandchild)


def test_grandchild_left_behind_after_exit_is_killed(tmp_path):
    pidfile = tmp_path / "pid"
    code = (
        "import subprocess\n"
        f"child = subprocess.Popen([{PY!r}, '-c', 'import time; time.sleep(600)'])\n"
        f"open({str(pidfile)!r}, 'w').write(str(child.pid))\n"
    )
    result = run_sandboxed([PY, "-c", code], Limits(timeout=20))
    assert result.ok
    time.sleep(0.2)
    assert not process_alive(int(pidfile.read_text()))


def test_memory_cap_is_reported_as_out_of_memory():
    code = "blocks = []\nwhile True: blocks.append(bytearray(64 << 20))"
    result = run_sandboxed([PY, "-c", code], Limits(timeout=60, memory_bytes=GIB))
    assert result.out_of_memory and not result.ok


def test_signal_is_recorded():
    result = run_sandboxed([PY, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"])
    assert result.signal == 11 and not result.ok


def test_output_is_cut_to_the_limit_keeping_head_and_tail():
    code = "import sys; sys.stdout.write('HEAD' + 'x' * 100000 + 'TAIL')"
    result = run_sandboxed([PY, "-c", code], Limits(timeout=20, output_bytes=1000))
    assert result.stdout.startswith("HEAD") and result.stdout.endswith("TAIL")
    assert len(result.stdout) < 1200 and "bytes cut" in result.stdout


def test_a_cut_output_keeps_the_dump_headers_of_its_middle():
    # a failing link step prints the whole LLVM module after the header that names the pass: with
    # the header in the cut middle, the same failure had no pass on a large module (identity "[?]")
    header = ("// -----// IR Dump After SerializeTargetExecutablesPass Failed: iree-hal-serialize-target-executables"
              "{debug-level=2 target=llvm-cpu} //----- //")
    code = ("import sys\n"
            "w = sys.stderr.write\n"
            "w('error: undefined symbol: fmaxf\\n' + 'llvm.fadd %1, %2\\n' * 3000)\n"
            f"w({header!r} + '\\n')\n"
            "for _ in range(40): w('  llvm.store %117, %118 : vector<32xf16>\\n' * 500)\n"
            "w('// -----// IR Dump After SerializeAllExecutablesPass Failed: '\n"
            "  'iree-hal-serialize-all-executables //----- //\\n')\n"
            "w('llvm.return\\n' * 100 + 'TAIL')\n")
    result = run_sandboxed([PY, "-c", code], Limits(timeout=20, output_bytes=4000))
    err = result.stderr
    assert err.startswith("error: undefined symbol: fmaxf") and err.endswith("TAIL") and "bytes cut" in err
    assert header + "\n" in err and len(err) < 4000 + len(header) + 200
    assert failing_pass(err) == "iree-hal-serialize-target-executables"
    # the header no longer cut away: the two sizes of one failure are one identity
    small = "error: undefined symbol: fmaxf\n" + header + "\n  llvm.return\n"
    assert identity_of("compile", "error", "undefined symbol: fmaxf", err).key == \
        identity_of("compile", "error", "undefined symbol: fmaxf", small).key


def test_stdin_text_is_fed():
    result = run_sandboxed([PY, "-c", "import sys; print(sys.stdin.read().upper())"], stdin_text="abc")
    assert result.stdout.strip() == "ABC"


def test_children_die_with_a_killed_caller(tmp_path):
    # A campaign worker killed by SIGKILL must not leave its compiler running.
    import os
    import signal
    import subprocess

    pidfile = tmp_path / "pid"
    sleeper = tmp_path / "sleeper.py"
    sleeper.write_text(f"import os, time\nopen({str(pidfile)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)\n")
    caller = tmp_path / "caller.py"
    caller.write_text(
        "from shapefuzz.process.sandbox import Limits, run_sandboxed\n"
        f"run_sandboxed([{PY!r}, {str(sleeper)!r}], Limits(timeout=600))\n"
    )
    proc = subprocess.Popen([PY, str(caller)])
    for _ in range(400):
        if pidfile.exists() and pidfile.read_text():
            break
        time.sleep(0.05)
    child = int(pidfile.read_text())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    time.sleep(0.3)
    assert not process_alive(child)
