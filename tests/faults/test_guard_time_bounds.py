"""A time bound bounds the whole step (issue 47, defect 3): `triage --bisect --bisect-time 30s` took
125 s when one old release's compile hung for its full 120 s timeout, because the bound was only
looked at between compiles. Every sandboxed call under a bound now gets at most what the bound has
left, and one the bound cuts is "time is up", never a hang. The compilers are fakes that hang:
these tests are about faults."""

from __future__ import annotations

import json
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from support.campaign_fakes import COMPILE, HELP, OPT, RUN, fake_env, make_fake_iree  # noqa: E402
from support.hostile import SHAPEFUZZ  # noqa: F401

PY = sys.executable
SLACK = 15.0  # the command's own start, summary and report, on a loaded 2-core machine


def _sleeper(seconds: float) -> list[str]:
    return [PY, "-c", f"import time; time.sleep({seconds})"]


# ----------------------------------------------------------------------------- the bound itself


def test_a_call_under_a_bound_gets_only_what_the_bound_has_left():
    from shapefuzz.process.sandbox import Limits, run_sandboxed
    from shapefuzz.process.time_bounds import time_bound

    started = time.monotonic()
    with time_bound(1.0) as bound:
        run_sandboxed(_sleeper(60), Limits(timeout=120.0))
        raise AssertionError("the call cut by the bound returned a result")  # (never reached)
    assert bound.ran_out and time.monotonic() - started < 10.0


def test_a_call_after_the_bound_ran_out_is_not_started(tmp_path):
    from shapefuzz.process.sandbox import run_sandboxed
    from shapefuzz.process.time_bounds import time_bound

    marker = tmp_path / "ran"
    with time_bound(0.0) as bound:
        run_sandboxed([PY, "-c", f"open({str(marker)!r}, 'w')"])
    assert bound.ran_out and not marker.exists()


def test_a_calls_own_shorter_timeout_is_still_a_timeout_and_an_outer_bound_holds_inside_an_inner_one():
    from shapefuzz.process.sandbox import Limits, run_sandboxed
    from shapefuzz.process.time_bounds import time_bound

    with time_bound(60.0) as roomy:
        result = run_sandboxed(_sleeper(30), Limits(timeout=0.5))  # its own limit: a timeout, as before
    assert result.timed_out and not roomy.ran_out
    started = time.monotonic()
    with time_bound(1.0) as outer:
        with time_bound(60.0) as inner:
            run_sandboxed(_sleeper(60))
    assert outer.ran_out and not inner.ran_out and time.monotonic() - started < 10.0


def test_a_bound_holds_in_the_jobs_run_parallel_starts():
    from shapefuzz.process.parallel import run_parallel
    from shapefuzz.process.sandbox import run_sandboxed
    from shapefuzz.process.time_bounds import time_bound

    started = time.monotonic()
    with time_bound(1.0) as bound:
        finished = run_parallel(lambda _: run_sandboxed(_sleeper(60)), range(2), 2)
        assert not finished.results  # each job was cut: none finished
        run_sandboxed(_sleeper(60))  # and the next call here is cut too
    assert bound.ran_out and time.monotonic() - started < 15.0


# ----------------------------------------------------------------------------- localization's seconds


def test_a_localization_with_a_hanging_compile_ends_within_its_seconds(tmp_path, monkeypatch):
    """Each compile of a localization had its own 60 s; 2 s of budget took a minute."""
    from support.fakes import make_fake_toolchain

    from shapefuzz.judge.localize_probe import localize_program
    from shapefuzz.iree.toolchain import find_toolchain

    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pid"))
    toolchain = find_toolchain(str(make_fake_toolchain(tmp_path / "bin", "hang")))
    text = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    started = time.monotonic()
    loc = localize_program(text, "llvm-cpu", [np.ones(4, np.float32)], [np.full(4, 2.0, np.float32)], toolchain,
                           ("llvm-cpu-o3",), seconds=2.0)
    took = time.monotonic() - started
    assert not loc.localized and "ran out" in loc.evidence, loc
    assert took < 2.0 + SLACK, took


# ----------------------------------------------------------------------------- triage --bisect-time


def _cached_release(tmp: Path, version: str) -> None:
    """A release in the toolchain cache whose compiler hangs on every real compile."""
    folder = tmp / "cache" / "shapefuzz" / "toolchains" / version
    bin_dir = folder / "iree" / "bin"
    bin_dir.mkdir(parents=True)
    compile_text = COMPILE.replace("@HELP@", HELP).replace("3.13.0", version).replace(
        'mode="${FAKE_IREE_MODE:-ok}"', "mode=hang").replace("exec sleep 60", "exec sleep 300")
    for name, text in (("iree-compile", compile_text), ("iree-opt", OPT), ("iree-run-module", RUN)):
        path = bin_dir / name
        path.write_text(text)
        path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    (folder / ".complete").write_text("")


def test_triage_bisect_time_bounds_a_release_whose_compile_hangs(tmp_path):
    """The tester's case: a compiler-bug cause, and an older release in the cache whose compile
    hangs for the full per-compile 120 s: `--bisect-time 3s` ends within it (it took 125 s at 30 s)."""
    env = fake_env(tmp_path, "words", SHAPEFUZZ_FETCH_RELEASES="0")
    camp = tmp_path / "camp"
    found = subprocess.run([SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz", "--count", "2",
                            "--ops", "topk", "--backends", "rocm-gfx942", "--no-shrink", "--no-bisect", "--no-localize",
                            "--jobs", "1", "--campaign", str(camp), "--corpus", str(tmp_path / "corpus"), "--json"],
                           capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert found.returncode == 0 and json.loads(found.stdout)["findings"] > 0, (found.stdout[-1500:], found.stderr[-1500:])
    _cached_release(tmp_path, "3.8.0")
    started = time.monotonic()
    triaged = subprocess.run([SHAPEFUZZ, "triage", str(camp), "--bisect", "--bisect-time", "3s", "--fetch-releases", "0"],
                             capture_output=True, text=True, timeout=400, cwd=tmp_path, env={**env, "FAKE_IREE_MODE": "ok"})
    took = time.monotonic() - started
    assert triaged.returncode == 0 and "Traceback" not in triaged.stderr, (triaged.returncode, triaged.stderr[-2000:])
    assert "regression range of" in triaged.stderr, triaged.stderr  # it did reach the hanging release
    assert "time is up" in triaged.stderr, triaged.stderr
    assert took < 3.0 + SLACK, (took, triaged.stderr[-2000:])
    assert not [line for line in triaged.stdout.splitlines() if "regression:" in line and "3.8.0" in line], \
        triaged.stdout  # no range taken from a compile the bound cut


# ----------------------------------------------------------------------------- shrink --time (and --shrink-time's tasks)


def test_a_shrink_of_a_hang_ends_within_its_time(tmp_path):
    """A hang's trials get the whole --compile-timeout, and its final re-check 30 s a compile, run
    twice: `shrink --time 20s` took 79 s. Its first check, trials and re-check are within it now;
    a re-check the limit cuts says so (not "flaky")."""
    source = tmp_path / "hang.mlir"
    source.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  %0 = arith.addf %a, %a : tensor<4xf32>\n"
                      "  %1 = arith.mulf %0, %a : tensor<4xf32>\n  return %1 : tensor<4xf32>\n}\n")
    started = time.monotonic()
    result = subprocess.run([SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "shrink", str(source),
                             "--backends", "rocm-gfx942", "--time", "20s", "--compile-timeout", "2", "--plain"],
                            capture_output=True, text=True, timeout=300, cwd=tmp_path, env=fake_env(tmp_path, "hang"))
    took = time.monotonic() - started
    assert result.returncode == 0 and "Traceback" not in result.stderr, (result.returncode, result.stderr[-2000:])
    assert "steps accepted" in result.stdout and "flaky" not in result.stdout, result.stdout
    assert took < 20.0 + SLACK, (took, result.stdout)
