"""ONNX's node conformance tests as an external suite (`shapefuzz onnx-suite`): each test's
model goes through IREE's ONNX importer (`onnx_import`) and is compiled and run on every lane,
and its outputs are judged against the test's own expected outputs with the test's tolerances.
The tests come from the `onnx` wheel, where they live as code (`onnx/backend/test/case/node/
<op>.py`; importing a module builds its tests in memory), or from folders that
`python -m onnx.backend.test.cmd_tools generate-data -o DIR` wrote (`DIR/node/test_*/model.onnx`
and `test_data_set_0/{input,output}_N.pb`).

Per test and lane the outcome is pass, fail (a compile, run or value failure on input the
importer made and `iree-opt` verifies) or unsupported (the importer rejects the model, this
release does not lower the op, a target limit, or inputs/outputs that are not plain tensors).
"""

from __future__ import annotations

import importlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from shapefuzz.errors import InvalidInputError, UsageError
from shapefuzz.families.common import count_mismatch, shape_mismatch, values_mismatch
from shapefuzz.invoke.execute import Budget
from shapefuzz.model import CheckReport, Mismatch, MismatchKind, Status, Verdict
from shapefuzz.process.parallel import Finished, run_parallel
from shapefuzz.iree.toolchain import Toolchain

# Our op families' ONNX ops, and the module of ONNX's node tests that holds each op's tests.
DEFAULT_OPS = ("Conv", "ConvTranspose", "Gather", "GatherElements", "GatherND", "ScatterElements", "ScatterND",
               "OneHot", "TopK", "MaxPool", "AveragePool", "GlobalMaxPool", "GlobalAveragePool")
_CASE_PACKAGE = "onnx.backend.test.case.node"
ALL_OPS = "all"  # `--ops all`: every op the wheel has node tests for
PASS, FAIL, UNSUPPORTED = "pass", "fail", "unsupported"


@dataclass(frozen=True)
class NodeTest:
    """One ONNX node test: its model, inputs and expected outputs (first data set)."""

    name: str
    op: str
    model: Any  # onnx.ModelProto
    inputs: tuple[np.ndarray, ...]
    outputs: tuple[np.ndarray, ...]
    rtol: float = 1e-3
    atol: float = 1e-7
    source: str = ""  # where it was read from, for the corpus entry's origin


@dataclass(frozen=True)
class LaneResult:
    outcome: str  # PASS / FAIL / UNSUPPORTED
    status: str  # the oracle's status on this lane (ok, error, mismatch, unsupported, ...)
    why: str = ""  # signature or reason, one line
    detail: str = ""
    # where it stopped: "import" (the importer), "compile" (verify, compile), "run" (run, compare); ""
    # when it passed, or when it was never tried (its arrays do not pass through .npy files)
    stage: str = ""


@dataclass
class TestResult:
    test: NodeTest
    mlir: str = ""
    lanes: dict[str, LaneResult] = field(default_factory=dict)
    report: CheckReport | None = None


def onnx_version() -> str:
    import onnx

    return onnx.__version__


def _op_module(op: str) -> str:
    return f"{_CASE_PACKAGE}.{op.lower()}"


def check_ops(ops: Sequence[str]) -> tuple[str, ...]:
    """The ops, each one ONNX's wheel has node tests for (a module under case/node), or `all` alone;
    UsageError otherwise."""
    import importlib.util

    if ALL_OPS in ops:
        if len(ops) > 1:
            raise UsageError(f"--ops {ALL_OPS} runs every op's node tests: name no other op beside it")
        return (ALL_OPS,)

    bad = [op for op in ops if not op.isidentifier() or importlib.util.find_spec(_op_module(op)) is None]
    if bad:
        raise UsageError(f"no ONNX node tests for op {bad[0]!r} in onnx {onnx_version()} "
                         f"(ops are ONNX names, e.g. {', '.join(DEFAULT_OPS[:4])})")
    return tuple(dict.fromkeys(ops))


def _main_op(model: Any) -> set[str]:
    return {node.op_type for node in model.graph.node}


def _tensors(values: Sequence[Any]) -> tuple[np.ndarray, ...] | None:
    """The values as arrays (a NumPy scalar is a 0-d array), or None when one is a sequence or
    optional value (not a plain tensor)."""
    return tuple(np.asarray(v) for v in values) if all(isinstance(v, (np.ndarray, np.generic)) for v in values) else None


# What passes through .npy files to iree-run-module and back (bfloat16 and float8 do not).
_NPY_KINDS = {"b", "i", "u", "f"}
_NPY_FLOATS = {"float16", "float32", "float64"}


def _npy_trouble(arrays: Sequence[np.ndarray]) -> str:
    for a in arrays:
        if a.dtype.kind not in _NPY_KINDS or (a.dtype.kind == "f" and a.dtype.name not in _NPY_FLOATS):
            return f"{a.dtype.name} tensors do not pass through .npy files to iree-run-module"
    return ""


def collect(ops: Sequence[str]) -> list[NodeTest]:
    """The wheel's node tests whose graph holds one of `ops` (by test name; `_expanded` variants,
    which spell the op as its function body, are left out); `ops == ("all",)`: every node test, each
    named by its graph's first op."""
    from onnx.backend.test.case import node as cases

    tests: list[NodeTest] = []
    every = tuple(ops) == (ALL_OPS,)
    modules = _every_module() if every else [_op_module(op) for op in check_ops(ops)]
    with warnings.catch_warnings(), np.errstate(all="ignore"):  # the tests' own casts to inf and NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        for module in modules:
            importlib.import_module(module)  # defining the module's classes builds its tests
    for op in ([ALL_OPS] if every else check_ops(ops)):
        for case in cases._NodeTestCases:  # noqa: SLF001 - the list onnx.backend.test.case.node fills
            if (not every and op not in _main_op(case.model)) or case.name.endswith(("_expanded", "_expanded_ver18")):
                continue
            if any(t.name == case.name for t in tests) or not case.data_sets or not case.model.graph.node:
                continue
            inputs, outputs = case.data_sets[0]
            ins, outs = _tensors(inputs), _tensors(outputs)
            if ins is None or outs is None:
                continue
            name = case.model.graph.node[0].op_type if every else op
            tests.append(NodeTest(case.name, name, case.model, ins, outs, float(case.rtol), float(case.atol),
                                  f"onnx {onnx_version()} {_source(every, op)}"))
    return tests


def _source(every: bool, op: str) -> str:
    return _CASE_PACKAGE.replace(".", "/") if every else f"{_op_module(op).replace('.', '/')}.py"


def _every_module() -> list[str]:
    import pkgutil

    from onnx.backend.test.case import node as cases

    return [f"{_CASE_PACKAGE}.{m.name}" for m in pkgutil.iter_modules(cases.__path__)]


def read_folder(folder: str | os.PathLike, ops: Sequence[str] | None = None) -> list[NodeTest]:
    """Node tests from folders `generate-data` wrote: FOLDER itself when it holds model.onnx,
    else its test_* (or node/test_*) subfolders. Missing or malformed: one-line InvalidInputError."""
    import onnx
    from onnx import numpy_helper

    root = Path(folder)
    if not root.is_dir():
        raise UsageError(f"no such folder: {folder}")
    if (root / "node").is_dir():
        root = root / "node"
    dirs = [root] if (root / "model.onnx").exists() else sorted(p for p in root.iterdir() if p.name.startswith("test_"))
    if not dirs:
        raise InvalidInputError(f"{folder}: no node test folders (test_*/model.onnx) in it")
    tests = []
    for d in dirs:
        where = f"{d}"
        try:
            model = onnx.load(str(d / "model.onnx"))
            data = d / "test_data_set_0"
            if not data.is_dir():
                raise InvalidInputError(f"{where}: no test_data_set_0 folder")
            arrays = {}
            for kind in ("input", "output"):
                files = sorted(data.glob(f"{kind}_*.pb"), key=lambda p: int(p.stem.split("_")[1]))
                tensors = []
                for f in files:
                    t = onnx.TensorProto()
                    t.ParseFromString(f.read_bytes())
                    tensors.append(numpy_helper.to_array(t))
                arrays[kind] = tuple(tensors)
        except InvalidInputError:
            raise
        except FileNotFoundError as error:
            raise InvalidInputError(f"{where}: missing {Path(error.filename or '').name or 'file'}") from None
        except Exception as error:  # noqa: BLE001 - a damaged protobuf, a bad index: the folder is malformed
            raise InvalidInputError(f"{where}: not a readable node test ({type(error).__name__}: "
                                    f"{(str(error).splitlines() or [''])[0][:200]})") from None
        op_types = _main_op(model)
        op = next((o for o in (ops or ()) if o in op_types), None) if ops else sorted(op_types)[0] if op_types else ""
        if ops and op is None:
            continue
        if len(arrays["input"]) != len(model.graph.input) or not arrays["output"]:
            raise InvalidInputError(f"{where}: {len(arrays['input'])} input file(s) for {len(model.graph.input)} "
                                    f"model input(s), {len(arrays['output'])} output file(s)")
        tests.append(NodeTest(d.name, op or "?", model, arrays["input"], arrays["output"], source=str(d)))
    return tests


def _compare(rtol: float, atol: float) -> Callable[[list[np.ndarray], list[np.ndarray]], Mismatch | None]:
    """As ONNX's backend test runner: same count, shape and kind, then allclose with the test's
    rtol/atol (exact for integers and booleans)."""

    def compare(expected: list[np.ndarray], actual: list[np.ndarray]) -> Mismatch | None:
        problem = count_mismatch(expected, actual)
        if problem:
            return problem
        for i, (e, a) in enumerate(zip(expected, actual)):
            e, a = np.asarray(e), np.asarray(a)
            problem = shape_mismatch(i, e, a)
            if problem:
                return problem
            if e.dtype.kind == "u" and a.dtype.kind == "i" and e.dtype.itemsize == a.dtype.itemsize:
                a = a.view(e.dtype)  # IREE's integers are signless: an unsigned result reads back signed
            if e.dtype.kind != a.dtype.kind:
                return Mismatch(MismatchKind.DTYPE, f"result {i}: dtype {a.dtype}, expected {e.dtype}")
            if e.dtype.kind == "c":  # complex: real and imaginary parts, each as a float result
                problem = (values_mismatch(i, e.real, a.real, rtol=rtol, atol=atol, what="real parts")
                           or values_mismatch(i, e.imag, a.imag, rtol=rtol, atol=atol, what="imaginary parts"))
            else:
                problem = values_mismatch(i, e, a, rtol=rtol, atol=atol) if e.dtype.kind in "f" \
                    else values_mismatch(i, e, a)
            if problem:
                tolerance = f" (rtol {rtol}, atol {atol})" if e.dtype.kind in "fc" else " (exact)"
                return Mismatch(problem.kind, problem.detail + tolerance)
        return None

    return compare


def _lane_result(r) -> LaneResult:
    stage = "compile" if r.stage.value in ("verify", "compile") else "run"
    if r.status == Status.UNSUPPORTED:
        return LaneResult(UNSUPPORTED, r.status.value, r.detail.splitlines()[0][:200] if r.detail else "", r.detail,
                          stage)
    if r.failed:
        return LaneResult(FAIL, r.status.value, str(r.signature) if r.signature else r.status.value, r.detail, stage)
    return LaneResult(PASS, r.status.value)


def run_test(test: NodeTest, lanes: Sequence[str], toolchain: Toolchain, budget: Budget,
             confirm: bool = True) -> TestResult:
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.judge.oracle import Expectation, check_module
    from shapefuzz.iree.onnx_import import ImportFailure, import_model

    result = TestResult(test)
    trouble = _npy_trouble([*test.inputs, *test.outputs])
    if trouble:
        result.lanes = {lane: LaneResult(UNSUPPORTED, "io", trouble) for lane in lanes}
        return result
    try:
        result.mlir = import_model(test.model)
    except ImportFailure as error:
        result.lanes = {lane: LaneResult(UNSUPPORTED, "import", str(error)[:300], stage="import") for lane in lanes}
        return result
    expectation = Expectation(list(test.inputs), list(test.outputs), _compare(test.rtol, test.atol),
                              label=f"onnx node test {test.op}")
    try:
        report = check_module(result.mlir, list(lanes), expectation, toolchain, budget, confirm=confirm)
    except InvalidInputError as error:  # an optional or a list at the function boundary: nothing to run it with
        result.lanes = {lane: LaneResult(UNSUPPORTED, "io", f"not plain tensors at the function boundary: {error}")
                        for lane in lanes}
        return result
    result.report = report
    if report.verdict == Verdict.INVALID:  # the importer's output does not verify: the importer's bug
        why = (report.verify_error.strip().splitlines() or ["does not verify"])[0][:300]
        result.lanes = {lane: LaneResult(FAIL, "invalid", f"the imported module does not verify: {why}",
                                         report.verify_error, "import") for lane in lanes}
        return result
    probe = toolchain.probe
    for r in report.results:
        if r.status == Status.SKIPPED:
            continue
        lane = _lane_result(r)
        if lane.outcome == PASS and not BACKENDS[r.backend].executes(probe):
            lane = LaneResult(PASS, "compiled", "compiled; not executed here")
        result.lanes[r.backend] = lane
    return result


def run_suite(tests: Sequence[NodeTest], lanes: Sequence[str], toolchain: Toolchain, budget: Budget,
              jobs: int = 1, confirm: bool = True,
              progress: Callable[[TestResult], None] | None = None) -> Finished[TestResult]:
    """Every test on `jobs` threads. Ctrl-C or SIGTERM stops it at once (queued tests cancelled,
    running compilers killed); the tests that finished are returned with the signal that stopped it."""
    toolchain.probe  # noqa: B018 - probe once before the threads share it
    return run_parallel(lambda t: run_test(t, lanes, toolchain, budget, confirm), tests, jobs, progress)


def table(results: Sequence[TestResult], lanes: Sequence[str]) -> list[tuple[str, ...]]:
    """Rows: op, then pass/fail/unsupported per lane."""
    ops = list(dict.fromkeys(r.test.op for r in results))
    rows = [("op", "tests", *lanes)]
    for op in ops:
        mine = [r for r in results if r.test.op == op]
        cells = []
        for lane in lanes:
            seen = [r.lanes[lane].outcome for r in mine if lane in r.lanes]
            cells.append(f"{seen.count(PASS)}/{seen.count(FAIL)}/{seen.count(UNSUPPORTED)}" if seen else "-")
        rows.append((op, str(len(mine)), *cells))
    return rows


def to_json(results: Sequence[TestResult], lanes: Sequence[str]) -> dict[str, Any]:
    return {"onnx": onnx_version(), "lanes": list(lanes),
            "table": [dict(zip(table(results, lanes)[0], row)) for row in table(results, lanes)[1:]],
            "tests": [{"name": r.test.name, "op": r.test.op,
                       "lanes": {k: {"outcome": v.outcome, "status": v.status, "why": v.why} for k, v in r.lanes.items()}}
                      for r in results]}


def save_failures(results: Sequence[TestResult], corpus_dir: str | os.PathLike, toolchain: Toolchain) -> list[str]:
    """Each failing (test, lane) into the corpus like any finding: the imported module as the
    reproducer, the test's inputs and expected outputs, model.onnx beside it, the origin named."""
    from shapefuzz.corpus import make_finding, save_finding

    lines = []
    for r in results:
        if r.report is None:
            continue
        data = r.test.model.SerializeToString()
        origin = f"ONNX node test {r.test.name} ({r.test.source})"
        for br in r.report.results:
            if not br.failed or br.signature is None:
                continue
            others = ", ".join(f"{k} {v.outcome}" for k, v in r.lanes.items() if k != br.backend)
            finding = make_finding(
                br.signature, f"// {origin}\n{r.mlir}", toolchain, backends=tuple(r.lanes), inputs=list(r.test.inputs),
                expected=list(r.test.outputs), detail=br.detail, flaky=br.flaky, onnx_model=data, origin=origin,
                evidence=f"fails {r.test.name} against the test's own expected outputs on {br.backend}"
                         + (f"; {others}" if others else ""))
            entry, new = save_finding(corpus_dir, finding)
            lines.append(f"{'new' if new else 'seen':<6} {entry}")
    return lines
