"""The parts of a fake campaign target that tests of drawing and lane choice do not exercise: a
finding is saved nowhere real, every failure is a compiler bug, nothing shrinks. A test's target
(a dataclass with a `corpus` folder) inherits them and writes only generate/check."""

from __future__ import annotations

from pathlib import Path

from shapefuzz.campaign.outcomes import Triage


class InertTargetParts:
    corpus: str

    def worker_init(self) -> None:
        pass

    def deadline(self, lanes) -> float:
        return 30.0

    def size(self, text: str) -> tuple[int, ...]:
        return (len(text),)

    def corpus_count(self, failure):
        return str(Path(self.corpus) / "e"), 0

    def save(self, candidate, failure, flaky, cause="", triage="", evidence=""):
        return str(Path(self.corpus) / "e")

    def triage(self, candidate, failure, outcome):
        return Triage.COMPILER_BUG, "fake"

    def rename_cause(self, entry, cause):
        pass

    def shrink(self, candidate, job):
        return None
