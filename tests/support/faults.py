"""Shared by the tests (moved out of test_faults.py, which other tests imported)."""

from __future__ import annotations

import time
import pytest
from shapefuzz.invoke.execute import Budget
from shapefuzz.model import Stage, Status
from shapefuzz.judge.oracle import check_module
from shapefuzz.process.sandbox import GIB, Limits
from shapefuzz.iree.toolchain import find_toolchain
from support.fakes import make_fake_toolchain, process_alive
from pathlib import Path


MATMUL = (Path(__file__).resolve().parents[1] / "data" / "matmul.mlir").read_text()


BUDGET = Budget(compile=Limits(timeout=30.0, memory_bytes=GIB // 2))


def faulty_check(tmp_path, monkeypatch, behaviour, budget=BUDGET):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_PIDFILE", str(tmp_path / "pids"))
    toolchain = find_toolchain(make_fake_toolchain(tmp_path / "bin", behaviour))
    from shapefuzz.iree.mlirinfo import function_info, random_inputs
    from shapefuzz.judge.oracle import Expectation

    inputs = random_inputs(function_info(MATMUL), 0, 4)
    report = check_module(MATMUL, ["llvm-cpu"], Expectation(inputs, [inputs[0] @ inputs[1]]), toolchain, budget, confirm=False)
    return report.results[0]
