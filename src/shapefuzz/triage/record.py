"""What a corpus entry and a campaign keep about a bug, as one JSON object (meta.json `bug`):
its identity, the failing pass, the crash's top frames, the first error lines (the head of the
output, which a tail-only excerpt loses), the component, the scope and the severity; for a wrong
value or run-time failure, where it was localized (which then decides the pass, component and
identity, as a failing pass does for a compile error)."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any, Iterable

from shapefuzz.size import measure
from shapefuzz.triage.component import component_of, component_of_place, scope_of
from shapefuzz.triage.excerpt import MIN_FRAMES
from shapefuzz.triage.failing_pass import crash_frames, raw_frames
from shapefuzz.triage.identity import Identity, identity_of, with_localized_pass
from shapefuzz.triage.localize import Localization
from shapefuzz.triage.severity import severity_of

FIRST_LINES = 6
KEPT_BUG_FIELDS = ("regression",)  # what a re-save keeps from the old record (bisected, not recomputed)
# A device ladder's verdict (`bundle-judge --save`: the context ops the failure needs): about one
# program, so kept by a re-save only while the reproducer is that program (`kept_bug_fields`).
LADDER_BUG_FIELDS = ("ladder", "chain")
TOP_FRAMES = MIN_FRAMES  # an excerpt keeps at least as many (triage.excerpt)


def first_lines(output: str, count: int = FIRST_LINES) -> list[str]:
    """The first diagnostic lines of an output (errors and fatal errors, not echoed source)."""
    picked: list[str] = []
    for line in output.splitlines():
        text = line.strip()
        if (not text or text.startswith(("^", "// -----//", "Please report", "Stack dump:", "#"))
                or "note: see current operation" in text or "Program arguments:" in text):
            continue
        if "error:" in text or "LLVM ERROR" in text or "Assertion" in text or not picked:
            picked.append(text[:500])
        if len(picked) >= count:
            break
    return picked


def lanes_evidence(passed: Iterable[str], probe) -> str:
    """What the lanes that gave no failure prove: "right on X (executed)" for those a device ran
    here, "compiles on Y (not executed)" for compile-only ones (rocm, cuda here), which say nothing
    about values; "" when none."""
    from shapefuzz.iree.backends import BACKENDS, REFERENCE_BACKEND

    passed = [lane for lane in passed if lane in BACKENDS]
    ran = [lane for lane in passed if BACKENDS[lane].executes(probe)]
    built = [lane for lane in passed if lane not in ran]
    ref = " (the reference)" if ran == [REFERENCE_BACKEND] else " (the reference among them)" \
        if REFERENCE_BACKEND in ran else ""
    return (f"; right on {', '.join(ran)} (executed){ref}" if ran else "") + \
        (f"; compiles on {', '.join(built)} (not executed)" if built else "")


_LEGACY_PASSES = re.compile(r"; passes on ([\w., -]+?)(?: \(the reference(?: among them)?\))?$")


def reworded_evidence(evidence: str, probe) -> str:
    """A compiler-bug verdict's evidence as older versions wrote it ("...; passes on rocm-gfx942",
    a lane that only compiles here) in today's words (`lanes_evidence`); other text unchanged."""
    found = _LEGACY_PASSES.search(evidence)
    return evidence[:found.start()] + lanes_evidence(found.group(1).split(", "), probe) if found else evidence


def as_json_value(value: Any) -> Any:
    """A value as JSON holds it (tuples as lists, keys as text); anything else as its text."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    if isinstance(value, dict):
        return {str(k): as_json_value(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_json_value(v) for v in value]
    return str(value)


def read_bug(value: Any) -> dict[str, Any]:
    """meta.json `bug` as an object: entries written by older versions may hold it as text (JSON,
    or a Python dict's repr), which is read back as the object it spelled; other text is kept
    under `text`."""
    if isinstance(value, dict):
        return value
    if not isinstance(value, str) or not value.strip():
        return {}
    import ast
    import json

    for parse in (json.loads, ast.literal_eval):  # literal_eval: literals only, never code
        try:
            parsed = parse(value)
            if isinstance(parsed, dict):
                return as_json_value(parsed)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue
    return {"text": value}


def same_program(old_mlir: str, new_mlir: str) -> bool:
    """Whether two reproducers are one program: the same case header (family and params), or,
    without one, the same text."""
    from shapefuzz.case import case_from_mlir
    from shapefuzz.errors import ShapefuzzError

    if old_mlir.rstrip("\n") == new_mlir.rstrip("\n"):
        return True
    try:
        old, new = case_from_mlir(old_mlir), case_from_mlir(new_mlir)
    except (ShapefuzzError, ValueError):
        return False
    return old is not None and old == new


def kept_bug_fields(old: Any, old_mlir: str, new_mlir: str) -> dict[str, Any]:
    """What a re-save of an entry keeps of its old `bug` record: `KEPT_BUG_FIELDS` always, a device
    ladder's verdict (`LADDER_BUG_FIELDS`) only when the new reproducer is the same program (the
    verdict was about the old one otherwise)."""
    keep = KEPT_BUG_FIELDS + (LADDER_BUG_FIELDS if same_program(old_mlir, new_mlir) else ())
    return {k: v for k, v in (old if isinstance(old, dict) else {}).items() if k in keep}


def placed(ident: Identity, failing: str, component: str, localized: Localization | None, stage: str,
           lanes: Iterable[str]) -> tuple[Identity, str, str]:
    """A failure's identity, failing pass and component once `localized` (for a bucket's `bug` record and
    for a cause alike): a wrong value or run-time failure carries where it breaks; a compile error in a
    pass that runs in every phase (canonicalize) is named by its phase, and one in a checker by the pass
    that made what the checker refuses (`triage.culprit`), so one maker is one place whatever notices it."""
    if localized is None or not localized.localized:
        return ident, failing, component
    failing = (localized.pass_name if localized.certain else "") or failing  # "needs X" is not "fails in X"
    component = component_of_place(localized, lanes) or component
    place = f"frontend:{localized.frontend}" if localized.frontend else localized.pass_name or localized.phase
    ident = with_localized_pass(ident, place if localized.certain else f"needs {place}")
    # (a compile error is placed only by its phase, or at the maker of what a checker or a conversion
    # refused: either way, where it is placed is where it breaks)
    if localized.certain and stage == "compile":
        ident = replace(ident, failing_pass=localized.where)
    return ident, failing, component


def bug_record(signature: dict[str, str], detail: str, lanes: Iterable[str], mlir: str = "",
               localized: Localization | None = None) -> dict[str, Any]:
    """The `bug` object of one failure: `signature` is the structured signature (backend, stage,
    status, message), `detail` the kept output, `lanes` where it reproduces, `mlir` the
    reproducer (how big its tensors are tells a blow-up on a small module), `localized` where a
    wrong value or run-time failure was localized (kept as `localized`, also when it was not)."""
    stage, status, message = signature.get("stage", ""), signature.get("status", ""), signature.get("message", "")
    ident = identity_of(stage, status, message, detail)
    lanes = sorted(set(lanes) | {signature.get("backend", "")} - {""})
    component = component_of(stage, status, ident.failing_pass, crash_frames(detail, 64), lanes,
                             f"{message}\n{detail}")
    ident, failing, component = placed(ident, ident.failing_pass, component, localized, stage, lanes)
    elements = measure(mlir).elements if mlir else None
    extra = {"localized": localized.to_json()} if localized is not None else {}
    return {
        "identity": ident.key,
        "strong": ident.strong,
        "failing_pass": failing,
        "frames": raw_frames(detail, TOP_FRAMES) if status in ("crash", "timeout") else [],
        "first_lines": first_lines(detail) if stage in ("compile", "run") else [],
        "component": component,
        "scope": scope_of(lanes, component),
        "lanes": lanes,
        "severity": severity_of(stage, status, message, detail, elements).label,
        **extra,
    }


__all__ = ["KEPT_BUG_FIELDS", "LADDER_BUG_FIELDS", "as_json_value", "bug_record", "first_lines", "kept_bug_fields",
           "lanes_evidence", "read_bug", "reworded_evidence", "same_program"]
