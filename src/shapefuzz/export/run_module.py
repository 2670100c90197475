"""`--format run-module`: a folder with the reproducer, `inputs/*.npy`, `expected/*.npy` and
`run.sh`: `iree-compile` then `iree-run-module --input=@... --expected_output=@...` (exits non-zero
while the bug is there); top-k indices with ties are judged by `check.py` instead."""

from __future__ import annotations

import shlex
from pathlib import Path

from shapefuzz.corpus import comment_text
from shapefuzz.export.plan import Plan, inline_value, real_folder
from shapefuzz.files import atomic_write
from shapefuzz.schema import npy_bytes


def run_module_script(p: Plan) -> str:
    compile_argv = ["iree-compile", "reproducer.mlir", *p.flags, "-o", "module.vmfb"]
    lines = [
        "#!/bin/sh",
        f"# Exported by shapefuzz from corpus entry {p.entry.id}",
        f"# signature: {comment_text(p.entry.signature)}",
        "# Exits non-zero while the bug is there. Needs iree-compile" + (" and iree-run-module" if p.runs else "")
        + " on PATH.",
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


def checks_source() -> str:
    """export_checks.py as text, to be copied into an exported test."""
    from shapefuzz import export_checks
    return Path(export_checks.__file__).read_text()


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
    real_folder(out)
    written = [out / "reproducer.mlir"]
    atomic_write(written[0], p.entry.mlir.encode())
    for sub, stem, arrays in (("inputs", "arg", p.inputs), ("expected", "result", p.expected)):
        if p.runs and arrays:
            real_folder(out / sub)
            for i, array in enumerate(arrays):
                path = out / sub / f"{stem}{i}.npy"
                atomic_write(path, npy_bytes(array))
                written.append(path)
    if p.runs and p.ties and p.expected is not None:
        real_folder(out / "outputs")
        written.append(out / "check.py")
        atomic_write(written[-1], check_script(p).encode())
    script = out / "run.sh"
    atomic_write(script, run_module_script(p).encode(), mode=0o755)
    written.append(script)
    return written
