"""A corpus entry as a value: what a campaign or the shrinker hands over to be saved (`Finding`),
what is read back from a folder (`CorpusEntry`), its id, and the sizes written into meta.json."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from shapefuzz.case import Case, case_from_mlir
from shapefuzz.errors import ShapefuzzError
from shapefuzz.model import Signature

if TYPE_CHECKING:
    from shapefuzz.iree.toolchain import Toolchain

CORPUS_FORMAT = 1
# The one default corpus location for every command (fuzz, shrink --corpus, replay, export, corpus,
# bisect): ./corpus, so what a campaign finds is what `replay` and `corpus list` see next.
DEFAULT_CORPUS = "corpus"
META = "meta.json"
REPRODUCER = "reproducer.mlir"
# the generated case a text-stage reproducer was cut from, with its header (shrink.case_stage)
CASE_FORM = "case.mlir"
MODULE = "module.vmfb"  # what the entry's compile command writes
REPRO_SCRIPT = "repro.sh"
INDEX = "INDEX.md"
INPUTS_DIR, EXPECTED_DIR = "inputs", "expected"
EXPECTED_FAILING, EXPECTED_FIXED = "failing", "fixed"
EXPECTED_STATES = (EXPECTED_FAILING, EXPECTED_FIXED)
MAX_DETAIL = 4000


@dataclass(frozen=True)
class Finding:
    """What a campaign or the shrinker hands over to be saved."""

    signature: Signature
    mlir: str  # the reproducer (full text, with the case header if generated)
    backends: tuple[str, ...]  # backends it was checked on
    case: Case | None  # parameters when generated (so it can be re-rendered/re-shrunk)
    seed: int  # input seed
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None
    toolchain_version: str
    compile_command: list[str]  # pasteable (from execute.compile_command)
    detail: str  # raw error text / mismatch description (trimmed)
    flaky: bool = False
    cause: str = ""  # the campaign's cause this bucket belongs to (one bug seen on several backends)
    triage: str = ""  # the campaign's verdict (compiler bug, target limit, suspected driver, flaky, ours)
    evidence: str = ""  # why: what the verdict rests on, and what would settle it
    onnx_model: bytes | None = None  # the ONNX model the reproducer was imported from (kept as model.onnx)
    origin: str = ""  # where it came from when not generated (an ONNX node test)
    # the parameter-shrunk generated case a header-less reproducer was cut from (kept as case.mlir)
    case_form: str | None = None
    # where `expected` came from when no family's NumPy reference made it (a voted text stage:
    # "the results vmvx and llvm-cpu agree on"); "" otherwise
    reference: str = ""


def _with_input_type(command: list[str], mlir: str) -> list[str]:
    from shapefuzz.iree.input_dialect import input_type_flags

    extra = [f for f in input_type_flags(mlir) if f not in command]
    return [*command[:-2], *extra, *command[-2:]] if extra and command[-2:-1] == ["-o"] else command


def make_finding(
    signature: Signature,
    mlir: str,
    toolchain: "Toolchain",
    *,
    backends: tuple[str, ...] | None = None,
    case: Case | None = None,
    seed: int = 0,
    inputs: list[np.ndarray] | None = None,
    expected: list[np.ndarray] | None = None,
    detail: str = "",
    flaky: bool = False,
    cause: str = "",
    triage: str = "",
    evidence: str = "",
    onnx_model: bytes | None = None,
    origin: str = "",
    case_form: str | None = None,
    reference: str = "",
) -> Finding:
    """The one way a Finding is built (campaign, shrinker, `corpus add`): the compile command
    names the entry's own files, the version is the toolchain's, the case comes from the text's
    header unless given."""
    from shapefuzz.iree.backends import BACKENDS
    from shapefuzz.case import case_from_mlir
    from shapefuzz.invoke.execute import compile_command
    from shapefuzz.corpus.onnx_files import case_model_bytes

    case = case if case is not None else case_from_mlir(mlir)
    return Finding(
        signature=signature,
        mlir=mlir,
        backends=tuple(backends or (signature.backend,)),
        case=case,
        seed=int(seed),
        inputs=inputs,
        expected=expected,
        toolchain_version=toolchain.probe.version,
        # as compiled: with the input type a torch or ONNX reproducer is compiled with
        compile_command=_with_input_type(compile_command(toolchain, BACKENDS[signature.backend], REPRODUCER, MODULE),
                                         mlir),
        detail=detail,
        flaky=flaky,
        cause=cause,
        triage=triage,
        evidence=evidence,
        onnx_model=onnx_model if onnx_model is not None else case_model_bytes(case),
        origin=origin,
        case_form=case_form,
        reference=reference,
    )


@dataclass(frozen=True)
class Sizes:
    """How big a reproducer is, as written into meta.json. Which of two reproducers is smaller
    is decided by `size.size_of`, the order the shrinker and the campaign use too."""

    elements: int
    lines: int
    bytes: int

    def to_json(self) -> dict[str, int]:
        return {"elements": self.elements, "lines": self.lines, "bytes": self.bytes}


@dataclass(frozen=True)
class EntryView:
    """A readable entry's checked meta.json, without its reproducer and arrays: what listings
    (`corpus list`, INDEX.md, a campaign's summary) read (`corpus.listing`)."""

    path: Path
    meta: dict[str, Any]

    @property
    def id(self) -> str:
        return self.meta["id"]

    @property
    def signature(self) -> Signature:
        return Signature.from_json(self.meta["signature"])

    @property
    def case(self) -> Case | None:
        family, params = self.meta.get("family"), self.meta.get("params")
        return Case.make(family, params) if family and params is not None else None

    @property
    def family(self) -> str | None:
        """The op family it was generated from: meta's, or, for a reproducer cut down as plain text
        (shrink.case_stage: no family or params of its own), the header of the case it was cut from."""
        if self.meta.get("family"):
            return str(self.meta["family"])
        cut_from = self.cut_from
        return cut_from.family if cut_from is not None else None

    @property
    def cut_from(self) -> Case | None:
        """The generated case a reproducer cut down as plain text was cut from (`case.mlir`, its
        header read), or None: no case form, or a tampered one."""
        if self.meta.get("case_form") != CASE_FORM:
            return None
        try:
            return case_from_mlir((self.path / CASE_FORM).read_text())
        except (OSError, UnicodeDecodeError, ShapefuzzError):  # a tampered file: no case to name
            return None

    @property
    def seed(self) -> int:
        return int(self.meta.get("seed") or 0)

    @property
    def backends(self) -> tuple[str, ...]:
        return tuple(self.meta["backends"])

    @property
    def expected_state(self) -> str:
        return self.meta["expected_state"]

    @property
    def count(self) -> int:
        return int(self.meta["count"])

    @property
    def toolchain_versions(self) -> tuple[str, ...]:
        return tuple(self.meta.get("toolchain_versions") or ())

    @property
    def flaky(self) -> bool:
        return bool(self.meta.get("flaky"))


@dataclass(frozen=True)
class CorpusEntry(EntryView):
    """One readable entry, as loaded from its folder."""

    mlir: str
    inputs: list[np.ndarray] | None
    expected: list[np.ndarray] | None


@dataclass(frozen=True)
class UnreadableEntry:
    """A folder in the corpus that is not a readable entry, and why (one line)."""

    path: Path
    reason: str

    @property
    def id(self) -> str:
        return self.path.name


# ----------------------------------------------------------------------------- ids, sizes, times


def entry_id(signature: Signature) -> str:
    """`<backend>-<stage>-<status>-<12 hex>`: derived from the normalized signature only, of
    lower-case letters, digits and dashes (safe as a file name and in a shell)."""
    digest = hashlib.sha256(str(signature).encode()).hexdigest()[:12]
    prefix = f"{signature.backend}-{signature.stage.value}-{signature.status.value}".lower()
    return f"{re.sub(r'[^a-z0-9-]+', '-', prefix).strip('-')[:100]}-{digest}"



def _type_elements(text: str) -> int:
    """Elements of the entry function's arguments and results as written (`?` counted as 1)."""
    from shapefuzz.iree.mlirinfo import function_info

    try:
        info = function_info(text)
    except Exception:  # noqa: BLE001 - any unparsable text just has no size
        return 0
    from shapefuzz.schema import MAX_SIZE, array_bytes

    total = sum(array_bytes([1 if d is None else d for d in arg.shape], 1) for arg in info.args)
    return min(total, MAX_SIZE)  # exact (int64 wrapped to negative sizes), and one meta.json accepts


def reproducer_sizes(mlir: str, inputs: list[np.ndarray] | None = None) -> Sizes:
    """The size of a reproducer: its input elements (actual arrays where given), lines, bytes."""
    elements = sum(int(a.size) for a in inputs) if inputs else _type_elements(mlir)
    lines = sum(1 for line in mlir.splitlines() if line.strip() and not line.lstrip().startswith("//"))
    return Sizes(elements, lines, len(mlir.encode()))


def now_text(now: datetime | str | None = None) -> str:
    if isinstance(now, str):
        return now
    moment = now or datetime.now(timezone.utc)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


