"""A sweep of ONNX's own operators (`shapefuzz onnx-ops`): for each op, cases of the onnx_op family
drawn from its schema and rule (`families/onnx_op`), each one judged in order:

1. **not drawable**: ONNX itself rejects the draw (checker, strict shape inference): redrawn, counted;
2. **reference disagreement**: ONNX Runtime or onnx.reference raises, or they differ, or ONNX's
   shape inference types an output otherwise: set apart with what differs, never compiled;
3. **not supported**: IREE's importer rejects the model, or the release does not lower the op
   (the oracle's frontend gap: 'failed to legalize operation torch.operator "onnx.X"'), or a
   target limit: counted per op, not a bug;
4. otherwise compiled and run on the lanes and compared with the agreed reference: **passed** or
   **failed** (a finding, re-run to rule out flakiness; saved to the corpus with model.onnx)."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from shapefuzz.case import Case
from shapefuzz.errors import UsageError
from shapefuzz.invoke.execute import Budget
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.model import CheckReport, Status, Verdict

FAMILY = "onnx_op"
NOT_DRAWABLE, NOT_SUPPORTED, DISAGREE, PASSED, FAILED = (
    "not drawable", "not supported", "reference disagreement", "passed", "failed")
COLUMNS = ("drawn", NOT_DRAWABLE, NOT_SUPPORTED, DISAGREE, PASSED, FAILED)
ATTEMPTS = 8  # raw draws per case before the op's slot is given up (each rejection counted)


@dataclass
class CaseResult:
    op: str
    verdict: str  # one of the columns but "drawn"
    why: str = ""  # one line: what disagreed, what is unsupported, the failure's signature
    case: Case | None = None
    seed: int = 0
    report: CheckReport | None = None


@dataclass
class OpRow:
    op: str
    undrawable: str = ""  # why the op cannot be drawn at all ("" when it can)
    rejected: int = 0  # raw draws ONNX rejected
    cases: list[CaseResult] = field(default_factory=list)

    def count(self, column: str) -> int:
        if column == "drawn":
            return len(self.cases)
        if column == NOT_DRAWABLE:
            return self.rejected
        return sum(c.verdict == column for c in self.cases)


def resolve_ops(names: Sequence[str] | None) -> tuple[str, ...]:
    """The ops named (ONNX spelling; `all`: every op of the default domain; None: the family's
    drawn ops); UsageError for a name that is not an op of the default domain at our opset."""
    from shapefuzz.families.onnx_op.schema import default_ops
    from shapefuzz.families.onnx_op.strategy import FAMILY_OPS
    from shapefuzz.iree.onnx_import import OPSET

    if not names:
        return FAMILY_OPS
    if list(names) == ["all"]:
        return default_ops()
    known = {op.lower(): op for op in default_ops()}
    out = []
    for name in names:
        op = known.get(name.lower())
        if op is None:
            raise UsageError(f"{name!r} is not an operator of ONNX's default domain at opset {OPSET} "
                             f"(ops are ONNX names, e.g. Resize, Slice, Pad; `all` for every one)")
        out.append(op)
    return tuple(dict.fromkeys(out))


def _seed(seed: int, op: str, i: int, attempt: int) -> int:
    digest = hashlib.sha256(f"{seed}:{op}:{i}:{attempt}".encode()).digest()
    return int.from_bytes(digest[:6], "big")


def _unsupported_why(report: CheckReport) -> str:
    for r in report.results:
        if r.status == Status.UNSUPPORTED:
            return (r.detail.splitlines() or [""])[0][:200]
    return ""


def judge_case(p: Any, seed: int, lanes: Sequence[str], toolchain: Toolchain, budget: Budget,
               confirm: bool = True) -> CaseResult:
    """One drawable case's verdict (steps 2-4 of the module's list)."""
    from shapefuzz.families.onnx_op.reference import disagreement, make_inputs, references, ReferenceDisagreement
    from shapefuzz.families.onnx_op.strategy import importable
    from shapefuzz.judge.oracle import check_case

    case = Case.make(FAMILY, p)
    inputs = make_inputs(p, seed)
    try:
        ort_out, ref_out = references(p, inputs)
        problem = disagreement(p, inputs, ort_out, ref_out)
    except ReferenceDisagreement as error:
        problem = str(error)
    if problem:
        return CaseResult(p.op, DISAGREE, problem, case, seed)
    rejected = importable(p)
    if rejected:
        return CaseResult(p.op, NOT_SUPPORTED, rejected, case, seed)
    report = check_case(case, tuple(lanes), toolchain, seed, budget, confirm)
    if report.verdict == Verdict.INVALID:  # the importer's module does not verify: the importer's bug
        why = (report.verify_error.strip().splitlines() or ["does not verify"])[0][:300]
        return CaseResult(p.op, FAILED, f"the imported module does not verify: {why}", case, seed, report)
    failed = [r for r in report.results if r.failed and not r.flaky]
    if failed:
        return CaseResult(p.op, FAILED, "; ".join(str(r.signature) for r in failed), case, seed, report)
    if any(r.status == Status.UNSUPPORTED for r in report.results):
        return CaseResult(p.op, NOT_SUPPORTED, _unsupported_why(report), case, seed, report)
    flaky = [r for r in report.results if r.failed]
    return CaseResult(p.op, PASSED, "flaky: " + "; ".join(str(r.signature) for r in flaky) if flaky else "",
                      case, seed, report)


def sweep_op(op: str, n: int, seed: int, lanes: Sequence[str], toolchain: Toolchain, budget: Budget,
             confirm: bool = True, progress: Callable[[CaseResult], None] | None = None) -> OpRow:
    from shapefuzz.families.generate import draw
    from shapefuzz.families.onnx_op.model import drawable
    from shapefuzz.families.onnx_op.strategy import op_strategy, why_undrawable

    row = OpRow(op, why_undrawable(op))
    if row.undrawable:
        return row
    strategy = op_strategy(op)
    for i in range(n):
        for attempt in range(ATTEMPTS):
            s = _seed(seed, op, i, attempt)
            p = draw(strategy, s)
            if drawable(p):
                row.rejected += 1
                continue
            result = judge_case(p, s, lanes, toolchain, budget, confirm)
            row.cases.append(result)
            if progress is not None:
                progress(result)
            break
    return row


def table(rows: Sequence[OpRow]) -> list[tuple[str, ...]]:
    """Rows: op, a count per column, and why an op cannot be drawn at all."""
    out: list[tuple[str, ...]] = [("op", *COLUMNS, "")]
    for row in rows:
        if row.undrawable:
            out.append((row.op, *("-" for _ in COLUMNS), row.undrawable))
        else:
            out.append((row.op, *(str(row.count(c)) for c in COLUMNS), ""))
    return out


def to_json(rows: Sequence[OpRow]) -> dict[str, Any]:
    return {"columns": list(COLUMNS),
            "ops": [{"op": r.op, "undrawable": r.undrawable, **{c: r.count(c) for c in COLUMNS},
                     "cases": [{"verdict": c.verdict, "why": c.why, "seed": c.seed,
                                "params": c.case.params if c.case else None} for c in r.cases if c.verdict != PASSED]}
                    for r in rows]}


def save_findings(rows: Sequence[OpRow], corpus_dir: Any, toolchain: Toolchain) -> list[str]:
    """Each failing (case, lane) into the corpus as a finding of the onnx_op family: the case's
    file (header and imported module) as the reproducer, its inputs and agreed reference,
    model.onnx beside it (the corpus takes it from the case)."""
    from shapefuzz.corpus import make_finding, save_finding
    from shapefuzz.families import render_case
    from shapefuzz.judge.oracle import case_expectation

    lines = []
    for row in rows:
        for c in row.cases:
            if c.verdict != FAILED or c.report is None or c.case is None:
                continue
            expectation = case_expectation(c.case, c.seed)
            text = render_case(c.case)
            for br in c.report.results:
                if not br.failed or br.signature is None or br.flaky:
                    continue
                finding = make_finding(br.signature, text, toolchain, case=c.case, seed=c.seed,
                                       inputs=expectation.inputs, expected=expectation.expected, detail=br.detail,
                                       evidence=f"onnx-ops: ONNX Runtime and onnx.reference agree; {br.backend} differs "
                                                f"({br.stage.value}/{br.status.value})")
                entry, new = save_finding(corpus_dir, finding)
                lines.append(f"{'new' if new else 'seen':<6} {entry}")
    return lines
