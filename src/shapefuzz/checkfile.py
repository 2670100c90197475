"""`shapefuzz check` on any file: a generated case brings its own inputs and NumPy reference;
any other file gets the given inputs or small random ones, and the backends are judged by vote."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from shapefuzz.case import case_from_mlir
from shapefuzz.execute import DEFAULT_BUDGET, Budget
from shapefuzz.mlirinfo import function_info, random_inputs
from shapefuzz.model import CheckReport
from shapefuzz.oracle import Expectation, case_expectation, check_module
from shapefuzz.sandbox import Limits
from shapefuzz.toolchain import Toolchain


def check_file(
    text: str,
    backends: Sequence[str],
    toolchain: Toolchain,
    inputs: list[np.ndarray] | None = None,
    dynamic_size: int = 4,
    seed: int = 0,
    compile_timeout: float = 120.0,
    confirm: bool = True,
) -> tuple[CheckReport, list[str]]:
    """The report, plus notes that tell the user where inputs and the reference came from."""
    notes: list[str] = []
    budget = Budget(DEFAULT_BUDGET.verify, Limits(timeout=compile_timeout), DEFAULT_BUDGET.run)
    case = case_from_mlir(text)
    if case is not None and inputs is None:
        expectation = case_expectation(case, seed)
        notes.append(f"generated {case.family} case: inputs from seed {seed}, NumPy reference")
    else:
        from shapefuzz.errors import InvalidInputError

        try:
            info = function_info(text)
        except InvalidInputError:
            info = None
        if inputs is None and info is not None:
            inputs = random_inputs(info, seed, dynamic_size)
            if any(arg.dynamic_dims for arg in info.args):
                notes.append(f"'?' dims given size {dynamic_size} (--dynamic-size); pass --inputs to choose")
        expectation = Expectation(inputs, None) if inputs is not None else None
        if expectation is not None:
            notes.append("no NumPy reference: backends judged against each other (majority vote)")
    return check_module(text, backends, expectation, toolchain, budget, confirm), notes
