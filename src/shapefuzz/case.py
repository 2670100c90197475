"""A generated case: an op family plus its parameters, rendered to MLIR with the parameters embedded.

The first line of every generated file is `// shapefuzz-case: {json}`, so any tool that gets the
file back (check, shrink, replay) can re-derive inputs and the NumPy reference from it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

CASE_HEADER = "// shapefuzz-case: "
CASE_FORMAT_VERSION = 1


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"))


@dataclass(frozen=True)
class Case:
    family: str
    params_json: str  # canonical JSON, so the case is hashable and frozen

    @staticmethod
    def make(family: str, params: dict[str, Any]) -> "Case":
        return Case(family, canonical_json(params))

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


def case_from_mlir(text: str) -> Case | None:
    """The case embedded in a generated file, or None for any other MLIR."""
    for line in text.splitlines()[:5]:
        if line.startswith(CASE_HEADER):
            try:
                payload = json.loads(line[len(CASE_HEADER):])
                return Case.make(payload["family"], payload["params"])
            except (ValueError, KeyError, TypeError):
                return None
    return None
