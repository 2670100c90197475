"""ONNX models to MLIR through IREE's own importer (`iree-import-onnx`, from the installed
iree-base-compiler package), run in-process: the same `onnx_importer.NodeImporter` the command
line tool runs, after the same checker and shape inference, so the text is what a user gets from
`iree-import-onnx model.onnx -o model.mlir`. Import costs a few tens of milliseconds (ONNX shape
inference, then building the IR); results are cached by the model's hash, since checks, re-runs
and shrinks render one case many times. A model the importer rejects raises `ImportFailure`
(one line, the importer's message): for a generated case that is our bug or an unsupported
opset, never a compiler finding.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
import warnings
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import onnx

OPSET = 18  # the default domain's opset our models record (ScatterND's max/min reductions need 18)
IR_VERSION = 8
_CACHE: OrderedDict[str, str] = OrderedDict()
_CACHE_SIZE = 256
STATS = {"imports": 0, "cached": 0, "seconds": 0.0}  # per process: what importing cost so far
_LOCK = threading.Lock()  # onnx-suite imports from threads: one import (and cache update) at a time


class ImportFailure(Exception):
    """The importer (or ONNX's checker and shape inference before it) rejected the model."""


def model_hash(model: "onnx.ModelProto") -> str:
    return hashlib.sha256(model.SerializeToString(deterministic=True)).hexdigest()


def import_command(model_file: str = "model.onnx", out: str = "model.mlir") -> list[str]:
    """The command line a user runs for the same import."""
    return ["iree-import-onnx", model_file, "-o", out]


def import_model(model: "onnx.ModelProto") -> str:
    """The MLIR module `iree-import-onnx` makes of `model` (cached by its hash)."""
    with _LOCK:
        return _import_cached(model)


def forget_imports() -> None:
    """Empty this process's cache of imports: the next `import_model` of each model imports it
    again (bench/bench_onnx_import.py times a cold import)."""
    with _LOCK:
        _CACHE.clear()


def _import_cached(model: "onnx.ModelProto") -> str:
    key = model_hash(model)
    if key in _CACHE:
        STATS["cached"] += 1
        _CACHE.move_to_end(key)
        return _CACHE[key]
    start = time.perf_counter()
    try:
        text = _import(model)
    finally:
        STATS["imports"] += 1
        STATS["seconds"] += time.perf_counter() - start
    _CACHE[key] = text
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return text


# One MLIR context per process, for every import under _LOCK: making one (its dialects, its thread
# pool) costs tens of milliseconds, more than a small model's import. Made afresh in a forked child
# (the parent's threads are gone there) and every _CONTEXT_USES imports (what modules leave in a
# context, interned types and attributes, is then let go).
_SHARED: dict[str, Any] = {}
_CONTEXT_USES = 256
_INHERITED: list[object] = []  # a parent's context, never freed in a child (it would join threads not there)


def _context(ir):
    pid = os.getpid()
    if _SHARED.get("pid") != pid or _SHARED.get("uses", 0) >= _CONTEXT_USES:
        if "pid" in _SHARED and _SHARED["pid"] != pid:
            _INHERITED.append(_SHARED["context"])
        _SHARED.update(pid=pid, uses=0, context=ir.Context())
    _SHARED["uses"] = int(_SHARED["uses"]) + 1
    return _SHARED["context"]


def _has_raw_tensors(graph) -> bool:
    """Whether the graph holds a tensor in raw bytes (`numpy_helper.from_array`): the importer makes
    each a resource named after the tensor, and a context that already holds that name renames the
    next one (`value_0_1`); such a model is imported in a context of its own, so its text never
    depends on what was imported before."""
    if any(t.HasField("raw_data") for t in graph.initializer):
        return True
    for node in graph.node:
        for attribute in node.attribute:
            tensors = [attribute.t] if attribute.HasField("t") else []
            if any(t.HasField("raw_data") for t in [*tensors, *attribute.tensors]):
                return True
            graphs = [attribute.g] if attribute.HasField("g") else []
            if any(_has_raw_tensors(g) for g in [*graphs, *attribute.graphs]):
                return True
    return False


def _import(model: "onnx.ModelProto") -> str:
    try:
        import onnx
        from iree.compiler import ir
        from iree.compiler.extras import onnx_importer
    except ImportError as error:  # noqa: BLE001 - a compiler package built without the torch importer
        raise ImportFailure(f"iree-import-onnx is not available here: {error}") from None
    try:
        # As iree-import-onnx does: check, infer shapes (with data propagation), import, verify.
        onnx.checker.check_model(model)
        inferred = onnx.shape_inference.infer_shapes(model, data_prop=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            context = _context(ir) if not _has_raw_tensors(model.graph) else ir.Context()
            info = onnx_importer.ModelInfo(inferred)
            module = info.create_module(context=context).operation
            onnx_importer.NodeImporter.define_function(info.main_graph, module).import_all()
            module.verify()
            text = module.get_asm()
        for warning in caught:  # e.g. a value shape inference left untyped: the import is not sound
            raise ImportFailure(f"iree-import-onnx warned: {str(warning.message).splitlines()[0][:300]}")
        return text
    except ImportFailure:
        raise
    except Exception as error:  # noqa: BLE001 - any rejection by checker, inference or importer is data
        lines = str(error).strip().splitlines() or [type(error).__name__]
        raise ImportFailure(f"iree-import-onnx rejected the model: {type(error).__name__}: {lines[0][:300]}") from None
