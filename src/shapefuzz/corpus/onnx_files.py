"""The ONNX model behind a corpus entry: `model.onnx` beside `reproducer.mlir`, the command
that imports one into the other, and where the entry came from when it is not a generated case
(an ONNX node conformance test, `onnx-suite --save`)."""

from __future__ import annotations

from typing import Any

from shapefuzz.case import Case

MODEL_FILE = "model.onnx"
MAX_MODEL_BYTES = 64 << 20  # a node test's or generated case's model is kilobytes


def case_model_bytes(case: Case | None) -> bytes | None:
    """The serialized model a case spelled in ONNX was imported from, else None."""
    if case is None or case.params.get("frontend") != "onnx":
        return None
    from shapefuzz.families import get_family
    from shapefuzz.families.frontends import onnx_model

    model = onnx_model(get_family(case.family), case.params)
    return None if model is None else model.SerializeToString(deterministic=True)


def model_meta(reproducer: str) -> dict[str, Any]:
    """meta.json fields of an entry that keeps its ONNX model."""
    from shapefuzz.iree.onnx_import import import_command

    return {"onnx_model": MODEL_FILE, "import_command": import_command(MODEL_FILE, reproducer)}


def model_opset(data: bytes) -> str:
    """"opset N" of a serialized model's default domain, for people reading an issue."""
    import onnx

    try:
        model = onnx.load_from_string(data)
    except Exception:  # noqa: BLE001 - a damaged file: say nothing about it
        return "opset unknown"
    versions = [o.version for o in model.opset_import if o.domain in ("", "ai.onnx")]
    return f"opset {versions[0]}" if versions else "opset unknown"


def entry_model(folder, meta: dict[str, Any]):
    """The entry's model.onnx (a plain file under the size cap) when its meta names one, else None."""
    from pathlib import Path

    model = Path(folder) / MODEL_FILE
    if meta.get("onnx_model") != MODEL_FILE or model.is_symlink() or not model.is_file():
        return None
    return model if model.stat().st_size <= MAX_MODEL_BYTES else None
