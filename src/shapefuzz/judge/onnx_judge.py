"""A second, independent judge: ONNX's own reference implementation (`onnx.reference.
ReferenceEvaluator`) runs the case's ONNX model on the same inputs, and must agree with our
NumPy reference (by the family's own comparison: topk ties, scatter duplicates) before a
wrong-value finding is filed. A case is judged when ONNX can write it: a case spelled in ONNX,
or a linalg/torch case whose ONNX spelling takes the same arrays. When the two references
disagree, the fault is ours (our NumPy reference, our model, or ONNX's reference), never the
compiler's: the oracle then files every backend's comparison as "references disagree" and the
campaign triages it `ours`, with both results.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from shapefuzz.case import Case
from shapefuzz.model import Status

JUDGE_LANE = "onnx-reference"  # how a campaign records the second judge among a candidate's lanes
DISAGREE = "references disagree"  # the start of the mismatch message when the judges differ


@dataclass(frozen=True)
class SecondOpinion:
    """What the ONNX reference said about a case's NumPy reference."""

    results: tuple[np.ndarray, ...] | None  # None: the ONNX reference failed (see note)
    disagreement: str  # "" when the references agree, else both results
    note: str = ""
    seconds: float = 0.0
    lane: str = JUDGE_LANE  # the campaign lane it is counted as ("xla-reference" for XLA's, `xla_judge`)

    @property
    def status(self) -> Status:
        """As a campaign lane reports it: ok, mismatch, or unsupported (ONNX's reference could not
        run the model: grouped ConvTranspose, GatherElements over more than 64 along its axis; or
        computes it wrong, a known `reference_gap`: MaxPool's pads read as per-axis pairs; XLA
        could not run the module)."""
        return Status.UNSUPPORTED if self.results is None else Status.MISMATCH if self.disagreement else Status.OK


def show(arrays: list[np.ndarray] | tuple[np.ndarray, ...], limit: int = 600) -> str:
    parts = []
    for a in arrays:
        a = np.asarray(a)
        text = np.array2string(a, threshold=64, edgeitems=3, max_line_width=10_000).replace("\n", "")
        parts.append(f"{a.dtype}{list(a.shape)} {text}"[:limit])
    return "; ".join(parts)


def _fits(model, inputs: list[np.ndarray]) -> bool:
    """Whether the model's graph inputs take these arrays (count, element type, rank, static dims)."""
    from onnx import helper

    graph_inputs = list(model.graph.input)
    if len(graph_inputs) != len(inputs):
        return False
    for info, array in zip(graph_inputs, inputs):
        t = info.type.tensor_type
        if np.dtype(helper.tensor_dtype_to_np_dtype(t.elem_type)) != np.asarray(array).dtype:
            return False
        dims = list(t.shape.dim)
        if len(dims) != np.ndim(array):
            return False
        if any(d.HasField("dim_value") and d.dim_value != n for d, n in zip(dims, np.shape(array))):
            return False
    return True


def preload() -> None:
    """Imports ONNX's reference and its op list (a third of a second), so a worker pays for them
    at start-up rather than in its first judgement; nothing when ONNX is not installed."""
    try:
        import onnx.reference.ops._op_list  # noqa: F401
    except ImportError:
        pass


def run_reference(model, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The model's outputs by ONNX's reference implementation."""
    from onnx.reference import ReferenceEvaluator

    feeds = {info.name: np.asarray(a) for info, a in zip(model.graph.input, inputs)}
    return [np.asarray(r) for r in ReferenceEvaluator(model).run(None, feeds)]


def _dims(info) -> list[int | None]:
    return [d.dim_value if d.HasField("dim_value") else None for d in info.type.tensor_type.shape.dim]


def shape_contradiction(model, results: Sequence[np.ndarray] | None = None) -> str:
    """"" when ONNX's own shape inference types every output as the model declares it (and as
    onnx.reference's `results` come out, when given); else what disagrees. ONNX 1.23.2 contradicts
    itself on ceil-mode pooling whose last window starts in the right pad: shape inference counts
    that window, the spec and onnx.reference do not. A model that ONNX types two ways gives the
    importer self-contradictory types: whatever the compiler then does is no compiler bug."""
    import onnx

    bare = onnx.ModelProto()
    bare.CopyFrom(model)
    for out in bare.graph.output:
        out.type.tensor_type.ClearField("shape")
    try:
        inferred = onnx.shape_inference.infer_shapes(bare).graph.output
    except Exception:  # noqa: BLE001 - a model ONNX cannot infer says nothing either way
        return ""
    for i, (declared, got) in enumerate(zip(model.graph.output, inferred)):
        if not got.type.tensor_type.HasField("shape"):
            continue
        want, have = _dims(declared), _dims(got)
        ran = list(np.shape(results[i])) if results is not None and i < len(results) else None
        others = [("the model declares", want)] + ([("onnx.reference computes", ran)] if ran is not None else [])
        for what, shape in others:
            if len(shape) != len(have) or any(a is not None and b is not None and a != b for a, b in zip(shape, have)):
                return f"ONNX disagrees with itself: its shape inference types output {i} as {have}, but {what} {shape}"
    return ""


def case_contradiction(case: Case, results: Sequence[np.ndarray] | None = None) -> str:
    """`shape_contradiction` of a case spelled as an ONNX model ("" for any other case)."""
    from shapefuzz.families import get_family
    from shapefuzz.families.frontends import onnx_model

    family = get_family(case.family)
    params = family.load(case.params)
    if params.frontend != "onnx":
        return ""
    try:
        model = onnx_model(family, params)
    except Exception:  # noqa: BLE001 - a model we cannot build again is judged as before
        return ""
    return "" if model is None else shape_contradiction(model, results)


def second_opinion(case: Case, inputs: list[np.ndarray], expected: list[np.ndarray]) -> SecondOpinion | None:
    """The ONNX reference's verdict on `expected` (our NumPy reference for `inputs`), or None
    when ONNX cannot write the case on these arrays."""
    from shapefuzz.families import get_family
    from shapefuzz.families.frontends import linalg_params, onnx_model, onnx_params
    from shapefuzz.families.onnx_models import model_spelling
    from shapefuzz.families.torch_ir import boundary

    family = get_family(case.family)
    p = family.load(case.params)
    spelling = model_spelling(family.name)
    q = onnx_params(family, p)
    model = onnx_model(family, q) if q is not None else None
    if model is None and spelling is not None and not p.context and not p.operand:
        # no ONNX spelling: other ONNX ops may compute it (the root alone: never for a chain, whose
        # ONNX model is the whole chain's or none, nor a root-operand form, which they do not take)
        q = linalg_params(p)
        model = spelling.stand_in(q, lambda: boundary(family.render(q)))  # rendered only if it builds one
    if model is None or not _fits(model, inputs):
        return None
    assert spelling is not None and q is not None  # a model is only built through the family's spelling
    gap = spelling.reference_gap(linalg_params(q))
    if gap:  # a known bug of ONNX's reference: not a judge here
        return SecondOpinion(None, "", gap)
    start = time.perf_counter()
    try:
        results = run_reference(model, inputs)
    except Exception as error:  # noqa: BLE001 - ONNX's reference failing on our model is data, not a crash
        first = (str(error).strip().splitlines() or [""])[0][:300]
        return SecondOpinion(None, "", f"onnx.reference failed: {type(error).__name__}: {first}",
                             time.perf_counter() - start)
    seconds = time.perf_counter() - start
    mismatch = family.compare(p, inputs, expected, results)
    if mismatch is None:
        return SecondOpinion(tuple(results), "", seconds=seconds)
    return SecondOpinion(tuple(results), (
        f"the NumPy reference and onnx.reference disagree ({mismatch.detail}); NumPy reference: {show(expected)}; "
        f"ONNX reference: {show(results)}"), seconds=seconds)
