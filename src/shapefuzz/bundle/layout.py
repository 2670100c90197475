"""A bundle on disk: its names, its manifest and each case's record, and the results file a run
writes; every value read back is checked here (a bundle travels between machines, a results file
comes back from one), a bad one raising SchemaError that names the field. NumPy and the standard
library only: the runner imports this on a machine with nothing else.

    DIR/manifest.json          what was compiled how (IREE version, backend, flags) and each case's state
                               (a `--from-corpus` bundle: `from_corpus`, and per case its `ladder` rung:
                               the entry, "as-is" / "root" / "without", the dropped op's index and name)
    DIR/smoke.vmfb             a one-dispatch module: does code compiled here run on the device at all
    DIR/cases/ID/case.mlir     the case, its `// shapefuzz-case:` header first (`check` and `replay` re-derive it)
    DIR/cases/ID/module.vmfb   compiled here for the bundle's target
    DIR/cases/ID/inputN.npy    its inputs; expectedN.npy: the NumPy reference's results
    DIR/cases/ID/case.json     function, counts, the comparison rule (`export_checks.compare`), input seed
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shapefuzz.schema import SchemaError, ident, integer, load_json, obj, text

FORMAT = "shapefuzz-bundle/1"
RESULTS_FORMAT = "shapefuzz-bundle-results/1"
MANIFEST, SMOKE, CASES, CASE_JSON = "manifest.json", "smoke.vmfb", "cases", "case.json"
MLIR, VMFB = "case.mlir", "module.vmfb"
# What building did with a case: compiled (it runs on the device), or why it did not.
COMPILED, COMPILE_FAILED, UNSUPPORTED, INVALID = "compiled", "compile-failed", "unsupported", "invalid"
STATES = (COMPILED, COMPILE_FAILED, UNSUPPORTED, INVALID)
# What running did with a case.
OK, WRONG, ERROR, TIMEOUT, NOT_RUN = "ok", "wrong", "error", "timeout", "not-run"
VERDICTS = (OK, WRONG, ERROR, TIMEOUT, NOT_RUN)
SMOKE_MODULE = """func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %r = arith.addf %a, %a : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""
SMOKE_INPUT, SMOKE_OUTPUT = "4xf32=1 2 3 4", "4xf32=2 4 6 8"


def input_name(i: int) -> str:
    return f"input{i}.npy"


def expected_name(i: int) -> str:
    return f"expected{i}.npy"


def json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def read_json(path: Path, what: str) -> Any:
    from shapefuzz.files import read_bytes

    try:
        data = read_bytes(path)
    except FileNotFoundError:
        raise SchemaError(f"{what}: no such file {path}") from None
    except OSError as error:
        raise SchemaError(f"{what}: {error.strerror or error}") from None
    try:
        return load_json(data.decode("utf-8"), what)
    except UnicodeDecodeError:
        raise SchemaError(f"{what}: not UTF-8 text") from None


@dataclass(frozen=True)
class CaseEntry:
    """One case as the manifest lists it."""

    id: str
    family: str
    state: str
    detail: str  # why it did not compile (the compiler's words), "" when it did
    signature: str  # the failure's bucket key, "" when it compiled

    @property
    def runs(self) -> bool:
        return self.state == COMPILED


@dataclass(frozen=True)
class Manifest:
    data: dict[str, Any]
    cases: tuple[CaseEntry, ...]

    @property
    def device(self) -> str:
        return self.data["device"]

    @property
    def backend(self) -> str:
        return self.data["backend"]

    @property
    def bundle_id(self) -> str:
        return self.data["bundle_id"]


def read_manifest(folder: Path) -> Manifest:
    where = str(folder / MANIFEST)
    data = obj(read_json(folder / MANIFEST, where), where)
    if data.get("format") != FORMAT:
        raise SchemaError(f"{where}: format {str(data.get('format'))[:60]!r} is not {FORMAT!r} (not a bundle, or another version)")
    for key in ("device", "backend", "bundle_id", "iree_version"):
        text(data.get(key), f"{where}: {key}")
    ident(data["backend"], f"{where}: backend")
    cases = []
    raw = data.get("cases")
    if not isinstance(raw, list):
        raise SchemaError(f"{where}: cases is not a list")
    for n, item in enumerate(raw):
        field = f"{where}: cases[{n}]"
        item = obj(item, field)
        state = item.get("state")
        if state not in STATES:
            raise SchemaError(f"{field}: state {str(state)[:40]!r} is not one of {', '.join(STATES)}")
        cases.append(CaseEntry(ident(item.get("id"), f"{field}.id"), text(item.get("family"), f"{field}.family"),
                               state, text(item.get("detail", ""), f"{field}.detail", one_line=False),
                               text(item.get("signature", ""), f"{field}.signature", one_line=False)))
    if len({c.id for c in cases}) != len(cases):
        raise SchemaError(f"{where}: a case id is listed twice")
    return Manifest(data, tuple(cases))


@dataclass(frozen=True)
class CaseFiles:
    """What running one case needs, read from its folder."""

    folder: Path
    function: str
    inputs: list[Path]
    expected: list[np.ndarray]
    rule: dict[str, Any]


def read_case(folder: Path, case_id: str) -> CaseFiles:
    from shapefuzz.files import child
    from shapefuzz.schema import load_npy

    where = f"case {case_id}"
    here = child(child(folder, CASES, "cases folder"), case_id, where)
    record = obj(read_json(here / CASE_JSON, f"{where}: {CASE_JSON}"), f"{where}: {CASE_JSON}")
    function = text(record.get("function"), f"{where}: function")
    n_in = integer(record.get("inputs"), f"{where}: inputs", 0, 64)
    n_out = integer(record.get("results"), f"{where}: results", 1, 64)
    rule = obj(record.get("rule"), f"{where}: rule")
    inputs = [here / input_name(i) for i in range(n_in)]
    for path in inputs + [here / VMFB]:
        if not path.is_file():
            raise SchemaError(f"{where}: {path.name} is missing")
    expected = [load_npy(here / expected_name(i), f"{where}: {expected_name(i)}") for i in range(n_out)]
    return CaseFiles(here, function, inputs, expected, rule)


def encode(array: np.ndarray) -> dict[str, Any]:
    from shapefuzz.export_checks import encode_operand

    return encode_operand(array)


def decode(value: Any, what: str) -> np.ndarray:
    """An array `encode` wrote (dtype, shape, hex), checked against the array cap."""
    from shapefuzz.schema import check_array_bytes

    value = obj(value, what)
    try:
        dtype = np.dtype(text(value.get("dtype"), f"{what}.dtype"))
        shape = tuple(integer(d, f"{what}.shape") for d in value.get("shape", []))
        if dtype.kind not in "biuf" or len(shape) > 16:
            raise SchemaError(f"{what}: not a plain numeric array")
        check_array_bytes(shape, dtype, what)
        data = bytes.fromhex(text(value.get("hex"), f"{what}.hex", max_len=1 << 30))
        return np.frombuffer(data, dtype=dtype).reshape(shape).copy()
    except (TypeError, ValueError) as error:
        if isinstance(error, SchemaError):
            raise
        raise SchemaError(f"{what}: not an encoded array ({str(error)[:120]})") from None
