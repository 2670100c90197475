"""Helpers every op family's tests share: drawing many cases, rendering, checking on a backend."""

from __future__ import annotations

import re
from typing import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shapefuzz.case import Case
from shapefuzz.invoke.execute import DEFAULT_BUDGET, Budget
from shapefuzz.families import render_case
from shapefuzz.model import CheckReport
from shapefuzz.judge.oracle import check_case


def draw_params(strategy: st.SearchStrategy, n: int) -> list[dict]:
    """`n` cases drawn by Hypothesis (derandomized, so the same on every run)."""
    drawn: list[dict] = []

    @settings(max_examples=n, derandomize=True, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(params):
        drawn.append(params)

    collect()
    return drawn


def case_text(family: str, params: dict) -> str:
    """The full generated file: header line with the parameters, then the module."""
    return render_case(Case.make(family, params))


def check_params(
    family: str,
    params: dict,
    seed: int = 1,
    confirm: bool = False,
    budget: Budget | None = None,
    backends: Sequence[str] = ("llvm-cpu",),
) -> CheckReport:
    """The oracle for one case against its family's NumPy reference."""
    return check_case(Case.make(family, params), tuple(backends), seed=seed,
                      budget=budget or DEFAULT_BUDGET, confirm=confirm)


def assert_known_vulkan_llvmpipe_bug(family: str, params, right) -> None:
    """A known IREE bug on vulkan-llvmpipe: `params` right on llvm-cpu and wrong there (fails loudly
    once IREE fixes it, so the test is updated), and `right`, a close variant, right there."""
    import pytest

    from shapefuzz.model import Status, Verdict

    report = check_params(family, params, backends=("llvm-cpu", "vulkan-llvmpipe"))
    statuses = {r.backend: r.status for r in report.results}
    if statuses["vulkan-llvmpipe"] == Status.OK:
        pytest.fail("IREE now computes this right on vulkan-llvmpipe: the known bug is fixed, update this test")
    assert statuses == {"llvm-cpu": Status.OK, "vulkan-llvmpipe": Status.MISMATCH}, report.to_json()
    assert check_params(family, right, backends=("vulkan-llvmpipe",)).verdict == Verdict.PASS


def result_types(text: str) -> list[str]:
    """The tensor types in the @main signature's results."""
    header = next(line for line in text.splitlines() if line.lstrip().startswith("func.func @main"))  # imported ONNX indents it
    return re.findall(r"tensor<[^>]*>", header.split("->", 1)[1])
