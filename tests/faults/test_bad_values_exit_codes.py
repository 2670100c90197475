"""Hostile input, round two (issue 20): one probe per class that broke a promise. Each gets the
promised exit code (2 for bad input, never 1, which means a finding, never 70), one stderr line,
no traceback, nothing written outside the named folders and nothing left running. The compilers
are fakes (shell and Python scripts): these tests are about our input handling, not about IREE."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from support.campaign_fakes import HELP, fake_env, make_fake_iree  # noqa: E402
from support.hostile import PLAIN_MLIR, SHAPEFUZZ, hostile_entry, generated_case, alive, one_line, run, snapshot  # noqa: F401
from support.hostile import CAMPAIGN, cli, expect_2  # noqa: F401

PY = sys.executable
PACKAGE = Path(__import__("shapefuzz").__file__).parent


def _npy_bytes(shape_text: str, descr: str = "<f4") -> bytes:
    """A .npy header claiming `shape_text` (any Python literal), and no data."""
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_text)
    header = header.ljust(((len(header) + 12) // 64 + 1) * 64 - 12) + "\n"
    return b"\x93NUMPY\x02\x00" + len(header).to_bytes(4, "little") + header.encode()


def _npz(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def _plain(tmp: Path, text: str = PLAIN_MLIR) -> Path:
    path = tmp / "plain.mlir"
    path.write_text(text)
    return path


# ----------------------------------------------------------------------------- 1. lit directives

LIT_KEYWORDS = re.compile(rb"(RUN:|XFAIL:|REQUIRES:|UNSUPPORTED:|ALLOW_RETRIES:|END\.|DEFINE:|REDEFINE:)(.*)\n")


def lit_commands(text: str) -> list[tuple[int, str]]:
    """What lit would act on, found as lit finds it (TestRunner.parseIntegratedTestScriptCommands:
    the keywords anywhere in a line, no word boundary): (column, keyword+rest)."""
    data = text.encode()
    out = []
    for match in LIT_KEYWORDS.finditer(data):
        line_start = data.rfind(b"\n", 0, match.start()) + 1
        out.append((match.start() - line_start, match.group(0).decode().rstrip("\n")))
    return out


def test_lit_export_runs_nothing_from_the_entry(tmp_path, cli):
    corpus = tmp_path / "corpus"
    plant = "fooRUN: touch PWNED xEND. aXFAIL: * zDEFINE: %{x}=y"
    entry = hostile_entry(corpus, f"boom {plant}", detail=f"x.mlir:1:1: error: {plant}",
                   toolchain_versions=["3.13.0"])
    out = tmp_path / "t.mlir"
    assert cli("export", entry.name, "--corpus", str(corpus), "-o", str(out)) == (0, "")
    text = out.read_text()
    found = lit_commands(text)
    assert found and all(column == 3 and keyword.startswith("RUN: ") and "PWNED" not in keyword
                         for column, keyword in found), found
    assert "CHECK: error: boom fooRUN{{:}} touch PWNED" in text or "RUN{{:}} touch PWNED" in text
    reproducer = entry / "reproducer.mlir"  # a comment in the reproducer is refused, not copied
    reproducer.write_text("// fooRUN: touch PWNED\n" + PLAIN_MLIR)
    expect_2(cli("export", entry.name, "--corpus", str(corpus), "-o", str(tmp_path / "u.mlir")), "RUN:")
    assert not (tmp_path / "u.mlir").exists() and not list(tmp_path.rglob("PWNED"))


# ----------------------------------------------------------------------------- 2. overflow in sizes


def test_huge_sizes_are_one_line_exit_2_everywhere(tmp_path, cli):
    huge_type = "tensor<" + "x".join(["99999999999999999"] * 40) + "xf32>"
    source = _plain(tmp_path, PLAIN_MLIR.replace("%a: tensor<4xf32>", f"%a: {huge_type}"))
    expect_2(cli("check", str(source), "--backends", "rocm-gfx942"), "array cap")
    npz = _npz(tmp_path / "huge.npz", {"arr_0.npy": _npy_bytes("(%d,)" % 10**400)})
    expect_2(cli("check", str(_plain(tmp_path)), "--backends", "rocm-gfx942", "--inputs", str(npz)), "array cap")
    from shapefuzz.families.generate import draw_case  # params whose tensor is 40 dims of 2^31-1

    params = dict(draw_case("topk", 1).params, shape=[2**31 - 1] * 40, input_dyn=[False] * 40)
    header = "// shapefuzz-case: " + json.dumps({"family": "topk", "params": params, "version": 1})
    expect_2(cli("check", str(generated_case(tmp_path, header)), "--backends", "rocm-gfx942"), "params")
    corpus = tmp_path / "corpus"  # an entry whose input claims 10**400 elements: unreadable, the rest fine
    entry = hostile_entry(corpus, inputs=["inputs/arg0.npy"])
    (entry / "inputs").mkdir()
    (entry / "inputs" / "arg0.npy").write_bytes(_npy_bytes("(%d,)" % 10**400))
    assert cli("corpus", "list", str(corpus)) == (0, "")
    expect_2(cli("corpus", "show", entry.name, "--corpus", str(corpus)), "array cap")
    from shapefuzz.schema import SchemaError, load_npy

    output = tmp_path / "result0.npy"  # a runtime output with the same lie
    output.write_bytes(_npy_bytes("(%d, %d)" % (10**200, 10**200)))
    with pytest.raises(SchemaError, match="array cap"):
        load_npy(output, "result0.npy")


# ----------------------------------------------------------------------------- 3. other bad input


@pytest.mark.parametrize("args,named", [
    (["check", "P", "--inputs", "NPY"], "not an .npz"),
    (["check", "P", "--max-array-bytes", "9" * 400], "--max-array-bytes"),
    (["fuzz", "--memory-cap", "9" * 400], "--memory-cap"),
    (["bisect", "some-entry", "--versions", "9" * 5000], "--versions"),
    (["bisect", "some-entry", "--versions", "3.1.0..3." + "9" * 5000 + ".0"], "--versions"),
    (["export", "E", "-o", "."], "-o"),
    (["export", "E", "-o", "/"], "-o"),
    (["export", "E", "--format", "run-module", "-o", "/"], "-o"),
    (["export", "E", "--format", "run-module", "-o", ".."], "-o"),
])
def test_bad_values_are_one_line_exit_2(tmp_path, cli, args, named):
    corpus = tmp_path / "corpus"
    entry = hostile_entry(corpus)
    np.save(tmp_path / "x.npy", np.zeros(4, np.float32))
    swap = {"P": str(_plain(tmp_path)), "NPY": str(tmp_path / "x.npy"), "E": entry.name}
    argv = [swap.get(a, a) for a in args]
    if argv[0] == "export":
        argv += ["--corpus", str(corpus)]
    if argv[0] == "fuzz":
        argv += ["--campaign", str(tmp_path / "camp"), *CAMPAIGN]
    if argv[0] == "check":
        argv += ["--backends", "rocm-gfx942"]
    before = snapshot(tmp_path)
    expect_2(cli(*argv), named)
    assert not [p for p in set(snapshot(tmp_path)) - set(before) if not p.startswith(str(tmp_path / "cache"))]


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> Path:
    """One short campaign, run once from an empty working folder, which it must leave empty
    (class 15: Hypothesis's files went to ./.hypothesis); the tests below use copies of it."""
    tmp = tmp_path_factory.mktemp("finished")
    work = tmp / "work"
    work.mkdir()
    result = run(tmp, "fuzz", "--campaign", str(tmp / "camp"), "--corpus", str(tmp / "corpus"), *CAMPAIGN,
                 cwd=work, env_extra={"FAKE_IREE_MODE": "words", "HYPOTHESIS_STORAGE_DIRECTORY": ""})
    assert result.returncode == 0, result.stderr
    assert not list(work.iterdir()), list(work.iterdir())
    return tmp / "camp"


def _copy(finished: Path, tmp_path: Path) -> Path:
    import shutil

    return Path(shutil.copytree(finished, tmp_path / "camp"))


@pytest.mark.parametrize("version", ["abc", "3.0", "", "-1", "0"])
def test_store_format_version_that_we_never_write_is_refused_and_kept(tmp_path, cli, finished, version):
    camp = _copy(finished, tmp_path)
    con = sqlite3.connect(camp / "campaign.sqlite")
    con.execute("UPDATE meta SET value=? WHERE key='format_version'", (version,))
    con.commit()
    con.close()
    expect_2(cli("fuzz", "--campaign", str(camp), "--count", "3"), "format version")
    con = sqlite3.connect(camp / "campaign.sqlite")
    assert con.execute("SELECT value FROM meta WHERE key='format_version'").fetchone() == (version,)
    con.close()


@pytest.mark.parametrize("cache", ["[" * 100000 + "]" * 100000, "[1, 2]", '{"version": 3}', "null",
                                   '{"version": "3.13.0", "release": "ab", "compile_flags": "x", "devices": [],'
                                   ' "llvmpipe_target": false, "passes": [], "cuda_arch": null, "cuda_runs": [],'
                                   ' "cuda_note": ""}', "FIFO"])
def test_a_broken_probe_cache_costs_a_probe_not_a_crash(tmp_path, cli, cache):
    from shapefuzz.iree.toolchain import probe_toolchain

    source = _plain(tmp_path)
    assert cli("check", str(source), "--backends", "rocm-gfx942")[0] == 0
    (cached,) = (tmp_path / "cache" / "shapefuzz" / "probes").glob("*.json")
    cached.unlink()
    if cache == "FIFO":
        os.mkfifo(cached)
    else:
        cached.write_text(cache)
    probe_toolchain.cache_clear()  # as a new process would: read the file
    assert cli("check", str(source), "--backends", "rocm-gfx942")[0] == 0
    assert json.loads(cached.read_text())["version"] == "3.13.0"  # probed again and rewritten


# ----------------------------------------------------------------------------- 4. bad input is not a finding


@pytest.mark.parametrize("arrays,named", [
    ([np.zeros(4, np.float32), np.zeros(4, np.float32)], "holds 2 array(s); @main takes 1"),
    ([], "holds 0 array(s)"),
    ([np.zeros(5, np.float32)], "array 0 is 5 float32"),
    ([np.zeros((4, 1), np.float32)], "array 0 is 4x1"),
    ([np.zeros(4, np.float64)], "float64"),
])
def test_inputs_that_do_not_fit_the_function_are_exit_2(tmp_path, cli, arrays, named):
    npz = tmp_path / "in.npz"
    np.savez(npz, *arrays)
    expect_2(cli("check", str(_plain(tmp_path)), "--backends", "llvm-cpu", "--inputs", str(npz)), named)


@pytest.mark.parametrize("field", ["k", "dim", "shape", "largest", "version"])
def test_header_fields_of_the_wrong_json_type_are_exit_2(tmp_path, cli, field):
    from shapefuzz.families.generate import draw_case

    payload = {"family": "topk", "params": draw_case("topk", 1).params, "version": 1}
    if field == "version":
        payload["version"] = True
    else:
        payload["params"][field] = {"largest": 1, "shape": 3}.get(field, True)
    header = "// shapefuzz-case: " + json.dumps(payload)
    expect_2(cli("check", str(generated_case(tmp_path, header)), "--backends", "llvm-cpu"), field)


# ----------------------------------------------------------------------------- 6-8. campaign folders


def test_corpus_naming_a_file_is_refused_before_anything_is_written(tmp_path, cli):
    (tmp_path / "corpus").write_text("my notes\n")
    expect_2(cli("fuzz", "--campaign", str(tmp_path / "camp"), "--corpus", str(tmp_path / "corpus"), *CAMPAIGN),
             "--corpus", "is a file")
    assert not (tmp_path / "camp").exists() and (tmp_path / "corpus").read_text() == "my notes\n"


def test_a_folder_of_the_users_own_files_is_not_a_campaign_folder(tmp_path, cli):
    mine = tmp_path / "camp"
    mine.mkdir()
    (mine / "report.md").write_text("my report\n")
    (mine / "buckets.svg").write_text("<svg/>\n")
    before = snapshot(mine)
    expect_2(cli("fuzz", "--campaign", str(mine), "--corpus", str(tmp_path / "corpus"), *CAMPAIGN),
             "report.md", "no campaign")
    assert snapshot(mine) == before and not (tmp_path / "corpus").exists()


def test_a_resume_with_another_corpus_is_refused(tmp_path, cli, finished):
    camp = _copy(finished, tmp_path)
    expect_2(cli("fuzz", "--campaign", str(camp), "--corpus", str(tmp_path / "other"), "--count", "3"),
             "--corpus", str(finished.parent / "corpus"))
    assert not (tmp_path / "other").exists()


def test_a_lock_whose_named_holder_is_dead_is_waited_for_not_refused(tmp_path):
    """A killed campaign's lock can outlive it a moment (a compiler it was starting, between fork
    and exec, holds a copy of the descriptor): a resume right after waits for it, in place of
    refusing the folder as in use by a process that no longer runs."""
    from shapefuzz.campaign.folder_lock import hold_campaign

    camp = tmp_path / "camp"
    camp.mkdir()
    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    (camp / "campaign.lock").write_text(f"pid {dead.pid} on {__import__('socket').gethostname()} since then\n")
    helper = subprocess.Popen([PY, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_RDWR); "
                               "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(0.7)",
                               str(camp / "campaign.lock")], stdout=subprocess.PIPE, text=True)
    try:
        assert helper.stdout.readline().strip() == "held"
        start = time.monotonic()
        hold_campaign(camp).release()  # waited for the helper's exit, not refused
        assert 0.3 < time.monotonic() - start < 5.0
    finally:
        helper.kill()
        helper.wait()


def test_a_second_campaign_on_a_folder_in_use_is_refused_naming_the_holder(tmp_path, cli):
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), "fuzz", "--campaign",
            str(tmp_path / "camp"), "--corpus", str(tmp_path / "corpus"), "--count", "1000", *CAMPAIGN[2:]]
    first = subprocess.Popen(argv, env=fake_env(tmp_path, "words", FAKE_IREE_DELAY="0.2"), cwd=tmp_path,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.time() + 60
        lock = tmp_path / "camp" / "campaign.lock"
        while time.time() < deadline and not (lock.exists() and lock.read_text().strip()):
            time.sleep(0.05)
        line = expect_2(cli("fuzz", "--campaign", str(tmp_path / "camp"), "--count", "1000"), "in use by",
                        f"pid {first.pid}")
        assert "since" in line
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the lock dies with its holder, however it dies
        first.wait(60)
    from shapefuzz.campaign.folder_lock import hold_campaign

    hold_campaign(tmp_path / "camp").release()


# ----------------------------------------------------------------------------- 9. the environment


@pytest.mark.parametrize("value", ["lots", "-5", "0", "9" * 400, "", "1e9", "2 GiB extra"])
def test_bad_array_cap_in_the_environment_is_one_line(tmp_path, cli, value):
    for command in (["check", str(_plain(tmp_path)), "--backends", "rocm-gfx942"], ["corpus", "list", "c"]):
        expect_2(cli(*command, env={"SHAPEFUZZ_MAX_ARRAY_BYTES": value}), "SHAPEFUZZ_MAX_ARRAY_BYTES")


def test_a_good_array_cap_in_the_environment_is_used(tmp_path, cli):
    expect_2(cli("check", str(_plain(tmp_path)), "--backends", "rocm-gfx942",
                 env={"SHAPEFUZZ_MAX_ARRAY_BYTES": "8B"}), "8 bytes array cap")


# ----------------------------------------------------------------------------- 10. escapes from check

DAEMON_COMPILER = textwrap.dedent("""\
    #!{py}
    # A compiler whose child double-forks, calls setsid and clears its environment (a daemon).
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
        if os.fork() == 0:
            open(os.path.join(piddir, f'daemon-{{os.getpid()}}'), 'w').close()
            os.execve({py!r}, [{py!r}, '-c', 'import time; time.sleep(300)'], {{}})
        os._exit(0)
    if os.environ.get('FAKE_MODE') == 'hang':
        child = os.fork()
        if child == 0:
            time.sleep(300); os._exit(0)
        open(os.path.join(piddir, f'child-{{child}}'), 'w').close()
        open(os.path.join(piddir, f'compiler-{{os.getpid()}}'), 'w').close()
        time.sleep(300)
    time.sleep(0.3)
    while '-o' in argv:
        out = argv[argv.index('-o') + 1]; open(out, 'w').write('vmfb'); break
    sys.exit(0)
    """)


def _daemon_toolchain(tmp: Path) -> Path:
    folder = make_fake_iree(tmp / "bin")
    compiler = folder / "iree-compile"
    compiler.write_text(DAEMON_COMPILER.format(py=PY, help=HELP))
    compiler.chmod(compiler.stat().st_mode | stat.S_IXUSR)
    return folder


def _pids(piddir: Path, kind: str) -> list[int]:
    return [int(p.name.split("-")[1]) for p in piddir.glob(f"{kind}-*")]


def _gone(pids: list[int], seconds: float = 5.0) -> list[int]:
    deadline = time.time() + seconds
    while time.time() < deadline and [p for p in pids if alive(p)]:
        time.sleep(0.05)
    return [p for p in pids if alive(p)]


def test_a_setsid_daemon_with_a_clean_environment_does_not_outlive_check(tmp_path):
    piddir = tmp_path / "pids"
    piddir.mkdir()
    argv = [SHAPEFUZZ, "--iree-bin", str(_daemon_toolchain(tmp_path)), "check", str(_plain(tmp_path)),
            "--backends", "rocm-gfx942"]
    result = subprocess.run(argv, env=fake_env(tmp_path, "ok", FAKE_PIDDIR=str(piddir)), capture_output=True,
                            text=True, timeout=120, cwd=tmp_path)
    daemons = _pids(piddir, "daemon")
    try:
        assert result.returncode == 0, result.stderr
        assert daemons, "the fake compiler never ran"
        assert not _gone(daemons), "a daemon outlived check"
    finally:
        for pid in daemons:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL])
def test_check_killed_mid_compile_leaves_no_compiler_and_no_temporary(tmp_path, sig):
    piddir, tmpdir = tmp_path / "pids", tmp_path / "tmp"
    piddir.mkdir()
    tmpdir.mkdir()
    env = fake_env(tmp_path, "ok", FAKE_PIDDIR=str(piddir), FAKE_MODE="hang", TMPDIR=str(tmpdir))
    argv = [SHAPEFUZZ, "--iree-bin", str(_daemon_toolchain(tmp_path)), "check", str(_plain(tmp_path)),
            "--backends", "rocm-gfx942"]
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        deadline = time.time() + 60
        while time.time() < deadline and not _pids(piddir, "compiler"):
            time.sleep(0.05)
        assert _pids(piddir, "compiler"), "the fake compiler never ran"
        proc.send_signal(sig)
        _, err = proc.communicate(timeout=30)
        compilers = _pids(piddir, "compiler")
        assert not _gone(compilers), "the compiler outlived check"
        if sig == signal.SIGTERM:  # unwinds: the whole group and the temporary folder go
            assert proc.returncode == 143 and "Traceback" not in err and err.strip().splitlines()[-1] == \
                "shapefuzz: terminated", err
            assert not _gone(_pids(piddir, "daemon")), "the daemon outlived check"
        # after SIGKILL the guardian kills the compiler's group and removes the temporary folder (a
        # daemon that called setsid is out of its reach: nothing of ours runs after SIGKILL to see it)
        assert not _gone(_pids(piddir, "child")), "the compiler's child outlived check"
        deadline = time.time() + 30  # the guardian's own start and sweep, on a loaded machine
        while time.time() < deadline and list(tmpdir.glob("shapefuzz-*")):
            time.sleep(0.05)
        assert not list(tmpdir.glob("shapefuzz-*")), list(tmpdir.iterdir())
    finally:
        for pid in _pids(piddir, "child") + _pids(piddir, "daemon") + _pids(piddir, "compiler"):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if proc.poll() is None:
            proc.kill()


def test_the_guardian_counts_a_zombie_owner_as_dead():
    """A killed command is a zombie until its parent reaps it, and a zombie answers kill(pid, 0):
    the guardian once took such an owner for alive and left its temporary folder behind."""
    from shapefuzz.process.guardian import _lives_on

    zombie = subprocess.Popen([PY, "-c", "pass"])
    running = subprocess.Popen([PY, "-c", "import time; time.sleep(30)"])
    try:
        deadline = time.time() + 10
        while time.time() < deadline and _lives_on(zombie.pid, wait_s=0):
            time.sleep(0.05)
        assert not _lives_on(zombie.pid, wait_s=0.2)  # exited, not yet reaped
        assert _lives_on(running.pid, wait_s=0.2)
    finally:
        running.kill()
        running.wait()
        zombie.wait()
    assert not _lives_on(zombie.pid, wait_s=0)  # reaped: gone


def test_temporary_folders_of_dead_commands_are_swept(tmp_path):
    """The second line behind the guardian: folders named after a process that no longer runs
    (and older than a grace period) are removed by the next command; others are left alone."""
    from shapefuzz.process.cleanup import sweep_stale_temps

    dead = subprocess.Popen([PY, "-c", "pass"])
    dead.wait()
    stale, fresh, live, foreign = (tmp_path / f"shapefuzz-check-{dead.pid}-x", tmp_path / f"shapefuzz-run-{dead.pid}-y",
                                   tmp_path / f"shapefuzz-check-{os.getpid()}-z", tmp_path / "shapefuzz-notes")
    for folder in (stale, fresh, live, foreign):
        folder.mkdir()
    os.utime(stale, (time.time() - 120, time.time() - 120))
    assert sweep_stale_temps(str(tmp_path)) == 1
    assert not stale.exists() and fresh.exists() and live.exists() and foreign.exists()


# ----------------------------------------------------------------------------- 11. normalization


def test_signature_normalization_is_linear():
    from shapefuzz.model import ProcessResult, Stage, Status
    from shapefuzz.triage.signature import normalize, signature_for

    for line in ("a/" * 60000, "a" * 120000, "loc(" * 30000, "Assertion `" * 20000, "a." * 60000):
        start = time.process_time()  # CPU time of this process (where the work is): deaf to a loaded machine
        result = ProcessResult(("iree-compile",), 1, None, False, False, "", f"x.mlir:1:1: error: {line}\n" * 4, 0.1)
        signature_for("llvm-cpu", Stage.COMPILE, Status.ERROR, result)
        normalize(line)
        assert time.process_time() - start < 2.0, line[:12]
    assert normalize("at /src/a/b.cc:12:3 in %arg0: tensor<4x?x8xf32> 'x.mlir:3'") == \
        "at <path> in %_: tensor<NxNxNxf32> '<file>'"


# ----------------------------------------------------------------------------- 12. FIFOs


class _Hung(Exception):
    pass


def _alarm(signum, frame):
    raise _Hung()


def test_fifos_are_refused_not_waited_on(tmp_path, cli):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(60)  # a regression hangs in open(); the alarm turns it into a failure
    try:
        fifo = tmp_path / "in.mlir"
        os.mkfifo(fifo)
        expect_2(cli("check", str(fifo), "--backends", "rocm-gfx942"), "FIFO")
        npz = tmp_path / "in.npz"
        os.mkfifo(npz)
        expect_2(cli("check", str(_plain(tmp_path)), "--backends", "rocm-gfx942", "--inputs", str(npz)), "FIFO")
        corpus = tmp_path / "corpus"
        entry = hostile_entry(corpus)
        (corpus / ".lock").unlink(missing_ok=True)
        os.mkfifo(corpus / ".lock")
        expect_2(cli("corpus", "mark", entry.name, "fixed", "--corpus", str(corpus)), "FIFO")
        camp = tmp_path / "camp"
        camp.mkdir()
        os.mkfifo(camp / "campaign.sqlite")
        expect_2(cli("fuzz", "--campaign", str(camp), "--corpus", str(tmp_path / "c2"), *CAMPAIGN), "FIFO")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    from shapefuzz.schema import SchemaError, load_npy

    output = tmp_path / "result0.npy"  # a runtime output that is a FIFO
    os.mkfifo(output)
    with pytest.raises(SchemaError, match="FIFO"):
        load_npy(output, "result0.npy")


# ----------------------------------------------------------------------------- 13. early Ctrl-C


def test_ctrl_c_while_starting_is_one_line():
    """SIGINT at 20 ms steps through start-up. Before Python runs our first line (interpreter
    start, site) a Ctrl-C is the interpreter's; from the console entry's first line on it is ours:
    exit 130 and one line, whatever is being imported."""
    ours = 0
    for step in range(16):
        proc = subprocess.Popen([SHAPEFUZZ, "gen", "--op", "topk"], stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        time.sleep(0.02 * step)
        proc.send_signal(signal.SIGINT)
        err = proc.communicate(timeout=60)[1]
        if proc.returncode == 130:
            ours += 1
            assert err.strip() == "shapefuzz: interrupted", err
        elif proc.returncode != 0 and "Traceback" in err:  # still inside the interpreter's start-up
            ours_loading = [line for line in err.splitlines() if str(PACKAGE) in line and "console.py" not in line]
            assert not ours_loading, err
    assert ours >= 5, "no interrupt reached shapefuzz's own code"


# ----------------------------------------------------------------------------- 14. -o onto special files


def test_export_never_replaces_a_special_file(tmp_path, cli):
    corpus = tmp_path / "corpus"
    entry = hostile_entry(corpus)
    fifo = tmp_path / "out.mlir"
    os.mkfifo(fifo)
    targets = [fifo]
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        targets.append(device)
    except (PermissionError, OSError):
        pass  # not root, or no CAP_MKNOD here: the FIFO stands for every special file
    for target in targets:
        for fmt in ("lit", "run-module"):
            expect_2(cli("export", entry.name, "--corpus", str(corpus), "--format", fmt, "-o", str(target)),
                     str(target))
        assert not stat.S_ISREG(os.lstat(target).st_mode)
    from shapefuzz.files import atomic_write  # and the writer itself, for every other caller

    with pytest.raises(OSError, match="FIFO"):
        atomic_write(fifo, b"x")
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)


# ----------------------------------------------------------------------------- 15. the user's folder


def test_gen_writes_nothing_into_the_current_folder(tmp_path):
    """(fuzz: the `finished` campaign above runs from an empty folder and must leave it empty)"""
    work = tmp_path / "work"
    work.mkdir()
    result = run(tmp_path, "gen", "--stats", "3", cwd=work, env_extra={"HYPOTHESIS_STORAGE_DIRECTORY": ""})
    assert result.returncode == 0, result.stderr
    assert not list(work.iterdir()), list(work.iterdir())


# ----------------------------------------------------------------------------- weaker spots


def test_iree_version_with_a_newline_is_refused(cli):
    for argv in (["--iree-version", "3.13.0\n", "check", "x.mlir"], ["check", "x.mlir", "--iree-version", "3.13.0\n"],
                 ["gen", "--op", "topk", "--iree-version", "3." + "1" * 5000 + ".0"]):
        expect_2(cli(*argv, fake=False), "--iree-version")
