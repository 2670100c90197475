"""`shapefuzz corpus add`: check an MLIR file (a user's crash, say) and save each confirmed failure."""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from shapefuzz.case import case_from_mlir
from shapefuzz.corpus.entry import make_finding
from shapefuzz.corpus.store import save_finding
from shapefuzz.errors import ShapefuzzError
from shapefuzz.mlirinfo import function_info, random_inputs
from shapefuzz.model import CheckReport, Stage
from shapefuzz.modulecheck import check_file
from shapefuzz.oracle import case_expectation
from shapefuzz.toolchain import Toolchain


def add_file(
    corpus_dir: str | Path,
    text: str,
    backends: Sequence[str],
    toolchain: Toolchain,
    seed: int = 0,
    compile_timeout: float = 120.0,
    inputs: list | None = None,
) -> tuple[CheckReport, list[tuple[Path, bool]]]:
    """Checks an MLIR file (a user's crash, say) and saves each confirmed failure as an entry."""
    report, _ = check_file(text, backends, toolchain, inputs=inputs, seed=seed, compile_timeout=compile_timeout)
    case = case_from_mlir(text)
    saved_inputs, expected = inputs, None
    if case is not None and inputs is None:
        expectation = case_expectation(case, seed)
        saved_inputs, expected = expectation.inputs, expectation.expected
    elif saved_inputs is None:
        try:
            saved_inputs = random_inputs(function_info(text), seed, 4)
        except ShapefuzzError:
            saved_inputs = None
    saved = []
    for result in report.failures:
        if result.flaky or result.signature is None:
            continue
        needs_numbers = result.stage in (Stage.RUN, Stage.COMPARE)
        finding = make_finding(
            result.signature, text, toolchain, backends=tuple(backends), case=case, seed=seed,
            inputs=saved_inputs if needs_numbers else None, expected=expected if needs_numbers else None,
            detail=result.detail)
        saved.append(save_finding(corpus_dir, finding))
    return report, saved
