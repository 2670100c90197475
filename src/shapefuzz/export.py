"""Exporting a corpus entry as a test IREE (or anyone) can run as written.

- `lit`: one MLIR file with RUN lines for IREE's lit suite. While the entry is expected to fail,
  the RUN lines assert today's failure (`not iree-compile ... | FileCheck` with the error as a
  CHECK line, `not --crash` for crashes, `not iree-run-module --expected_output=...` for wrong
  numbers) and the comment below them gives the lines that should pass once it is fixed; an entry
  marked fixed gets the passing lines as RUN lines.
- `run-module`: a folder with the reproducer, `inputs/*.npy`, `expected/*.npy` and `run.sh`:
  `iree-compile` then `iree-run-module --input=@... --expected_output=@...` (exits non-zero while
  the bug is there).
- `pytest`: one self-contained test file (MLIR and arrays inline) that compiles and runs with the
  `iree-compile`/`iree-run-module` on PATH; strict xfail while the entry is expected to fail, so a
  fix shows up as an unexpected pass.
"""

from __future__ import annotations

import io
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shapefuzz.backends import BACKENDS, Backend
from shapefuzz.corpus import EXPECTED_FIXED, CorpusEntry, atomic_write, comment_text
from shapefuzz.errors import UsageError
from shapefuzz.model import Stage, Status
from shapefuzz.toolchain import Toolchain

FORMATS = ("lit", "run-module", "pytest")
_ELEMENT = {"float32": "f32", "float16": "f16", "float64": "f64", "bool": "i1", "int8": "i8", "int16": "i16",
            "int32": "i32", "int64": "i64", "uint8": "ui8", "uint32": "ui32"}


@dataclass(frozen=True)
class Plan:
    """Everything an exporter needs, resolved once from the entry and the toolchain."""

    entry: CorpusEntry
    backend: Backend
    flags: tuple[str, ...]
    function: str
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None
    failing: bool  # write the test that passes while the bug is there

    @property
    def runs(self) -> bool:
        return self.backend.driver is not None and self.inputs is not None


def plan(entry: CorpusEntry, toolchain: Toolchain, expect: str = "auto") -> Plan:
    from shapefuzz.frontend import input_type_flags
    from shapefuzz.mlirinfo import function_info, random_inputs

    backend = BACKENDS.get(entry.signature.backend)
    if backend is None:
        raise UsageError(f"entry {entry.id}: unknown backend {entry.signature.backend!r}")
    flags = backend.compile_flags(toolchain.probe)
    if flags is None:
        raise UsageError(f"{backend.name} is not supported by this iree-compile ({toolchain.probe.version}); "
                         "pass --iree-bin with a release that has it")
    info = function_info(entry.mlir)
    inputs, expected = entry.inputs, entry.expected
    if inputs is None and entry.case is not None:
        from shapefuzz.oracle import case_expectation

        expectation = case_expectation(entry.case, entry.seed)
        inputs, expected = expectation.inputs, expectation.expected
    elif inputs is None:
        try:
            inputs = random_inputs(info, entry.seed, 4)
        except UsageError:
            inputs = None
    failing = entry.expected_state != EXPECTED_FIXED if expect == "auto" else expect == "failing"
    flags = (*flags, *input_type_flags(entry.mlir))  # --iree-input-type=torch for torch-dialect reproducers
    return Plan(entry, backend, tuple(flags), info.name, inputs, expected, failing)


# ----------------------------------------------------------------------------- value formatting


def _element(array: np.ndarray) -> str:
    try:
        return _ELEMENT[array.dtype.name]
    except KeyError:
        raise UsageError(f"cannot write {array.dtype} values for iree-run-module") from None


def _number(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        text = repr(float(value))
        return text[:-2] if text.endswith(".0") else text
    return str(int(value))


def inline_value(array: np.ndarray) -> str:
    """`4x3xf32=1 2 3 ...` as iree-run-module's --input/--expected_output take it."""
    shape = "x".join(str(d) for d in array.shape)
    kind = f"{shape}x{_element(array)}" if shape else _element(array)
    return f"{kind}=" + " ".join(_number(v) for v in array.reshape(-1).tolist())


def _check_text(detail: str, status: Status) -> str | None:
    """What FileCheck should find: the fatal message of a crash, else the first error line."""
    if status == Status.CRASH:
        fatal = re.search(r"(LLVM ERROR:.*|Assertion [`'].*' failed)", detail)
        return fatal.group(1).strip()[:200] if fatal else None
    for line in detail.splitlines():
        match = re.search(r"error: (.+)$", line)
        if match:
            return "error: " + match.group(1).strip()
    return None


def _filecheck_literal(text: str) -> str:
    return text.replace("{{", "{{[{][{]}}").replace("[[", "{{[[][[]}}")


# ----------------------------------------------------------------------------- lit


# Lines lit acts on wherever they appear in the file: a reproducer holding one could run a command.
_LIT_DIRECTIVE = re.compile(r"\b(RUN|DEFINE|REDEFINE|REQUIRES|UNSUPPORTED|XFAIL|ALLOW_RETRIES)\s*:|\bEND\.")


def to_lit(p: Plan) -> str:
    sig = p.entry.signature
    directive = _LIT_DIRECTIVE.search(p.entry.mlir)
    if directive:
        raise UsageError(f"entry {p.entry.id}: its reproducer holds the lit directive {directive.group(0)!r}; "
                         "refusing to export it as a lit test (use --format run-module)")
    flags = " ".join(shlex.quote(f) for f in p.flags)
    compile_ok = f"iree-compile %s {flags} -o %t.vmfb"
    run = None
    if p.runs:
        parts = [f"iree-run-module --module=%t.vmfb --device={shlex.quote(p.backend.driver)} "
                 f"{shlex.quote('--function=' + p.function)}"]
        parts += [f"--input={shlex.quote(inline_value(a))}" for a in p.inputs]
        if p.expected is not None:
            parts += [f"--expected_output={shlex.quote(inline_value(a))}" for a in p.expected]
        run = " ".join(parts)
    passing = [compile_ok] + ([run] if run else [])
    header = [
        f"// Regression test exported by shapefuzz from corpus entry {p.entry.id}.",
        f"// Signature: {comment_text(sig)}",
        f"// Seen with IREE {comment_text(', '.join(p.entry.toolchain_versions))}; "
        f"expected state: {p.entry.expected_state}.",
        "//",
    ]
    lines: list[str] = []
    if not p.failing or sig.status in (Status.TIMEOUT, Status.OOM):
        lines += [f"// RUN: {cmd}" for cmd in passing]
        if p.failing:
            lines.append(f"// (a {sig.status.value} cannot be asserted by lit; these lines fail until it is fixed)")
    else:
        nots = "not --crash" if sig.status == Status.CRASH else "not"
        check = "[FAILED]" if sig.status == Status.MISMATCH else _check_text(p.entry.meta.get("detail") or "", sig.status)
        command = f"iree-compile %s {flags} -o %t.vmfb" if sig.stage == Stage.COMPILE else run
        if sig.stage != Stage.COMPILE:
            lines.append(f"// RUN: {compile_ok}")
        lines.append(f"// RUN: {nots} {command}" + (" 2>&1 | FileCheck %s" if check else ""))
        if check:
            lines.append(f"// CHECK: {_filecheck_literal(comment_text(check))}")
    if p.failing:
        lines += ["//", "// Once fixed, these commands pass (use them as the run lines then):"]
        lines += [f"//   {cmd}" for cmd in passing]
    return "\n".join(header + lines) + "\n\n" + p.entry.mlir.rstrip("\n") + "\n"


# ----------------------------------------------------------------------------- run-module


def run_module_script(p: Plan) -> str:
    compile_argv = ["iree-compile", "reproducer.mlir", *p.flags, "-o", "module.vmfb"]
    lines = [
        "#!/bin/sh",
        f"# Exported by shapefuzz from corpus entry {p.entry.id}",
        f"# signature: {comment_text(p.entry.signature)}",
        "# Exits non-zero while the bug is there. Needs iree-compile and iree-run-module on PATH.",
        "set -e",
        'cd "$(dirname "$0")"',
        " ".join(shlex.quote(w) for w in compile_argv),
    ]
    if p.runs:
        lines.append(" ".join(shlex.quote(w) for w in run_module_argv(p)))
    return "\n".join(lines) + "\n"


def run_module_argv(p: Plan) -> list[str]:
    argv = ["iree-run-module", "--module=module.vmfb", f"--device={p.backend.driver}", f"--function={p.function}"]
    argv += [f"--input=@inputs/arg{i}.npy" for i in range(len(p.inputs or []))]
    argv += [f"--expected_output=@expected/result{i}.npy" for i in range(len(p.expected or []))]
    return argv


def _real_folder(path: Path) -> Path:
    """`path` as a folder to write into: created if missing, never a symbolic link."""
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; give a real folder to export into")
    path.mkdir(parents=True, exist_ok=True)
    return path


def write_run_module(p: Plan, out: Path) -> list[Path]:
    """Only fixed names under `out`; each file written atomically (a link in the way is replaced,
    never followed)."""
    _real_folder(out)
    written = [out / "reproducer.mlir"]
    atomic_write(written[0], p.entry.mlir.encode())
    for sub, stem, arrays in (("inputs", "arg", p.inputs), ("expected", "result", p.expected)):
        if p.runs and arrays:
            _real_folder(out / sub)
            for i, array in enumerate(arrays):
                path = out / sub / f"{stem}{i}.npy"
                buffer = io.BytesIO()
                np.save(buffer, np.require(array, requirements="C"), allow_pickle=False)
                atomic_write(path, buffer.getvalue())
                written.append(path)
    script = out / "run.sh"
    atomic_write(script, run_module_script(p).encode(), mode=0o755)
    written.append(script)
    return written


# ----------------------------------------------------------------------------- pytest


def _array_literal(array: np.ndarray) -> str:
    return f"np.array({array.reshape(-1).tolist()!r}, dtype=np.{array.dtype.name}).reshape({tuple(array.shape)!r})"


def to_pytest(p: Plan) -> str:
    name = re.sub(r"\W", "_", p.entry.id)
    inputs = "[" + ", ".join(_array_literal(a) for a in (p.inputs or [])) + "]" if p.runs else "None"
    expected = "[" + ", ".join(_array_literal(a) for a in p.expected) + "]" if p.runs and p.expected else "None"
    xfail = (f"@pytest.mark.xfail(strict=True, reason={str(p.entry.signature)[:200]!r})\n" if p.failing else "")
    doc = "\n".join([
        f"Regression test exported by shapefuzz from corpus entry {p.entry.id}.",
        "",
        f"Signature: {comment_text(p.entry.signature)}",
        f"Seen with IREE {comment_text(', '.join(p.entry.toolchain_versions))}; "
        f"expected state: {p.entry.expected_state}.",
        "Strict xfail while the bug is there: a fix shows up as an unexpected pass." if p.failing else "",
        "Needs iree-compile and iree-run-module on PATH (pip install iree-base-compiler iree-base-runtime).",
    ])
    return f'''{doc!r}

import shutil
import subprocess

import numpy as np
import pytest

MLIR = {p.entry.mlir!r}
FLAGS = {list(p.flags)!r}
DEVICE = {p.backend.driver if p.runs else None!r}
FUNCTION = {p.function!r}


def _inputs():
    return {inputs}


def _expected():
    return {expected}


@pytest.mark.skipif(shutil.which("iree-compile") is None, reason="iree-compile not on PATH")
{xfail}def test_{name}(tmp_path):
    source = tmp_path / "reproducer.mlir"
    source.write_text(MLIR)
    vmfb = tmp_path / "module.vmfb"
    compiled = subprocess.run(["iree-compile", str(source), *FLAGS, "-o", str(vmfb)],
                              capture_output=True, text=True, timeout=600)
    assert compiled.returncode == 0, compiled.stderr[-2000:]
    inputs, expected = _inputs(), _expected()
    if DEVICE is None or inputs is None:
        return
    argv = ["iree-run-module", f"--module={{vmfb}}", f"--device={{DEVICE}}", f"--function={{FUNCTION}}"]
    for i, array in enumerate(inputs):
        np.save(tmp_path / f"arg{{i}}.npy", array)
        argv.append(f"--input=@{{tmp_path / f'arg{{i}}.npy'}}")
    outputs = [tmp_path / f"out{{i}}.npy" for i in range(len(expected or []))]
    argv += [f"--output=@{{path}}" for path in outputs]
    ran = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    assert ran.returncode == 0, ran.stderr[-2000:]
    for path, want in zip(outputs, expected or []):
        got = np.load(path)
        assert got.shape == want.shape
        if want.dtype.kind in "iub":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
'''


# ----------------------------------------------------------------------------- entry point


def export_entry(entry: CorpusEntry, fmt: str, toolchain: Toolchain, out: str | os.PathLike | None = None,
                 expect: str = "auto") -> list[Path]:
    """Writes the export and returns the files written (the first is the one to run)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
    p = plan(entry, toolchain, expect)
    # Default names come from the id, which load_entry validated ([a-z0-9-]): never a path.
    if fmt == "lit":
        path = Path(out) if out else Path(f"{entry.id}.mlir")
        atomic_write(path, to_lit(p).encode())
        return [path]
    if fmt == "pytest":
        path = Path(out) if out else Path(f"test_{re.sub(r'[^a-z0-9]', '_', entry.id)}.py")
        atomic_write(path, to_pytest(p).encode())
        return [path]
    folder = Path(out) if out else Path(f"{entry.id}.run-module")
    written = write_run_module(p, folder)
    return [written[-1], *written[:-1]]
