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

A bundle comes back from another machine: each file is reached through `inside` (a plain name,
no symbolic link, never leaving the bundle), and each value read is checked for type and range.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from shapefuzz.schema import SchemaError, boolean, ident, integer, load_json, obj, one_of, text, text_list

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
# A `--from-corpus` case's ladder rung (bundle/ladder.py): the entry as-is, its root alone, or its chain
# without the context op at index `dropped`.
AS_IS, ROOT, WITHOUT = "as-is", "root", "without"
RUNGS = (AS_IS, ROOT, WITHOUT)
MAX_CHAIN = 64  # context ops of one case: far above any drawn chain
MAX_SEED = (1 << 63) - 1  # as meta.json's `seed` and the CLI's --seed


def input_name(i: int) -> str:
    return f"input{i}.npy"


def expected_name(i: int) -> str:
    return f"expected{i}.npy"


def json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=1, sort_keys=True) + "\n").encode()


def inside(folder: Path, *names: str) -> Path:
    """`folder/names...`, each name a plain name that is not a symbolic link and stays inside
    (`files.child`): a bundle's file linked to one elsewhere is refused, never read or run."""
    from shapefuzz.files import UnsafeName, child

    path = folder
    for name in names:
        try:
            path = child(path, name, "bundle file")
        except UnsafeName as error:
            raise SchemaError(str(error)) from None
    return path


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
class LadderRung:
    """A `--from-corpus` case's place in its entry's ladder, as the manifest records it."""

    entry: str  # the corpus entry's id: a plain entry folder name (ident), never a path
    rung: str  # AS_IS, ROOT or WITHOUT
    dropped: int | None  # the dropped context op's index (WITHOUT), else None
    op: str  # that op's name, "" for the others


def read_rung(value: Any, field: str) -> LadderRung:
    value = obj(value, field)
    rung = one_of(value.get("rung"), f"{field}.rung", RUNGS)
    dropped = value.get("dropped")
    if rung == WITHOUT:
        dropped = integer(dropped, f"{field}.dropped", 0, MAX_CHAIN - 1)
    elif dropped is not None:
        raise SchemaError(f"{field}.dropped: a {rung} rung drops no op (expected null)")
    return LadderRung(ident(value.get("entry"), f"{field}.entry"), rung, dropped,
                      text(value.get("op", ""), f"{field}.op", max_len=100))


@dataclass(frozen=True)
class CaseEntry:
    """One case as the manifest lists it."""

    id: str
    family: str
    state: str
    detail: str  # why it did not compile (the compiler's words), "" when it did
    signature: str  # the failure's bucket key, "" when it compiled
    input_seed: int | None = None  # its inputs' seed (case.json has it too, for a compiled case)
    ladder: LadderRung | None = None  # its rung, in a `--from-corpus` bundle

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

    @property
    def from_corpus(self) -> bool:
        """A `--from-corpus` bundle: its cases are ladder rungs (every case has its `ladder`)."""
        return "from_corpus" in self.data

    @property
    def flags(self) -> tuple[str, ...]:
        return tuple(self.data.get("flags") or ())

    @property
    def arch(self) -> str | None:
        return self.data.get("arch")


def read_manifest(folder: Path) -> Manifest:
    """The manifest, every value the commands use checked (SchemaError naming the file and field)."""
    path = inside(folder, MANIFEST)
    where = str(path)
    data = obj(read_json(path, where), where)
    if data.get("format") != FORMAT:
        raise SchemaError(f"{where}: format {str(data.get('format'))[:60]!r} is not {FORMAT!r} (not a bundle, or another version)")
    for key in ("device", "backend", "bundle_id", "iree_version"):
        text(data.get(key), f"{where}: {key}")
    ident(data["backend"], f"{where}: backend")
    if data.get("arch") is not None:
        text(data["arch"], f"{where}: arch", max_len=40)
    flags = data.get("flags")
    if flags is not None and not (isinstance(flags, list) and all(isinstance(f, str) for f in flags)):
        raise SchemaError(f"{where}: flags is not a list of flags")
    if flags is not None:
        text_list(flags, f"{where}: flags")
    ladder = "from_corpus" in data
    if ladder:
        text(data["from_corpus"], f"{where}: from_corpus", max_len=4096)
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
        seed = item.get("input_seed")
        if ladder and "ladder" not in item:
            raise SchemaError(f"{field}: a --from-corpus bundle's case without its ladder rung")
        rung = read_rung(item["ladder"], f"{field}.ladder") if "ladder" in item else None
        cases.append(CaseEntry(ident(item.get("id"), f"{field}.id"), text(item.get("family"), f"{field}.family"),
                               state, text(item.get("detail", ""), f"{field}.detail", one_line=False),
                               text(item.get("signature", ""), f"{field}.signature", one_line=False),
                               None if seed is None else integer(seed, f"{field}.input_seed", 0, MAX_SEED), rung))
    if len({c.id for c in cases}) != len(cases):
        raise SchemaError(f"{where}: a case id is listed twice")
    return Manifest(data, tuple(cases))


# ----------------------------------------------------------------------------- results.json

MAX_SECONDS = 1e9
_HEAD_TEXT = ("backend", "device", "iree_version", "runtime_version", "host", "python", "started", "finished", "smoke")


def number(value: Any, field: str, minimum: float = 0.0, maximum: float = MAX_SECONDS) -> float:
    """A finite number in [minimum, maximum] (true/false and text refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise SchemaError(f"{field}: expected a number, got {str(value)[:40]!r}")
    if not (math.isfinite(value) and minimum <= value <= maximum):
        raise SchemaError(f"{field}: {str(value)[:40]} is outside {minimum:g}..{maximum:g}")
    return float(value)


def _optional_int(record: dict[str, Any], key: str, field: str, low: int, high: int) -> None:
    if record.get(key) is not None:
        integer(record[key], f"{field}.{key}", low, high)


def check_record(record: Any, field: str) -> dict[str, Any]:
    """One case's record as `bundle-run` writes it: each field of the right type and range."""
    record = obj(record, field)
    one_of(record.get("verdict"), f"{field}.verdict", VERDICTS)
    text(record.get("detail", ""), f"{field}.detail", one_line=False)
    text(record.get("again", ""), f"{field}.again", one_line=False, max_len=2000)
    if "family" in record:
        text(record["family"], f"{field}.family", max_len=100)
    if "seconds" in record:
        number(record["seconds"], f"{field}.seconds")
    _optional_int(record, "returncode", field, -(1 << 31), (1 << 32) - 1)
    _optional_int(record, "signal", field, 0, 1024)
    for key in ("flaky", "ours", "confirmed"):
        if key in record:
            boolean(record[key], f"{field}.{key}")
    if "outputs" in record:  # a wrong case's outputs, as `encode` wrote them
        kept = record["outputs"]
        if not isinstance(kept, list) or len(kept) > 64:
            raise SchemaError(f"{field}.outputs: expected a list of at most 64 arrays")
        for i, array in enumerate(kept):
            decode(array, f"{field}.outputs[{i}]")
    return record


@dataclass(frozen=True)
class Results:
    """A results file read back: its head and each case's checked record."""

    data: dict[str, Any]
    cases: dict[str, dict[str, Any]]

    def run_key(self, case_id: str) -> str:
        """What names this case's record of this device run: judging the same results again finds
        the same key (a corpus counts a device run once, `corpus.save_finding(run_key=)`)."""
        head = [self.data.get(k) for k in ("bundle_id", "host", "started")]
        blob = json.dumps([*head, case_id, self.cases[case_id]], sort_keys=True)
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


def read_results(path: Path, manifest: Manifest) -> Results:
    """A bundle-run results file of this bundle, every value checked (SchemaError naming the field)."""
    where = str(path)
    data = obj(read_json(path, where), where)
    if data.get("format") != RESULTS_FORMAT:
        raise SchemaError(f"{where}: not a bundle-run results file")
    if data.get("bundle_id") != manifest.bundle_id:
        raise SchemaError(f"{where}: the results of another bundle (bundle_id {str(data.get('bundle_id'))[:40]!r})")
    for key in _HEAD_TEXT:
        if data.get(key) is not None:
            text(data[key], f"{where}: {key}", max_len=2000)
    if data.get("timeout") is not None:
        number(data["timeout"], f"{where}: timeout")
    known = {c.id for c in manifest.cases}
    cases = obj(data.get("cases"), f"{where}: cases")
    for case_id, record in cases.items():
        field = f"{where}: cases.{case_id[:40]}"
        if case_id not in known:
            raise SchemaError(f"{field}: no such case in the bundle")
        check_record(record, field)
    return Results(data, cases)


@dataclass(frozen=True)
class CaseFiles:
    """What running one case needs, read from its folder."""

    folder: Path
    function: str
    inputs: list[Path]
    expected: list[np.ndarray]
    rule: dict[str, Any]


def read_rule(value: Any, field: str, results: int) -> dict[str, Any]:
    """A case's comparison rule (`export_checks.compare`'s data), each field of its type."""
    rule = obj(value, field)
    kind = one_of(rule.get("kind"), f"{field}.kind", ("elementwise", "topk"))
    if kind == "elementwise":
        for key in ("rtol", "atol"):
            if rule.get(key) is not None:
                number(rule[key], f"{field}.{key}", 0.0, 1e6)
        return rule
    integer(rule.get("dim"), f"{field}.dim", 0, 15)
    integer(rule.get("k"), f"{field}.k", 0, 1 << 31)
    for key in ("largest", "labels"):
        boolean(rule.get(key), f"{field}.{key}")
    if "squeezed" in rule:
        boolean(rule["squeezed"], f"{field}.squeezed")
    names = text_list(rule.get("results"), f"{field}.results")
    if len(names) < results or any(n not in ("values", "indices") for n in names):
        raise SchemaError(f"{field}.results: expected {results} of values/indices")
    if "operands" in rule:
        operands = rule["operands"]
        if not isinstance(operands, list) or len(operands) < (2 if rule["labels"] else 1) or len(operands) > 2:
            raise SchemaError(f"{field}.operands: expected the root's one or two operands")
        for i, operand in enumerate(operands):
            decode(operand, f"{field}.operands[{i}]")
    return rule


def read_case(folder: Path, case_id: str) -> CaseFiles:
    """What running the case needs, each file inside the bundle (`inside`) and checked."""
    from shapefuzz.schema import load_npy

    where = f"case {case_id}"
    here = inside(folder, CASES, case_id)
    record = obj(read_json(inside(here, CASE_JSON), f"{where}: {CASE_JSON}"), f"{where}: {CASE_JSON}")
    function = text(record.get("function"), f"{where}: function", max_len=200)
    n_in = integer(record.get("inputs"), f"{where}: inputs", 0, 64)
    n_out = integer(record.get("results"), f"{where}: results", 1, 64)
    rule = read_rule(record.get("rule"), f"{where}: rule", n_out)
    inputs = [inside(here, input_name(i)) for i in range(n_in)]
    for path in inputs + [inside(here, VMFB)]:
        if not path.is_file():
            raise SchemaError(f"{where}: {path.name} is missing")
    expected = [load_npy(inside(here, expected_name(i)), f"{where}: {expected_name(i)}") for i in range(n_out)]
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
