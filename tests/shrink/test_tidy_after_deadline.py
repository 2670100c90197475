"""A shrink the deadline cuts still drops what nothing reads (`shrink.run.TIDY`): a fresh 3.13
campaign's 20-second shrinks stopped at their time limit with the ops a cut scatter had fed
(an `unsqueeze` of an unread argument, its list, four constants) under an issue text that says the
reproducer keeps only the ops the failure needs. The judge here is a stand-in that takes a second
a trial (the compiler is not what is tested: the shrinker's use of its time is)."""

from __future__ import annotations

import time

from shapefuzz.model import Signature
from shapefuzz.shrink import run as shrink_run
from shapefuzz.shrink.iree import Target

TEXT = """func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<3xf32>) -> tensor<4xf32> {
  %c0 = arith.constant 0 : index
  %dead = arith.addf %arg1, %arg1 : tensor<3xf32>
  %r = math.absf %arg0 : tensor<4xf32>
  return %r : tensor<4xf32>
}
"""


class _SlowJudge:
    """Interesting while the function still returns its `math.absf`; a second a trial."""

    def __init__(self, *args, **kwargs) -> None:
        self.cache = self.blowup_trials = self.stop = self.on_finding = None

    def __call__(self, text: str) -> bool:
        time.sleep(1.0)
        return "math.absf %arg0" in text and "return %r" in text


class _Verifies:
    def __init__(self, *args) -> None:
        pass

    def __call__(self, texts):
        return [True] * len(texts)


def test_a_shrink_cut_by_its_deadline_still_drops_its_dead_values(monkeypatch):
    monkeypatch.setattr(shrink_run, "SameSignature", _SlowJudge)
    monkeypatch.setattr(shrink_run, "Verifier", _Verifies)
    monkeypatch.setattr(shrink_run, "TIDY_SHARE", 0.6)  # 1.5 s of 2.5 kept for tidying: room on a loaded machine
    # nothing but the tidy steps gets a trial in: the deadline comes after the first
    monkeypatch.setattr(shrink_run, "tiers_for", lambda text, target, toolchain: [
        [shrink_run.Pass("first", lambda t: iter([t.replace("absf %arg0", "absf %a0"),
                                                  t.replace("absf %arg0", "absf %a")]))]])
    sig = Signature.from_json({"backend": "llvm-cpu", "stage": "compile", "status": "error", "message": "x"})
    target = Target({"llvm-cpu": sig}, ("llvm-cpu",), 5.0)
    best, problem, _ = shrink_run.shrink_text(TEXT, None, target, frozenset({sig}), time_limit=2.5,  # type: ignore[arg-type]
                                              finding_seconds=1.0)
    assert problem.stopped_because == "time limit"
    assert "%dead" not in best or "%c0" not in best, best  # a tidy step was taken after the deadline
    assert "math.absf %arg0" in best
