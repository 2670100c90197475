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
import json
import os
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shapefuzz.backends import BACKENDS, Backend
from shapefuzz.corpus import EXPECTED_FIXED, CorpusEntry, atomic_write, comment_text, scrub
from shapefuzz.errors import ShapefuzzError, UsageError
from shapefuzz.export_checks import topk_ambiguous
from shapefuzz.model import Stage, Status
from shapefuzz.toolchain import Toolchain
from shapefuzz.triage.issue import backtrace_lines, issue_title, lane_lines, regression_line, without_header

FORMATS = ("lit", "run-module", "pytest", "issue", "iree-test-suites")
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
    rule: dict  # the oracle's comparison for this entry (export_checks.compare)

    @property
    def runs(self) -> bool:
        return self.backend.driver is not None and self.inputs is not None

    @property
    def ties(self) -> bool:
        """Top-k indices are returned and some slice has ties: more than one answer is right, so
        `iree-run-module --expected_output` (exact) would fail a correct backend."""
        if self.rule.get("kind") != "topk" or "indices" not in self.rule["results"] or not self.inputs:
            return False
        return topk_ambiguous(self.inputs[0], self.rule["dim"], self.rule["k"], self.rule["largest"])


def comparison_rule(entry: CorpusEntry) -> dict:
    """The oracle's comparison for the entry's family as a rule exported tests apply: top-k
    indices by the values they select, exact where the family's inputs keep sums exact (scatter
    with duplicate coordinates included), the family's tolerance elsewhere."""
    family, params = entry.meta.get("family"), entry.meta.get("params") or {}
    if family == "topk" and {"dim", "k", "largest"} <= set(params):
        use = params.get("use", "both")
        return {"kind": "topk", "dim": int(params["dim"]), "k": int(params["k"]), "largest": bool(params["largest"]),
                "labels": params.get("indices") == "arg",
                "results": [name for name in ("values", "indices") if use in (name, "both")]}
    if family in ("scatter", "one_hot") or (family == "conv" and params.get("acc") != "f16"):
        return {"kind": "elementwise", "rtol": 0.0, "atol": 0.0}
    if family == "conv_transpose" and params.get("dtype") in ("f32", "f16"):
        rtol, atol = (1e-5, 1e-4) if params["dtype"] == "f32" else (2e-3, 2e-2)
        return {"kind": "elementwise", "rtol": rtol, "atol": atol}
    return {"kind": "elementwise", "rtol": None, "atol": None}  # the dtype's tolerance, exact for integers


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
    return Plan(entry, backend, tuple(flags), info.name, inputs, expected, failing, comparison_rule(entry))


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


_TIES = ("its top-k indices have ties (equal values within the first k+1 of a slice), so more than one "
         "answer is right and iree-run-module's exact --expected_output would fail a correct backend")


def cannot_represent(p: Plan, fmt: str) -> None:
    """One UsageError line when `fmt` cannot state the oracle's comparison for this entry."""
    if p.ties and p.runs and fmt in ("lit", "iree-test-suites"):
        raise UsageError(f"{fmt} cannot represent entry {p.entry.id}: {_TIES}; use --format run-module or pytest, "
                         "which check indices by the values they select")


def _lit_safe(value: object) -> str:
    """Text for a lit comment or CHECK line: one line, and no lit keyword (lit finds `RUN:` anywhere
    in a line, so an error message quoting one would become a command)."""
    return _LIT_DIRECTIVE.sub(lambda m: m.group(0).replace(":", " :").replace("END.", "END ."), comment_text(value))


def to_lit(p: Plan) -> str:
    cannot_represent(p, "lit")
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
        f"// Signature: {_lit_safe(sig)}",
        f"// Seen with IREE {_lit_safe(', '.join(p.entry.toolchain_versions))}; "
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
            lines.append(f"// CHECK: {_filecheck_literal(_lit_safe(check))}")
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
        if p.ties and p.expected is not None:
            lines.append("python3 check.py  # top-k indices with ties: judged by the values they select")
    return "\n".join(lines) + "\n"


def run_module_argv(p: Plan) -> list[str]:
    argv = ["iree-run-module", "--module=module.vmfb", f"--device={p.backend.driver}", f"--function={p.function}"]
    argv += [f"--input=@inputs/arg{i}.npy" for i in range(len(p.inputs or []))]
    if p.ties:  # written out and judged by check.py, as the oracle judges them
        argv += [f"--output=@outputs/result{i}.npy" for i in range(len(p.expected or []))]
    else:
        # A .npy of integers reads back as si32 and IREE's results are signless i32, which
        # --expected_output counts as a mismatch: integers go inline, typed as the function's.
        argv += [f"--expected_output={inline_value(a)}" if a.dtype.kind in "iub" else
                 f"--expected_output=@expected/result{i}.npy" for i, a in enumerate(p.expected or [])]
    return argv


def _real_folder(path: Path) -> Path:
    """`path` as a folder to write into: created if missing, never a symbolic link."""
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; give a real folder to export into")
    path.mkdir(parents=True, exist_ok=True)
    return path


def checks_source() -> str:
    """export_checks.py as text, to be copied into an exported test."""
    return Path(__file__).with_name("export_checks.py").read_text()


def check_script(p: Plan) -> str:
    """check.py of a run-module folder: the oracle's comparison on outputs/ against expected/."""
    return checks_source() + f'''

RULE = {p.rule!r}

if __name__ == "__main__":
    import os
    import sys

    os.chdir(os.path.dirname(os.path.abspath(__file__)))
    inputs = [np.load(f"inputs/arg{{i}}.npy") for i in range({len(p.inputs or [])})]
    expected = [np.load(f"expected/result{{i}}.npy") for i in range({len(p.expected or [])})]
    actual = [np.load(f"outputs/result{{i}}.npy") for i in range({len(p.expected or [])})]
    problem = compare(RULE, inputs, expected, actual)
    print(f"[FAILED] {{problem}}" if problem else "[SUCCESS] every result matches the reference")
    sys.exit(1 if problem else 0)
'''


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
    if p.runs and p.ties and p.expected is not None:
        _real_folder(out / "outputs")
        written.append(out / "check.py")
        atomic_write(written[-1], check_script(p).encode())
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
    checks = checks_source().replace("import numpy as np\n", "", 1).strip("\n")
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
RULE = {p.rule!r}  # the oracle's comparison: top-k indices by what they select, ties allowed

# ---- shapefuzz export_checks.py, copied verbatim ----
{checks}
# ---- end of export_checks.py ----


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
    if expected is not None:
        problem = compare(RULE, inputs, expected, [np.load(path) for path in outputs])
        assert problem is None, problem
'''


# ----------------------------------------------------------------------------- issue


@dataclass(frozen=True)
class IssueContext:
    """What the bug report needs beyond the entry: facts about the toolchain it is filed against."""

    version_text: str  # `iree-compile --version`, as printed
    verdicts: tuple[str, ...]  # one line per backend the entry was checked on, with this toolchain
    detail: str = ""  # the error (or mismatch) its own backend gives today, paths cut


def issue_context(p: Plan, toolchain: Toolchain) -> IssueContext:
    """Runs `iree-compile --version` and re-checks the reproducer on the backends the entry was
    checked on (that compile here), so the report says what this toolchain does today."""
    from shapefuzz.replay import check_entry
    from shapefuzz.sandbox import Limits, run_sandboxed

    shown = run_sandboxed([str(toolchain.compile_bin), "--version"], Limits(timeout=60.0))
    version_text = (shown.stdout + shown.stderr).strip() or f"(iree-compile --version exited {shown.returncode})"
    probe = toolchain.probe
    lanes = (p.entry.meta.get("bug") or {}).get("lanes") or []  # every lane where it reproduced
    names = [b for b in dict.fromkeys([p.backend.name, *p.entry.backends, *lanes])
             if b in BACKENDS and BACKENDS[b].compiles(probe)]
    lines = [f"{b}: not supported by this iree-compile" for b in p.entry.backends
             if b in BACKENDS and not BACKENDS[b].compiles(probe)]
    try:
        report = check_entry(p.entry, toolchain, names, confirm=False)
    except ShapefuzzError as error:
        return IssueContext(version_text, (*lines, f"could not re-check it here: {error}"))
    if report.verify_error:
        lines.insert(0, "the reproducer does not verify with this toolchain: "
                        + (report.verify_error.strip().splitlines() or ["?"])[0][:200])
    detail = ""
    for r in report.results:
        if r.failed and r.backend == p.backend.name:
            detail = scrub(r.detail)
        if r.failed:
            same = r.signature == p.entry.signature
            what = "fails the same way (this issue)" if same else f"fails differently: `{r.signature}`"
        elif r.status == Status.SKIPPED or (r.status == Status.OK and r.stage == Stage.COMPILE):
            what = "compiles (no device to run it here)"
        elif r.status == Status.UNSUPPORTED:
            what = "unsupported by the target: " + (r.detail.strip().splitlines() or [""])[0][:160]
        else:
            what = "passes (matches the reference)" if r.stage == Stage.COMPARE else f"passes {r.stage.value}"
        lines.append(f"{r.backend}: {what}")
    return IssueContext(version_text, tuple(lines), detail)


def _fenced(text: str, lang: str = "") -> list[str]:
    """A Markdown code block that the text cannot close early (a fence longer than any run of
    backticks inside it)."""
    runs = [len(r) for r in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    return [fence + lang, *text.rstrip("\n").splitlines(), fence]


def _components(p: Plan) -> list[str]:
    from shapefuzz.frontend import is_torch

    sig = p.entry.signature
    parts = ["Runtime"] if sig.stage == Stage.RUN else ["Compiler"]
    return (["Frontends"] if is_torch(p.entry.mlir) else []) + parts


def _what_happened(p: Plan, context: IssueContext) -> list[str]:
    sig, b = p.entry.signature, p.backend
    detail = (p.entry.meta.get("detail") or context.detail).strip()
    target = f"the `{b.name}` backend ({b.description})"
    if sig.stage == Stage.COMPILE:
        head = {
            Status.CRASH: f"`iree-compile` crashes on valid input for {target}.",
            Status.TIMEOUT: f"`iree-compile` does not finish on valid input for {target} (killed at shapefuzz's time limit).",
            Status.OOM: f"`iree-compile` grows its memory without bound on valid input for {target} "
                        "(killed at shapefuzz's address-space cap).",
        }.get(sig.status, f"`iree-compile` rejects valid input for {target}.")
        lines = [head + " The input verifies (`iree-opt` parses and verifies it); it should compile."]
    elif sig.stage == Stage.RUN:
        verb = {Status.CRASH: "crashes", Status.TIMEOUT: "does not finish", Status.OOM: "runs out of memory"}
        lines = [f"The module compiles for {target}, but `iree-run-module --device={b.driver}` "
                 f"{verb.get(sig.status, 'fails')} on it. It should run and return the results below."]
    else:
        against = ("a NumPy reference computed from the op's definition" if p.entry.case is not None else
                   "the expected results saved with the reproducer" if p.expected is not None else
                   "what the other backends compute (majority vote)")
        lines = [f"{target[0].upper()}{target[1:]} computes wrong values: its results differ from {against}."]
    bug = p.entry.meta.get("bug") or {}
    if bug.get("component"):
        lines += ["", f"Where: {bug['component']}" + (f", in the pass `{bug['failing_pass']}`" if bug.get("failing_pass")
                                                       else "") + f" ({bug.get('scope', 'default pipeline')})."]
    frames = backtrace_lines(p.entry.meta)
    if frames:  # a crash: its first lines, then the whole top of the backtrace (whole frames)
        said = [line for line in bug.get("first_lines") or [] if "Please report" not in line][:4]
        lines += ["", *_fenced("\n".join([*said, "Stack dump (top frames):", *frames]), "text")]
    elif detail:
        lines += ["", *_fenced("\n".join(detail.splitlines()[:40]), "text")]
    if p.expected is not None and sig.stage != Stage.COMPILE:
        lines += ["", "Expected results" + (" (NumPy reference):" if p.entry.case is not None else ":"), "", "```text"]
        lines += [_shown(f"result {i}", a) for i, a in enumerate(p.expected)]
        lines.append("```")
        if p.ties:
            lines.append("The top-k indices have ties: any indices that select the expected values are right.")
    lines += ["", f"Normalized signature (shapefuzz): `{sig}`"]
    return lines


def _shown(name: str, array: np.ndarray, limit: int = 64) -> str:
    try:
        element = _element(array)
    except UsageError:
        element = array.dtype.name
    kind = f"{'x'.join(map(str, array.shape))}x{element}" if array.shape else element
    if array.size > limit:
        return f"{name}: {kind} ({array.size} elements; see the attached .npy)"
    return f"{name}: {kind} = {' '.join(_number(v) for v in array.reshape(-1).tolist())}"


def _bisect_line(bisect: dict) -> str:
    """What `shapefuzz bisect` recorded: "worked in X, fails from Y" (and where it was fixed)."""
    def release(key: str) -> str:
        return comment_text(bisect.get(key) or "", 40)

    if release("first_failing"):
        worked = f"worked in {release('last_passing')}, " if release("last_passing") else ""
        fixed = f"; fixed in {release('first_fixed')}" if release("first_fixed") else ""
        return f"- Bisected over released wheels: {worked}fails from {release('first_failing')}{fixed}."
    span = "..".join(comment_text(v, 40) for v in (bisect.get("versions") or [])[:2])
    return f"- Bisected over released wheels ({span}): {comment_text(bisect.get('note') or 'no failing release found')}."


def to_issue(p: Plan, context: IssueContext, files: str) -> str:
    """Markdown following iree-org/iree's bug report form (.github/ISSUE_TEMPLATE/bug_report.yml)."""
    sig, entry = p.entry.signature, p.entry
    own = entry.meta.get("compile_command")  # the entry's own command, word for word, when it has one
    words = own if isinstance(own, list) and own[:1] == ["iree-compile"] else \
        ["iree-compile", "reproducer.mlir", *p.flags, "-o", "module.vmfb"]
    compile_cmd = " ".join(shlex.quote(w) for w in words)
    steps = import_steps(entry, files) + [
        f"1. Save the input IR as `reproducer.mlir` (it is also in `{files}/`, with the `.npy` files below):",
        "", *_fenced(without_header(entry.mlir), "mlir"), "",
        "2. Compile it:", "", "```sh", compile_cmd, "```",
    ]
    if p.runs and sig.stage != Stage.COMPILE:
        run = [w for w in run_module_argv(p) if not w.startswith("--output=")]
        if p.ties:  # the exact check would fail a right answer: print the results instead
            run = [w for w in run if not w.startswith("--expected_output=")]
        steps += ["", "3. Run it with the inputs (`inputs/argN.npy`)" + ("" if p.ties else " and the expected results "
                  "(`expected/resultN.npy`, the NumPy reference)") + ":", "", "```sh",
                  " ".join(shlex.quote(w) for w in run), "```", ""]
        if p.ties:
            steps += [f"(`sh {files}/run.sh` runs both steps and checks the indices by the values they select.)", ""]
        steps += ["Inputs:", "", "```text", *[_shown(f"arg{i}", a) for i, a in enumerate(p.inputs or [])], "```"]
    bisect = entry.meta.get("bisect")
    context_lines = [f"- Found by the shapefuzz fuzzer (op family: {entry.meta.get('family') or 'not generated'}); "
                     f"first seen {entry.meta.get('first_seen', '?')[:10]}, seen {entry.count} time(s), with IREE "
                     f"{', '.join(entry.toolchain_versions) or '?'}."]
    context_lines += ["- With this toolchain, on each backend:"] + [f"  - {line}" for line in context.verdicts]
    triage = entry.meta.get("triage") or entry.meta.get("triage_verdict")
    if triage:
        evidence = entry.meta.get("triage_evidence")
        context_lines.append(f"- Triage: {triage if isinstance(triage, str) else json.dumps(triage, sort_keys=True)}"
                             + (f" ({evidence})" if evidence else ""))
    context_lines.append("- Reproduces on: " + ", ".join(lane_lines(entry.meta, sig.backend)) + ".")
    regression = regression_line(entry.meta)
    if regression:
        context_lines.append(regression)
    context_lines.append(_bisect_line(bisect) if isinstance(bisect, dict) and bisect else
                         f"- Not bisected yet (`shapefuzz bisect {entry.id}` finds the release that broke it)."
                         if not regression else "")
    context_lines = [line for line in context_lines if line]
    if entry.flaky:
        context_lines.append("- Flaky: it did not fail on every run.")
    title = comment_text(issue_title(entry.meta, sig.backend, sig.stage.value, sig.status.value, sig.message[:160]))
    body = [
        f"<!-- Suggested title: {title.replace('--', '- -')} -->",
        "",
        "### What happened?", "", *_what_happened(p, context), "",
        "### Steps to reproduce your issue", "", *steps, "",
        "### What component(s) does this issue relate to?", "", ", ".join(_components(p)), "",
        "### Version information", "", *_fenced(context.version_text, "text"), "",
        "### Additional context", "", *context_lines,
    ]
    return "\n".join(body) + "\n"


def import_steps(entry: CorpusEntry, files: str) -> list[str]:
    """For an entry that keeps its ONNX model: how the IR was made from it."""
    from shapefuzz.onnx_files import MODEL_FILE, entry_model, model_opset

    model = entry_model(entry.path, entry.meta)
    if model is None:
        return []
    command = " ".join(shlex.quote(w) for w in entry.meta.get("import_command") or
                       ["iree-import-onnx", MODEL_FILE, "-o", "reproducer.mlir"])
    origin = entry.meta.get("origin")
    return [f"0. The IR below is what IREE's ONNX importer (from the same iree-base-compiler package) makes of the "
            f"ONNX model `{MODEL_FILE}` ({model_opset(model.read_bytes())}; attached in `{files}/`"
            + (f"; {comment_text(origin, 300)}" if origin else "") + "):", "", "```sh", command, "```", ""]


def write_issue(p: Plan, out: Path, toolchain: Toolchain) -> list[Path]:
    """OUT.md plus OUT.files/ (reproducer, inputs, expected results, and the ONNX model an
    imported reproducer came from) to attach to the issue."""
    from shapefuzz.onnx_files import MODEL_FILE, entry_model

    files = out.with_name(out.stem + ".files")
    written = write_run_module(p, files)
    model = entry_model(p.entry.path, p.entry.meta)
    if model is not None:
        atomic_write(files / MODEL_FILE, model.read_bytes())
        written.append(files / MODEL_FILE)
    atomic_write(out, to_issue(p, issue_context(p, toolchain), files.name).encode())
    return [out, *written]


# ----------------------------------------------------------------------------- iree-test-suites


def write_test_suite(p: Plan, out: Path) -> list[Path]:
    """The layout iree-org/iree-test-suites uses for its op tests (torch_ops): a folder per test
    with `test.mlir`, `run_module_io.json` and `expected_result_N.npy`, grouped under a class folder
    (`shapefuzz/<entry>/`), and a per-target config (`configs/`) holding the compile and run flags
    and the expected-failure lists. Their `flat_args` are formulas for random inputs; ours must be
    the exact values (sums exact, scatter coordinates as drawn), so they are `input_N.npy` files
    named in `flat_args`."""
    cannot_represent(p, "iree-test-suites")
    if not p.runs or p.expected is None:
        why = ("its backend runs nowhere (compile-only)" if p.backend.driver is None else
               "it has no inputs and reference results")
        if p.entry.signature.stage != Stage.COMPILE:
            raise UsageError(f"iree-test-suites cannot represent entry {p.entry.id}: {why}, and its tests compare "
                             "results of a run")
    name = re.sub(r"[^a-z0-9-]", "_", p.entry.id)  # load_entry validated the id; never a path
    test = _real_folder(_real_folder(_real_folder(out) / "shapefuzz") / name)
    written = [test / "run_module_io.json", test / "test.mlir"]
    atomic_write(written[1], p.entry.mlir.encode())
    inputs = p.inputs if p.runs else []
    expected = p.expected if p.runs and p.expected is not None else []
    for stem, arrays in (("input", inputs), ("expected_result", expected)):
        for i, array in enumerate(arrays):
            written.append(test / f"{stem}_{i}.npy")
            buffer = io.BytesIO()
            np.save(buffer, np.require(array, requirements="C"), allow_pickle=False)
            atomic_write(written[-1], buffer.getvalue())
    tolerances = [(0.0, 0.0) if p.rule.get("kind") == "topk" or (p.rule.get("rtol") == 0 and p.rule.get("atol") == 0)
                  else _suite_tolerance(p.rule, a) for a in expected]
    io_json = {
        "function_name": p.function,
        "flat_args": [f"input_{i}.npy" for i in range(len(inputs))],
        "seed": p.entry.seed,
        "rtol": max([t[0] for t in tolerances], default=0.0),
        "atol": max([t[1] for t in tolerances], default=0.0),
        "equal_nan": False,
        "mode": "compare",
        "file_name": "test.mlir",
        "vmfb_name": "out.vmfb",
        "expected_output": [f"expected_result_{i}.npy" for i in range(len(expected))],
    }
    atomic_write(written[0], (json.dumps(io_json, indent=4) + "\n").encode())
    qualified = f"shapefuzz/{name}"
    sig = p.entry.signature
    config = {
        "config_name": f"shapefuzz_{p.backend.name}",
        "iree_compile_flags": list(p.flags),
        "iree_run_module_flags": [f"--device={p.backend.driver}"] if p.backend.driver else [],
        "skip_compile_tests": [],
        "skip_run_tests": [] if p.runs else [qualified],
        "expected_compile_failures": [qualified] if p.failing and sig.stage == Stage.COMPILE else [],
        "expected_run_failures": [qualified] if p.failing and sig.stage != Stage.COMPILE else [],
    }
    written.append(_real_folder(out / "configs") / f"shapefuzz_{p.backend.name}.json")
    atomic_write(written[-1], (json.dumps(config, indent=2) + "\n").encode())
    return written


def _suite_tolerance(rule: dict, array: np.ndarray) -> tuple[float, float]:
    from shapefuzz.export_checks import tolerance

    rtol = tolerance(array.dtype) if rule.get("rtol") is None else rule["rtol"]
    atol = tolerance(array.dtype) if rule.get("atol") is None else rule["atol"]
    return float(rtol), float(atol)


# ----------------------------------------------------------------------------- entry point


def export_entry(entry: CorpusEntry, fmt: str, toolchain: Toolchain, out: str | os.PathLike | None = None,
                 expect: str = "auto") -> list[Path]:
    """Writes the export and returns the files written (the first is the one to run)."""
    if fmt not in FORMATS:
        raise UsageError(f"unknown export format {fmt!r}; choose from {', '.join(FORMATS)}")
    p = plan(entry, toolchain, expect)
    # Default names come from the id, which load_entry validated ([a-z0-9-]): never a path.
    if fmt in ("lit", "pytest") and out:
        _real_folder(Path(out).parent)
    if fmt == "lit":
        path = Path(out) if out else Path(f"{entry.id}.mlir")
        atomic_write(path, to_lit(p).encode())
        return [path]
    if fmt == "pytest":
        path = Path(out) if out else Path(f"test_{re.sub(r'[^a-z0-9]', '_', entry.id)}.py")
        atomic_write(path, to_pytest(p).encode())
        return [path]
    if fmt == "issue":
        return write_issue(p, Path(out) if out else Path(f"{entry.id}.issue.md"), toolchain)
    if fmt == "iree-test-suites":
        return write_test_suite(p, Path(out) if out else Path(f"{entry.id}.iree-test-suites"))
    folder = Path(out) if out else Path(f"{entry.id}.run-module")
    written = write_run_module(p, folder)
    return [written[-1], *written[:-1]]
