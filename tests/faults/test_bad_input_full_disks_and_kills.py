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

from support.campaign_fakes import fake_env, make_fake_iree  # noqa: E402
from support.hostile import PLAIN_MLIR, SHAPEFUZZ, _finding, alive, fill, generated_case, hostile_entry, one_line, run, small_disk, snapshot  # noqa: F401

PY = sys.executable


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
    from support.campaign_fakes import HELP

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
        deadline = time.time() + 5.0  # a worker left alone would sit in its 30 s compile
        while time.time() < deadline:
            left = [p for p in family | set(_pids(piddir, "escaped")) | set(_pids(piddir, "compiler")) if alive(p)]
            if not left:
                break
            time.sleep(0.1)
        assert not left, f"still running 5 s after kill -9: {left}"
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
    from shapefuzz.process.sandbox import Limits, run_sandboxed

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
    from shapefuzz.process.sandbox import Limits, run_sandboxed

    code = "import sys\nblock = 'e' * (1 << 20)\nfor _ in range(300): sys.stderr.write(block)\nprint('done')"
    result = run_sandboxed([PY, "-c", code], Limits(timeout=60, output_bytes=4096), cwd=str(tmp_path))
    assert result.ok and result.stdout.strip() == "done"
    assert len(result.stderr) < 4096 + 100 and "bytes cut" in result.stderr
    assert not list(tmp_path.iterdir())


# ----------------------------------------------------------------------------- hostile corpus entries

PLANT = "$(touch PWNED) `touch PWNED` '; touch PWNED; ' \"\"\" + __import__('os').system('touch PWNED') + \"\"\""


@pytest.fixture()
def work(tmp_path):
    """A working folder inside tmp_path and a sibling `outside` folder that must stay untouched."""
    (tmp_path / "work").mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep me\n")
    return tmp_path / "work", outside


@pytest.mark.parametrize("field,value,named", [
    ("id", "../../outside/victim", "id"),
    ("id", "/tmp/evil", "id"),
    ("id", "x; touch PWNED", "id"),
    ("count", "x", "count"),
    ("sizes", "big", "sizes"),
    ("backends", "llvm-cpu", "backends"),
    ("seed", -3, "seed"),
    ("toolchain_versions", ["3.13.0\n# RUN: touch PWNED"], "toolchain_versions"),
    ("toolchain_versions", ["$(touch PWNED)"], "toolchain_versions"),
    ("signature", {"backend": "x y", "stage": "compile", "status": "error", "message": "m"}, "signature.backend"),
    ("params", {"n": 1}, "params"),
    ("inputs", ["../../outside/victim.txt"], "inputs"),
])
def test_a_bad_entry_is_unreadable_with_its_field_named_and_the_others_go_on(work, field, value, named):
    folder, outside = work
    corpus = folder / "corpus"
    good = hostile_entry(corpus, "good one")
    bad = hostile_entry(corpus, "bad one", **{field: value})
    before = snapshot(outside)
    listed = run(folder, "corpus", "list", str(corpus))
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith(bad.name))
    assert "unreadable" in row and named in row, row
    assert any(line.startswith(good.name) and "unreadable" not in line for line in listed.stdout.splitlines())
    one_line(run(folder, "corpus", "show", bad.name, "--corpus", str(corpus)), 2, named)
    one_line(run(folder, "export", bad.name, "--corpus", str(corpus)), 2, named)
    if field == "id":  # the rest of the corpus still exports and replays (once is enough)
        exported = run(folder, "export", good.name, "--corpus", str(corpus), "--format", "run-module")
        assert exported.returncode == 0, exported.stderr
        replayed = run(folder, "replay", str(corpus), "--no-confirm")
        assert replayed.returncode == 3 and "Traceback" not in replayed.stderr, replayed.stderr
    assert snapshot(outside) == before and not list(folder.rglob("PWNED"))


def test_deep_json_in_meta_is_unreadable_not_a_crash(work):
    folder, _ = work
    corpus = folder / "corpus"
    bad = hostile_entry(corpus)
    (bad / "meta.json").write_text("[" * 100000 + "]" * 100000)
    listed = run(folder, "corpus", "list", str(corpus))
    assert listed.returncode == 0 and "nested too deeply" in listed.stdout
    one_line(run(folder, "corpus", "show", bad.name, "--corpus", str(corpus)), 2, "meta.json")


def test_symlinked_entry_and_input_are_refused_and_replay_update_writes_nothing_outside(work):
    folder, outside = work
    corpus = folder / "corpus"
    elsewhere = hostile_entry(outside / "their-corpus")  # a whole valid entry, outside
    (corpus).mkdir()
    os.symlink(elsewhere, corpus / elsewhere.name)
    linked_input = hostile_entry(corpus, "with input")
    (linked_input / "inputs").mkdir()
    os.symlink(outside / "victim.txt", linked_input / "inputs" / "arg0.npy")
    meta = json.loads((linked_input / "meta.json").read_text())
    meta["inputs"] = ["inputs/arg0.npy"]
    (linked_input / "meta.json").write_text(json.dumps(meta))
    before = snapshot(outside)
    listed = run(folder, "corpus", "list", str(corpus))
    assert "symbolic link" in listed.stdout and listed.stdout.count("  unreadable: ") == 2, listed.stdout
    replayed = run(folder, "replay", str(corpus), "--update", "--no-confirm")
    assert replayed.returncode == 3 and "Traceback" not in replayed.stderr, replayed.stderr
    one_line(run(folder, "corpus", "mark", str(corpus / elsewhere.name), "fixed"), 2, "symbolic link")
    one_line(run(folder, "export", str(corpus / elsewhere.name)), 2, "symbolic link")
    assert snapshot(outside) == before


def test_exports_and_repro_sh_quote_what_they_embed(work):
    """An entry whose signature and error text carry shell, Python and lit metacharacters: each
    exported test, run as written, runs nothing planted, and writes only under the output folder."""
    folder, outside = work
    corpus = folder / "corpus"
    from shapefuzz.corpus import save_finding

    entry, _ = save_finding(corpus, _finding(PLANT, detail=f"x.mlir:1:1: error: {PLANT}\n// RUN: touch PWNED"))
    fakes = folder / "fakebin"
    fakes.mkdir()
    for name in ("shapefuzz", "iree-compile", "iree-run-module"):
        (fakes / name).write_text(f"#!/bin/sh\necho \"$@\" >> {folder}/calls.txt\nexit 1\n")
        (fakes / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{fakes}:/usr/bin:/bin")
    subprocess.run(["sh", str(entry / "repro.sh")], env=env, cwd=folder, capture_output=True, timeout=30)
    out = folder / "exported"
    for fmt, name in (("lit", "t.mlir"), ("pytest", "test_t.py"), ("run-module", "rm")):
        result = run(folder, "export", entry.name, "--corpus", str(corpus), "--format", fmt, "-o", str(out / name))
        assert result.returncode == 0, result.stderr
    subprocess.run(["sh", str(out / "rm" / "run.sh")], env=env, cwd=folder, capture_output=True, timeout=30)
    subprocess.run([PY, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(out / "test_t.py")], env=env,
                   cwd=folder, capture_output=True, timeout=60)
    lit = (out / "t.mlir").read_text()
    run_lines = [line for line in lit.splitlines() if "RUN:" in line]
    assert run_lines and all(line.startswith("// RUN: ") and "PWNED" not in line for line in run_lines), run_lines
    assert not list(folder.rglob("PWNED")) and not list(outside.rglob("PWNED"))
    assert snapshot(outside)["%s" % (outside / "victim.txt")]


def test_lit_export_refuses_a_reproducer_holding_run_lines(work):
    folder, _ = work
    corpus = folder / "corpus"
    entry = hostile_entry(corpus)
    (entry / "reproducer.mlir").write_text("// RUN: touch PWNED\n" + PLAIN_MLIR)
    one_line(run(folder, "export", entry.name, "--corpus", str(corpus), "--format", "lit"), 2, "RUN:")
    assert not list(folder.glob("*.mlir"))


def test_exporters_quote_even_values_the_schema_would_refuse(tmp_path):
    """Second line of defence: the writers themselves quote (shell), repr (Python) and strip line
    breaks from comments, whatever the entry holds."""
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.corpus import CorpusEntry, repro_script
    from shapefuzz.export import Plan, run_module_script, to_lit, to_pytest

    evil = "3.13.0\n// RUN: touch PWNED\nimport os; os.system('touch PWNED')\n$(touch PWNED)"
    meta = {"id": "rocm-gfx942-compile-error-0123456789ab", "expected_state": "failing", "seed": 0,
            "signature": {"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": evil},
            "toolchain_versions": [evil], "compile_command": ["iree-compile", evil],
            "detail": "x.mlir:1:1: error: " + evil}
    entry = CorpusEntry(tmp_path, meta, PLAIN_MLIR, [np.zeros(4, np.float32)], [np.zeros(4, np.float32)])
    plan = Plan(entry, BACKENDS["llvm-cpu"], ("--flag=$(touch PWNED)",), "main$(touch PWNED)",
                entry.inputs, entry.expected, failing=True, rule={"kind": "elementwise", "rtol": None, "atol": None})
    lit = to_lit(plan)
    ours = [line for line in lit.splitlines() if line.startswith("// RUN: ")]
    assert ours and [line for line in lit.splitlines() if "RUN:" in line] == ours  # lit finds RUN: anywhere
    fakes = tmp_path / "bin"
    fakes.mkdir()
    for name in ("shapefuzz", "iree-compile", "iree-run-module"):
        (fakes / name).write_text("#!/bin/sh\nexit 0\n")
        (fakes / name).chmod(0o755)
    env = dict(os.environ, PATH=f"{fakes}:/usr/bin:/bin")
    for name, text in (("run.sh", run_module_script(plan)), ("repro.sh", repro_script(meta))):
        (tmp_path / name).write_text(text)
        subprocess.run(["sh", str(tmp_path / name)], cwd=tmp_path, env=env, capture_output=True, timeout=30)
    (tmp_path / "test_x.py").write_text(to_pytest(plan))
    subprocess.run([PY, "-c", "import runpy; runpy.run_path('test_x.py')"], cwd=tmp_path, env=env,
                   capture_output=True, timeout=60)
    for line in lit.splitlines():  # every RUN line that mentions the plant has it inside quotes
        if line.startswith("// RUN:") and "PWNED" in line:
            assert "'--flag=$(touch PWNED)'" in line or "'--function=main$(touch PWNED)'" in line, line
    assert not list(tmp_path.rglob("PWNED"))


# ----------------------------------------------------------------------------- full and read-only disks


def _words_env(extra: dict | None = None) -> dict:
    return {"FAKE_IREE_MODE": "words", **(extra or {})}


def test_full_disk_is_one_line_exit_2_for_every_corpus_command(tmp_path, small_disk):
    corpus = small_disk / "corpus"
    entry = hostile_entry(corpus)
    meta_before = (entry / "meta.json").read_bytes()
    source = tmp_path / "crash.mlir"
    source.write_text(PLAIN_MLIR.replace("tensor<4xf32>", "tensor<5xf32>"))
    fill(small_disk)
    cases = [
        (["corpus", "add", str(source), "--corpus", str(corpus), "--backends", "rocm-gfx942"], "No space left"),
        (["corpus", "index", str(corpus)], "INDEX.md"),
        (["corpus", "mark", entry.name, "fixed", "--corpus", str(corpus)], "meta.json"),
        (["export", entry.name, "--corpus", str(corpus), "-o", str(small_disk / "t.mlir")], "t.mlir"),
        (["export", entry.name, "--corpus", str(corpus), "--format", "run-module", "-o", str(small_disk / "rm")], ""),
        (["replay", str(corpus), "--update", "--no-confirm"], "meta.json"),
        (["shrink", str(source), "-o", str(small_disk / "min.mlir"), "--backends", "rocm-gfx942", "--time", "3s"],
         "min.mlir"),
    ]
    for args, needle in cases:
        env = _words_env()
        if args[0] == "replay":  # the fake compiles fine now: the entry is fixed, and --update records it
            env = {"FAKE_IREE_MODE": "ok"}
        result = run(tmp_path, *args, env_extra=env)
        line = one_line(result, 2, needle)
        assert "No space left on device" in line or "disk is full" in line, (args, line)
    assert (entry / "meta.json").read_bytes() == meta_before  # whole, never half-written
    assert not [p for p in corpus.rglob("*") if p.name.endswith(".tmp")]


def test_read_only_folder_is_one_line_exit_2(tmp_path, small_disk):
    corpus = small_disk / "corpus"
    entry = hostile_entry(corpus)
    subprocess.run(["mount", "-o", "remount,ro", str(small_disk)], check=True)
    one_line(run(tmp_path, "corpus", "mark", entry.name, "fixed", "--corpus", str(corpus)), 2, "Read-only file system")
    one_line(run(tmp_path, "corpus", "index", str(corpus)), 2, "Read-only file system")
    line = one_line(run(tmp_path, "fuzz", "--campaign", str(small_disk / "camp"), "--count", "1"), 2)
    assert "corrupt" not in line and "camp" in line


def test_full_disk_when_opening_a_campaign_is_not_called_corrupt(tmp_path, small_disk):
    camp = small_disk / "camp"
    result = run(tmp_path, "fuzz", "--campaign", str(camp), "--count", "3", "--ops", "topk",
                 "--backends", "rocm-gfx942", "--jobs", "1", "--no-shrink", "--corpus", str(tmp_path / "corpus"),
                 env_extra=_words_env())
    assert result.returncode == 0, result.stderr
    fill(small_disk)
    for wal in camp.glob("campaign.sqlite-*"):
        wal.unlink()  # a fresh open must create its WAL again, on the full disk
    result = run(tmp_path, "fuzz", "--campaign", str(camp), "--count", "6", "--ops", "topk",
                 "--backends", "rocm-gfx942", "--jobs", "1", "--no-shrink", "--corpus", str(tmp_path / "corpus"),
                 env_extra=_words_env())
    assert result.returncode == 2 and "Traceback" not in result.stderr, result.stderr
    last = result.stderr.strip().splitlines()[-1]
    assert "corrupt" not in last and "campaign" in last, last


def _candidates(camp: Path) -> int:
    import sqlite3

    if not (camp / "campaign.sqlite").exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{camp / 'campaign.sqlite'}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return 0


def test_disk_filling_mid_campaign_stops_cleanly_with_state_intact(tmp_path, small_disk):
    import sqlite3

    camp = small_disk / "camp"
    args = ["fuzz", "--campaign", str(camp), "--count", "400", "--ops", "topk,scatter", "--backends",
            "rocm-gfx942", "--jobs", "1", "--no-shrink", "--corpus", str(tmp_path / "corpus")]
    argv = [SHAPEFUZZ, "--iree-bin", str(make_fake_iree(tmp_path / "bin")), *args]
    env = fake_env(tmp_path, "words", FAKE_IREE_DELAY="0.02")
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 120
    while time.time() < deadline and _candidates(camp) < 3:  # well under way, on a loaded machine too
        time.sleep(0.1)
    filler = fill(small_disk)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert "full" in last and str(camp) in last and "corrupt" not in last, last
    filler.unlink()
    for extra in small_disk.glob("f*"):
        extra.unlink()
    con = sqlite3.connect(camp / "campaign.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    tried = con.execute("SELECT COUNT(*) FROM candidates").fetchone()[0]
    con.close()
    assert 0 < tried < 400
    resumed = run(tmp_path, *args[:3], "--count", str(tried + 2), *args[5:], env_extra=_words_env())
    assert resumed.returncode == 0, resumed.stderr


# ----------------------------------------------------------------------------- bad files and bad numbers

GOOD_HEADER = None


@pytest.mark.parametrize("header,named", [
    ('// shapefuzz-case: {"family":"topk","version":1}', "missing 'params'"),
    ('// shapefuzz-case: {"family":"topk","params":{"k":"x"},"version":1}', "params"),
    ('// shapefuzz-case: {"family":"topk","params":[],"version":1}', "params: expected an object"),
    ('// shapefuzz-case: {"family":7,"params":{},"version":1}', "family"),
    ('// shapefuzz-case: {"family":"nope","params":{},"version":1}', "family"),
    ('// shapefuzz-case: ' + "[" * 50000 + "]" * 50000, "nested too deeply"),
    ('// shapefuzz-case: {"family":"topk","params":{"shape":[100000,100000,100],"k":1,"dim":0},"version":1}',
     "params"),
    ('// shapefuzz-case: {not json', "not valid JSON"),
])
def test_bad_case_header_is_one_line_exit_2(tmp_path, header, named):
    one_line(run(tmp_path, "check", str(generated_case(tmp_path, header)), "--backends", "rocm-gfx942"), 2, named)


@pytest.mark.parametrize("args,named", [
    (["--compile-timeout", "-1"], "--compile-timeout"),
    (["--compile-timeout", "nan"], "--compile-timeout"),
    (["--compile-timeout", "inf"], "--compile-timeout"),
    (["--compile-timeout", "0"], "--compile-timeout"),
    (["--seed", "-1"], "--seed"),
    (["--dynamic-size", "0"], "--dynamic-size"),
    (["--max-array-bytes", "-5"], "--max-array-bytes"),
    (["--max-array-bytes", "lots"], "--max-array-bytes"),
])
def test_bad_numbers_for_check_are_one_line_exit_2(tmp_path, args, named):
    one_line(run(tmp_path, "check", str(generated_case(tmp_path)), "--backends", "rocm-gfx942", *args), 2, named)


@pytest.mark.parametrize("command", [
    ["shrink", "X", "--time", "0"], ["shrink", "X", "--time", "nan"], ["shrink", "X", "--compile-timeout", "-1"],
    ["fuzz", "--compile-timeout", "nan"], ["fuzz", "--seed", "-1"], ["fuzz", "--time", "0"],
    ["replay", "C", "--compile-timeout", "-1"], ["corpus", "add", "X", "--seed", "-1"], ["gen", "--op", "topk", "--seed", "-1"],
    ["fuzz", "--time", "9" * 400], ["fuzz", "--jobs", "100000"], ["shrink", "X", "--time", "9" * 30 + "d"],
])
def test_bad_numbers_elsewhere_are_one_line_exit_2(tmp_path, command):
    source = generated_case(tmp_path)
    (tmp_path / "C").mkdir()
    args = [str(source) if a == "X" else str(tmp_path / "C") if a == "C" else a for a in command]
    if args[0] == "fuzz":
        args += ["--campaign", str(tmp_path / "camp")]
    one_line(run(tmp_path, *args), 2)
    assert not (tmp_path / "camp").exists()


def test_argument_type_that_does_not_parse_is_one_line_exit_2(tmp_path):
    from support.fakes import make_fake_toolchain

    bin_dir = make_fake_toolchain(tmp_path / "bin", "ok")  # the real iree-opt judges the file
    source = tmp_path / "bad.mlir"
    source.write_text(PLAIN_MLIR.replace("%a: tensor<4xf32>", "%a: tensor<4xAxf32>"))
    result = subprocess.run([SHAPEFUZZ, "--iree-bin", str(bin_dir), "check", str(source), "--backends", "llvm-cpu"],
                            capture_output=True, text=True, timeout=120, env=fake_env(tmp_path, "ok"))
    one_line(result, 2, "does not verify")
    from shapefuzz.errors import InvalidInputError
    from shapefuzz.iree.mlirinfo import function_info

    with pytest.raises(InvalidInputError, match="'A' is not a size"):
        function_info(source.read_text())


def test_huge_arrays_are_refused_before_allocation(tmp_path):
    source = tmp_path / "huge.mlir"
    source.write_text(PLAIN_MLIR.replace("tensor<4xf32>", "tensor<200000x200000xf32>"))
    line = one_line(run(tmp_path, "check", str(source), "--backends", "rocm-gfx942"), 2, "array cap")
    assert "149.0 GiB" in line
    one_line(run(tmp_path, "check", str(generated_case(tmp_path)), "--backends", "rocm-gfx942",
                 "--max-array-bytes", "16"), 2, "array cap")
    from shapefuzz.schema import SchemaError, load_npy

    lie = tmp_path / "out.npy"  # a runtime output whose header claims 4 TiB in a 200-byte file
    header = np.lib.format.header_data_from_array_1_0(np.zeros(1, np.float32))
    header["shape"] = (1 << 40,)
    with open(lie, "wb") as handle:
        np.lib.format.write_array_header_1_0(handle, header)
        handle.write(b"\0" * 64)
    with pytest.raises(SchemaError, match="array cap"):
        load_npy(lie, "out.npy")
    with pytest.raises(SchemaError, match="truncated"):
        load_npy(lie, "out.npy", max_bytes=1 << 50)


def test_limits_that_are_not_limits_are_refused():
    from shapefuzz.errors import UsageError
    from shapefuzz.process.sandbox import Limits

    for bad in (-1, 0, float("nan"), float("inf")):
        with pytest.raises(UsageError):
            Limits(timeout=bad)
    with pytest.raises(UsageError):
        Limits(memory_bytes=0)


def test_enospc_in_process_at_the_lowest_write_seam(tmp_path, monkeypatch, capsys):
    """Where no tmpfs can be mounted: ENOSPC raised by os.write (the seam every file write of ours
    goes through) still gives one line naming the file, exit 2, and the old file whole."""
    import errno

    from shapefuzz.cli import main

    corpus = tmp_path / "corpus"
    entry = hostile_entry(corpus)
    before = (entry / "meta.json").read_bytes()
    real_open = os.open

    def full_disk_open(path, flags, *args, **kwargs):
        if flags & os.O_CREAT and str(tmp_path) in str(path) and str(path).endswith(".tmp"):  # a file's new copy
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(os, "open", full_disk_open)
    monkeypatch.setattr(sys, "argv", ["shapefuzz", "corpus", "mark", entry.name, "fixed", "--corpus", str(corpus)])
    with pytest.raises(SystemExit) as exit_info:
        main()
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "No space left" in err
    assert "meta.json" in err and (entry / "meta.json").read_bytes() == before


def test_entries_we_save_from_garbage_output_pass_our_own_schema(tmp_path):
    """A compiler printing random bytes: its signature and detail are made printable when saved,
    so the entry is not refused by the checks every reader applies."""
    from shapefuzz.corpus import load_entry, save_finding
    from shapefuzz.model import ProcessResult, Stage, Status
    from shapefuzz.triage.signature import signature_for

    garbage = bytes(range(256)).decode("utf-8", errors="replace") * 3 + "\r\nerror: \x1b[31mboom\x00\r\n"
    result = ProcessResult(("iree-compile",), 3, None, False, False, "", garbage, 0.1)
    sig = signature_for("rocm-gfx942", Stage.COMPILE, Status.ERROR, result)
    path, _ = save_finding(tmp_path, _finding(sig.message, detail=garbage))
    entry = load_entry(path)
    assert entry.signature.message == sig.message and "\x00" not in entry.meta["detail"]


def test_header_with_huge_dynamic_sizes_is_refused_before_inputs_are_built(tmp_path):
    """The sizes of `?` dims live in the params; they are checked against the cap too."""
    from shapefuzz.families.generate import draw_case

    params = dict(draw_case("topk", 1).params, shape=[60000, 60000], k=1, dim=1)
    params.update({key: [True, True] for key in params if "dyn" in key})  # every dim a '?'
    assert any("dyn" in key for key in params)
    header = "// shapefuzz-case: " + json.dumps({"family": "topk", "params": params, "version": 1})
    line = one_line(run(tmp_path, "check", str(generated_case(tmp_path, header)), "--backends", "rocm-gfx942"), 2,
                    "array cap")
    assert "60000x60000" in line and "GiB" in line
