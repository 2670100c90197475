"""A generated case: an op family plus its parameters, rendered to MLIR with the parameters embedded.

The first line of every generated file is `// shapefuzz-case: {json}`, so any tool that gets the
file back (check, shrink, replay) can re-derive inputs and the NumPy reference from it.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

CASE_HEADER = "// shapefuzz-case: "
CASE_FORMAT_VERSION = 1


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


def freeze(value: Any) -> Any:
    """JSON lists as tuples, all the way down (hashable, immutable)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """`freeze` undone: tuples as JSON lists."""
    if isinstance(value, tuple):
        return [thaw(v) for v in value]
    return value


@dataclass(frozen=True)
class Case:
    family: str
    params_json: str  # canonical JSON, so the case is hashable and frozen

    @staticmethod
    def make(family: str, params: Any) -> "Case":
        """From a family's params: its typed value (anything with `to_json`) or a JSON dict."""
        to_json = getattr(params, "to_json", None)
        return Case(family, canonical_json(to_json() if callable(to_json) else params))

    @property
    def params(self) -> dict[str, Any]:
        return json.loads(self.params_json)

    @property
    def case_id(self) -> str:
        digest = hashlib.sha256(f"{self.family}\n{self.params_json}".encode()).hexdigest()
        return digest[:16]

    def header(self) -> str:
        payload = {"family": self.family, "version": CASE_FORMAT_VERSION, "params": self.params}
        return CASE_HEADER + canonical_json(payload)


_FAMILY_NAME = re.compile(r"[a-z][a-z0-9_]{0,39}")


def check_params(family: Any, params: Any, where: str) -> Case:
    """A case from values read back from a file (a case header, a corpus entry's meta.json),
    checked for shape: `family` a family name, `params` a JSON object of bounded depth. Whether
    the family can build it is `families.validate_case`. Raises SchemaError naming the field."""
    from shapefuzz.schema import SchemaError, json_depth, obj, text, MAX_JSON_DEPTH

    text(family, f"{where}family")
    if not _FAMILY_NAME.fullmatch(family):
        raise SchemaError(f"{where}family: {family[:40]!r} is not a family name")
    obj(params, f"{where}params")
    if json_depth(params) > MAX_JSON_DEPTH:
        raise SchemaError(f"{where}params: nested more than {MAX_JSON_DEPTH} deep")
    return Case.make(family, params)


def case_from_mlir(text: str) -> Case | None:
    """The case embedded in a generated file, or None for any other MLIR. A header that is
    there but broken (bad or deep JSON, missing or wrong-typed fields) raises InvalidInputError
    with one line naming the field; the family checks the params when it first uses them
    (`families.validate_case`)."""
    from shapefuzz.errors import InvalidInputError
    from shapefuzz.schema import SchemaError, is_int, load_json

    for number, line in enumerate(text.splitlines()[:5], 1):
        if line.startswith(CASE_HEADER):
            where = f"line {number}: case header: "
            try:
                payload = load_json(line[len(CASE_HEADER):], where.rstrip(": "))
                if not isinstance(payload, dict):
                    raise SchemaError(f"{where}expected a JSON object")
                for key in ("family", "params"):
                    if key not in payload:
                        raise SchemaError(f"{where}missing {key!r}")
                version = payload.get("version", CASE_FORMAT_VERSION)
                if not is_int(version) or not 1 <= version <= CASE_FORMAT_VERSION:
                    raise SchemaError(f"{where}version: {version!r}; this shapefuzz reads version {CASE_FORMAT_VERSION}")
                return check_params(payload["family"], payload["params"], where)
            except SchemaError as error:
                raise InvalidInputError(str(error)) from None
    return None
