"""The IREE side of a campaign: the `Target` the engine drives. Draws cases from the families'
Hypothesis strategies, checks them with the oracle on the chosen backends (in worker
processes), and saves confirmed buckets into the corpus. The engine never imports this."""

from __future__ import annotations

import importlib
from dataclasses import astuple, dataclass
from pathlib import Path

from shapefuzz.campaign.engine import Candidate, Failure, Outcome
from shapefuzz.campaign.values import Verdict
from shapefuzz.case import Case
from shapefuzz.execute import DEFAULT_BUDGET, Budget
from shapefuzz.families import FAMILY_MODULES
from shapefuzz.families.base import Family
from shapefuzz.model import CheckReport, Signature
from shapefuzz.toolchain import Toolchain

_FAMILIES: dict[str, Family] = {}


def load_family(name: str) -> Family:
    """One family's module, imported on its own (a family that does not import yet does not
    take the others down with it)."""
    if name not in _FAMILIES:
        from shapefuzz.families.frontends import with_frontends

        # With its torch and ONNX spellings, as the registry serves it, so campaigns draw them too.
        _FAMILIES[name] = with_frontends(importlib.import_module(f"shapefuzz.families.{name}").FAMILY)
    return _FAMILIES[name]


def available_families(names: tuple[str, ...]) -> tuple[tuple[str, ...], list[str]]:
    """(the families that import, one warning line per family that does not)."""
    ok, warnings = [], []
    for name in names:
        try:
            load_family(name)
            ok.append(name)
        except Exception as error:  # a family being written right now: skip it, say so
            warnings.append(f"family {name} is not available ({type(error).__name__}: {error}); skipped")
    return tuple(ok), warnings


KNOWN_FAMILIES = tuple(FAMILY_MODULES)

def input_seed(seed: int) -> int:
    return seed % (1 << 31)


@dataclass(frozen=True)
class IreeTarget:
    toolchain: Toolchain
    corpus_dir: Path
    budget: Budget = DEFAULT_BUDGET
    shrink_seconds: float = 300.0  # per new bucket, in the background

    # --- campaign process --------------------------------------------------------------------
    def generate(self, group: str, seed: int) -> Candidate:
        from shapefuzz.generate import draw

        family = load_family(group)
        case = Case.make(group, draw(family.strategy(), seed))
        text = case.header() + "\n" + family.render(case.params)
        return Candidate(case.case_id, group, seed, tuple(family.features(case.params)), case.params_json, text)

    def size(self, text: str) -> tuple[int, ...]:
        from shapefuzz.shrink.measure import size_of

        return astuple(size_of(text))

    def deadline(self, lanes: tuple[str, ...]) -> float:
        b = self.budget
        return b.verify.timeout + 2 * len(lanes) * (b.compile.timeout + b.run.timeout) + 60.0

    def corpus_count(self, failure: Failure) -> tuple[str, int]:
        """(the corpus entry this failure goes to, how many times it was saved so far)."""
        from shapefuzz.corpus import META, entry_id
        from shapefuzz.schema import is_int, load_json

        folder = self.corpus_dir / entry_id(Signature.from_json(failure.fields))
        try:
            meta = load_json((folder / META).read_text(), META)  # bounded: a foreign entry may be anything
        except (OSError, ValueError):
            return str(folder), 0
        count = meta.get("count") if isinstance(meta, dict) else None
        return str(folder), count if is_int(count) else 0

    def save(self, candidate: Candidate, failure: Failure, flaky: bool) -> str:
        from shapefuzz.corpus import make_finding, save_finding

        expectation = self._expectation(candidate)
        finding = make_finding(
            Signature.from_json(failure.fields), candidate.text, self.toolchain,
            case=Case(candidate.group, candidate.payload), seed=input_seed(candidate.seed),
            inputs=expectation.inputs, expected=expectation.expected, detail=failure.detail, flaky=flaky)
        entry, _ = save_finding(self.corpus_dir, finding)
        return str(entry)

    # --- worker processes ----------------------------------------------------------------------
    def worker_init(self) -> None:
        self.toolchain.probe  # noqa: B018 - read the cached probe once, before the first task

    def _expectation(self, candidate: Candidate):
        from shapefuzz.oracle import case_expectation

        return case_expectation(Case(candidate.group, candidate.payload), input_seed(candidate.seed))

    def check(self, candidate: Candidate, lanes: tuple[str, ...]) -> Outcome:
        from shapefuzz.execute import tool_seconds
        from shapefuzz.oracle import check_module

        before = tool_seconds()
        report = check_module(candidate.text, lanes, self._expectation(candidate), self.toolchain, self.budget,
                              confirm=False)
        return outcome_of(report, tool_seconds() - before)

    confirm = check  # a confirmation is the same check again, on the failing backends only

    def shrink(self, candidate: Candidate, lanes: tuple[str, str]):
        """(smaller text, corpus entry) once the shrunk reproducer is confirmed and saved (it
        replaces the entry's reproducer, being smaller), else None."""
        import tempfile

        from shapefuzz.errors import ShapefuzzError
        from shapefuzz.shrink.run import shrink_file

        backend, signature_text = lanes
        with tempfile.TemporaryDirectory(prefix="shapefuzz-shrink-") as tmp:
            path = str(Path(tmp) / "candidate.mlir")
            try:
                result = shrink_file(
                    path, candidate.text, self.toolchain, (backend,), out=str(Path(tmp) / "min.mlir"),
                    signature_text=signature_text, backend=backend, time_limit=self.shrink_seconds,
                    compile_timeout=self.budget.compile.timeout, corpus=str(self.corpus_dir),
                )
            except ShapefuzzError:
                return None  # did not reproduce in isolation (say, needs the campaign's input seed)
        if not result.confirmed or result.minimized == candidate.text:
            return None
        return result.minimized, (result.saved[0] if result.saved else None)


def outcome_of(report: CheckReport, tool_seconds: float) -> Outcome:
    lanes = {r.backend: (r.status.value, round(r.seconds, 4)) for r in report.results}
    failures = tuple(
        Failure(r.backend, str(r.signature), r.signature.to_json(), r.detail[-4000:])
        for r in report.failures if r.signature is not None
    )
    return Outcome(Verdict(report.verdict.value), lanes, failures, tool_seconds, report.verify_error[-2000:])
