"""`shapefuzz bundle-run DIR`: run a bundle's modules on the device of the machine it was carried
to, with the IREE runtime alone. Each case is one sandboxed `iree-run-module` (the call a check
makes) with a timeout, so a hung kernel costs its timeout and no more; its outputs are judged by
`export_checks.compare` over the case's rule (the family's comparison written as data; a test
holds it to the family's own verdicts). `results.json` is rewritten whole after every case, so a
run killed from outside still leaves what it finished.

Imports NumPy, the standard library and layer-0/1 modules of ours only: no compiler, no
Hypothesis, no click (`console.py` sends `bundle-run` here before the CLI is imported)."""

from __future__ import annotations

import argparse
import os
import platform
import re
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any, Callable, Dict, List, NoReturn, Optional

import numpy as np

from shapefuzz.bundle import layout
from shapefuzz.errors import CorpusError, ShapefuzzError, UsageError
from shapefuzz.schema import SchemaError

DEFAULT_TIMEOUT = 30.0  # seconds per case: a small kernel runs in well under one, its PTX JIT included
# A wrong case's outputs are kept in results.json (as hex) for bundle-judge, up to this many bytes a
# case and in all: the file stays well under the 4 MiB that shapefuzz reads back (schema.load_json).
KEEP_OUTPUTS, KEEP_OUTPUTS_IN_ALL = 64 << 10, 1 << 20


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # one line and exit 2, as every shapefuzz command
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="shapefuzz bundle-run", description="Run a bundle (shapefuzz bundle) on its device with the "
                "IREE runtime alone; judge each case as the campaign does; write results.json.")
    p.add_argument("folder", help="the bundle folder")
    p.add_argument("--device", default=None, help="runtime device (default: the bundle's, e.g. cuda)")
    p.add_argument("--out", default="results.json", help="results file (default: results.json)")
    p.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per case (default 30)")
    p.add_argument("--jobs", type=int, default=2, help="cases run at once (default 2)")
    p.add_argument("--time", type=float, default=None, help="seconds for the whole run; cases not started by then "
                   "are listed as not-run (default: no limit)")
    p.add_argument("--only", default=None, help="comma-separated case ids to run (default: every compiled case)")
    p.add_argument("--iree-run-module", dest="run_bin", default=None,
                   help="the iree-run-module to use (default: the one of the iree-base-runtime on the Python path)")
    return p


def find_run_module(given: Optional[str]) -> Path:
    """The runtime's own binary: given, else $SHAPEFUZZ_IREE_BIN's, else the one inside the
    iree-base-runtime package on sys.path (found by path: nothing of it is imported), else PATH's."""
    candidates: List[Path] = []
    if given:
        candidates.append(Path(given))
    elif os.environ.get("SHAPEFUZZ_IREE_BIN"):
        candidates.append(Path(os.environ["SHAPEFUZZ_IREE_BIN"]) / "iree-run-module")
    else:
        candidates += [Path(entry or ".") / "iree" / "_runtime_libs" / "iree-run-module" for entry in sys.path]
        found = shutil.which("iree-run-module")
        if found:
            candidates.append(Path(found))
    for path in candidates:
        if path.is_file() and os.access(path, os.X_OK):
            return path
    for path in candidates:
        if path.is_file():
            raise UsageError(f"{path} is not executable (unpacked without its mode? chmod +x it)")
    where = given or "the Python path (pip install --target DIR iree_base_runtime-*.whl; PYTHONPATH=DIR:src)"
    raise UsageError(f"no iree-run-module found in {where}")


def runtime_version(run_bin: Path) -> str:
    try:
        found = re.search(r'VERSION = "([^"]+)"', (run_bin.parent / "version.py").read_text())
    except OSError:
        return "unknown"
    return found.group(1) if found else "unknown"


class Results:
    """results.json, rewritten whole (atomically) after every case; threads share it."""

    def __init__(self, path: Path, head: Dict[str, Any]) -> None:
        self.path, self.head = path, head
        self.cases: Dict[str, Dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._kept = 0

    def keep(self, nbytes: int) -> bool:
        """Whether outputs of `nbytes` may still be kept (taken from the budget when they may)."""
        with self._lock:
            if nbytes > KEEP_OUTPUTS or self._kept + nbytes > KEEP_OUTPUTS_IN_ALL:
                return False
            self._kept += nbytes
            return True

    def add(self, case_id: str, record: Dict[str, Any]) -> None:
        with self._lock:
            self.cases[case_id] = record
            self.write()

    def write(self) -> None:
        from shapefuzz.files import atomic_write

        atomic_write(self.path, layout.json_bytes({**self.head, "cases": self.cases}))


def _limits(timeout: float):
    from shapefuzz.process.sandbox import Limits

    # No address-space cap: a GPU runtime reserves far more address space than it uses (CUDA's
    # unified addressing), and a small case's outputs are bounded by what the manifest expects.
    return Limits(timeout=timeout, memory_bytes=None, output_bytes=64 << 10)


def _excerpt(text: str, limit: int = 2000) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2:]


def smoke(folder: Path, run_bin: Path, device: str, timeout: float) -> str:
    """"" when the bundle's one-dispatch module gives the right answer on the device, else why not."""
    from shapefuzz.process.sandbox import run_sandboxed

    try:
        module = layout.inside(folder, layout.SMOKE)
    except SchemaError as error:
        raise UsageError(str(error)) from None
    ran = run_sandboxed([str(run_bin), f"--module={module}", f"--device={device}", "--function=main",
                         f"--input={layout.SMOKE_INPUT}"], _limits(timeout))
    if ran.ok and layout.SMOKE_OUTPUT in ran.stdout:
        return ""
    if ran.timed_out:
        return f"timed out after {timeout:g}s"
    lines = [line for line in (ran.stderr + "\n" + ran.stdout).splitlines() if line.strip()]
    return (lines[-1] if lines else f"exit {ran.returncode}").strip()[:300]


def run_case(folder: Path, case_id: str, run_bin: Path, device: str, timeout: float,
             keep=lambda nbytes: False) -> Dict[str, Any]:
    """One case on the device: {"verdict": ok|wrong|error|timeout, "detail", "seconds", ...};
    a wrong case's outputs too, where `keep(their bytes)` allows. A case whose files cannot be read
    (or whose rule does not fit them) is `ours`: the bundle is damaged, nothing was found."""
    from shapefuzz.export_checks import compare
    from shapefuzz.process.sandbox import run_sandboxed
    from shapefuzz.schema import load_npy

    try:
        files = layout.read_case(folder, case_id)
        inputs = [load_npy(path, f"case {case_id}: {path.name}") for path in files.inputs]
    except (SchemaError, CorpusError) as error:  # (files.UnsafeName, a link or a name leaving it, is a CorpusError)
        return _unreadable(f"unreadable case: {error}")
    with tempfile.TemporaryDirectory(prefix="shapefuzz-bundle-run-") as work:
        outputs = [Path(work) / f"output{i}.npy" for i in range(len(files.expected))]
        argv = [str(run_bin), f"--module={files.folder / layout.VMFB}", f"--device={device}",
                f"--function={files.function}"]
        argv += [f"--input=@{path}" for path in files.inputs] + [f"--output=@{path}" for path in outputs]
        ran = run_sandboxed(argv, _limits(timeout))
        record: Dict[str, Any] = {"seconds": round(ran.seconds, 3)}
        if ran.timed_out:
            return {**record, "verdict": layout.TIMEOUT, "detail": f"no result after {timeout:g}s (killed)"}
        if not ran.ok:
            how = f"killed by signal {ran.signal}" if ran.signal is not None else f"exit {ran.returncode}"
            return {**record, "verdict": layout.ERROR, "returncode": ran.returncode, "signal": ran.signal,
                    "detail": f"{how}: {_excerpt(ran.stderr + chr(10) + ran.stdout)}"}
        try:
            actual = [load_npy(path, f"output {i}") for i, path in enumerate(outputs)]
        except SchemaError as error:
            return {**record, "verdict": layout.ERROR, "returncode": 0, "detail": f"exit 0 but {error}"}
    try:
        problem = compare(files.rule, inputs, files.expected, actual)
    except (ValueError, IndexError, TypeError) as error:  # a rule of the right types that does not fit the arrays
        return _unreadable(f"unreadable case: case {case_id}: its rule does not fit its arrays ({str(error)[:200]})")
    if problem is None:
        return {**record, "verdict": layout.OK, "detail": ""}
    record.update(verdict=layout.WRONG, detail=problem)
    if keep(sum(a.nbytes for a in actual)):  # what bundle-judge judges again with the family itself
        record["outputs"] = [layout.encode(a) for a in actual]
    return record


def _unreadable(detail: str) -> Dict[str, Any]:
    return {"verdict": layout.ERROR, "detail": detail, "seconds": 0.0, "ours": True}


def confirmed(record: Dict[str, Any], again: Callable[[], Dict[str, Any]]) -> Dict[str, Any]:
    """A failing case is run once more before it is reported, as a campaign confirms a finding:
    "confirmed" when it fails again, "flaky" (its first detail kept) when the second run passes.
    A case the runner could not read (ours) is not run again."""
    if record["verdict"] not in (layout.WRONG, layout.ERROR, layout.TIMEOUT) or record.get("ours"):
        return record
    second = again()
    if second["verdict"] == layout.OK:
        return {**record, "flaky": True, "detail": f"{record['detail']} (passed when run again: flaky)"}
    return {**record, "confirmed": True,
            **({} if second["verdict"] == record["verdict"] else {"again": f"{second['verdict']}: {second['detail']}"[:500]})}


def _line(case_id: str, record: Dict[str, Any]) -> str:
    detail = record.get("detail", "").splitlines()
    verdict = f"{record['verdict']}{'?' if record.get('flaky') else ''}"
    return f"{case_id:<22} {verdict:<8} {record.get('seconds', 0.0):6.2f}s  {(detail[0] if detail else '')[:160]}"


def run_bundle(args: argparse.Namespace) -> int:
    from shapefuzz.process.parallel import run_parallel

    for option, value in (("the bundle folder", args.folder), ("--out", args.out), ("--device", args.device),
                          ("--only", args.only), ("--iree-run-module", args.run_bin)):
        if value is not None and not value.strip():  # (an unset shell variable): never read as "not given"
            raise UsageError(f"{option}: empty; give a value or leave the option out")
    folder = Path(args.folder)
    if not folder.is_dir():
        raise UsageError(f"{args.folder}: not a folder")
    if not (args.timeout > 0 and args.timeout < 1e6) or not 1 <= args.jobs <= 64:
        raise UsageError("--timeout: give a positive number of seconds; --jobs: 1 to 64")
    if args.time is not None and not 0 < args.time < 1e8:
        raise UsageError("--time: give a positive number of seconds")
    try:
        manifest = layout.read_manifest(folder)
    except SchemaError as error:
        raise UsageError(str(error)) from None
    device = args.device or manifest.device
    run_bin = find_run_module(args.run_bin)
    todo = [c for c in manifest.cases if c.runs]
    if args.only is not None:
        wanted = {name.strip() for name in args.only.split(",") if name.strip()}
        if not wanted:
            raise UsageError(f"--only {args.only!r}: no case id given")
        unknown = sorted(wanted - {c.id for c in manifest.cases})
        if unknown:
            raise UsageError(f"--only: no case {unknown[0]!r} in this bundle")
        todo = [c for c in todo if c.id in wanted]
    results = Results(Path(args.out), {
        "format": layout.RESULTS_FORMAT, "bundle_id": manifest.bundle_id, "backend": manifest.backend,
        "device": device, "iree_version": manifest.data["iree_version"], "runtime_version": runtime_version(run_bin),
        "host": platform.node(), "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "timeout": args.timeout, "smoke": "pending"})
    results.write()  # the folder is writable before any device time is spent
    why = smoke(folder, run_bin, device, args.timeout)
    results.head["smoke"] = why or "ok"
    results.write()
    if why:
        raise UsageError(f"the {device} device did not run this bundle's smoke module ({why}); nothing else was run")
    print(f"{len(todo)} cases on {device} ({manifest.backend}, IREE {manifest.data['iree_version']}, runtime "
          f"{results.head['runtime_version']}); {sum(not c.runs for c in manifest.cases)} of the bundle's "
          f"{len(manifest.cases)} did not compile here", flush=True)
    deadline = None if args.time is None else time.monotonic() + args.time
    families = {c.id: c.family for c in todo}

    def job(case_id: str) -> None:
        if deadline is not None and time.monotonic() > deadline:
            record = {"verdict": layout.NOT_RUN, "detail": "--time spent before it started", "seconds": 0.0}
        else:
            record = confirmed(run_case(folder, case_id, run_bin, device, args.timeout, results.keep),
                               lambda: run_case(folder, case_id, run_bin, device, args.timeout))
        results.add(case_id, {"family": families[case_id], **record})
        print(_line(case_id, record), flush=True)

    finished = run_parallel(job, [c.id for c in todo], args.jobs)
    results.head["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results.write()
    unreadable = {k: r for k, r in results.cases.items() if r.get("ours")}
    steady = [r for r in results.cases.values() if not r.get("flaky") and not r.get("ours")]
    counts = {v: sum(r["verdict"] == v for r in steady) for v in layout.VERDICTS}
    flaky = len(results.cases) - len(steady) - len(unreadable)
    said = [f"{n} {v}" for v, n in counts.items() if n] + ([f"{flaky} flaky (passed when run again)"] if flaky else []) \
        + ([f"{len(unreadable)} unreadable"] if unreadable else [])
    print(f"{', '.join(said) or 'no case run'}; results in {args.out}", flush=True)
    if finished.stopped is not None:
        raise finished.stopped
    if unreadable:  # a damaged bundle, not a finding: its own exit code, the first case named
        first, record = sorted(unreadable.items())[0]
        raise UsageError(f"{len(unreadable)} case(s) of the bundle could not be read, {first} first: "
                         f"{record['detail'].removeprefix('unreadable case: ')}")
    return 1 if counts[layout.WRONG] + counts[layout.ERROR] + counts[layout.TIMEOUT] else 0


def main(argv: Optional[List[str]] = None) -> int:
    """The command: its exit code (0 every case right, 1 a case wrong, failing or hung, 2 bad usage
    or a case it could not read)."""
    try:
        return run_bundle(_parser().parse_args(argv))
    except ShapefuzzError as error:  # a UsageError, or the machine (EnvironmentFault): one line, never a finding
        print(f"shapefuzz: error: {str(error).splitlines()[0] if str(error) else 'bad usage'}", file=sys.stderr)
        return 2
    except OSError as error:  # the results file's folder: missing, read-only, full
        where = f"{error.filename}: " if error.filename else ""
        print(f"shapefuzz: error: {where}{error.strerror or error}", file=sys.stderr)
        return 2


def console_main(argv: List[str]) -> None:
    """`shapefuzz bundle-run ...` from console.py, before the CLI (and click) is imported: the
    signal handling every command has (130 / 143 on Ctrl-C / SIGTERM, children killed)."""
    from shapefuzz.process import interrupts
    from shapefuzz.process.sandbox import reap_at_exit, want_guardian

    interrupts.forget()
    interrupts.install()
    want_guardian()
    try:
        code = main(argv)
        final = interrupts.final_code(code)
        if final is not None and final != code:  # a signal taken whose stop was swallowed on the way
            print(f"shapefuzz: {interrupts.word()}", file=sys.stderr)
            code = final
    except KeyboardInterrupt as stop:
        print(f"shapefuzz: {interrupts.word(stop)}", file=sys.stderr)
        code = interrupts.exit_code(stop)
    finally:
        reap_at_exit()
    sys.exit(code)
