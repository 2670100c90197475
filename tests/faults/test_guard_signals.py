"""A signal is never lost (issue 47, defects 1 and 2). Python swallows what a garbage-collection
callback raises (Hypothesis keeps one, `gc_cumulative_time`'s): a SIGTERM that landed in it let
`bundle`, `fuzz` and `gen` run to their end and exit 0. The stop is now owed and raised at the next
safe point (each draw, each sandboxed call, each round of a loop), and a command that took a signal
never exits 0 or 1. And a SIGINT between a temporary folder's making and its cleanup's registration,
or in the middle of its removal, left an empty `shapefuzz-check-*` folder: both steps now hold the
signal until they are done. The compilers are fakes: these tests are about faults."""

from __future__ import annotations

import gc
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402

PY = sys.executable

# Runs the command (argv after the script) as the console does, with one SIGTERM raised inside a
# gc callback during the first draw: the handler runs there and Python swallows what it raises.
SWALLOWED_AT_FIRST_DRAW = r"""
import gc, signal, sys
import shapefuzz.console as console
from shapefuzz.families import generate

real = generate.draw
def swallowing(phase, info):
    signal.raise_signal(signal.SIGTERM)
def draw(*args, **kwargs):
    if generate.draw is draw:
        generate.draw = real  # once
        gc.callbacks.append(swallowing)
        try:
            gc.collect()
        finally:
            gc.callbacks.remove(swallowing)
    return real(*args, **kwargs)
generate.draw = draw
sys.argv = ["shapefuzz", *sys.argv[1:]]
console.main()
"""


def _swallowed(tmp: Path, *args: str, mode: str = "ok") -> subprocess.CompletedProcess:
    return subprocess.run([PY, "-c", SWALLOWED_AT_FIRST_DRAW, "--iree-bin", str(make_fake_iree(tmp / "bin")), *args],
                          capture_output=True, text=True, timeout=300, cwd=tmp, env=fake_env(tmp, mode))


def _stopped(result: subprocess.CompletedProcess, said: bool = True) -> None:
    assert result.returncode == 143, (result.returncode, result.stdout[-2000:], result.stderr[-2000:])
    assert "Traceback" not in result.stderr and "Exception ignored" not in result.stderr, result.stderr
    assert not said or "shapefuzz: terminated" in result.stderr, result.stderr


@pytest.fixture()
def handlers():
    """Our handlers installed in this process (the CLI's), put back after."""
    from shapefuzz.process import interrupts

    hook = sys.unraisablehook
    interrupts.forget()
    previous = interrupts.install()
    try:
        yield interrupts
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sys.unraisablehook = hook
        interrupts.forget()


def _swallow(sig: int) -> None:
    """`sig` taken inside a gc callback: the handler raises there and Python swallows it."""
    def callback(phase, info):
        if phase == "start":
            signal.raise_signal(sig)

    gc.callbacks.append(callback)
    try:
        gc.collect()
    finally:
        gc.callbacks.remove(callback)


# ----------------------------------------------------------------------------- the stop owed


def test_a_stop_swallowed_in_a_gc_callback_is_raised_at_the_next_check(handlers):
    _swallow(signal.SIGTERM)  # (before: only "Exception ignored in ..." on stderr, and on it ran)
    with pytest.raises(handlers.Terminated):
        handlers.check()
    handlers.check()  # raised once
    assert handlers.exit_code() == 143


def test_a_sandboxed_call_after_a_swallowed_stop_unwinds_and_starts_no_child(handlers, tmp_path):
    from shapefuzz.process.sandbox import run_sandboxed

    marker = tmp_path / "ran"
    _swallow(signal.SIGINT)
    with pytest.raises(KeyboardInterrupt):
        run_sandboxed([PY, "-c", f"open({str(marker)!r}, 'w')"])
    assert not marker.exists()


def test_a_signal_inside_a_holding_block_is_raised_at_its_end(handlers):
    done = []
    with pytest.raises(KeyboardInterrupt):
        with handlers.holding():
            signal.raise_signal(signal.SIGINT)
            done.append("the step after the signal")
    assert done and handlers.exit_code() == 130


def test_a_workers_sigterm_is_held_too_and_still_ends_it(handlers):
    """A campaign worker's SIGTERM (the pool stopping it) ends it with SystemExit(143), once the
    folder it was making is owned."""
    from shapefuzz.campaign import worker_pool

    previous = signal.signal(signal.SIGTERM, worker_pool._terminate)
    try:
        done = []
        with pytest.raises(SystemExit) as stop:
            with handlers.holding():
                signal.raise_signal(signal.SIGTERM)
                done.append(1)
        assert done and stop.value.code == 143
    finally:
        signal.signal(signal.SIGTERM, previous)


@pytest.mark.parametrize("args", [
    ("gen", "--stats", "200", "--op", "conv"),
    ("bundle", "--target", "llvm-cpu", "--n", "3", "--out", "out", "--jobs", "1"),
    ("fuzz", "--count", "2", "--ops", "topk", "--backends", "rocm-gfx942", "--no-shrink", "--jobs", "1",
     "--campaign", "camp", "--corpus", "corpus", "--plain"),
], ids=["gen", "bundle", "fuzz"])
def test_a_sigterm_swallowed_by_a_gc_callback_still_stops_the_command_with_143(tmp_path, args):
    """The tester's report: 2 of 7 SIGTERMs to `bundle` ran it to its end and exit 0."""
    result = _swallowed(tmp_path, *args)
    _stopped(result, said=args[0] != "fuzz")  # (a campaign says it on stdout, with its summary)
    assert "draws," not in result.stdout  # gen: stopped at its first draw, no coverage printed
    assert not (tmp_path / "out").exists()  # bundle: nothing written, nothing compiled
    if args[0] == "fuzz":
        assert "interrupted" in result.stdout, result.stdout  # a graceful stop: summary and report


def test_a_stop_swallowed_after_the_last_safe_point_still_exits_143(tmp_path, monkeypatch, capsys):
    """`gen` prints its one case after its only draw: a SIGTERM swallowed there meets no check
    again, and the command still exits 143, not 0."""
    import shapefuzz.families as families
    from shapefuzz.cli import main

    render = families.render_case

    def rendering_then_swallowing(case):
        text = render(case)
        _swallow(signal.SIGTERM)
        return text

    monkeypatch.setattr(families, "render_case", rendering_then_swallowing)
    monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "hypothesis"))
    monkeypatch.setattr(sys, "argv", ["shapefuzz", "gen", "--op", "conv", "--seed", "1"])
    with pytest.raises(SystemExit) as stop:
        main()
    err = capsys.readouterr().err
    assert stop.value.code == 143 and "shapefuzz: terminated" in err and "Exception ignored" not in err, err


# ----------------------------------------------------------------------------- temporary folders (2)


@pytest.fixture()
def temp_root(tmp_path, monkeypatch):
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _checked_with_a_sigint(monkeypatch, tmp_path, where: str) -> None:
    """One check (a fake compiler) with a SIGINT landing just after its `shapefuzz-check-*` folder
    is made (`where` "made") or just before the emptied folder itself is removed ("removed")."""
    from shapefuzz.judge.oracle import check_module
    from shapefuzz.iree.toolchain import find_toolchain

    toolchain = find_toolchain(str(make_fake_iree(tmp_path / "bin")))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    fired = []
    if where == "made":
        mkdtemp = tempfile.mkdtemp

        def making(*args, **kwargs):
            path = mkdtemp(*args, **kwargs)
            if Path(path).name.startswith("shapefuzz-check-") and not fired:
                fired.append(path)
                signal.raise_signal(signal.SIGINT)
            return path

        monkeypatch.setattr(tempfile, "mkdtemp", making)
    else:
        rmdir = os.rmdir

        def removing(path, *args, **kwargs):
            if Path(path).name.startswith("shapefuzz-check-") and not fired:
                fired.append(path)
                signal.raise_signal(signal.SIGINT)
            return rmdir(path, *args, **kwargs)

        monkeypatch.setattr(os, "rmdir", removing)
    with pytest.raises(KeyboardInterrupt):
        check_module("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n",
                     ["rocm-gfx942"], None, toolchain, confirm=False)
    assert fired


@pytest.mark.parametrize("where", ["made", "removed"])
def test_a_sigint_as_a_check_folder_is_made_or_removed_leaves_no_folder(handlers, temp_root, tmp_path, monkeypatch,
                                                                       where):
    _checked_with_a_sigint(monkeypatch, tmp_path, where)
    left = [p.name for p in temp_root.iterdir() if p.name.startswith("shapefuzz-check-")]
    assert not left, left
