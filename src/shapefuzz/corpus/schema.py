"""meta.json checked field by field as it is read, so every later use of an entry may rely on its
types (the shared field checks are in `shapefuzz.schema`)."""

from __future__ import annotations

import json
import re
from typing import Any

from shapefuzz import schema
from shapefuzz.case import check_params
from shapefuzz.corpus.entry import CORPUS_FORMAT, EXPECTED_STATES, MAX_DETAIL, META
from shapefuzz.model import Stage, Status
from shapefuzz.schema import SchemaError
from shapefuzz.triage.localize import MAX_EVIDENCE, MAX_IR
from shapefuzz.triage.record import read_bug

_REQUIRED = ("format", "id", "signature", "backends", "first_seen", "last_seen", "count", "expected_state")


# bug.localized (triage.localize.Localization.to_json): its evidence, one line, and the IR before and
# after the pass it names, lines (codegen_pass.trimmed keeps 40 of at most 160 characters)
_LOCALIZED_IR = ("ir_before", "ir_after")


def _check_bug(value: Any, field: str) -> None:
    """meta.json `bug` (triage.record): an object of text, flags and lists of text, and records of
    JSON values (a regression range)."""
    obj = schema.obj(value, field)
    for key, item in obj.items():
        where = f"{field}.{key}"
        if isinstance(item, list):
            schema.text_list(item, where)
        elif isinstance(item, dict):
            for k, v in item.items():
                if key == "localized" and k in _LOCALIZED_IR:  # the IR around the localized pass, trimmed
                    schema.text(v, f"{where}.{k}", one_line=False, max_len=MAX_IR)
                else:
                    schema.text(v if isinstance(v, str) else json.dumps(v), f"{where}.{k}",
                                max_len=MAX_EVIDENCE if key == "localized" and k == "evidence" else 2000)
        elif not isinstance(item, (str, bool)):
            raise SchemaError(f"{where}: {type(item).__name__} is not text")
        else:
            schema.text(str(item), where, max_len=2000)


def _check_record(value: Any, field: str) -> None:
    """A record about the shown reproducer (`shown`, `cpus`): an object of text, and lists of text or
    of objects of text (each lane's or CPU's verdict), read back only through its own `from_json`."""
    for key, item in schema.obj(value, field).items():
        where = f"{field}.{key}"
        if isinstance(item, list):
            for i, element in enumerate(item):
                if isinstance(element, dict):
                    for k, v in element.items():
                        schema.text(v, f"{where}[{i}].{k}", max_len=2000)
                else:
                    schema.text(element, f"{where}[{i}]", max_len=2000)
        else:
            schema.text(item, where, max_len=2000)


def _version(value: str, field: str) -> None:
    if not re.fullmatch(r"\S{1,100}", value):  # as parse_version reads it; exports quote it anyway
        raise SchemaError(f"{field}: {value[:40]!r} is not a version")


def _version_text(value: Any, field: str) -> None:
    schema.text(value, field)
    _version(value, field)


def check_meta(meta: Any, folder_name: str, render: bool = True) -> dict[str, Any]:
    """meta.json as this shapefuzz writes it, field by field; raises SchemaError naming the
    first bad field. Every later use of the entry (list, show, replay, export, repro.sh) may
    then rely on the types, and ids and backend names are safe in paths and shells. `render`
    False skips rendering the params (the costly part), for a listing that knows this very
    meta.json passed before (`corpus.listing`)."""
    s = schema
    s.obj(meta, META)
    if meta.get("bug") is not None and not isinstance(meta["bug"], dict):
        meta["bug"] = read_bug(meta["bug"])  # an older entry's record written as text: read as the object
    missing = [key for key in _REQUIRED if key not in meta]
    if missing:
        raise SchemaError(f"{META} lacks {', '.join(missing)}")
    if not s.is_int(meta["format"]) or not 1 <= meta["format"] <= CORPUS_FORMAT:
        raise SchemaError(f"{META}: format {meta['format']!r}; this shapefuzz reads format {CORPUS_FORMAT}")
    s.ident(meta["id"], f"{META}: id")
    if meta["id"] != folder_name:
        raise SchemaError(f"{META}: id {meta['id']!r} is not the folder's name")
    sig = s.obj(meta["signature"], f"{META}: signature")
    for key in ("backend", "stage", "status", "message"):
        if key not in sig:
            raise SchemaError(f"{META}: signature lacks {key!r}")
    s.ident(sig["backend"], f"{META}: signature.backend")
    s.one_of(sig["stage"], f"{META}: signature.stage", tuple(x.value for x in Stage))
    s.one_of(sig["status"], f"{META}: signature.status", tuple(x.value for x in Status))
    s.text(sig["message"], f"{META}: signature.message", max_len=4000)
    s.text_list(meta["backends"], f"{META}: backends", s.ident, non_empty=True)
    for key in ("first_seen", "last_seen"):
        s.text(meta[key], f"{META}: {key}", max_len=64)
    s.integer(meta["count"], f"{META}: count")
    s.one_of(meta["expected_state"], f"{META}: expected_state", EXPECTED_STATES)
    optional: dict[str, Any] = {
        "signature_text": lambda v, f: s.text(v, f, max_len=5000),
        "backend": s.ident, "stage": s.text, "status": s.text,
        "seed": lambda v, f: s.integer(v, f, 0, (1 << 63) - 1),
        "toolchain_version": _version_text,
        "toolchain_versions": lambda v, f: s.text_list(v, f, _version),
        "compile_command": lambda v, f: s.text_list(v, f),
        "flaky": s.boolean,
        "detail": lambda v, f: s.text(v, f, one_line=False, max_len=2 * MAX_DETAIL),
        "notes": lambda v, f: s.text(v, f, one_line=False),
        "cause": lambda v, f: s.text(v, f, max_len=64),
        "triage": lambda v, f: s.text(v, f, max_len=64),
        "triage_evidence": lambda v, f: s.text(v, f, max_len=4000),
        "triage_evidence_of": lambda v, f: s.text(v, f, max_len=64),  # the digest of its program (triage.shown)
        "shown": _check_record, "cpus": _check_record,  # the shown reproducer's own runs, on lanes and on CPUs
        "bug": _check_bug, "reported": lambda v, f: s.text(v, f, max_len=2000),
        "onnx_model": lambda v, f: s.one_of(v, f, ("model.onnx",)),
        "case_form": lambda v, f: s.one_of(v, f, ("case.mlir",)),  # shrink.case_stage's case, beside it
        "import_command": lambda v, f: s.text_list(v, f),
        "origin": lambda v, f: s.text(v, f, max_len=1000),
        "sighting_keys": lambda v, f: s.text_list(v, f, s.ident),  # sightings counted by key (save_finding)
        "fixed_in": _version_text,
        "inputs": lambda v, f: s.text_list(v, f), "expected": lambda v, f: s.text_list(v, f),
        "sizes": lambda v, f: [s.integer(s.obj(v, f).get(k, 0), f"{f}.{k}") for k in ("elements", "lines", "bytes")],
        "last_replay": lambda v, f: [s.text(s.obj(v, f).get(k) or "", f"{f}.{k}", max_len=5000)
                                     for k in ("date", "toolchain", "outcome", "now")],
        "bisect": lambda v, f: ([s.text(s.obj(v, f).get(k) or "", f"{f}.{k}", max_len=5000)
                                 for k in ("id", "last_passing", "first_failing", "first_fixed", "note")],
                                s.text_list(v.get("versions") or [], f"{f}.versions"),
                                s.obj(v.get("tested") or {}, f"{f}.tested")),
    }
    for key, check in optional.items():
        if meta.get(key) is not None:
            check(meta[key], f"{META}: {key}")
    if meta.get("family") is not None or meta.get("params") is not None:
        if meta.get("family") is None or meta.get("params") is None:
            raise SchemaError(f"{META}: family and params go together (one is missing)")
        check_params(meta["family"], meta["params"], f"{META}: ")
        if render:
            from shapefuzz.families import validate_params

            validate_params(meta["family"], meta["params"], f"{META}: params")
    return meta


