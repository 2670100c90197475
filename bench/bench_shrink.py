"""shapefuzz shrink versus C-Vise on a fixed set of failing MLIR files.

For each file: the failure signature on one backend (from `shapefuzz check --json`), then
`shapefuzz shrink` and `cvise` (Debian package `cvise`; its interestingness script checks the
same signature with `shapefuzz check --json`), each under the same time cap, one job each.
Prints, per file, time taken and final size (tensor elements, ops, lines, characters).

    .venv/bin/python bench/bench_shrink.py [--cap 300] [--backend llvm-cpu] [FILES...]
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import harness

from shapefuzz.size import measure

ROOT = Path(__file__).resolve().parent.parent

DATA = ROOT / "tests" / "data"
FILES = [
    DATA / "shrink_conv1d_big.mlir",
    DATA / "shrink_conv1d_dynbatch.mlir",
    DATA / "shrink_topk_sort_case.mlir",
    DATA / "shrink_topk_sort_plain.mlir",
]
SHAPEFUZZ = str(Path(sys.executable).parent / "shapefuzz")

INTERESTING = """#!/bin/sh
# C-Vise interestingness test: the candidate still fails with the same signature.
{shapefuzz} check --json --no-confirm --backends {backend} --compile-timeout {timeout} {name} > check.json 2>/dev/null
{python} - <<'EOF'
import json, sys
try:
    got = json.load(open("check.json"))["backends"]["{backend}"]["signature"]
except Exception:
    sys.exit(1)
sys.exit(0 if got == {signature!r} else 1)
EOF
"""


def signature_of(path: Path, backend: str) -> str | None:
    out = subprocess.run([SHAPEFUZZ, "check", "--json", "--no-confirm", "--backends", backend, str(path)],
                         capture_output=True, text=True)
    try:
        return json.loads(out.stdout)["backends"][backend]["signature"]
    except (ValueError, KeyError):
        return None


def run_capped(argv: list[str], cap: float, cwd: str) -> tuple[float, bool]:
    """Run argv in its own process group; kill the group at the cap. (seconds, finished?)"""
    start = time.monotonic()
    log = open(Path(cwd) / "tool.log", "w")
    proc = subprocess.Popen(argv, cwd=cwd, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        proc.wait(timeout=cap)
        finished = True
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGINT)  # both tools keep their best result on Ctrl-C
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        finished = False
    return time.monotonic() - start, finished


def size(text: str) -> dict[str, int]:
    m = measure(text)
    return {"elements": m.elements, "ops": m.ops, "lines": m.lines, "chars": m.chars}


def bench_file(path: Path, backend: str, cap: float) -> dict:
    signature = signature_of(path, backend)
    row: dict = {"file": path.name, "signature": signature, "before": size(path.read_text())}
    if signature is None:
        row["error"] = f"does not fail on {backend}"
        return row
    with tempfile.TemporaryDirectory(prefix="bench-shrink-") as tmp:
        src = Path(tmp) / "sf" / path.name
        src.parent.mkdir()
        shutil.copy(path, src)
        out = src.with_name("out.mlir")
        seconds, done = run_capped([SHAPEFUZZ, "shrink", str(src), "-o", str(out), "--backends", backend,
                                    "--jobs", "1", "--time", f"{cap:.0f}s"], cap + 30, str(src.parent))
        text = out.read_text() if out.exists() else path.read_text()
        row["shapefuzz"] = {"seconds": round(seconds, 1), "finished": done, **size(text),
                            "same_signature": signature_of(out, backend) == signature if out.exists() else False}

        work = Path(tmp) / "cvise"
        work.mkdir()
        case = work / "case.mlir"
        shutil.copy(path, case)
        script = work / "interesting.sh"
        script.write_text(INTERESTING.format(shapefuzz=shlex.quote(SHAPEFUZZ), backend=backend, timeout=10,
                                             name="case.mlir", python=shlex.quote(sys.executable),
                                             signature=signature))
        script.chmod(0o755)
        seconds, done = run_capped(["cvise", "--not-c", "--n", "1", "--tidy", "--timeout", "60",
                                    str(script), case.name], cap, str(work))
        text = case.read_text()
        row["cvise"] = {"seconds": round(seconds, 1), "finished": done, **size(text),
                        "same_signature": signature_of(case, backend) == signature}
    return row


def main(argv: list[str] | None = None) -> None:
    parser = harness.parser(__doc__)
    parser.add_argument("files", nargs="*", type=Path, default=FILES)
    parser.add_argument("--cap", type=float, default=300.0, help="seconds per tool per file")
    parser.add_argument("--backend", default="llvm-cpu")
    args = parser.parse_args(argv)
    if shutil.which("cvise") is None:
        sys.exit("cvise not found: apt-get install -y cvise")
    with harness.session(args) as report:
        rows = []
        print(f"{'file':<30} {'tool':<10} {'time':>8} {'done':>5} {'elements':>9} {'ops':>4} {'lines':>5} {'chars':>6} same")
        for path in args.files:
            row = bench_file(path, args.backend, args.cap)
            rows.append(row)
            b = row["before"]
            print(f"{row['file']:<30} {'original':<10} {'':>8} {'':>5} {b['elements']:>9} {b['ops']:>4} {b['lines']:>5} {b['chars']:>6}")
            if "error" in row:
                print(f"{'':<30} {row['error']}")
                continue
            for tool in ("shapefuzz", "cvise"):
                r = row[tool]
                print(f"{'':<30} {tool:<10} {r['seconds']:>7.1f}s {('yes' if r['finished'] else 'cap'):>5} "
                      f"{r['elements']:>9} {r['ops']:>4} {r['lines']:>5} {r['chars']:>6} {r['same_signature']}")
            sys.stdout.flush()
        done = [row for row in rows if "error" not in row]
        for tool in ("shapefuzz", "cvise"):
            report.figures.add(f"{tool}: seconds, all files", sum(row[tool]["seconds"] for row in done), "s")
            report.figures.add(f"{tool}: characters left, all files", sum(row[tool]["chars"] for row in done))
            report.figures.add(f"{tool}: same signature", f"{sum(row[tool]['same_signature'] for row in done)}"
                                                          f"/{len(done)}")
        if done and sum(row["cvise"]["seconds"] for row in done):
            report.figures.add("shapefuzz / C-Vise seconds", sum(row["shapefuzz"]["seconds"] for row in done)
                               / sum(row["cvise"]["seconds"] for row in done), "x")
        report.details = rows


if __name__ == "__main__":
    main()
