"""Plain-text views of shapefuzz values, shared by the commands."""

from __future__ import annotations

from shapefuzz.model import CheckReport


def report_lines(report: CheckReport) -> list[str]:
    """One line per backend, then the signature of each failure."""
    if report.verify_error:
        first = report.verify_error.strip().splitlines()[0] if report.verify_error.strip() else ""
        return [f"does not verify: {first}"]
    lines = []
    width = max([16, *(len(r.backend) for r in report.results)])  # variant lanes have long names
    for r in report.results:
        flag = " (flaky: passed on its re-runs)" if r.flaky else ""
        first_line = r.detail.strip().splitlines()[0][:160] if r.detail.strip() else ""
        extra = f"  {first_line}" if first_line and not r.failed else ""
        lines.append(f"{r.backend:<{width}} {r.stage.value:<8} {r.status.value:<11}{flag}{extra}")
    for r in report.failures:
        lines.append(f"  signature: {r.signature}")
    for note in report.notes:
        lines.append(f"  note: {note}")
    lines.append(f"verdict: {report.verdict.value}")
    return lines
