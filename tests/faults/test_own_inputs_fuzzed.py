"""Hypothesis fuzzes shapefuzz's own inputs: `// shapefuzz-case:` headers, meta.json fields and
command-line values. Whatever it draws, a command ends with exit 0 or 2 (3 for replay's unreadable
entries), one error line and no traceback; never 1, which means a finding (the fake compiler here
passes everything, so there is none to find), never our internal-error exit. Commands run in this
process against a fake toolchain (shell scripts), so a draw costs milliseconds."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from support.campaign_fakes import make_fake_iree  # noqa: E402

from shapefuzz.schema import ENV_MAX_ARRAY_BYTES  # noqa: E402

SETTINGS = settings(max_examples=60, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(1 << 70), 1 << 70) | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """A fake toolchain (compiles and verifies anything, no device) and a private probe cache."""
    tmp = tmp_path_factory.mktemp("fuzz")
    bin_dir = make_fake_iree(tmp / "bin")
    old = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "FAKE_IREE_MODE", "SHAPEFUZZ_IREE_BIN")}
    os.environ.update(XDG_CACHE_HOME=str(tmp / "cache"), FAKE_IREE_MODE="ok")
    os.environ.pop("SHAPEFUZZ_IREE_BIN", None)
    yield tmp, bin_dir
    for key, value in old.items():
        if value is None:
            os.environ.pop(key, None)
        else:
            os.environ[key] = value


def shapefuzz(bin_dir: Path, capsys, *args: str) -> tuple[int, str]:
    """Runs the CLI in this process; (exit code, stderr). Asserts the promises on the way out."""
    from shapefuzz.cli import main

    saved_argv, saved_cap = sys.argv, os.environ.get(ENV_MAX_ARRAY_BYTES)
    sys.argv = ["shapefuzz", "--iree-bin", str(bin_dir), *args]
    code = 0
    try:
        main()
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 2)
    finally:
        sys.argv = saved_argv
        if saved_cap is None:
            os.environ.pop(ENV_MAX_ARRAY_BYTES, None)
        else:
            os.environ[ENV_MAX_ARRAY_BYTES] = saved_cap
    out, err = capsys.readouterr()
    event(f"{args[0]} exit {code}")
    assert "Traceback" not in err and "Traceback" not in out, err
    assert code in (0, 2, 3), (code, args, err)
    if code == 2:  # (3 is replay's table saying some entry is unreadable)
        errors = [line for line in err.strip().splitlines() if line.startswith("shapefuzz:")]
        assert len(errors) == 1, err
    return code, err


def _topk_params() -> dict:
    from shapefuzz.families.generate import draw_case

    return draw_case("topk", 1).params


def _body() -> str:
    from shapefuzz.families import render_case
    from shapefuzz.families.generate import draw_case

    return render_case(draw_case("topk", 1)).split("\n", 1)[1]


@st.composite
def headers(draw) -> str:
    """A case header: random JSON, or a real one with a field replaced, dropped or added."""
    if draw(st.booleans()):
        payload = draw(JSON)
    else:
        params = _topk_params()
        key = draw(st.sampled_from(sorted(params) + ["extra"]))
        action = draw(st.sampled_from(["replace", "drop"]))
        if action == "drop":
            params.pop(key, None)
        else:
            params[key] = draw(JSON)
        payload = {"family": draw(st.sampled_from(["topk", "conv", "scatter", "nope", 3])), "params": params,
                   "version": draw(st.sampled_from([1, 2, "1", None]))}
    return "// shapefuzz-case: " + json.dumps(payload)


@SETTINGS
@given(header=headers())
def test_case_headers(env, capsys, header):
    tmp, bin_dir = env
    path = tmp / "case.mlir"
    path.write_text(header + "\n" + _body())
    shapefuzz(bin_dir, capsys, "check", str(path), "--backends", "rocm-gfx942", "--no-confirm")


META_FIELDS = ["format", "id", "signature", "signature_text", "backend", "family", "params", "seed", "backends",
               "toolchain_version", "toolchain_versions", "compile_command", "first_seen", "last_seen", "count",
               "expected_state", "flaky", "sizes", "inputs", "expected", "detail", "notes", "last_replay", "fixed_in",
               "bisect", "triage"]


@pytest.fixture(scope="module")
def corpus(env):
    from shapefuzz.corpus import Finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    tmp, _ = env
    folder = tmp / "corpus"
    mlir = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    entry, _ = save_finding(folder, Finding(Signature("rocm-gfx942", Stage.COMPILE, Status.ERROR, "boom"), mlir,
                                            ("rocm-gfx942",), None, 0, None, None, "3.13.0",
                                            ["iree-compile", "reproducer.mlir"], "error: boom"))
    return folder, entry, json.loads((entry / "meta.json").read_text())


@SETTINGS
@given(field=st.sampled_from(META_FIELDS + ["surprise"]), value=JSON, drop=st.booleans())
def test_meta_json_fields(env, corpus, capsys, field, value, drop):
    _, bin_dir = env
    folder, entry, original = corpus
    meta = dict(original)
    if drop:
        meta.pop(field, None)
    else:
        meta[field] = value
    (entry / "meta.json").write_text(json.dumps(meta))
    try:
        code, _ = shapefuzz(bin_dir, capsys, "corpus", "list", str(folder))
        assert code == 0
        shapefuzz(bin_dir, capsys, "corpus", "show", entry.name, "--corpus", str(folder))
        code, _ = shapefuzz(bin_dir, capsys, "replay", str(folder), "--no-confirm")
        assert code in (0, 3)  # the fake compiler passes everything: no regression to report
        for fmt in ("run-module", "lit", "pytest", "issue", "iree-test-suites"):
            shapefuzz(bin_dir, capsys, "export", entry.name, "--corpus", str(folder), "--format", fmt,
                      "-o", str(folder.parent / f"exported-{fmt}"))
    finally:
        (entry / "meta.json").write_text(json.dumps(original))


VALUES = st.one_of(st.text(max_size=10), st.integers(-(1 << 66), 1 << 66).map(str),
                   st.floats(allow_nan=True, allow_infinity=True).map(repr),
                   st.sampled_from(["nan", "-inf", "0", "-1", "1e999", "0x10", "1G", "5 k", "", "none"]))


@SETTINGS
@given(option=st.sampled_from(["--compile-timeout", "--seed", "--dynamic-size", "--max-array-bytes"]), value=VALUES)
def test_command_line_values(env, capsys, option, value):
    tmp, bin_dir = env
    path = tmp / "plain.mlir"
    path.write_text("func.func @main(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {\n  return %a : tensor<?x3xf32>\n}\n")
    shapefuzz(bin_dir, capsys, "check", str(path), "--backends", "rocm-gfx942", "--no-confirm", f"{option}={value}")


@SETTINGS
@given(value=VALUES | st.from_regex(r"\d{1,30}(\.\d{1,3})?[smhd]?(\d{1,30}[smhd])?", fullmatch=True))
def test_durations(env, capsys, value):
    """Every --time value either parses to a finite budget or is one line; a campaign with an
    unknown family then stops before touching its folder, so nothing runs here."""
    tmp, bin_dir = env
    code, _ = shapefuzz(bin_dir, capsys, "fuzz", f"--time={value}", "--ops", "nope", "--campaign", str(tmp / "camp"))
    assert code == 2 and not (tmp / "camp").exists()


# ----------------------------------------------------------------------------- issue 20: new surfaces

ENV_VALUES = VALUES | st.text(alphabet="0123456789.kKmMgGtTiIbB -+e", max_size=40) | st.sampled_from(
    ["9" * 400, "8B", "1.5G", "0.4", "1e3", " 1 G ", "\n1G", "1G\n"])


@SETTINGS
@given(value=ENV_VALUES)
def test_array_cap_from_the_environment(env, capsys, monkeypatch, value):
    """SHAPEFUZZ_MAX_ARRAY_BYTES: a size is used, anything else is one line (never a silent 1 GiB)."""
    tmp, bin_dir = env
    path = tmp / "plain.mlir"
    path.write_text("func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n")
    monkeypatch.setenv(ENV_MAX_ARRAY_BYTES, value)
    from shapefuzz.errors import UsageError
    from shapefuzz.schema import parse_bytes

    try:
        cap = parse_bytes(value, ENV_MAX_ARRAY_BYTES)
    except UsageError:
        cap = None
    code, err = shapefuzz(bin_dir, capsys, "check", str(path), "--backends", "rocm-gfx942", "--no-confirm")
    if cap is None:
        assert code == 2 and ENV_MAX_ARRAY_BYTES in err, (value, err)
    else:
        assert code == (0 if cap >= 16 else 2), (value, cap, err)


@SETTINGS
@given(kind=st.sampled_from(["fifo", "folder", "symlink-to-fifo", "dangling", "empty", "socket"]),
       where=st.sampled_from(["input", "inputs", "lock", "store", "output"]))
def test_special_files_where_we_read_or_write(env, capsys, kind, where):
    """A FIFO, socket, folder or dangling link wherever shapefuzz opens a file: one line or
    (where the file is ours to replace) success; never a hang, never a crash."""
    import shutil
    import socket
    import signal

    from shapefuzz.corpus import Finding, save_finding
    from shapefuzz.model import Signature, Stage, Status

    assume(not (where == "store" and kind == "empty"))  # an empty database is a new campaign: it would run
    tmp, bin_dir = env
    case = tmp / "special"
    shutil.rmtree(case, ignore_errors=True)
    case.mkdir()
    mlir = "func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n  return %a : tensor<4xf32>\n}\n"
    (case / "plain.mlir").write_text(mlir)
    corpus = case / "corpus"
    entry, _ = save_finding(corpus, Finding(Signature("rocm-gfx942", Stage.COMPILE, Status.ERROR, "boom"), mlir,
                                            ("rocm-gfx942",), None, 0, None, None, "3.13.0",
                                            ["iree-compile", "reproducer.mlir"], "error: boom"))
    target = {"input": case / "in.mlir", "inputs": case / "in.npz", "lock": corpus / ".lock",
              "store": case / "camp" / "campaign.sqlite", "output": case / "out.mlir"}[where]
    target.parent.mkdir(exist_ok=True)
    target.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(target)
    elif kind == "folder":
        target.mkdir()
    elif kind == "symlink-to-fifo":
        os.mkfifo(case / "elsewhere")
        os.symlink(case / "elsewhere", target)
    elif kind == "dangling":
        os.symlink(case / "nowhere", target)
    elif kind == "empty":
        target.write_bytes(b"")
    else:
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(target))
        server.close()
    argv = {"input": ["check", str(target), "--backends", "rocm-gfx942"],
            "inputs": ["check", str(case / "plain.mlir"), "--backends", "rocm-gfx942", "--inputs", str(target)],
            "lock": ["corpus", "mark", entry.name, "fixed", "--corpus", str(corpus)],
            "store": ["fuzz", "--campaign", str(case / "camp"), "--corpus", str(case / "c2"), "--count", "1",
                      "--ops", "topk", "--backends", "rocm-gfx942", "--jobs", "1"],
            "output": ["export", entry.name, "--corpus", str(corpus), "-o", str(target)]}[where]

    def hung(signum, frame):
        raise AssertionError(f"hung on {kind} {where}")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(60)
    try:
        shapefuzz(bin_dir, capsys, *argv)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    if kind in ("fifo", "socket", "symlink-to-fifo"):
        assert not target.is_file()  # never replaced by a regular file


@SETTINGS
@given(arrays=st.lists(st.tuples(st.lists(st.integers(0, 5), max_size=3),
                                 st.sampled_from(["float32", "float64", "int32", "bool"])), max_size=4))
def test_inputs_of_any_arity_and_shape(env, capsys, arrays):
    """`--inputs` with any number of arrays of any shape and type: the right ones run, every
    other is one line and exit 2 (the fake runtime fails every run: exit 1 would be a finding)."""
    import numpy as np

    tmp, bin_dir = env
    path = tmp / "two.mlir"
    path.write_text("func.func @main(%a: tensor<4xf32>, %b: tensor<?x2xi32>) -> tensor<4xf32> {\n"
                    "  return %a : tensor<4xf32>\n}\n")
    npz = tmp / "arity.npz"
    np.savez(npz, *[np.zeros(shape, dtype) for shape, dtype in arrays])
    fits = (len(arrays) == 2 and arrays[0] == ([4], "float32") and arrays[1][1] == "int32"
            and len(arrays[1][0]) == 2 and arrays[1][0][1] == 2)
    code, err = shapefuzz(bin_dir, capsys, "check", str(path), "--backends", "rocm-gfx942", "--no-confirm",
                          "--inputs", str(npz))
    assert code == (0 if fits else 2), (arrays, err)
