"""Checks for everything shapefuzz reads back from disk that someone else may have written: a
corpus entry's meta.json, a `// shapefuzz-case:` header, a .npy file. Corpora are merged by
copying folders, so each value is validated at the seam where it enters, before any other code
uses it; a bad one raises SchemaError naming the field (the caller turns it into one line).

No dependencies beyond the standard library and NumPy's .npy header reader."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any, Callable, TypeGuard

import numpy as np

MAX_JSON_DEPTH = 32  # params nest 3 deep; anything near Python's recursion limit is hostile
MAX_JSON_BYTES = 4 << 20
DEFAULT_MAX_ARRAY_BYTES = 1 << 30  # inputs and outputs above this are refused before allocation
ENV_MAX_ARRAY_BYTES = "SHAPEFUZZ_MAX_ARRAY_BYTES"

ID_PATTERN = re.compile(r"[a-z0-9][a-z0-9-]{0,127}")  # entry ids and backend names: safe as file names
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")  # newline (\n) is checked apart, per field
_CONTROL_MULTILINE = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")  # free text (notes) may hold \r\n
_ARRAY_DTYPES = frozenset("b1 i1 i2 i4 i8 u1 u2 u4 u8 f2 f4 f8".split())


class SchemaError(ValueError):
    """A value read from disk does not have the shape shapefuzz writes. The message names the
    field (`meta.json: count: expected an integer, got 'x'`)."""


def max_array_bytes() -> int:
    """The array cap: SHAPEFUZZ_MAX_ARRAY_BYTES (set by --max-array-bytes) or 1 GiB. A value that
    is not a size is a UsageError (the CLI checks it first, so this is the second line)."""
    text = os.environ.get(ENV_MAX_ARRAY_BYTES)
    if text is None:
        return DEFAULT_MAX_ARRAY_BYTES
    return parse_bytes(text, ENV_MAX_ARRAY_BYTES)


def parse_bytes(text: str, what: str, minimum: int = 1, maximum: int | None = None) -> int:
    """A byte count as the options and SHAPEFUZZ_MAX_ARRAY_BYTES spell it: 1073741824, 512M,
    2GiB, 1.5G; between `minimum` and `maximum` (default MAX_BYTES). Exact arithmetic (no float),
    so 400 nines are refused, not turned into infinity. A bad one is a UsageError naming `what`."""
    from fractions import Fraction

    from shapefuzz.errors import UsageError

    maximum = MAX_BYTES if maximum is None else maximum
    text = str(text)
    match = _SIZE.fullmatch(text) if len(text) <= 600 else None
    unit = match.group(2).lower() if match else ""
    if not match or unit not in BYTE_UNITS:
        raise UsageError(f"{what} {_show(text)}: not a size; write e.g. 512M or 2G")
    size = int(Fraction(match.group(1)) * BYTE_UNITS[unit])
    if size < minimum:
        raise UsageError(f"{what} {_show(text)}: give at least {human_bytes(minimum) if minimum > 1 else '1 byte'}")
    if size > maximum:
        raise UsageError(f"{what} {_show(text)}: at most {human_bytes(maximum)}")
    return size


_SIZE = re.compile(r"\s*(\d{1,500}(?:\.\d{1,50})?)\s*([a-zA-Z]{0,3})\s*")
BYTE_UNITS = {"": 1, "b": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
              "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40,
              "tib": 1 << 40}
MAX_SIZE = 1 << 62  # the largest integer meta.json holds (`integer`'s default maximum)
MAX_BYTES = 1 << 50  # 1 PiB: far above any machine's memory, far below a float's range


def array_bytes(shape: Any, itemsize: int) -> int:
    """Bytes of an array: the one size computation, in Python integers (never wraps, never a
    float), for every shape we are given (MLIR types, case params, .npy headers)."""
    total = int(itemsize)
    for dim in shape:
        total *= int(dim)
    return total


def shape_text(shape: Any) -> str:
    """`4x?x8`, with a huge dim shown by its magnitude (str() of a 5,000-digit int raises)."""
    def dim(d: Any) -> str:
        if is_int(d) and d.bit_length() > 64:
            return f"~2^{d.bit_length() - 1}"
        return str(d)
    return "x".join(dim(d) for d in shape) or "scalar"


def human_bytes(n: int | float) -> str:
    """`1.5 GiB`; integer arithmetic first, so a size of 10**400 bytes is text, not an OverflowError."""
    n = int(n)
    if n >= 1 << 60:
        return f"about 2^{n.bit_length() - 1} bytes"
    value = float(n)
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{value:.0f} {unit}" if unit == "bytes" else f"{value:.1f} {unit}"
        value /= 1024
    return f"{n} bytes"  # pragma: no cover


# ----------------------------------------------------------------------------- JSON


def json_depth(value: Any, limit: int = MAX_JSON_DEPTH) -> int:
    """Nesting depth of a parsed JSON value, iteratively (never a RecursionError)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        if isinstance(item, dict):
            stack.extend((v, depth + 1) for v in item.values())
        elif isinstance(item, list):
            stack.extend((v, depth + 1) for v in item)
    return deepest


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)  # one, not one per call (json.loads with options)


def load_json(text: str, what: str) -> Any:
    """Parses JSON we wrote ourselves: bounded size and depth, no NaN/Infinity."""
    if len(text) > MAX_JSON_BYTES:
        raise SchemaError(f"{what}: larger than {human_bytes(MAX_JSON_BYTES)}")
    try:
        value = _DECODER.decode(text) if isinstance(text, str) else json.loads(text, parse_constant=_reject_constant)
    except RecursionError:
        raise SchemaError(f"{what}: nested too deeply") from None
    except ValueError as error:
        raise SchemaError(f"{what}: not valid JSON ({str(error).splitlines()[0][:120]})") from None
    # a text with fewer brackets than the limit cannot nest deeper (a store reads 100,000s of rows)
    few = isinstance(text, str) and text.count("[") + text.count("{") <= MAX_JSON_DEPTH
    if not few and json_depth(value) > MAX_JSON_DEPTH:
        raise SchemaError(f"{what}: nested more than {MAX_JSON_DEPTH} deep")
    return value


# ----------------------------------------------------------------------------- fields


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _type_name(value: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", bool: "true/false", int: "an integer",
            float: "a number", type(None): "null"}.get(type(value), type(value).__name__)


def is_int(value: Any) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool)


def text(value: Any, field: str, *, one_line: bool = True, max_len: int = 100_000) -> str:
    if not isinstance(value, str):
        raise SchemaError(f"{field}: expected a string, got {_type_name(value)}")
    if len(value) > max_len:
        raise SchemaError(f"{field}: longer than {max_len} characters")
    if (_CONTROL if one_line else _CONTROL_MULTILINE).search(value) or (one_line and "\n" in value):
        raise SchemaError(f"{field}: contains control characters or a line break")
    return value


def integer(value: Any, field: str, minimum: int = 0, maximum: int = MAX_SIZE) -> int:
    if not is_int(value):
        raise SchemaError(f"{field}: expected an integer, got {_show(value)}")
    if not minimum <= value <= maximum:
        raise SchemaError(f"{field}: {value} is outside {minimum}..{maximum}")
    return value


def boolean(value: Any, field: str) -> bool:
    if not isinstance(value, bool):
        raise SchemaError(f"{field}: expected true or false, got {_show(value)}")
    return value


def obj(value: Any, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise SchemaError(f"{field}: expected an object, got {_type_name(value)}")
    return value


def text_list(value: Any, field: str, check: Callable[[str, str], Any] | None = None, *,
              non_empty: bool = False) -> list[str]:
    if not isinstance(value, list):
        raise SchemaError(f"{field}: expected a list of strings, got {_type_name(value)}")
    if non_empty and not value:
        raise SchemaError(f"{field}: empty")
    for i, item in enumerate(value):
        if not (isinstance(item, str) and len(item) <= 10_000 and "\n" not in item and not _CONTROL.search(item)):
            text(item, f"{field}[{i}]", max_len=10_000)  # fails, naming the item (named only then: stores read many)
        if check is not None:
            check(item, f"{field}[{i}]")
    return value


def ident(value: Any, field: str) -> str:
    """An id or backend name: lower-case letters, digits and dashes (safe in paths and shells)."""
    text(value, field)
    if not ID_PATTERN.fullmatch(value):
        raise SchemaError(f"{field}: {_show(value)} is not a name of lower-case letters, digits and dashes")
    return value


def one_of(value: Any, field: str, choices: tuple[str, ...]) -> str:
    if value not in choices:
        raise SchemaError(f"{field}: {_show(value)} is not one of {', '.join(choices)}")
    return value



# ----------------------------------------------------------------------------- paths and arrays


def relative_file(name: str, field: str, folder: Path) -> Path:
    """A path inside `folder` given in a file we read: relative, no `..`, no symlink on the way
    (each part through `files.child`, the one place a name read back becomes a path)."""
    from shapefuzz.files import UnsafeName, child

    if os.path.isabs(name) or ".." in Path(name).parts or not name.strip():
        raise SchemaError(f"{field}: {_show(name)} is not a relative path inside the entry")
    path = folder
    for part in Path(name).parts:
        try:
            path = child(path, part, field)
        except UnsafeName as error:
            raise SchemaError(str(error)) from None
    return path


def read_npy_header(handle: Any, what: str, max_bytes: int | None = None) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype from an open .npy stream's header; plain number types only, under the cap."""
    cap = max_array_bytes() if max_bytes is None else max_bytes
    try:
        version = np.lib.format.read_magic(handle)
        if version == (1, 0):
            shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
        elif version in ((2, 0), (3, 0)):
            shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
        else:
            raise SchemaError(f"{what}: unknown .npy version {version}")
    except SchemaError:
        raise
    except (ValueError, SyntaxError, TypeError, EOFError) as error:
        raise SchemaError(f"{what} is not a readable .npy file ({str(error).splitlines()[0][:120] if str(error) else ''})") from None
    if dtype.str[1:] not in _ARRAY_DTYPES:
        raise SchemaError(f"{what}: element type {dtype} is not a plain number type")
    if not all(is_int(d) and d >= 0 for d in shape) or len(shape) > 16:
        raise SchemaError(f"{what}: bad shape {shape!r}")
    nbytes = array_bytes(shape, dtype.itemsize)
    if nbytes > cap:
        raise SchemaError(f"{what}: {shape_text(shape)} {dtype} is {human_bytes(nbytes)}, "
                          f"over the {human_bytes(cap)} array cap (--max-array-bytes)")
    return tuple(shape), dtype


def npy_header(path: Path, what: str, max_bytes: int | None = None) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and dtype of a .npy file from its header alone; refuses object/structured dtypes,
    files whose data is shorter than the header says, and arrays over the cap."""
    from shapefuzz.files import open_regular

    try:
        with open(open_regular(path), "rb") as handle:  # a FIFO planted as an output never hangs
            shape, dtype = read_npy_header(handle, what, max_bytes)
            offset = handle.tell()
            size = os.fstat(handle.fileno()).st_size
    except OSError as error:
        raise SchemaError(f"{what}: {error.strerror or error}") from None
    nbytes = array_bytes(shape, dtype.itemsize)
    if size - offset < nbytes:
        raise SchemaError(f"{what}: truncated ({size - offset} of {nbytes} data bytes)")
    return tuple(shape), dtype


def npy_bytes(array: np.ndarray) -> bytes:
    """The .npy file of `array` (C order, no pickle): what every array file we write holds."""
    import io

    buffer = io.BytesIO()
    np.save(buffer, np.require(array, requirements="C"), allow_pickle=False)
    return buffer.getvalue()


def load_npy(path: Path, what: str, max_bytes: int | None = None) -> np.ndarray:
    """A .npy array, after its header passed `npy_header` (never a pickle)."""
    from shapefuzz.files import open_regular

    npy_header(path, what, max_bytes)
    try:
        with open(open_regular(path), "rb") as handle:
            return np.load(handle, allow_pickle=False)
    except (OSError, ValueError, EOFError) as error:
        raise SchemaError(f"{what}: not a readable .npy file ({str(error).splitlines()[0][:120]})") from None


def check_array_bytes(shape: tuple[int, ...], dtype: np.dtype, what: str, max_bytes: int | None = None) -> None:
    """Refuses, before allocation, an array over the cap (declared shapes from MLIR or params)."""
    cap = max_array_bytes() if max_bytes is None else max_bytes
    nbytes = array_bytes(shape, np.dtype(dtype).itemsize)
    if nbytes > cap:
        raise SchemaError(f"{what}: {shape_text(shape)} {np.dtype(dtype)} would be "
                          f"{human_bytes(nbytes)}, over the {human_bytes(cap)} array cap (--max-array-bytes)")
