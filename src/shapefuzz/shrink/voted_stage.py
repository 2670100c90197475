"""The text stage of a wrong value (issue #43 item 6, "minimal means minimal"): once its parameter
steps are done, a generated case that computes wrong values on one lane goes on as plain MLIR, as
a compile-stage case does (`shrink.case_stage`: its `// shapefuzz-case:` header removed, the same
passes under the same `Guard`). The family's NumPy reference describes the header's body, not a
body the text passes changed, so a step is judged by **two reference lanes that agree**: a text is
kept when both references run it to the same results (within rounding) and the failing lane, on the
same inputs, differs from them in the same way and by far more than rounding (a wrong value stays a
wrong value, a wrong shape a wrong shape; a float op's precision on one lane is no step of the bug).

The references are chosen on the start, against the case's own NumPy reference: two lanes other
than the failing one that run here and compute the case right (and the failing lane still wrong).
The saved entry keeps the inputs and the references' agreed results, and says which lanes they came
from (`Voted.reference`): replay judges the reproducer against those arrays.

Inputs: an argument the start has (same name, same type) keeps the case's array, so the case's
in-bounds indices and chosen values stay; an argument a step made (a producer cut to an argument)
gets small exact random values, and a step is refused when that argument has a `?` dim (no size is
sound for it: a size that contradicts the other operands is undefined behaviour, not a bug).

Not taken where random values can make right lanes disagree: ties into an order or an index (sort,
topk, an arg-max, a scatter whose updates may collide), and an index-reading reduction."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

from shapefuzz.case import Case
from shapefuzz.errors import InvalidInputError
from shapefuzz.iree.backends import BACKENDS
from shapefuzz.iree.mlirinfo import FunctionInfo, TensorType, function_info, random_inputs
from shapefuzz.iree.toolchain import Toolchain
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget
from shapefuzz.judge.oracle import Expectation, case_expectation, default_compare, lane_outputs
from shapefuzz.families.common import compare_arrays
from shapefuzz.model import Mismatch, Signature, Stage, Status
from shapefuzz.process.sandbox import Limits

# Two references agree within rounding; the failing lane must differ by far more than rounding, so a
# text whose only difference is a float op's precision on that lane (an f16 sum, bf16 rounding) is no
# step of the bug. Integers compare exactly in both.
_AGREE = {"bf16": (2e-2, 2e-2), "f16": (1e-2, 1e-2), "f32": (1e-5, 1e-5), "f64": (1e-9, 1e-9)}
_CLEARLY_WRONG = {"bf16": (1e-1, 1e-1), "f16": (1e-1, 1e-1), "f32": (1e-3, 1e-3), "f64": (1e-6, 1e-6)}
# lanes a reference may come from, the cheapest first (each runs here wherever the toolchain can)
REFERENCE_LANES = ("llvm-cpu", "vmvx", "vulkan-llvmpipe", "vulkan-spirv")
# families whose results turn on ties or on the order of colliding writes
_TIE_FAMILIES = frozenset({"sort", "topk", "scatter"})
_ORDER_DEPENDENT = re.compile(
    r"\b(?:iree_linalg_ext\.(?:sort|topk|scatter|arg_compare)|tensor\.scatter|stablehlo\.(?:sort|scatter)"
    r"|torch\.aten\.(?:sort|topk|argmax|argmin|max\.dim|min\.dim|scatter\w*|index_put\w*)"
    r"|onnx\.(?:TopK|ArgMax|ArgMin|Scatter\w*))\b")


def refusal(case: Case, text: str, signatures: Iterable[Signature]) -> str:
    """Why the voted stage is not taken for `case` (its text `text`) keeping `signatures` ("": it is)."""
    sigs = list(signatures)
    if len(sigs) != 1 or sigs[0].stage != Stage.COMPARE or sigs[0].status != Status.MISMATCH:
        return "the kept failure is not one lane's wrong result"
    if case.family in _TIE_FAMILIES or _ORDER_DEPENDENT.search(text):
        return "its results turn on ties or on colliding writes: random inputs could make right lanes disagree"
    if "linalg.index" in text and '"reduction"' in text:
        return "a reduction reads element positions (an arg-max's ties)"
    return ""


def mismatch_kind(signature: Signature) -> str:
    """The kind of a mismatch's signature ("wrong values"), without the family it names."""
    return signature.message.split(" in ", 1)[0]


Known = dict[tuple[str, TensorType], np.ndarray]  # an argument (name, type) -> the case's array for it


def known_inputs(text: str, inputs: Sequence[np.ndarray]) -> Known:
    """The start's arguments with the case's arrays."""
    info = function_info(text)
    return {(name, arg): array for name, arg, array in zip(info.arg_names, info.args, inputs)}


def inputs_for(info: FunctionInfo, known: Known, seed: int) -> list[np.ndarray] | None:
    """Inputs for a candidate's function: the case's array for an argument the start has, small
    random values for a new one; None when a new argument has a `?` dim or an element type without
    values."""
    arrays = []
    for i, (name, arg) in enumerate(zip(info.arg_names, info.args)):
        if (name, arg) in known:
            arrays.append(known[(name, arg)])
        elif arg.dynamic_dims:
            return None
        else:
            try:
                arrays.append(random_inputs(FunctionInfo(info.name, (arg,), 0), seed + 7919 * (i + 1), 1)[0])
            except InvalidInputError:
                return None
    return arrays


def agree(first: list[np.ndarray], second: list[np.ndarray]) -> bool:
    return compare_arrays(first, second, tolerance=_AGREE) is None


def clearly_wrong(expected: list[np.ndarray], got: list[np.ndarray], kind: str) -> Mismatch | None:
    """The lane's mismatch of `kind` against the references' results, beyond any rounding; else None."""
    mismatch = compare_arrays(expected, got, tolerance=_CLEARLY_WRONG)
    return mismatch if mismatch is not None and mismatch.kind.value == kind else None


@dataclass(frozen=True)
class Verdict:
    """A voted run that kept the failure: its inputs, the references' agreed results, the failing
    lane's mismatch."""

    inputs: list[np.ndarray]
    expected: list[np.ndarray]
    detail: str


@dataclass
class VotedMismatch:
    """is_interesting(text): both references run it to the same results and `lane` differs from them
    with a mismatch of `kind`. The verdict of each kept text is remembered (`verdicts`)."""

    toolchain: Toolchain
    lane: str
    references: tuple[str, str]
    kind: str
    known: Known
    seed: int
    budget: Budget
    verdicts: dict[str, Verdict] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def judge(self, text: str) -> Verdict | None:
        try:
            info = function_info(text)
        except InvalidInputError:
            return None
        inputs = inputs_for(info, self.known, self.seed)
        if inputs is None:
            return None
        _, outputs = lane_outputs(text, (self.lane, *self.references), Expectation(inputs, None), self.toolchain,
                                  self.budget, info.name, info.results)
        first, second = (outputs.get(r) for r in self.references)
        got = outputs.get(self.lane)
        if first is None or second is None or got is None or not agree(first, second):
            return None
        mismatch = clearly_wrong(first, got, self.kind)
        if mismatch is None:
            return None
        return Verdict(inputs, first, f"{mismatch.detail} (vs {self.references[0]} and {self.references[1]}, which agree)")

    def __call__(self, text: str) -> bool:
        verdict = self.judge(text)
        if verdict is not None:
            with self._lock:
                self.verdicts[text] = verdict
        return verdict is not None


def reference_words(references: tuple[str, str]) -> str:
    """What made a voted entry's expected results, as its issue text says it."""
    return f"the results {references[0]} and {references[1]} agree on"


def budget_for(timeout: float) -> Budget:
    return Budget(DEFAULT_BUDGET.verify, Limits(timeout=timeout), DEFAULT_BUDGET.run)


def choose_references(start: str, case: Case, signature: Signature, toolchain: Toolchain, seed: int,
                      budget: Budget, allowed: Sequence[str] | None = None,
                      ) -> tuple[tuple[str, str] | None, Verdict | None, str]:
    """((two reference lanes), the start's verdict, "") or (None, None, why not): on the decased start
    and the case's inputs, the failing lane still differs from the case's NumPy reference as kept, and
    two other lanes that run here (of `REFERENCE_LANES`, and of `allowed` where given: a campaign's
    own lanes) compute it right and agree with each other as `VotedMismatch` asks."""
    probe = toolchain.probe
    lane, kind = signature.backend, mismatch_kind(signature)
    candidates = [b for b in REFERENCE_LANES if b != lane and b in BACKENDS and BACKENDS[b].executes(probe)
                  and (allowed is None or b in allowed)]
    if len(candidates) < 2:
        return None, None, "fewer than two other lanes run here (and are allowed) to judge it"
    expectation = case_expectation(case, seed)
    assert expectation.expected is not None  # a case has its reference
    compare = expectation.compare or default_compare
    info = function_info(start)
    _, outputs = lane_outputs(start, (lane, *candidates), Expectation(expectation.inputs, None), toolchain, budget,
                              info.name, info.results)
    got = outputs.get(lane)
    wrong = compare(expectation.expected, got) if got is not None else None
    if got is None or wrong is None or wrong.kind.value != kind:
        return None, None, f"without its header, {lane} no longer computes it wrong as kept"
    right = [b for b in candidates if b in outputs and compare(expectation.expected, outputs[b]) is None]
    for i, first in enumerate(right):
        for second in right[i + 1:]:
            mismatch = clearly_wrong(outputs[first], got, kind)
            if agree(outputs[first], outputs[second]) and mismatch is not None:
                detail = f"{mismatch.detail} (vs {first} and {second}, which agree)"
                return (first, second), Verdict(list(expectation.inputs), outputs[first], detail), ""
    return None, None, (f"no two other lanes compute it right and alike ({', '.join(right) or 'none'} right, "
                        f"of {', '.join(candidates)})")


__all__ = ["REFERENCE_LANES", "Verdict", "VotedMismatch", "budget_for", "choose_references", "inputs_for",
           "known_inputs", "mismatch_kind", "reference_words", "refusal"]
