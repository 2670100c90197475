"""What every export format starts from: the `Plan` (entry, backend, flags, inputs, expected
results, the oracle's comparison rule), and the value formatting the formats share."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from shapefuzz.iree.backends import BACKENDS, Backend
from shapefuzz.corpus import EXPECTED_FIXED, CorpusEntry
from shapefuzz.errors import UsageError
from shapefuzz.export_checks import encode_operand, operand, topk_ambiguous
from shapefuzz.iree.toolchain import Toolchain

FORMATS = ("lit", "run-module", "pytest", "issue", "iree-test-suites")
_ELEMENT = {"float32": "f32", "float16": "f16", "float64": "f64", "bool": "i1", "int8": "i8", "int16": "i16",
            "int32": "i32", "int64": "i64", "uint8": "ui8", "uint32": "ui32"}


@dataclass(frozen=True)
class Plan:
    """Everything an exporter needs, resolved once from the entry and the toolchain."""

    entry: CorpusEntry
    backend: Backend
    flags: tuple[str, ...]
    function: str
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None
    failing: bool  # write the test that passes while the bug is there
    rule: dict  # the oracle's comparison for this entry (export_checks.compare)

    @property
    def runs(self) -> bool:
        return self.backend.driver is not None and self.inputs is not None

    @property
    def voted_reference(self) -> str:
        """The words saying what made a voted entry's expected results ("": not a voted entry)."""
        return str(self.entry.meta.get("reference") or "")

    @property
    def ties(self) -> bool:
        """Top-k indices are returned and some slice has ties: more than one answer is right, so
        `iree-run-module --expected_output` (exact) would fail a correct backend."""
        if self.rule.get("kind") != "topk" or "indices" not in self.rule["results"] or not self.inputs:
            return False
        return topk_ambiguous(operand(self.rule, self.inputs, 0), self.rule["dim"], self.rule["k"], self.rule["largest"])


def comparison_rule(entry: CorpusEntry, inputs: list[np.ndarray] | None = None) -> dict:
    """The oracle's comparison for the entry as a rule exported tests apply (`export_checks.compare`):
    the entry's family supplies it (`Family.comparison_rule`); an entry that is not a generated
    case is compared with its dtype's tolerance, exactly for integers. A top-k rule of a chain
    case with producers carries the root's operands computed from `inputs` (the rule reads its
    `x` and labels there, not in the entry's arguments)."""
    from shapefuzz.families.base import DTYPE_TOLERANCE

    family, params = entry.meta.get("family"), entry.meta.get("params")
    if family is None or params is None:
        return dict(DTYPE_TOLERANCE)
    return case_rule(family, params, inputs)


def case_rule(family: str, params: dict, inputs: list[np.ndarray] | None = None) -> dict:
    """`comparison_rule` for a generated case's family and params (a bundle's cases too)."""
    from shapefuzz.families import get_family

    fam = get_family(family)
    rule = fam.comparison_rule(params)
    root_operands = fam.hooks.get("context_root_operands")
    if rule.get("kind") == "topk" and inputs is not None and root_operands is not None:
        operands = root_operands(fam.load(params), inputs)
        if operands is not None:
            rule["operands"] = [encode_operand(a) for a in operands[:2 if rule["labels"] else 1]]
    return rule


def plan(entry: CorpusEntry, toolchain: Toolchain, expect: str = "auto", values: bool = True) -> Plan:
    """`values=False`: an entry that keeps no arrays gets none (no inputs, no NumPy reference, which
    for a large case costs seconds and GBs here): its exports compile it only."""
    from shapefuzz.iree.input_dialect import input_type_flags
    from shapefuzz.iree.mlirinfo import function_info, random_inputs

    backend = BACKENDS.get(entry.signature.backend)
    if backend is None:
        raise UsageError(f"entry {entry.id}: unknown backend {entry.signature.backend!r}")
    flags = backend.compile_flags(toolchain.probe)
    if flags is None:
        raise UsageError(f"{backend.name} is not supported by this iree-compile ({toolchain.probe.version}); "
                         "pass --iree-bin with a release that has it")
    info = function_info(entry.mlir)
    inputs, expected = entry.inputs, entry.expected
    if inputs is None and not values:
        expected = None
    elif inputs is None and entry.case is not None:
        from shapefuzz.judge.oracle import case_expectation

        expectation = case_expectation(entry.case, entry.seed)
        inputs, expected = expectation.inputs, expectation.expected
    elif inputs is None:
        try:
            inputs = random_inputs(info, entry.seed, 4)
        except UsageError:
            inputs = None
    failing = entry.expected_state != EXPECTED_FIXED if expect == "auto" else expect == "failing"
    flags = (*flags, *input_type_flags(entry.mlir))  # --iree-input-type=torch for torch-dialect reproducers
    return Plan(entry, backend, tuple(flags), info.name, inputs, expected, failing, comparison_rule(entry, inputs))


def element_type(array: np.ndarray) -> str:
    try:
        return _ELEMENT[array.dtype.name]
    except KeyError:
        raise UsageError(f"cannot write {array.dtype} values for iree-run-module") from None


def number_text(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "1" if value else "0"
    if isinstance(value, (float, np.floating)):
        text = repr(float(value))
        return text[:-2] if text.endswith(".0") else text
    return str(int(value))


def inline_value(array: np.ndarray) -> str:
    """`4x3xf32=1 2 3 ...` as iree-run-module's --input/--expected_output take it."""
    shape = "x".join(str(d) for d in array.shape)
    kind = f"{shape}x{element_type(array)}" if shape else element_type(array)
    return f"{kind}=" + " ".join(number_text(v) for v in array.reshape(-1).tolist())


_TIES = ("its top-k indices have ties (equal values within the first k+1 of a slice), so more than one "
         "answer is right and iree-run-module's exact --expected_output would fail a correct backend")


def cannot_represent(p: Plan, fmt: str) -> None:
    """One UsageError line when `fmt` cannot state the oracle's comparison for this entry."""
    if p.ties and p.runs and fmt in ("lit", "iree-test-suites"):
        raise UsageError(f"{fmt} cannot represent entry {p.entry.id}: {_TIES}; use --format run-module or pytest, "
                         "which check indices by the values they select")


def real_folder(path: Path) -> Path:
    """`path` as a folder to write into: created if missing, never a symbolic link."""
    if path.is_symlink():
        raise UsageError(f"{path} is a symbolic link; give a real folder to export into")
    path.mkdir(parents=True, exist_ok=True)
    return path
