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
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent))
from campaign_fakes import make_fake_iree  # noqa: E402

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
    from shapefuzz.generate import draw_case

    return draw_case("topk", 1).params


def _body() -> str:
    from shapefuzz.families import render_case
    from shapefuzz.generate import draw_case

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
