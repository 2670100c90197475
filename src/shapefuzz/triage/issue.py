"""The parts of an upstream bug report that come from triage: a title naming the component and
the failing pass (never LLVM's "Please report issues to..." banner), the lanes where it
reproduces with the flags that matter, the whole top of a crash's backtrace, the regression
range, and the reproducer without shapefuzz's header comment."""

from __future__ import annotations

from typing import Any

from shapefuzz import markup
from shapefuzz.triage.component import variant_flags
from shapefuzz.triage.failing_pass import raw_frames
from shapefuzz.triage.localize import FRONTEND_NAMES
from shapefuzz.triage.record import TOP_FRAMES

CASE_HEADER = "// shapefuzz-case:"


def without_header(mlir: str) -> str:
    """The IR as a maintainer reads it: shapefuzz's `// shapefuzz-case:` header line dropped."""
    return "".join(line for line in mlir.splitlines(keepends=True) if not line.startswith(CASE_HEADER)).lstrip("\n")


def issue_title(meta: dict[str, Any], backend: str, stage: str, status: str, message: str) -> str:
    """`[component] pass: message`, e.g. `[frontend: torch-mlir conversion] convert-torch-to-tmtensor
    fails: 'tm_tensor.scatter' op mismatch ...`; a crash says where it crashed."""
    bug = meta.get("bug") or {}
    component = bug.get("component") or backend
    where = bug.get("failing_pass") or ""
    first = next((line for line in bug.get("first_lines") or [] if "Please report" not in line), "")
    text = message if not first else first.split("error:", 1)[-1].strip()
    if status == "crash":
        frames = backtrace_lines(meta)
        frame = frames[0].split(" 0x", 1)[-1].split(" ", 1)[-1] if frames else ""
        what = f"crash in {where}" if where else "crash"
        text = f"{what}: {frame[:100]}" if frame else what
    elif stage in ("compare", "run") and (bug.get("localized") or {}).get("phase"):
        loc = bug["localized"]
        what = "wrong values" if stage == "compare" else f"run-time {status}"
        after = "after" if loc.get("certain") else "that go away without"
        text = (f"{what} from the {FRONTEND_NAMES.get(loc['frontend'], loc['frontend'])} conversion ({loc['phase']})"
                if loc.get("frontend") else
                f"{what} {after} {loc.get('pass_class') or loc['pass']} ({loc['phase']})" if loc.get("pass")
                else f"{what} from {backend}'s {loc['phase']}" if loc["phase"] == "codegen"
                else f"{what} after {loc['phase']}")
    elif stage == "compare":
        text = message
    elif where:
        text = f"{where} fails: {text}"
    return f"[{component}] {text}"[:200]


def lane_lines(meta: dict[str, Any], entry_backend: str) -> list[str]:
    """One line per lane where it reproduces, with the non-default flags that lane adds (Markdown)."""
    bug = meta.get("bug") or {}
    lanes = list(dict.fromkeys([entry_backend, *(bug.get("lanes") or [])]))
    out = []
    for lane in lanes:
        flags = variant_flags(lane)
        out.append(markup.code(lane) + (f" (adds {markup.code(' '.join(flags))})" if flags else " (default flags)"))
    return out


def backtrace_lines(meta: dict[str, Any]) -> list[str]:
    """The whole top of a crash's backtrace, below the signal handler (whole frames), read again
    from the entry's kept output when it has one (the record may predate a better reading)."""
    if meta.get("status") == "crash" or (meta.get("signature") or {}).get("status") == "crash":
        frames = raw_frames(str(meta.get("detail") or ""), TOP_FRAMES)
        if frames:
            return frames
    return list((meta.get("bug") or {}).get("frames") or [])


def regression_line(meta: dict[str, Any]) -> str | None:
    record = (meta.get("bug") or {}).get("regression")
    if isinstance(record, dict) and record.get("text"):
        stepped = str(record.get("stepped_over") or "")
        return (f"- Regression range over released wheels: {markup.text(record['text'])}."
                + (f" Could not tell: {markup.text(stepped[:400])}." if stepped else ""))
    return None


__all__ = ["CASE_HEADER", "backtrace_lines", "issue_title", "lane_lines", "regression_line", "without_header"]
